package implement_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
	theworld "github.com/roadmap-dev/roadmap/internal/world"
)

// goWorld is an item whose one group adds Greet, calling the base's Hello,
// and whose verify command is the build: `go build ./...`.
func goWorld(t *testing.T) *world {
	t.Helper()
	return newWorldWith(t, 1, "", func(o *theworld.Options) {
		o.Files = map[string]string{
			"README.md":              "# widgets\n",
			"go.mod":                 "module example.com/widgets\n\ngo 1.22\n",
			"hello.go":               "package widgets\n\n// Hello is the greeting.\nfunc Hello() string { return \"hello\" }\n",
			planDir + "/proposal.md": "# Add greetings\n\nGreet says hello to the world.\n",
			planDir + "/tasks.md":    "## 1. Greet\n\n- [ ] 1.1 Add Greet in greet.go, calling Hello; verify: `go build ./...`\n",
		}
	})
}

// moveBase commits files on main in the world's seed clone and pushes it:
// the base moving on the remote while the item is worked. It returns the
// new tip.
func (w *world) moveBase(msg string, files map[string]string) string {
	t := w.t
	seed := w.base.Seed
	run(t, seed, "git", "pull", "-q", "--ff-only", "origin", "main")
	if err := theworld.WriteFiles(seed, files); err != nil {
		t.Fatal(err)
	}
	for name := range files {
		run(t, seed, "git", "add", "--", name)
	}
	run(t, seed, "git", "commit", "-q", "-m", msg)
	run(t, seed, "git", "push", "-q", "origin", "main")
	return w.base.RemoteHead("main")
}

func (w *world) branchFile(path string) string {
	return run(w.t, w.dir, "git", "--git-dir", w.remote, "show", fmt.Sprintf("roadmap/%d-add-greetings:%s", w.issue, path))
}

func (w *world) branchContains(rev string) bool {
	_, err := theworld.Git(gitEnv(), w.dir, "--git-dir", w.remote, "merge-base", "--is-ancestor", rev, fmt.Sprintf("roadmap/%d-add-greetings", w.issue))
	return err == nil
}

// greetConv is group 1: Greet in greet.go calling fn, then finish.
func greetConv(t *testing.T, name, match, fn string) *llm.Conversation {
	return conversation(t, name, match, "greet.go", "package widgets\n\n// Greet greets the world.\nfunc Greet() string { return "+fn+"() + \" world\" }\n")
}

// renameHello is the base's change after the branch was cut: Hello becomes
// Salute. The branch alone builds, the base alone builds; merged, Greet
// calls a function that no longer exists.
var renameHello = map[string]string{"hello.go": "package widgets\n\n// Salute is the greeting.\nfunc Salute() string { return \"hello\" }\n"}

// TestMergedTreeChecked: the base renames Hello while the item's group adds
// a caller of it. The head is green, the base is green, the merge does not
// build: the item does not end ready on the green head. The merged check
// fails, the base is merged into the branch and the head repaired (ready,
// with the merged base recorded), or, with no repair that holds, the item
// stops checks_failed with the build's log and the PR stays a draft.
func TestMergedTreeChecked(t *testing.T) {
	for _, tc := range []struct {
		name   string
		repair string // the function the repair's Greet calls
	}{
		{"repaired", "Salute"},
		{"stopped", "Hello"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := goWorld(t)
			w.fake.ScriptCI(ciWorkflow, githubfake.CIJob{Name: "test"})
			j := w.newJob([]*llm.Conversation{
				greetConv(t, "group-1", "task group 1 of", "Hello"),
				greetConv(t, "repair", "a check fails at the head", tc.repair),
			})
			var dirs []string
			withBeforeTree(j, &dirs)
			j.opts.CIWorkflows = []string{ciWorkflow}
			j.opts.RepairRounds = 1
			var moved string
			j.model.Before = func(n int, _ agent.ModelRequest) {
				if n == 1 {
					moved = w.moveBase("rename Hello to Salute", renameHello)
				}
			}
			res := j.run()
			log := j.log.String()
			if moved == "" {
				t.Fatal("the base never moved")
			}
			if len(dirs) == 0 {
				t.Fatalf("no merged tree was checked\n%s", log)
			}
			if !strings.Contains(log, "merged check failed: go build ./... exited 1") {
				t.Errorf("the log does not name the merged check's failure:\n%s", log)
			}
			if !w.branchContains(moved) {
				t.Errorf("the branch does not take in the base %s after the merged check failed", moved)
			}
			if tc.repair == "Hello" {
				if res.Result != record.ResultStopped || res.Failure != "checks_failed" {
					t.Fatalf("Job ended %s/%s (%s), want stopped checks_failed: no repair holds on the merged tree\n%s", res.Result, res.Failure, res.Reason, log)
				}
				if !w.draft(t, j, res.PR) {
					t.Errorf("PR #%d is ready; the merged tree does not build", res.PR)
				}
				if cl, _ := w.record().CheckLog(); !strings.Contains(cl, "undefined: Hello") {
					t.Errorf("implement.check_log = %q, want the merged build's error", cl)
				}
				if mb, ok := w.record().MergedBase(); ok && string(mb) == moved {
					t.Errorf("implement.merged_base = %s, the base the merged checks failed on", mb)
				}
				return
			}
			if res.Result != record.ResultReady {
				t.Fatalf("Job ended %s/%s (%s), want ready after the repair on the merged tree\n%s", res.Result, res.Failure, res.Reason, log)
			}
			var prompt string
			for _, r := range j.model.Requests() {
				if strings.Contains(firstUser(r), "a check fails at the head") {
					for _, m := range r.Messages {
						prompt += m.Content + "\n"
					}
					break
				}
			}
			if !strings.Contains(prompt, "merged check") || !strings.Contains(prompt, "undefined: Hello") {
				t.Errorf("the repair step's prompt lacks the merged check's log:\n%s", prompt)
			}
			if got := w.branchFile("greet.go"); !strings.Contains(got, "Salute()") {
				t.Errorf("greet.go on the branch = %q, want the repair calling Salute", got)
			}
			if mb, _ := w.record().MergedBase(); string(mb) != moved {
				t.Errorf("implement.merged_base = %q, want %s (the base the checks passed on)", mb, moved)
			}
		})
	}
}

// TestStaleBaseRechecked: the base moves once before the merged check
// (checked on a scratch tree) and once more after it, before ready. The
// base's tip read right before the mark ready is not the one checked: the
// merged tree is checked again on the new base, and the recorded merged
// base is the new tip.
func TestStaleBaseRechecked(t *testing.T) {
	w := goWorld(t)
	w.fake.ScriptCI(ciWorkflow, githubfake.CIJob{Name: "test"})
	j := w.newJob([]*llm.Conversation{greetConv(t, "group-1", "task group 1 of", "Hello")})
	var dirs []string
	withBeforeTree(j, &dirs)
	j.opts.CIWorkflows = []string{ciWorkflow}
	var first, second string
	j.model.Before = func(n int, _ agent.ModelRequest) {
		if n == 1 {
			first = w.moveBase("docs: usage", map[string]string{"USAGE.md": "call Hello\n"})
		}
	}
	// The base moves again once the first merged tree is done with: after
	// the merged check, before ready.
	hook := j.opts.Repo.Hook
	j.opts.Repo.Hook = func(args []string, done bool, err error) {
		if hook != nil {
			hook(args, done, err)
		}
		if done && second == "" && len(args) > 1 && args[0] == "worktree" && args[1] == "remove" {
			second = w.moveBase("docs: more usage", map[string]string{"MORE.md": "call Hello twice\n"})
		}
	}
	res := j.run()
	log := j.log.String()
	if res.Result != record.ResultReady {
		t.Fatalf("Job ended %s/%s (%s), want ready\n%s", res.Result, res.Failure, res.Reason, log)
	}
	if first == "" || second == "" {
		t.Fatalf("the base moved to %q then %q, want twice", first, second)
	}
	if len(dirs) != 2 {
		t.Errorf("merged trees checked: %d (%q), want 2: one per base", len(dirs), dirs)
	}
	if !strings.Contains(log, "checking again before ready") || !strings.Contains(log, "merged check passed: ") {
		t.Errorf("the log does not show the re-check before ready:\n%s", log)
	}
	if mb, _ := w.record().MergedBase(); string(mb) != second {
		t.Errorf("implement.merged_base = %q, want the base's tip at ready %s (not %s)", mb, second, first)
	}
	// A merged check that passed does not touch the branch.
	if w.branchContains(first) {
		t.Errorf("the branch took in the base though the merged checks passed")
	}
}
