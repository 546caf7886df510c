package github

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
)

const issuePath = "/repos/*/*/issues/*"

func TestApplyThenFail(t *testing.T) {
	for _, tc := range lostAnswers {
		t.Run("record write/"+tc.name, func(t *testing.T) {
			e := newEnv(t, githubfake.Options{}, shortTimeout)
			const text = "Please add backoff.\n"
			n := e.fake.CreateIssue(githubfake.Issue{Title: "t", Body: text})
			if _, err := e.c.UpdateBody(ctx, n, setKey("implement.group", "1"), hasKey("implement.group", "1")); err != nil {
				t.Fatal(err)
			}
			rule := tc.rule
			rule.Method, rule.Path, rule.Call, rule.ApplyThenFail = "PATCH", issuePath, 1, true
			e.fake.AddFault(rule)
			patches := e.count("PATCH /repos/{owner}/{repo}/issues/{n}")

			got, err := e.c.UpdateBody(ctx, n, setKey("implement.published_sha", sha1), hasKey("implement.published_sha", sha1))
			if err != nil {
				t.Fatalf("UpdateBody with a lost answer: %v", err)
			}
			is, _ := e.fake.Issue(n)
			want := text + blockOpen + "\nimplement.group: 1\nimplement.published_sha: " + sha1 + "\n" + blockClose + "\n"
			if is.Body != want || got != want {
				t.Errorf("body:\n%s\nreturned:\n%s\nwant:\n%s", is.Body, got, want)
			}
			// Exactly one copy of the change: the write landed once, the
			// re-read found it, and no second PATCH was sent.
			if d := e.count("PATCH /repos/{owner}/{repo}/issues/{n}") - patches; d != 1 {
				t.Errorf("%d PATCHes, want 1", d)
			}
		})
		t.Run("marker comment/"+tc.name, func(t *testing.T) {
			const marker = "<!-- roadmap:status -->"
			e := newEnv(t, githubfake.Options{}, shortTimeout)
			n := e.fake.CreateIssue(githubfake.Issue{Title: "t"})
			rule := tc.rule
			rule.Method, rule.Path, rule.Call, rule.ApplyThenFail = "POST", "/repos/*/*/issues/*/comments", 1, true
			e.fake.AddFault(rule)
			c, err := e.c.UpsertMarkerComment(ctx, n, marker, "Implementing group 1.")
			if err != nil {
				t.Fatalf("create with a lost answer: %v", err)
			}
			list := e.fake.Comments(n)
			if len(list) != 1 || list[0].ID != c.ID || list[0].Body != marker+"\nImplementing group 1." {
				t.Fatalf("comments %+v: want exactly one, the returned one", list)
			}
			if got := e.count("POST /repos/{owner}/{repo}/issues/{n}/comments"); got != 1 {
				t.Errorf("%d creates, want 1", got)
			}
			// An update whose answer is lost leaves the one comment, updated.
			rule.Method, rule.Path = "PATCH", "/repos/*/*/issues/comments/*"
			e.fake.AddFault(rule)
			if _, err := e.c.UpsertMarkerComment(ctx, n, marker, "Ready."); err != nil {
				t.Fatalf("update with a lost answer: %v", err)
			}
			list = e.fake.Comments(n)
			if len(list) != 1 || list[0].Body != marker+"\nReady." {
				t.Errorf("comments %+v: want the one comment, updated", list)
			}
		})
	}
}

// TestConcurrentWriters runs two writers (goroutines of one Job sharing a
// Client) and a person editing the description, for 100 rounds.
//
// Guaranteed, and checked after every round:
//   - no key of ours is lost: every key either writer set, in any round,
//     is in the body;
//   - the person's last text is kept byte for byte. The person edits the
//     text as it is at that moment (the web editor edits the current text)
//     at random points of the writers' protocol: before one of our reads is
//     answered, and after one of our writes landed but before its answer
//     arrived. Both are moments a free-running person hits all the time.
//
// Not guaranteed, and shown by TestUpdateBodyResidualWindows: a person's
// edit that lands between our read and our PATCH is overwritten (GitHub has
// no compare-and-swap on a body); two writers in different processes at
// once can drop each other's keys, which is why workflows serialise Jobs
// per issue with a concurrency group. docs/github.md says the same.
func TestConcurrentWriters(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	n := e.fake.CreateIssue(githubfake.Issue{Title: "t", Body: "person text 0\n"})

	var (
		mu       sync.Mutex
		rnd      = rand.New(rand.NewPCG(1, 2))
		lastText = "person text 0\n"
		seq      int
		edits    = map[string]int{}
	)
	person := func(slot string) func() {
		return func() {
			mu.Lock()
			defer mu.Unlock()
			if rnd.IntN(3) != 0 {
				return
			}
			seq++
			text := fmt.Sprintf("person text %d\n\nedited at %s, a line with trailing spaces  \n", seq, slot)
			if err := e.fake.EditIssueBody(n, "alice", func(cur string) string { return withPersonText(cur, text) }); err != nil {
				t.Error(err)
			}
			lastText = text
			edits[slot]++
		}
	}
	path := fmt.Sprintf("/repos/*/*/issues/%d", n)
	e.fake.AddFault(githubfake.Rule{Method: "GET", Path: path, Before: person("before our read")})
	e.fake.AddFault(githubfake.Rule{Method: "PATCH", Path: path, After: person("after our write")})

	var keys []string
	for round := range 100 {
		var wg sync.WaitGroup
		for _, w := range []string{"w1", "w2"} {
			key := fmt.Sprintf("%s.r%03d", w, round)
			keys = append(keys, key)
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := e.c.UpdateBody(ctx, n, setKey(key, "done"), hasKey(key, "done")); err != nil {
					t.Errorf("round %d %s: %v", round, key, err)
				}
			}()
		}
		wg.Wait()
		is, _ := e.fake.Issue(n)
		for _, k := range keys {
			if !hasKey(k, "done")(is.Body) {
				t.Fatalf("round %d: key %s lost from\n%s", round, k, is.Body)
			}
		}
		mu.Lock()
		want := lastText
		mu.Unlock()
		if got := personText(is.Body); got != want {
			t.Fatalf("round %d: person's text %q, want their last edit %q", round, got, want)
		}
	}
	if edits["before our read"] == 0 || edits["after our write"] == 0 {
		t.Errorf("the person never edited at one of the points: %v", edits)
	}
}

// TestUpdateBodyResidualWindows pins what the protocol cannot do, so the
// limits docs/github.md states are facts, not hopes. If one of these starts
// failing, GitHub (or the fake) gained a compare-and-swap: update the docs.
func TestUpdateBodyResidualWindows(t *testing.T) {
	t.Run("a person's edit between our read and our write is overwritten", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{})
		n := e.fake.CreateIssue(githubfake.Issue{Title: "t", Body: "original\n"})
		e.fake.AddFault(githubfake.Rule{Method: "PATCH", Path: issuePath, Call: 1, Before: func() {
			e.fake.EditIssueBody(n, "alice", func(cur string) string { return withPersonText(cur, "late edit\n") })
		}})
		if _, err := e.c.UpdateBody(ctx, n, setKey("k", "v"), hasKey("k", "v")); err != nil {
			t.Fatal(err)
		}
		is, _ := e.fake.Issue(n)
		if got := personText(is.Body); got != "original\n" {
			t.Errorf("person's text %q: the late edit survived; the residual window is gone", got)
		}
	})
	t.Run("two processes at once can drop a key", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{})
		n := e.fake.CreateIssue(githubfake.Issue{Title: "t", Body: "text\n"})
		other := e.client(t)
		// While our PATCH is on its way (built from our earlier read), the
		// other process does a whole write.
		e.fake.AddFault(githubfake.Rule{Method: "PATCH", Path: issuePath, Call: 1, Before: func() {
			if _, err := other.UpdateBody(ctx, n, setKey("other", "1"), hasKey("other", "1")); err != nil {
				t.Error(err)
			}
		}})
		if _, err := e.c.UpdateBody(ctx, n, setKey("ours", "1"), hasKey("ours", "1")); err != nil {
			t.Fatal(err)
		}
		is, _ := e.fake.Issue(n)
		if hasKey("other", "1")(is.Body) || !strings.Contains(is.Body, "ours: 1") {
			t.Errorf("body %q: expected the other process's key to be lost", is.Body)
		}
	})
}
