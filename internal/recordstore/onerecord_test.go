package recordstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// addSpend is a Job's mark: the item's spend so far (what it read) plus its
// own, as the kernel writes it.
func addSpend(prior, own record.Spend, job int) func(*record.Record) (record.Changes, error) {
	return func(cur *record.Record) (record.Changes, error) {
		var ch record.Changes
		ch.SetSpend(prior.Add(own))
		js, _ := cur.Jobs()
		ch.SetJobs(record.WithJob(js, record.JobOutcome{Job: job, Spend: own}))
		return ch, nil
	}
}

func spendOf(t *testing.T, r *record.Record) record.Spend {
	t.Helper()
	sp, _ := r.Spend()
	return sp
}

// recordComments are the comments on issue n that hold a record block.
func recordComments(e *env, n int) []githubfake.Comment {
	var out []githubfake.Comment
	for _, cm := range e.fake.Comments(n) {
		if record.HasBlock(cm.Body) {
			out = append(out, cm)
		}
	}
	return out
}

// TestRecordStoreOneRecord: two Jobs' first writes, each from a read that
// found no record, end with one record holding both Jobs' spend. The second
// writer's create is let through while the first's POST is on its way, so
// both creates land (neither saw the other's look): the check after the
// create merges the newer into the older and neutralises it.
func TestRecordStoreOneRecord(t *testing.T) {
	for _, tc := range []struct {
		name string
		race bool
	}{{"one after the other", false}, {"both creates land", true}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, githubfake.Options{})
			n := e.fake.CreateIssue(githubfake.Issue{Title: "t"})
			e.fake.AddComment(n, "alice", "please do this")
			a, b := New(e.client(t)), New(e.client(t))
			ra, err := a.Read(ctx, n, 0)
			if err != nil {
				t.Fatal(err)
			}
			rb, err := b.Read(ctx, n, 0)
			if err != nil {
				t.Fatal(err)
			}
			if ra.ID != 0 || rb.ID != 0 {
				t.Fatalf("a record before any write: %d, %d", ra.ID, rb.ID)
			}
			sa, sb := record.Spend{USD: 0.25, ModelCalls: 1}, record.Spend{USD: 0.5, ModelCalls: 2}
			writeB := func() {
				if err := b.Write(ctx, n, &rb, addSpend(record.Spend{}, sb, 2), testView); err != nil {
					t.Errorf("B: %v", err)
				}
			}
			if tc.race {
				var once sync.Once
				e.fake.AddFault(githubfake.Rule{Method: "POST", Path: createPath, Call: 1, Before: func() { once.Do(writeB) }})
			}
			if err := a.Write(ctx, n, &ra, addSpend(record.Spend{}, sa, 1), testView); err != nil {
				t.Fatal(err)
			}
			if !tc.race {
				writeB()
			}
			if tc.race && e.count(epCreate) != 2 {
				t.Fatalf("%d creates, want both writers' to land", e.count(epCreate))
			}
			recs := recordComments(e, n)
			if len(recs) != 1 {
				t.Fatalf("%d record comments, want one:\n%+v", len(recs), recs)
			}
			got, err := record.Parse(recs[0].Body)
			if err != nil {
				t.Fatal(err)
			}
			if sp := spendOf(t, got); sp.ModelCalls != 3 {
				t.Errorf("spend %+v, want both Jobs' 3 calls", sp)
			}
			if js, _ := got.Jobs(); len(js) != 2 {
				t.Errorf("jobs %+v, want both Jobs' lines", js)
			}
			// Both writers now hold the one record, and the next read finds it.
			if rb.ID != recs[0].ID {
				t.Errorf("B holds comment %d, want the record %d", rb.ID, recs[0].ID)
			}
			again, err := New(e.client(t)).Read(ctx, n, 0)
			if err != nil || again.ID != recs[0].ID || len(again.Merged) != 0 {
				t.Errorf("the next read: %+v, %v; want the one record", again, err)
			}
		})
	}
}

// dropRecord is GitHub's eventually consistent list, played between the
// Client and the fake: the first list of an issue's comments that holds a
// record comment is answered without it (and with the ETag of what it
// answers, as a replica that has not seen the comment would).
type dropRecord struct {
	base    http.RoundTripper
	mu      sync.Mutex
	dropped int
}

func (d *dropRecord) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := d.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || !strings.HasSuffix(req.URL.Path, "/comments") || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dropped > 0 {
		return resp, nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var list []map[string]any
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, err
	}
	kept := list[:0]
	for _, cm := range list {
		if b, _ := cm["body"].(string); record.HasBlock(b) {
			d.dropped++
			continue
		}
		kept = append(kept, cm)
	}
	if body, err = json.Marshal(kept); err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Del("Content-Length")
	resp.Header.Set("ETag", fmt.Sprintf(`"%x"`, sha256.Sum256(body)))
	return resp, nil
}

// TestRecordListOmitsRecord: a fresh Job (no record comment id handed
// over) whose list of the issue's comments leaves the record out finds it
// on the look after, so its mark adds to the item's spend in the one
// record: no second record, no spend restarted from 0.
func TestRecordListOmitsRecord(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	n := e.fake.CreateIssue(githubfake.Issue{Title: "t"})
	e.fake.AddComment(n, "alice", "please do this")
	before := record.Spend{USD: 1, ModelCalls: 4}
	id, err := e.fake.AddComment(n, github.DefaultIdentity, commentBody(t, func(ch *record.Changes) { ch.SetSpend(before); ch.SetGroup(2) }))
	if err != nil {
		t.Fatal(err)
	}
	drop := &dropRecord{base: &http.Transport{DisableKeepAlives: true}}
	s := New(e.client(t, func(o *github.Options) { o.HTTPClient = &http.Client{Timeout: 10 * time.Second, Transport: drop} }))
	rc, err := s.Read(ctx, n, 0)
	if err != nil {
		t.Fatal(err)
	}
	if drop.dropped != 1 {
		t.Fatalf("the list dropped %d record comments, want the fault to fire once", drop.dropped)
	}
	prior := spendOf(t, rc.Record)
	own := record.Spend{USD: 0.5, ModelCalls: 1}
	if err := s.Write(ctx, n, &rc, addSpend(prior, own, 3), testView); err != nil {
		t.Fatal(err)
	}
	recs := recordComments(e, n)
	if len(recs) != 1 || recs[0].ID != id || rc.ID != id {
		t.Fatalf("record comments %+v, written to %d; want the one record %d", recs, rc.ID, id)
	}
	got := parsed(t, e, n, id)
	if sp := spendOf(t, got); sp.ModelCalls != 5 || group(t, got) != 2 {
		t.Errorf("spend %+v, group %d; want the record's 4 calls plus the Job's 1, and its group kept", sp, group(t, got))
	}
}

// TestDuplicateRecordsMerged: an issue with two record comments by roadmap
// (left by an older version, or two first writes) reads as one record: the
// spend summed, the Jobs' lines joined, every other mark by the comment
// updated last; the merge is written into the older comment, the other is
// rewritten to a note pointing at it with no record block, and the store
// says so in the log. A read-only store returns the same merge and writes
// nothing.
func TestDuplicateRecordsMerged(t *testing.T) {
	seed := func(t *testing.T) (*env, int, int64, int64, *[]github.Recovery) {
		var heard []github.Recovery
		e := newEnv(t, githubfake.Options{}, func(o *github.Options) { o.OnRecovery = func(r github.Recovery) { heard = append(heard, r) } })
		n := e.fake.CreateIssue(githubfake.Issue{Title: "t"})
		older, _ := e.fake.AddComment(n, github.DefaultIdentity, commentBody(t, func(ch *record.Changes) {
			ch.SetSpend(record.Spend{USD: 1, ModelCalls: 4})
			ch.SetGroup(1)
			ch.SetResult(record.ResultYielded)
			ch.SetJobs([]record.JobOutcome{{Job: 1}})
			ch.SetStagePlan("openspec/changes/x")
		}))
		e.clock.Advance(time.Minute)
		e.fake.AddComment(n, "alice", "a person's comment between them")
		newer, _ := e.fake.AddComment(n, github.DefaultIdentity, commentBody(t, func(ch *record.Changes) {
			ch.SetSpend(record.Spend{USD: 0.5, ModelCalls: 2})
			ch.SetGroup(3)
			ch.SetJobs([]record.JobOutcome{{Job: 2}})
		}))
		return e, n, older, newer, &heard
	}
	check := func(t *testing.T, rc RecordComment, older, newer int64) {
		t.Helper()
		if rc.ID != older || len(rc.Merged) != 1 || rc.Merged[0] != newer {
			t.Fatalf("read comment %d merging %v; want %d merging %d", rc.ID, rc.Merged, older, newer)
		}
		if sp := spendOf(t, rc.Record); sp.ModelCalls != 6 {
			t.Errorf("spend %+v, want 4+2 calls", sp)
		}
		if g := group(t, rc.Record); g != 3 {
			t.Errorf("group %d, want the latest comment's 3", g)
		}
		if res, _ := rc.Record.Result(); res != record.ResultYielded {
			t.Errorf("result %q, want the older's kept (the newer has none)", res)
		}
		if p, _ := rc.Record.StagePlan(); p != "openspec/changes/x" {
			t.Errorf("stage plan %q, want the older's kept", p)
		}
		if js, _ := rc.Record.Jobs(); len(js) != 2 {
			t.Errorf("jobs %+v, want both lines", js)
		}
	}
	t.Run("written", func(t *testing.T) {
		e, n, older, newer, heard := seed(t)
		rc, err := e.s.Read(ctx, n, 0)
		if err != nil {
			t.Fatal(err)
		}
		check(t, rc, older, newer)
		recs := recordComments(e, n)
		if len(recs) != 1 || recs[0].ID != older {
			t.Fatalf("record comments %+v, want only %d", recs, older)
		}
		stored := parsed(t, e, n, older)
		if !stored.Equal(rc.Record) {
			t.Errorf("comment %d holds\n%s\nwant the merge read", older, recs[0].Body)
		}
		for _, cm := range e.fake.Comments(n) {
			if cm.ID == newer && !strings.Contains(cm.Body, fmt.Sprint(older)) {
				t.Errorf("the neutralised comment says %q, want it to point at %d", cm.Body, older)
			}
		}
		if len(*heard) != 1 || (*heard)[0].Kind != RecoverRecordMerged {
			t.Errorf("recoveries %+v, want one %s", *heard, RecoverRecordMerged)
		}
		// The next read finds one record and writes nothing.
		writes := e.count(epEditComment)
		again, err := New(e.client(t)).Read(ctx, n, 0)
		if err != nil || again.ID != older || len(again.Merged) != 0 || e.count(epEditComment) != writes {
			t.Errorf("the next read: %+v, %v, %d writes; want the one record and no write", again, err, e.count(epEditComment)-writes)
		}
	})
	t.Run("read-only", func(t *testing.T) {
		e, n, older, newer, _ := seed(t)
		rc, err := ReadOnly(e.c).Read(ctx, n, 0)
		if err != nil {
			t.Fatal(err)
		}
		check(t, rc, older, newer)
		if e.count(epEditComment) != 0 || len(recordComments(e, n)) != 2 {
			t.Errorf("a read-only store wrote: %d edits", e.count(epEditComment))
		}
	})
}
