package recordstore

import (
	"fmt"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
)

var (
	spend1 = record.Spend{TokensIn: 5200, TokensOut: 1300, USD: 0.0123, ModelCalls: 6}
	spend2 = record.Spend{TokensIn: 3000, TokensOut: 700, USD: 0.0071, ModelCalls: 4}
)

// jobMark is Job 1's group mark: the group, and the Job's spend so far as
// the item's (the Job's first write is the item's first).
func jobMark(g int, sp record.Spend) func(*record.Record) (record.Changes, error) {
	return func(*record.Record) (record.Changes, error) {
		var ch record.Changes
		if g == 1 {
			ch.SetAttempt(1)
		}
		ch.SetGroup(g)
		ch.SetSpend(sp)
		ch.SetJobs([]record.JobOutcome{{Job: 1, RunID: 4711, Group: g, Spend: sp}})
		return ch, nil
	}
}

// personBreaks is a person editing record comment id in GitHub's editor:
// each old line of the block becomes new ("" adds new before `-->`). It
// returns the comment as the person saved it.
func personBreaks(t *testing.T, e *env, id int64, edits ...[2]string) (saved string) {
	t.Helper()
	if err := e.fake.EditComment(id, func(cur string) string {
		defer func() { saved = cur }()
		for _, ed := range edits {
			if ed[0] == "" {
				cur = strings.Replace(cur, "\n-->", "\n"+ed[1]+"\n-->", 1)
				continue
			}
			if !strings.Contains(cur, ed[0]+"\n") {
				t.Errorf("the record comment has no line %q:\n%s", ed[0], cur)
			}
			cur = strings.Replace(cur, ed[0]+"\n", ed[1]+"\n", 1)
		}
		return cur
	}); err != nil {
		t.Fatal(err)
	}
	return saved
}

// lineOf is the 1-based line of body that is text.
func lineOf(t *testing.T, body, text string) int {
	t.Helper()
	for i, l := range strings.Split(body, "\n") {
		if l == text {
			return i + 1
		}
	}
	t.Fatalf("no line %q in\n%s", text, body)
	return 0
}

// repairComments are the comments on issue n that say what roadmap repaired.
func repairComments(e *env, n int) []githubfake.Comment {
	var out []githubfake.Comment
	for _, cm := range e.fake.Comments(n) {
		if strings.Contains(cm.Body, RepairMarker) {
			out = append(out, cm)
		}
	}
	return out
}

// oneRepairComment fails the test unless issue n has exactly one repair
// comment, by roadmap, holding each of want.
func oneRepairComment(t *testing.T, e *env, n int, want ...string) {
	t.Helper()
	got := repairComments(e, n)
	if len(got) != 1 {
		t.Fatalf("%d repair comments, want one: %+v", len(got), got)
	}
	if got[0].Author != github.DefaultIdentity {
		t.Errorf("the repair comment is by %q, want roadmap's identity", got[0].Author)
	}
	for _, w := range want {
		if !strings.Contains(got[0].Body, w) {
			t.Errorf("the repair comment does not say %q:\n%s", w, got[0].Body)
		}
	}
}

// TestPersonBreaksRecordAfterWrite: a person's edit breaks a line of the
// record block just after a Job wrote it. The Job's next write repairs the
// block: the Job's keys and the spend are kept (the broken line's key from
// the Job's own last write), the person's valid edit is taken, and one
// comment on the issue says which line was not read and what was kept. A
// second break updates that comment, never adds one.
func TestPersonBreaksRecordAfterWrite(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	var heard []github.Recovery
	e.c = e.client(t, func(o *github.Options) { o.OnRecovery = func(r github.Recovery) { heard = append(heard, r) } })
	e.s = New(e.c)
	n := e.fake.CreateIssue(githubfake.Issue{Title: "t", Body: "person\n"})
	var rc RecordComment
	if err := e.s.Write(ctx, n, &rc, jobMark(1, spend1), testView); err != nil {
		t.Fatal(err)
	}

	// Just after the write: the attempt's value broken, an answer added.
	saved := personBreaks(t, e, rc.ID, [2]string{"implement.attempt: 1", "implement.attempt: one"},
		[2]string{"", "implement.answer: use the capped backoff"})
	if err := e.s.Write(ctx, n, &rc, jobMark(2, spend1.Add(spend2)), testView); err != nil {
		t.Fatalf("the Job's next write: %v", err)
	}
	r := parsed(t, e, n, rc.ID)
	if a, _ := r.Attempt(); a != 1 || group(t, r) != 2 {
		t.Errorf("implement.attempt = %d, implement.group = %d; want the Job's 1 (its last write) and 2 (this one)", a, group(t, r))
	}
	if got := spendOf(t, r); got != spend1.Add(spend2) {
		t.Errorf("implement.spend = %+v, want %+v", got, spend1.Add(spend2))
	}
	if a, _ := r.Answer(); a != "use the capped backoff" {
		t.Errorf("implement.answer = %q, want the person's valid edit kept", a)
	}
	if !r.Equal(rc.Record) {
		t.Errorf("rc.Record is not the record the comment holds")
	}
	oneRepairComment(t, e, n, fmt.Sprintf("line %d: implement.attempt: one", lineOf(t, saved, "implement.attempt: one")), "what the block lost: `implement.attempt`", "`implement.answer`")
	if len(heard) != 1 || heard[0].Kind != RecoverRecordRepaired {
		t.Errorf("recoveries %+v, want one %s", heard, RecoverRecordRepaired)
	}

	// A second break, a line that names no key: whatever it was, every key
	// the Job last wrote is kept.
	personBreaks(t, e, rc.ID, [2]string{"implement.group: 2", "the group is <b>three</b> now"})
	if err := e.s.Write(ctx, n, &rc, change(func(ch *record.Changes) { ch.SetCheckedSHA(sha1) }), testView); err != nil {
		t.Fatalf("the write after a second break: %v", err)
	}
	r = parsed(t, e, n, rc.ID)
	if a, _ := r.Attempt(); a != 1 || group(t, r) != 2 || spendOf(t, r) != spend1.Add(spend2) || !r.Has(record.KeyImplementCheckedSHA) {
		t.Errorf("after the second repair: keys %v, attempt %d, group %d, spend %+v; want the Job's all kept and its change in",
			r.Keys(), a, group(t, r), spendOf(t, r))
	}
	oneRepairComment(t, e, n, "the group is ‹b›three‹/b› now", "`implement.group`")
	if got := repairComments(e, n)[0].Body; strings.Contains(got, "implement.attempt: one") || strings.Contains(got, "<b>") {
		t.Errorf("the repair comment still tells the first repair, or holds the person's HTML:\n%s", got)
	}
	if got := len(e.fake.Comments(n)); got != 2 {
		t.Errorf("%d comments, want the record and the repair comment", got)
	}
	// Any reader now reads the record whole, and writes nothing.
	writes := e.count(epEditComment)
	if again, err := New(e.client(t)).Read(ctx, n, 0); err != nil || !again.Record.Equal(r) || e.count(epEditComment) != writes {
		t.Errorf("a fresh read: %v, %d writes; want the repaired record and no write", err, e.count(epEditComment)-writes)
	}
}

// TestPersonBreaksRecordBeforeWrite: a person's break lands while a write is
// under way. Seen — after GitHub answered the write's first read, so the read
// just before the PATCH finds it — it is repaired as after a write, and the
// repair comment says so. Unseen — between the read just before the PATCH
// and the PATCH (the documented window, one round trip) — the PATCH writes
// over it: the person's edit is lost, as any edit in that window is, and
// nothing else; no repair is claimed.
func TestPersonBreaksRecordBeforeWrite(t *testing.T) {
	setup := func(t *testing.T) (*env, int, RecordComment) {
		e := newEnv(t, githubfake.Options{})
		n := e.fake.CreateIssue(githubfake.Issue{Title: "t"})
		var rc RecordComment
		if err := e.s.Write(ctx, n, &rc, jobMark(1, spend1), testView); err != nil {
			t.Fatal(err)
		}
		return e, n, rc
	}
	check := func(t *testing.T, e *env, n int, rc RecordComment) *record.Record {
		t.Helper()
		r := parsed(t, e, n, rc.ID)
		if a, _ := r.Attempt(); a != 1 || group(t, r) != 2 || spendOf(t, r) != spend1.Add(spend2) {
			t.Errorf("keys %v: attempt %d, group %d, spend %+v; want the Job's 1, 2 and both groups' spend",
				r.Keys(), a, group(t, r), spendOf(t, r))
		}
		return r
	}
	brk := [2]string{"implement.spend: " + mustRaw(t, spend1), `implement.spend: {"tokens_in":5200,`}
	t.Run("seen by the read before the PATCH", func(t *testing.T) {
		e, n, rc := setup(t)
		e.fake.AddFault(githubfake.Rule{Method: "GET", Path: commentPath, Call: 1, After: func() { personBreaks(t, e, rc.ID, brk) }})
		if err := e.s.Write(ctx, n, &rc, jobMark(2, spend1.Add(spend2)), testView); err != nil {
			t.Fatalf("Write: %v", err)
		}
		check(t, e, n, rc)
		oneRepairComment(t, e, n, `implement.spend: {"tokens_in":5200,`, "what the block lost: `implement.spend`")
	})
	t.Run("unseen, in the window", func(t *testing.T) {
		e, n, rc := setup(t)
		e.fake.AddFault(githubfake.Rule{Method: "PATCH", Path: commentPath, Call: 1, Before: func() { personBreaks(t, e, rc.ID, brk) }})
		if err := e.s.Write(ctx, n, &rc, jobMark(2, spend1.Add(spend2)), testView); err != nil {
			t.Fatalf("Write: %v", err)
		}
		check(t, e, n, rc)
		if got := repairComments(e, n); len(got) != 0 {
			t.Errorf("a repair comment for a break the write never saw: %+v", got)
		}
	})
}

// mustRaw is sp as the block writes it.
func mustRaw(t *testing.T, sp record.Spend) string {
	t.Helper()
	r, _ := record.Parse("")
	var ch record.Changes
	ch.SetSpend(sp)
	if err := r.Apply(ch); err != nil {
		t.Fatal(err)
	}
	raw, _ := r.Raw(record.KeyImplementSpend)
	return raw
}
