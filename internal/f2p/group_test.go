package f2p

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/git"
)

// history is a real repository whose main holds one commit and whose work
// branch the test commits to as implement and stage do.
type history struct {
	t    *testing.T
	repo *git.Repo
	env  []string
	n    int
}

func newHistory(t *testing.T) *history {
	t.Helper()
	dir := t.TempDir()
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(),
		"GIT_CONFIG_GLOBAL=" + os.DevNull, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=roadmap test", "GIT_AUTHOR_EMAIL=test@example.invalid",
		"GIT_COMMITTER_NAME=roadmap test", "GIT_COMMITTER_EMAIL=test@example.invalid",
	}
	h := &history{t: t, env: env}
	h.git(dir, "init", "--quiet", "-b", "main")
	h.write(dir, "README.md", "# widgets\n")
	h.git(dir, "add", "--all")
	h.git(dir, "commit", "--quiet", "-m", "main")
	repo, err := git.Open(context.Background(), dir, env)
	if err != nil {
		t.Fatal(err)
	}
	h.repo = repo
	if err := repo.CheckoutBranch(context.Background(), "", "roadmap/24-f2p", "main"); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *history) git(dir string, args ...string) string {
	h.t.Helper()
	if dir == "" {
		dir = h.repo.Dir
	}
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, h.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		h.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (h *history) write(dir, name, body string) {
	h.t.Helper()
	if dir == "" {
		dir = h.repo.Dir
	}
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// change writes a file no other commit writes, so every commit has a diff.
func (h *history) change() {
	h.n++
	h.write("", fmt.Sprintf("work-%d.txt", h.n), fmt.Sprintf("change %d\n", h.n))
}

func (h *history) head() string { return h.git("", "rev-parse", "HEAD") }

// group commits as implement commits a passed group: tasks ticked, a
// Roadmap-Group trailer.
func (h *history) group(n int) string {
	h.t.Helper()
	h.change()
	h.write("", "openspec/changes/x/tasks.md", fmt.Sprintf("## %d. Group\n\n- [x] %d.1 Done; verify: `true`\n", n, n))
	sha, err := h.repo.CommitGroup(context.Background(), n, git.Message{Subject: fmt.Sprintf("roadmap: %d. Group", n), Issue: 24})
	if err != nil {
		h.t.Fatal(err)
	}
	return sha
}

// wip commits as a Job that yields or stops mid-group does.
func (h *history) wip() string {
	h.t.Helper()
	h.change()
	sha, err := h.repo.CommitWIP(context.Background(), git.Message{Subject: "roadmap: work in progress", Issue: 24})
	if err != nil || sha == "" {
		h.t.Fatalf("CommitWIP = %q, %v", sha, err)
	}
	return sha
}

// round commits a plan round as stage does: the first plan, or an
// amendment after implement handed the item back.
func (h *history) round(n int) string {
	h.t.Helper()
	h.write("", "openspec/changes/x/tasks.md", fmt.Sprintf("## 1. Group\n\n- [ ] 1.1 Round %d; verify: `true`\n", n))
	sha, err := h.repo.CommitPlanRound(context.Background(), n, git.Message{Subject: fmt.Sprintf("stage: plan round %d", n), Issue: 24})
	if err != nil {
		h.t.Fatal(err)
	}
	return sha
}

// person commits as someone with write access does: no trailer, or the
// trailers message holds.
func (h *history) person(message string) string {
	h.t.Helper()
	h.change()
	h.git("", "add", "--all")
	h.git("", "commit", "--quiet", "-m", message)
	return h.head()
}

// TestBeforeGroupOneRule checks the rule BeforeGroup documents on histories
// made as implement, stage and people make them. Each case names, for each
// group, the commit its `fails` commands must fail on and the group's end.
func TestBeforeGroupOneRule(t *testing.T) {
	ctx := context.Background()
	type want struct {
		group int
		span  Span
	}
	for _, tc := range []struct {
		name  string
		build func(h *history) (base, head string, wants []want)
	}{
		{"implement's commits, a WIP commit and a plan amendment between them", func(h *history) (string, string, []want) {
			main := h.head()
			h.round(1)
			h.wip() // group 1 in progress when Job 1 stopped
			g1 := h.group(1)
			h.round(2) // the plan amended after group 2 went back to stage
			h.wip()
			g2 := h.group(2)
			w3 := h.wip()
			return "main", "HEAD", []want{
				{1, Span{Before: main, End: g1, Own: true}},
				{2, Span{Before: g1, End: g2, Own: true}},
				// In progress: implement's work tree holds the rest.
				{3, Span{Before: g2, End: w3}},
			}
		}},
		{"a repair at the head carries a group's trailer", func(h *history) (string, string, []want) {
			main := h.head()
			g1 := h.group(1)
			h.group(2)
			r2 := h.group(2) // after group 2: r.lastGroup is 2
			r1 := h.group(1) // a Job that ran no group: max(r.lastGroup, 1)
			return "main", "HEAD", []want{
				{1, Span{Before: main, End: r1, Own: true}},
				{2, Span{Before: g1, End: r2, Own: true}},
				{3, Span{Before: r1, End: r1}},
			}
		}},
		{"a rebase onto a newer main", func(h *history) (string, string, []want) {
			old1 := h.group(1)
			h.wip()
			h.group(2)
			h.git("", "checkout", "--quiet", "main")
			h.change()
			h.git("", "add", "--all")
			h.git("", "commit", "--quiet", "-m", "main moves on")
			main := h.head()
			h.git("", "checkout", "--quiet", "roadmap/24-f2p")
			if err := h.repo.Rebase(ctx, "main"); err != nil {
				t.Fatal(err)
			}
			groups, err := h.repo.GroupCommits(ctx, "main")
			if err != nil {
				t.Fatal(err)
			}
			if groups[1] == old1 {
				t.Fatal("the rebase kept group 1's commit")
			}
			// The record's mark still names old1; the trailer moved with the commit.
			return "main", "HEAD", []want{
				{1, Span{Before: main, End: groups[1], Own: true}},
				{2, Span{Before: groups[1], End: groups[2], Own: true}},
			}
		}},
		{"the pull_request checkout: the head merged into a newer main", func(h *history) (string, string, []want) {
			g1 := h.group(1)
			g2 := h.group(2)
			h.wip()
			h.git("", "checkout", "--quiet", "main")
			h.change()
			h.git("", "add", "--all")
			h.git("", "commit", "--quiet", "-m", "main moves on")
			main := h.head()
			h.git("", "checkout", "--quiet", "--detach", "main") // refs/pull/N/merge
			h.git("", "merge", "--quiet", "--no-ff", "--no-edit", "roadmap/24-f2p")
			merge := h.head()
			return "main", merge, []want{
				{1, Span{Before: main, End: g1, Own: true}},
				{2, Span{Before: g1, End: g2, Own: true}},
				{3, Span{Before: g2, End: merge}},
			}
		}},
		{"ancestry orders the groups, not their numbers", func(h *history) (string, string, []want) {
			main := h.head()
			g2 := h.group(2) // an amended plan numbered the groups anew
			g1 := h.group(1)
			return "main", "HEAD", []want{
				{2, Span{Before: main, End: g2, Own: true}},
				{1, Span{Before: g2, End: g1, Own: true}},
				{3, Span{Before: g1, End: g1}},
			}
		}},
		{"a commit that names two groups", func(h *history) (string, string, []want) {
			main := h.head()
			both := h.person("squashed\n\nRoadmap-Group: 1\nRoadmap-Group: 2")
			g3 := h.group(3)
			return "main", "HEAD", []want{
				{1, Span{Before: main, End: both, Own: true}},
				{2, Span{Before: main, End: both, Own: true}},
				{3, Span{Before: both, End: g3, Own: true}},
			}
		}},
		{"a person's PR without trailers", func(h *history) (string, string, []want) {
			main := h.head()
			h.person("add the farewell test")
			head := h.person("say goodbye\n\nRoadmap-Group: two")
			return "main", "HEAD", []want{
				{1, Span{Before: main, End: head}},
				{2, Span{Before: main, End: head}},
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHistory(t)
			base, head, wants := tc.build(h)
			for _, w := range wants {
				got, err := BeforeGroup(ctx, h.repo, base, head, w.group)
				if err != nil {
					t.Fatalf("group %d: %v", w.group, err)
				}
				if diff := cmp.Diff(w.span, got); diff != "" {
					t.Errorf("group %d (-want +got):\n%s\n%s", w.group, diff, h.git("", "log", "--all", "--graph", "--format=%h %s %(trailers:key=Roadmap-Group,valueonly,separator=%x2C)"))
				}
			}
		})
	}
}

func TestBeforeGroupErrors(t *testing.T) {
	h := newHistory(t)
	h.group(1)
	if _, err := BeforeGroup(context.Background(), h.repo, "trunk", "HEAD", 1); err == nil || !strings.Contains(err.Error(), "trunk") {
		t.Errorf("a base that is not there: err = %v, want it named", err)
	}
}

func TestJudge(t *testing.T) {
	const a, b = "go test ./a", "go test ./b"
	failed := func(cmd string) Outcome { return Outcome{Command: cmd, ExitCode: 1} }
	passed := func(cmd string) Outcome { return Outcome{Command: cmd} }
	for _, tc := range []struct {
		name          string
		before, after []Outcome
		held          bool
		failed, log   string
	}{
		{"failed before, passed after", []Outcome{failed(a), failed(b)}, []Outcome{passed(a), passed(b)}, true, "", ""},
		{"a timeout before is a failure", []Outcome{{Command: a, TimedOut: true}, failed(b)}, []Outcome{passed(a), passed(b)}, true, "", ""},
		{"passed before: the before run's log is the evidence", []Outcome{failed(a), {Command: b, Log: "$ go test ./b\nok\n[exit 0: this command must fail before the group's change]"}},
			[]Outcome{passed(a), passed(b)}, false, b, "$ go test ./b\nok\n[exit 0: this command must fail before the group's change]"},
		{"passed before, no log kept", []Outcome{passed(a), failed(b)}, []Outcome{passed(a), passed(b)}, false, a,
			"$ go test ./a\n[exit 0: this command must fail before the group's change]"},
		{"not run after", []Outcome{failed(a), failed(b)}, []Outcome{passed(a)}, false, b, "$ go test ./b\n[not run after the group's change]"},
		{"not run before", []Outcome{failed(a)}, []Outcome{passed(a), passed(b)}, false, b, "$ go test ./b\n[not run before the group's change]"},
		{"failed after", []Outcome{failed(a), failed(b)}, []Outcome{{Command: a, ExitCode: 2}, passed(b)}, false, a, "$ go test ./a\n[exit 2 after the group's change]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Judge([]string{a, " ", b, a}, tc.before, tc.after)
			if got.Held != tc.held || got.Failed != tc.failed || got.Log != tc.log {
				t.Errorf("Judge = held %v, failed %q, log %q; want %v, %q, %q", got.Held, got.Failed, got.Log, tc.held, tc.failed, tc.log)
			}
			if len(got.Verdicts) != 2 {
				t.Errorf("verdicts = %+v, want one per command, blank and repeated ones dropped", got.Verdicts)
			}
		})
	}
}

// TestGroupCheck makes the before tree of a real history: the group's test
// file is laid over the commit before the group, the commands run in the
// workspace there, and the worktree is gone afterwards.
func TestGroupCheck(t *testing.T) {
	ctx := context.Background()
	h := newHistory(t)
	h.write("", "app/greeting.txt", "hello\n")
	h.group(1)
	g1 := h.head()
	h.write("", "app/tests/expect.txt", "goodbye\n")
	h.wip()
	h.write("", "app/greeting.txt", "hello\ngoodbye\n")
	h.group(2)
	span, err := BeforeGroup(ctx, h.repo, "main", "HEAD", 2)
	if err != nil {
		t.Fatal(err)
	}
	const cmd = "grep -q -f tests/expect.txt greeting.txt"
	var dirs []string
	grep := func(ctx context.Context, dir string, cmds []string) ([]Outcome, error) {
		dirs = append(dirs, dir)
		var out []Outcome
		for _, c := range cmds {
			argv := strings.Fields(c)
			run := exec.CommandContext(ctx, argv[0], argv[1:]...)
			run.Dir = dir
			o := Outcome{Command: c}
			if err := run.Run(); err != nil {
				o.ExitCode = run.ProcessState.ExitCode()
			} else {
				o.Log = "$ " + c + "\n[exit 0]"
			}
			out = append(out, o)
		}
		return out, nil
	}
	check := GroupCheck{Repo: h.repo, Span: span, Sub: "app", TempDir: t.TempDir(), Fails: []string{cmd},
		Run: grep, After: []Outcome{{Command: cmd}}}
	got, err := check.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// grep exits 1 (no match), not 2 (no such file): the test file was laid over.
	if !got.Held || got.Before != g1 || len(got.Verdicts) != 1 || got.Verdicts[0].Before.ExitCode != 1 {
		t.Errorf("Check = %+v, want held on %s with grep exiting 1", got, g1)
	}
	if diff := cmp.Diff([]string{"app/tests/expect.txt"}, got.Overlay); diff != "" {
		t.Errorf("overlay (-want +got):\n%s", diff)
	}
	if len(dirs) != 1 || filepath.Base(dirs[0]) != "app" {
		t.Errorf("ran in %v, want the workspace app/ of the before tree", dirs)
	}
	if _, err := os.Stat(dirs[0]); !os.IsNotExist(err) {
		t.Errorf("the before tree %s is left behind (%v)", dirs[0], err)
	}

	// The group's test already passes on the tree before it: the evidence.
	check.Span.Before = span.End
	check.Target = h.git("", "rev-parse", "HEAD^{tree}")
	got, err = check.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Held || got.Failed != cmd || got.Log != "$ "+cmd+"\n[exit 0]" {
		t.Errorf("Check = %+v, want %q failed with its before log", got, cmd)
	}

	check.Target = ""
	if _, err := check.Check(ctx); err == nil || !strings.Contains(err.Error(), "no change of its own") {
		t.Errorf("an empty change: err = %v, want it said", err)
	}
	check.Span, check.Sub = span, "web"
	if _, err := check.Check(ctx); err == nil || !strings.Contains(err.Error(), "the workspace web does not exist") {
		t.Errorf("no workspace: err = %v, want it said", err)
	}
	check.Sub, check.Run = "", nil
	if _, err := check.Check(ctx); err == nil || !strings.Contains(err.Error(), "no isolation boundary") {
		t.Errorf("no runner: err = %v, want it said", err)
	}
}
