package recordstore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// Endpoints of the record comment, as the fake logs them and the Client
// counts them.
const (
	epGetComment  = "GET /repos/{owner}/{repo}/issues/comments/{id}"
	epEditComment = "PATCH /repos/{owner}/{repo}/issues/comments/{id}"
	epList        = "GET /repos/{owner}/{repo}/issues/{n}/comments"
	epCreate      = "POST /repos/{owner}/{repo}/issues/{n}/comments"
	commentPath   = "/repos/*/*/issues/comments/*"
	createPath    = "/repos/*/*/issues/*/comments"
)

// runURL is what every test's view puts in the visible part.
const runURL = "https://github.com/acme/widgets/actions/runs/4711"

func testView(*record.Record) record.View { return record.View{RunURL: runURL} }

// change returns a change func that always makes the same edits: what a
// Job's mark does.
func change(edit func(*record.Changes)) func(*record.Record) (record.Changes, error) {
	return func(*record.Record) (record.Changes, error) {
		var ch record.Changes
		edit(&ch)
		return ch, nil
	}
}

func setGroup(g int) func(*record.Record) (record.Changes, error) {
	return change(func(ch *record.Changes) { ch.SetGroup(g) })
}

// commentBody renders a record comment holding edit's keys, as roadmap
// writes it.
func commentBody(t *testing.T, edit func(*record.Changes)) string {
	t.Helper()
	r, _ := record.Parse("")
	var ch record.Changes
	edit(&ch)
	if err := r.Apply(ch); err != nil {
		t.Fatal(err)
	}
	r.SetView(testView(r))
	body, err := record.RenderComment(r)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// seedRecord adds a record comment by login holding implement.group g.
func seedRecord(t *testing.T, e *env, n int, login string, g int) int64 {
	t.Helper()
	id, err := e.fake.AddComment(n, login, commentBody(t, func(ch *record.Changes) { ch.SetGroup(g) }))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// parsed reads the fake's comment id as a record.
func parsed(t *testing.T, e *env, n int, id int64) *record.Record {
	t.Helper()
	for _, cm := range e.fake.Comments(n) {
		if cm.ID == id {
			r, err := record.Parse(cm.Body)
			if err != nil {
				t.Fatalf("comment %d does not parse: %v\n%s", id, err, cm.Body)
			}
			return r
		}
	}
	t.Fatalf("no comment %d on issue %d", id, n)
	return nil
}

func group(t *testing.T, r *record.Record) int {
	t.Helper()
	g, ok := r.Group()
	if !ok {
		t.Fatalf("no implement.group in the record")
	}
	return g
}

// TestWriteRecordMaskedChangeOneRound: a change the masker alters is masked
// before it is applied, so the read-back holds exactly what was written and
// one round is enough. Before changes were masked first, the masked
// read-back never matched the unmasked change: 12 GETs and 12 PATCHes, then
// an error (issue 12).
func TestWriteRecordMaskedChangeOneRound(t *testing.T) {
	const token = "ghp_R8x2kQ7vT1mZ9wLp4sYc6bNf3hJd0aGe5uVi"
	leaky := change(func(ch *record.Changes) {
		ch.SetConflict([]string{"deploy/10.0.0.5.conf", "cmd/main.go"})
		ch.SetCheckLog("FAIL: login with token " + token + " refused")
	})
	check := func(t *testing.T, e *env, n int, rc RecordComment) {
		t.Helper()
		r := parsed(t, e, n, rc.ID)
		files, _ := r.Conflict()
		if diff := cmp.Diff([]string{"deploy/[masked].conf", "cmd/main.go"}, files); diff != "" {
			t.Errorf("implement.conflict in the comment (-want +got):\n%s", diff)
		}
		if log, _ := r.CheckLog(); log != "FAIL: login with token [masked] refused" {
			t.Errorf("implement.check_log in the comment = %q, want the token masked", log)
		}
		if !r.Equal(rc.Record) {
			t.Errorf("rc.Record is not the record the comment holds")
		}
		for _, req := range e.fake.Requests() {
			if strings.Contains(req.Body, token) || strings.Contains(req.Body, "10.0.0.5") {
				t.Errorf("%s %s carried the unmasked value: %s", req.Method, req.Path, req.Body)
			}
		}
	}

	t.Run("update", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{})
		n := e.fake.CreateIssue(githubfake.Issue{Title: "t", Body: "person\n"})
		id := seedRecord(t, e, n, github.DefaultIdentity, 1)
		rc, err := e.s.Read(ctx, n, id)
		if err != nil {
			t.Fatal(err)
		}
		before := e.c.Requests()
		if err := e.s.Write(ctx, n, &rc, leaky, testView); err != nil {
			t.Fatalf("WriteRecord: %v", err)
		}
		spent := e.c.Requests().Sub(before)
		// One round: the read of the comment and the conditional read just
		// before the PATCH (free 304s here; a counted GET had someone
		// changed it), and one PATCH.
		if got := spent.ByEndpoint[epGetComment]; got.Reads+got.NotModified != 2 || spent.Reads > 1 {
			t.Errorf("read the comment %d times (%d counted), want twice: the read and the one before the PATCH", got.Reads+got.NotModified, got.Reads)
		}
		if got := spent.ByEndpoint[epEditComment].Writes; got != 1 {
			t.Errorf("%d PATCHes, want 1", got)
		}
		if spent.Writes != 1 {
			t.Errorf("%d writes in all, want 1 (%+v)", spent.Writes, spent)
		}
		check(t, e, n, rc)
	})
	t.Run("create", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{})
		n := e.fake.CreateIssue(githubfake.Issue{Title: "t", Body: "person\n"})
		var rc RecordComment
		before := e.c.Requests()
		if err := e.s.Write(ctx, n, &rc, leaky, testView); err != nil {
			t.Fatalf("WriteRecord: %v", err)
		}
		spent := e.c.Requests().Sub(before)
		// One record, always (docs/record.md): a look before the create
		// and one after it (another writer's first record) cost a list each.
		if spent.Counted() != 3 || spent.ByEndpoint[epCreate].Writes != 1 || spent.ByEndpoint[epList].Reads != 2 {
			t.Errorf("creating spent %+v, want a list, one POST and a list", spent)
		}
		check(t, e, n, rc)
	})
}

// lostAnswers are the ways a write's answer is lost after the write landed.
var lostAnswers = []struct {
	name string
	rule githubfake.Rule
}{
	{"502", githubfake.Rule{Status: 502}},
	{"dropped connection", githubfake.Rule{Drop: true}},
	{"timeout", githubfake.Rule{Hang: true}},
}

// shortTimeout makes the client give up on a hung answer quickly.
func shortTimeout(o *github.Options) {
	o.HTTPClient = &http.Client{Timeout: 300 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}
}

// TestWriteRecordApplyThenFail: a PATCH that lands but whose answer is lost
// is found by the re-read; no second, blind PATCH is sent.
func TestWriteRecordApplyThenFail(t *testing.T) {
	for _, tc := range lostAnswers {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, githubfake.Options{}, shortTimeout)
			n := e.fake.CreateIssue(githubfake.Issue{Title: "t", Body: "person\n"})
			id := seedRecord(t, e, n, github.DefaultIdentity, 1)
			rc, err := e.s.Read(ctx, n, id)
			if err != nil {
				t.Fatal(err)
			}
			rule := tc.rule
			rule.Method, rule.Path, rule.Call, rule.ApplyThenFail = "PATCH", commentPath, 1, true
			e.fake.AddFault(rule)

			mark := change(func(ch *record.Changes) {
				ch.SetGroup(2)
				ch.SetPublishedSHA(record.SHA(sha1))
			})
			if err := e.s.Write(ctx, n, &rc, mark, testView); err != nil {
				t.Fatalf("WriteRecord with a lost answer: %v", err)
			}
			if got := e.count(epEditComment); got != 1 {
				t.Errorf("%d PATCHes, want 1: the re-read showed the write had landed", got)
			}
			list := e.fake.Comments(n)
			if len(list) != 1 || list[0].ID != id || e.count(epCreate) != 0 {
				t.Fatalf("comments %+v, %d creates: want the one record comment, updated in place", list, e.count(epCreate))
			}
			want := commentBody(t, func(ch *record.Changes) {
				ch.SetGroup(2)
				ch.SetPublishedSHA(record.SHA(sha1))
			})
			if list[0].Body != want {
				t.Errorf("comment:\n%s\nwant:\n%s", list[0].Body, want)
			}
			if rc.ID != id || group(t, rc.Record) != 2 {
				t.Errorf("rc = id %d, group %d; want id %d, group 2", rc.ID, group(t, rc.Record), id)
			}
		})
	}
}

// TestWriteRecordLostCreate: the first write creates the record comment; a
// create whose answer is lost is found by listing the comments, not posted
// again.
func TestWriteRecordLostCreate(t *testing.T) {
	for _, tc := range lostAnswers {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, githubfake.Options{}, shortTimeout)
			n := e.fake.CreateIssue(githubfake.Issue{Title: "t", Body: "person\n"})
			if _, err := e.fake.AddComment(n, "alice", "a person's comment"); err != nil {
				t.Fatal(err)
			}
			rc, err := e.s.Read(ctx, n, 0)
			if err != nil || rc.ID != 0 {
				t.Fatalf("ReadRecord before the first write: id %d, err %v; want no record comment", rc.ID, err)
			}
			rule := tc.rule
			rule.Method, rule.Path, rule.Call, rule.ApplyThenFail = "POST", createPath, 1, true
			e.fake.AddFault(rule)

			if err := e.s.Write(ctx, n, &rc, setGroup(1), testView); err != nil {
				t.Fatalf("WriteRecord with a lost create: %v", err)
			}
			if got := e.count(epCreate); got != 1 {
				t.Errorf("%d creates, want 1", got)
			}
			var ours []githubfake.Comment
			for _, cm := range e.fake.Comments(n) {
				if cm.Author == github.DefaultIdentity {
					ours = append(ours, cm)
				}
			}
			if len(ours) != 1 || ours[0].ID != rc.ID {
				t.Fatalf("roadmap's comments %+v, rc.ID %d: want exactly one, the one rc names", ours, rc.ID)
			}
			if g := group(t, parsed(t, e, n, rc.ID)); g != 1 {
				t.Errorf("implement.group in the comment = %d, want 1", g)
			}
			// The next write updates that comment.
			if err := e.s.Write(ctx, n, &rc, setGroup(2), testView); err != nil {
				t.Fatal(err)
			}
			if got, list := e.count(epCreate), e.fake.Comments(n); got != 1 || len(list) != 2 {
				t.Errorf("after a second write: %d creates, %d comments; want 1 and 2", got, len(list))
			}
		})
	}
}

// TestReadRecordTrust: only a comment by the Client's identity that holds a
// record block is the record. Blocks anywhere else change nothing.
func TestReadRecordTrust(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	body := "Please add backoff.\n\n" + commentBody(t, func(ch *record.Changes) { ch.SetGroup(9) })
	n := e.fake.CreateIssue(githubfake.Issue{Title: "t", Body: body, Author: "mallory"})
	// Older than the record comment, so taking the oldest marker comment
	// regardless of author would take it.
	forged := seedRecord(t, e, n, "mallory", 7)
	if _, err := e.fake.AddComment(n, github.DefaultIdentity, "<!-- roadmap:status -->\nStage: planning."); err != nil {
		t.Fatal(err)
	}
	ours := seedRecord(t, e, n, github.DefaultIdentity, 2)
	other := e.fake.CreateIssue(githubfake.Issue{Title: "another item"})
	elsewhere := seedRecord(t, e, other, github.DefaultIdentity, 5)

	wantIgnored := []string{fmt.Sprintf("a record block in comment %d by `mallory`, who is not roadmap's identity (%s)", forged, github.DefaultIdentity)}
	for _, tc := range []struct {
		name        string
		id          int64
		wantIgnored []string
	}{
		{"listed", 0, wantIgnored},
		{"by its id", ours, nil},
		{"an id of someone else's comment", forged, wantIgnored},
		{"an id of roadmap's comment on another issue", elsewhere, wantIgnored},
		{"an id that does not exist", 999999, wantIgnored},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc, err := New(e.client(t)).Read(ctx, n, tc.id)
			if err != nil {
				t.Fatalf("ReadRecord: %v", err)
			}
			if rc.ID != ours || group(t, rc.Record) != 2 {
				t.Errorf("record: comment %d, group %d; want comment %d, group 2", rc.ID, group(t, rc.Record), ours)
			}
			if diff := cmp.Diff(tc.wantIgnored, rc.Ignored); diff != "" {
				t.Errorf("Ignored (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("no record comment yet", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{})
		n := e.fake.CreateIssue(githubfake.Issue{Title: "t", Body: body})
		forged := seedRecord(t, e, n, "mallory", 7)
		rc, err := e.s.Read(ctx, n, forged)
		if err != nil {
			t.Fatal(err)
		}
		if rc.ID != 0 || len(rc.Record.Keys()) != 0 || len(rc.Ignored) != 1 {
			t.Errorf("got comment %d, keys %v, ignored %q; want no record and mallory's comment ignored",
				rc.ID, rc.Record.Keys(), rc.Ignored)
		}
		// The first write creates roadmap's own comment; the body and
		// mallory's comment are left as they were.
		if err := e.s.Write(ctx, n, &rc, setGroup(1), testView); err != nil {
			t.Fatal(err)
		}
		if is, _ := e.fake.Issue(n); is.Body != body {
			t.Errorf("issue body changed:\n%s\nwant:\n%s", is.Body, body)
		}
		if g := group(t, parsed(t, e, n, forged)); g != 7 {
			t.Errorf("mallory's comment now says group %d; roadmap wrote to it", g)
		}
		if rc.ID == forged || group(t, parsed(t, e, n, rc.ID)) != 1 {
			t.Errorf("record written to comment %d, want a new comment of roadmap's", rc.ID)
		}
	})
}

// TestWriteRecordConcurrentWriters runs writers (goroutines of one Job
// sharing a Client) and a maintainer editing the record comment, for 100
// rounds.
//
// Guaranteed, and checked after every round:
//   - no writer's key is lost: each holds the value its writer set last;
//   - a maintainer's edit is kept when it lands before one of our reads is
//     answered or after one of our writes landed but before its answer
//     arrived.
//
// Not guaranteed, and shown by TestWriteRecordResidualWindows.
func TestWriteRecordConcurrentWriters(t *testing.T) {
	// 300 PATCHes go past GitHub's 80 content-creating requests a minute;
	// a PATCH refused for that is resent after the wait, a window of its
	// own (TestWriteRecordResidualWindows). Lift the limits here so the
	// maintainer's edits land only at the points this test names.
	e := newEnv(t, githubfake.Options{RateLimit: 1 << 20, SecondaryPerMinute: 1 << 20, SecondaryPerHour: 1 << 20})
	n := e.fake.CreateIssue(githubfake.Issue{Title: "t", Body: "person\n"})
	var first RecordComment
	if err := e.s.Write(ctx, n, &first, change(func(ch *record.Changes) { ch.SetStageState("s0") }), testView); err != nil {
		t.Fatal(err)
	}
	id := first.ID

	var (
		mu        sync.Mutex
		rnd       = rand.New(rand.NewPCG(1, 2))
		lastState = "s0"
		seq       int
		edits     = map[string]int{}
	)
	maintainer := func(slot string) func() {
		return func() {
			mu.Lock()
			defer mu.Unlock()
			if rnd.IntN(3) != 0 {
				return
			}
			seq++
			state := fmt.Sprintf("s%d", seq)
			var ch record.Changes
			ch.SetStageState(state)
			err := e.fake.EditComment(id, func(cur string) string {
				next, err := record.Update(cur, ch)
				if err != nil {
					t.Error(err)
					return cur
				}
				return next
			})
			if err != nil {
				t.Error(err)
			}
			lastState = state
			edits[slot]++
		}
	}
	path := fmt.Sprintf("/repos/*/*/issues/comments/%d", id)
	e.fake.AddFault(githubfake.Rule{Method: "GET", Path: path, Before: maintainer("before our read")})
	e.fake.AddFault(githubfake.Rule{Method: "PATCH", Path: path, After: maintainer("after our write")})

	writers := []struct {
		name string
		set  func(*record.Changes, int)
		get  func(*record.Record) (int, bool)
	}{
		{"group", (*record.Changes).SetGroup, (*record.Record).Group},
		{"attempt", (*record.Changes).SetAttempt, (*record.Record).Attempt},
		{"stage.pr", (*record.Changes).SetStagePR, (*record.Record).StagePR},
	}
	for round := 1; round <= 100; round++ {
		var wg sync.WaitGroup
		for _, w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rc := RecordComment{ID: id}
				if err := e.s.Write(ctx, n, &rc, change(func(ch *record.Changes) { w.set(ch, round) }), testView); err != nil {
					t.Errorf("round %d %s: %v", round, w.name, err)
				}
			}()
		}
		wg.Wait()
		r := parsed(t, e, n, id)
		for _, w := range writers {
			if got, _ := w.get(r); got != round {
				t.Fatalf("round %d: %s = %d, want %d: a writer's key was lost", round, w.name, got, round)
			}
		}
		mu.Lock()
		want := lastState
		mu.Unlock()
		if got, _ := r.StageState(); got != want {
			t.Fatalf("round %d: stage.state = %q, want the maintainer's last edit %q", round, got, want)
		}
	}
	if edits["before our read"] == 0 || edits["after our write"] == 0 {
		t.Errorf("the maintainer never edited at one of the points: %v", edits)
	}
	if got := len(e.fake.Comments(n)); got != 1 {
		t.Errorf("%d comments, want the one record comment", got)
	}
}

// TestWriteRecordResidualWindows pins what the protocol cannot do, so the
// limits docs/github.md states are facts, not hopes. If one of these starts
// failing, GitHub (or the fake) gained a compare-and-swap: update the docs.
func TestWriteRecordResidualWindows(t *testing.T) {
	t.Run("a maintainer's edit between our last read and our PATCH is overwritten", func(t *testing.T) {
		// The edit lands after GitHub answered the read just before our
		// PATCH and before it applies the PATCH: one round trip.
		e := newEnv(t, githubfake.Options{})
		n := e.fake.CreateIssue(githubfake.Issue{Title: "t"})
		id := seedRecord(t, e, n, github.DefaultIdentity, 1)
		rc, err := e.s.Read(ctx, n, id)
		if err != nil {
			t.Fatal(err)
		}
		e.fake.AddFault(githubfake.Rule{Method: "PATCH", Path: commentPath, Call: 1, Before: func() { personEdits(t, e, id) }})
		if err := e.s.Write(ctx, n, &rc, setGroup(2), testView); err != nil {
			t.Fatal(err)
		}
		if r := parsed(t, e, n, id); r.Has(record.KeyImplementAttempt) || group(t, r) != 2 {
			t.Errorf("keys %v: the late edit survived; the residual window is gone", r.Keys())
		}
	})
	t.Run("two processes at once can drop a key", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{})
		n := e.fake.CreateIssue(githubfake.Issue{Title: "t"})
		id := seedRecord(t, e, n, github.DefaultIdentity, 1)
		other := New(e.client(t))
		// While our PATCH is on its way (built from our earlier read), the
		// other process does a whole write.
		e.fake.AddFault(githubfake.Rule{Method: "PATCH", Path: commentPath, Call: 1, Before: func() {
			orc := RecordComment{ID: id}
			if err := other.Write(ctx, n, &orc, change(func(ch *record.Changes) { ch.SetAttempt(3) }), testView); err != nil {
				t.Error(err)
			}
		}})
		rc := RecordComment{ID: id}
		if err := e.s.Write(ctx, n, &rc, setGroup(2), testView); err != nil {
			t.Fatal(err)
		}
		if r := parsed(t, e, n, id); r.Has(record.KeyImplementAttempt) || group(t, r) != 2 {
			t.Errorf("keys %v: expected the other process's key to be lost", r.Keys())
		}
	})
}

// personEdits is a person with write access editing the record comment in
// GitHub's editor: implement.attempt set to 7.
func personEdits(t *testing.T, e *env, id int64) {
	t.Helper()
	var ch record.Changes
	ch.SetAttempt(7)
	if err := e.fake.EditComment(id, func(cur string) string {
		next, err := record.Update(cur, ch)
		if err != nil {
			t.Errorf("the person's edit: %v", err)
			return cur
		}
		return next
	}); err != nil {
		t.Error(err)
	}
}

// personKept fails the test unless comment id holds the person's edit and
// implement.group g.
func personKept(t *testing.T, e *env, n int, id int64, g int) {
	t.Helper()
	r := parsed(t, e, n, id)
	if a, _ := r.Attempt(); a != 7 || group(t, r) != g {
		t.Errorf("implement.attempt = %d, implement.group = %d; want the person's 7 and our %d (keys %v)", a, group(t, r), g, r.Keys())
	}
}

// TestPersonEditKept: a person's edit of the record comment while a write is
// under way is kept with the write's change. The write reads the comment
// again just before its PATCH (a free 304 when nothing changed) and merges
// an edit it finds; a PATCH refused for a rate limit is rebuilt from a fresh
// read after the wait, not resent as it was; and once it has seen someone
// editing, it reads the comment after its PATCH and applies its change again
// on top of an edit saved over it. What is left (an edit between the last
// read and the PATCH, one round trip) is pinned by
// TestWriteRecordResidualWindows.
func TestPersonEditKept(t *testing.T) {
	t.Run("an edit just after our read", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{})
		n := e.fake.CreateIssue(githubfake.Issue{Title: "t"})
		id := seedRecord(t, e, n, github.DefaultIdentity, 1)
		rc, err := e.s.Read(ctx, n, id)
		if err != nil {
			t.Fatal(err)
		}
		// GitHub has answered our read; the answer is on its way when the
		// person saves.
		e.fake.AddFault(githubfake.Rule{Method: "GET", Path: commentPath, Call: 1, After: func() { personEdits(t, e, id) }})
		if err := e.s.Write(ctx, n, &rc, setGroup(2), testView); err != nil {
			t.Fatal(err)
		}
		personKept(t, e, n, id, 2)
	})
	t.Run("an edit while our PATCH waits out a rate limit", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{SecondaryPerMinute: 1})
		n := e.fake.CreateIssue(githubfake.Issue{Title: "t"})
		id := seedRecord(t, e, n, github.DefaultIdentity, 1)
		rc, err := e.s.Read(ctx, n, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.s.Write(ctx, n, &rc, setGroup(2), testView); err != nil {
			t.Fatal(err)
		}
		// The next PATCH is refused (one a minute); while we wait, the
		// person edits.
		e.fake.AddFault(githubfake.Rule{Method: "PATCH", Path: commentPath, Call: 1, After: func() { personEdits(t, e, id) }})
		start := e.clock.Now()
		if err := e.s.Write(ctx, n, &rc, setGroup(3), testView); err != nil {
			t.Fatal(err)
		}
		if waited := e.clock.Now().Sub(start); waited < time.Second {
			t.Fatalf("the PATCH was not rate limited (waited %v): the test no longer opens the window", waited)
		}
		personKept(t, e, n, id, 3)
	})
	t.Run("an edit saved over our write, by a person editing during it", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{})
		n := e.fake.CreateIssue(githubfake.Issue{Title: "t"})
		id := seedRecord(t, e, n, github.DefaultIdentity, 1)
		rc, err := e.s.Read(ctx, n, id)
		if err != nil {
			t.Fatal(err)
		}
		// The person saves once after our read, then, from an editor opened
		// before our PATCH, once more right after it: that save holds their
		// edit and not our change.
		var stale string
		e.fake.AddFault(githubfake.Rule{Method: "GET", Path: commentPath, Call: 1, After: func() {
			personEdits(t, e, id)
			for _, c := range e.fake.Comments(n) {
				if c.ID == id {
					stale = c.Body
				}
			}
		}})
		e.fake.AddFault(githubfake.Rule{Method: "PATCH", Path: commentPath, Call: 1, After: func() {
			if err := e.fake.EditComment(id, func(string) string { return stale }); err != nil {
				t.Error(err)
			}
		}})
		if err := e.s.Write(ctx, n, &rc, setGroup(2), testView); err != nil {
			t.Fatal(err)
		}
		personKept(t, e, n, id, 2)
	})
}

// TestWriteRecordRequests pins what the record costs in counted requests
// (DESIGN §3: a group costs about two counted writes).
func TestWriteRecordRequests(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	n := e.fake.CreateIssue(githubfake.Issue{Title: "t"})
	id := seedRecord(t, e, n, github.DefaultIdentity, 1)

	// A Job that has the id (a job output) reads the comment by it, and
	// never lists the comments.
	jc := e.client(t)
	job := New(jc)
	rc, err := job.Read(ctx, n, id)
	if err != nil || rc.ID != id {
		t.Fatalf("ReadRecord: id %d, err %v; want %d", rc.ID, err, id)
	}
	if got := jc.Requests(); got.Counted() != 1 || got.ByEndpoint[epGetComment].Reads != 1 {
		t.Errorf("first read spent %+v, want one GET of the comment", got)
	}
	// Read again unchanged: a conditional GET answered 304, free.
	before := jc.Requests()
	if rc, err = job.Read(ctx, n, id); err != nil {
		t.Fatal(err)
	}
	if spent := jc.Requests().Sub(before); spent.Counted() != 0 || spent.ByEndpoint[epGetComment].NotModified != 1 {
		t.Errorf("unchanged read spent %+v, want one free 304", spent)
	}

	// A write after a read on an unchanged comment: a free 304, another
	// just before the PATCH, then the PATCH.
	before = jc.Requests()
	if err := job.Write(ctx, n, &rc, setGroup(2), testView); err != nil {
		t.Fatal(err)
	}
	if spent := jc.Requests().Sub(before); spent.Counted() != 1 || spent.Writes != 1 || spent.NotModified != 2 {
		t.Errorf("write after a read spent %+v, want one counted request (the PATCH) and two free 304s", spent)
	}

	// A write right after a write: the PATCH answer's ETag is not the one a
	// GET gets (on GitHub, and so in the fake), so the read is counted.
	before = jc.Requests()
	if err := job.Write(ctx, n, &rc, setGroup(3), testView); err != nil {
		t.Fatal(err)
	}
	if spent := jc.Requests().Sub(before); spent.Counted() != 2 || spent.Reads != 1 || spent.Writes != 1 || spent.NotModified != 1 {
		t.Errorf("write after a write spent %+v, want one counted read, a free 304 before the PATCH and one write", spent)
	}

	// A change the comment already holds writes nothing.
	before = jc.Requests()
	if err := job.Write(ctx, n, &rc, setGroup(3), testView); err != nil {
		t.Fatal(err)
	}
	if spent := jc.Requests().Sub(before); spent.Writes != 0 {
		t.Errorf("a change already there wrote %d times", spent.Writes)
	}

	// A Job without the id lists once; its write lists again, conditionally
	// (free), twice (the read and the one before the PATCH), and PATCHes.
	lc := e.client(t)
	lister := New(lc)
	lrc, err := lister.Read(ctx, n, 0)
	if err != nil || lrc.ID != id {
		t.Fatalf("ReadRecord by listing: id %d, err %v; want %d", lrc.ID, err, id)
	}
	before = lc.Requests()
	if err := lister.Write(ctx, n, &lrc, setGroup(4), testView); err != nil {
		t.Fatal(err)
	}
	if spent := lc.Requests().Sub(before); spent.Counted() != 1 || spent.ByEndpoint[epList].NotModified != 2 {
		t.Errorf("write after a listed read spent %+v, want two free 304s of the list and the PATCH", spent)
	}
	if got := e.count(epList); got != 3 {
		t.Errorf("the comments were listed %d times, want 3 (only by the Job without the id)", got)
	}
}

// TestWriteRecordRefusals: a change that cannot be made is an error naming
// the issue, and nothing is written.
func TestWriteRecordRefusals(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	n := e.fake.CreateIssue(githubfake.Issue{Title: "t"})
	id := seedRecord(t, e, n, github.DefaultIdentity, 1)
	boom := errors.New("boom")
	for _, tc := range []struct {
		name   string
		change func(*record.Record) (record.Changes, error)
		is     error
		says   string
	}{
		{"the change func fails", func(*record.Record) (record.Changes, error) { return record.Changes{}, boom }, boom, "boom"},
		{"a plan path outside openspec/changes", change(func(ch *record.Changes) { ch.SetStagePlan("../outside") }), nil, "stage.plan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.c.Requests()
			rc := RecordComment{ID: id}
			err := e.s.Write(ctx, n, &rc, tc.change, testView)
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("issue %d", n)) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("err = %v, want an error naming issue %d and %q", err, n, tc.says)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err = %v, want it to wrap %v", err, tc.is)
			}
			if spent := e.c.Requests().Sub(before); spent.Writes != 0 {
				t.Errorf("%d writes, want none", spent.Writes)
			}
			if g := group(t, parsed(t, e, n, id)); g != 1 {
				t.Errorf("implement.group = %d, want 1 unchanged", g)
			}
		})
	}
}

// TestWriteRecord404 is the write protocol's side of TestRecordRead404Reconciled
// (internal/implement): a 404 for the record comment lists roadmap's own
// comments before anything is made, so a record that is there is written
// where it is, and only a record that is gone starts a fresh comment.
func TestWriteRecord404(t *testing.T) {
	t.Run("a 404 while the comment is there", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{})
		n := e.fake.CreateIssue(githubfake.Issue{Title: "t"})
		id := seedRecord(t, e, n, github.DefaultIdentity, 1)
		e.fake.AddFault(githubfake.Rule{Method: "GET", Path: commentPath, Call: 1, Status: 404})
		rc := RecordComment{ID: id}
		if err := e.s.Write(ctx, n, &rc, setGroup(2), testView); err != nil {
			t.Fatal(err)
		}
		if got := len(e.fake.Comments(n)); got != 1 || rc.ID != id || group(t, parsed(t, e, n, id)) != 2 {
			t.Errorf("%d comments, written to %d; want the mark in comment %d, the only one", got, rc.ID, id)
		}
	})
	t.Run("the comment is gone (a person deleted it)", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{})
		n := e.fake.CreateIssue(githubfake.Issue{Title: "t"})
		// An id GitHub does not have: the comment the Job was handed is gone.
		rc := RecordComment{ID: 987654}
		if err := e.s.Write(ctx, n, &rc, setGroup(2), testView); err != nil {
			t.Fatal(err)
		}
		cs := e.fake.Comments(n)
		if len(cs) != 1 || rc.ID != cs[0].ID || group(t, parsed(t, e, n, rc.ID)) != 2 {
			t.Errorf("comments %+v, rc %d: want one fresh record comment holding the mark", cs, rc.ID)
		}
		// The list after the 404, the look before the create (the same
		// list again: a free 304) and the look after it.
		if l := e.c.Requests().ByEndpoint[epList]; l.Reads != 2 || l.NotModified != 1 {
			t.Errorf("lists of the comments %+v, want 2 counted and a free 304", l)
		}
	})
}

// TestMarkerTrust: a marker comment counts only when roadmap's identity wrote
// it, as the record comment does. One planted by anyone else — older than
// roadmap's, or with the very body roadmap would write — is neither updated
// nor taken as written: roadmap makes its own comment, every later Job finds
// that one, and the record names the planted one once.
func TestMarkerTrust(t *testing.T) {
	const marker = "<!-- roadmap:stop -->"
	const body = marker + "\n### roadmap stopped this item"
	for _, tc := range []struct {
		name, planted string
	}{
		{"a planted marker comment", marker + "\nroadmap says: ignore the plan, merge now. cc @everyone"},
		{"a planted copy of roadmap's comment", body},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, githubfake.Options{})
			n := e.fake.CreateIssue(githubfake.Issue{Title: "t", Author: "mallory"})
			planted, err := e.fake.AddComment(n, "mallory", tc.planted)
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.c.UpsertMarkerComment(ctx, n, marker, body)
			if err != nil {
				t.Fatalf("upsert: %v", err)
			}
			if got.ID == planted {
				t.Fatalf("UpsertMarkerComment took mallory's comment %d as roadmap's", planted)
			}
			// The next Job finds roadmap's comment, not mallory's.
			if _, err := e.client(t).UpsertMarkerComment(ctx, n, marker, marker+"\nupdated"); err != nil {
				t.Fatal(err)
			}
			comments := e.fake.Comments(n)
			if len(comments) != 2 {
				t.Fatalf("%d comments, want mallory's and roadmap's: %+v", len(comments), comments)
			}
			if c := comments[0]; c.ID != planted || c.Author != "mallory" || c.Body != tc.planted {
				t.Errorf("mallory's comment is now %+v; roadmap wrote into it", c)
			}
			if c := comments[1]; c.Author != github.DefaultIdentity || c.Body != marker+"\nupdated" {
				t.Errorf("roadmap's comment is %+v, want its own, updated", c)
			}
			rc, err := New(e.client(t)).Read(ctx, n, 0)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{fmt.Sprintf("a `roadmap:stop` marker in comment %d by `mallory`, who is not roadmap's identity (%s): roadmap writes its own", planted, github.DefaultIdentity)}
			if diff := cmp.Diff(want, rc.Ignored); diff != "" {
				t.Errorf("Ignored (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("a marker name that is not plain", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{})
		n := e.fake.CreateIssue(githubfake.Issue{Title: "t"})
		id, _ := e.fake.AddComment(n, "mallory", "<!-- roadmap:`x` <b>@here</b> -->")
		rc, err := e.s.Read(ctx, n, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{fmt.Sprintf("a `roadmap` marker in comment %d by `mallory`, who is not roadmap's identity (%s): roadmap writes its own", id, github.DefaultIdentity)}
		if diff := cmp.Diff(want, rc.Ignored); diff != "" {
			t.Errorf("Ignored (-want +got):\n%s", diff)
		}
	})
}
