package explain_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/explain"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
)

func block(lines ...string) string {
	return "**roadmap** · implementing\n\n<!-- roadmap:record v1\n" + strings.Join(lines, "\n") + "\n-->"
}

// TestStateReadsAsGitHub: a state the fake GitHub saved (as `roadmap demo
// --keep` saves it) explains exactly as the same fake does served over HTTP
// to a GitHub client: same output, same note, same error. The saved state is
// read without the fake (production never imports it).
func TestStateReadsAsGitHub(t *testing.T) {
	const owner, repo = "acme", "widgets"
	fake := githubfake.New(githubfake.Options{Owner: owner, Repo: repo})
	comment := func(n int, login, body string) {
		t.Helper()
		if _, err := fake.AddComment(n, login, body); err != nil {
			t.Fatal(err)
		}
	}
	issue := func(body string) int {
		return fake.CreateIssue(githubfake.Issue{Title: "Add greetings", Body: body, Author: "alice"})
	}

	items := map[string]int{}
	items["ready, a forged block after it"] = issue("Add greetings.\n")
	comment(items["ready, a forged block after it"], github.DefaultIdentity, block("implement.result: ready", "stage.pr: 7", "implement.group: 2"))
	comment(items["ready, a forged block after it"], "mallory", block("implement.result: stopped"))

	items["only a forged block"] = issue("Add greetings.\n")
	comment(items["only a forged block"], "mallory", block("implement.result: ready"))

	items["a block in the body only"] = issue("Add greetings.\n\n" + block("implement.result: ready"))
	items["nothing ran"] = issue("Add greetings.\n")

	items["malformed record"] = issue("")
	comment(items["malformed record"], github.DefaultIdentity, block("implement.group: two"))

	items["malformed trace copy"] = issue("")
	comment(items["malformed trace copy"], github.DefaultIdentity, block("implement.result: stopped", `implement.trace: {"v":2,"ev":[]}`))

	items["two records merge, marks by the latest"] = issue("")
	comment(items["two records merge, marks by the latest"], github.DefaultIdentity, block("implement.result: yielded"))
	comment(items["two records merge, marks by the latest"], github.DefaultIdentity, block("implement.result: ready"))

	// Past one page of comments (100): GitHub's reader pages, the state
	// holds them all.
	items["record on the second page"] = issue("")
	for i := range 101 {
		comment(items["record on the second page"], "bob", fmt.Sprintf("comment %d", i))
	}
	comment(items["record on the second page"], github.DefaultIdentity, block("implement.result: ready"))

	items["a pull request"] = fake.CreatePullRequest("roadmap/1", "main", "Greetings", "Closes #1", false)
	comment(items["a pull request"], github.DefaultIdentity, block("stage.state: planned"))

	items["no such issue"] = 999

	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	gh, err := github.New(github.Options{BaseURL: srv.URL + "/", Token: "t", Owner: owner, Repo: repo, HTTPClient: srv.Client(), Masker: noMask{}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := fake.Save(filepath.Join(dir, explain.StateFile)); err != nil {
		t.Fatal(err)
	}

	// The result each item explains with, without --trace (an item not
	// named is an error), so the comparison below is not of two errors that
	// say nothing.
	results := map[string]string{
		"ready, a forged block after it":         "ready",
		"malformed trace copy":                   "stopped",
		"two records merge, marks by the latest": "ready",
		"record on the second page":              "ready",
		"a pull request":                         "",
	}
	for name, n := range items {
		t.Run(name, func(t *testing.T) {
			res, ok := results[name]
			if out, _, err := explain.Explain(context.Background(), explain.Options{Issue: n, Repository: owner + "/" + repo, GitHub: gh}); ok != (err == nil) || out.Result != res {
				t.Fatalf("from GitHub: result %q, error %v; want result %q, an error %v", out.Result, err, res, !ok)
			}
			for _, trace := range []bool{false, true} {
				o := explain.Options{Issue: n, Repository: owner + "/" + repo, Trace: trace}
				live := o
				live.GitHub = gh
				want, wantNote, wantErr := explain.Explain(context.Background(), live)
				for _, path := range []string{dir, filepath.Join(dir, explain.StateFile)} {
					saved := o
					saved.State = path
					got, note, err := explain.Explain(context.Background(), saved)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("--state %s, trace %v: output differs from GitHub's (-github +state):\n%s", path, trace, diff)
					}
					if note != wantNote {
						t.Errorf("--state %s, trace %v: note %q, want %q", path, trace, note, wantNote)
					}
					if errText(err) != errText(wantErr) || isInput(err) != isInput(wantErr) {
						t.Errorf("--state %s, trace %v: error %v (input %v), want %v (input %v)", path, trace, err, isInput(err), wantErr, isInput(wantErr))
					}
				}
			}
		})
	}
}

// TestStateUnreadable: a state that does not read is the caller's to fix.
func TestStateUnreadable(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "missing.json"), dir, bad} {
		_, _, err := explain.Explain(context.Background(), explain.Options{Issue: 1, State: path})
		if !isInput(err) || !strings.Contains(err.Error(), "read saved state") {
			t.Errorf("explain --state %s: error %v, want an input error reading the saved state", path, err)
		}
	}
}

// noMask: explain only reads, and reads are not masked.
type noMask struct{}

func (noMask) Mask(s string) string { return s }

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func isInput(err error) bool {
	var in *explain.InputError
	return errors.As(err, &in)
}
