package f2p

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/git"
)

// Span is a task group's change in a branch's history: from the tree before
// it to its end.
type Span struct {
	// Before is the commit the group's `fails` commands must fail on.
	Before string
	// End is the group's newest commit, or the head when the group has none
	// yet (implement is making it; a person wrote it without trailers).
	End string
	// Own says End is the group's own commit, not the head.
	Own bool
}

// BeforeGroup finds the tree before group n of a plan on the branch at head,
// whose base branch is base. It is the one rule both implement (before it
// commits a group) and the PR check (on a pushed history) judge a group's
// fail-to-pass by:
//
//	The group's commits are the commits in merge-base(base, head)..head
//	whose `Roadmap-Group` trailers name n. The tree before the group is the
//	newest commit whose trailers name a group, among the ancestors of the
//	group's oldest commit (that commit excluded), or, when the group has no
//	commit yet, among the ancestors of head (head included). With no such
//	commit it is the merge base.
//
// So a commit that names no group — a WIP commit an earlier Job left, a plan
// round or amendment stage pushed, a merge, a person's commit — belongs to
// the change of the group committed after it, or to the group in progress;
// and a later commit of the same group (the repair at the head carries the
// last group's trailer) extends the group's change without moving its
// start. Trailers, not the record's marks or the ticks in tasks.md: a mark's
// sha goes stale when the branch is rebased and the PR check does not read
// the record; ticks are edited by hand and rewritten by an amendment; a
// trailer survives a rebase and is what implement reads to know that a group
// passed (git.GroupCommits). Ancestry, not group numbers, orders the groups:
// a plan amended after a group was committed may number the groups out of
// the order they were committed in.
func BeforeGroup(ctx context.Context, repo *git.Repo, base, head string, n int) (Span, error) {
	end, err := repo.RevParse(ctx, head)
	if err != nil {
		return Span{}, err
	}
	mb, err := repo.MergeBase(ctx, base, end)
	if err != nil {
		return Span{}, err
	}
	log, err := repo.GroupLog(ctx, mb, end)
	if err != nil {
		return Span{}, err
	}
	span := Span{End: end}
	first := ""
	for _, c := range log {
		if c.Names(n) {
			if !span.Own {
				span.End, span.Own = c.SHA, true
			}
			first = c.SHA
		}
	}
	below := log
	if span.Own {
		// The ancestors of the group's oldest commit, which heads its own
		// log; in a history with merges, not every commit after it in log
		// is one.
		if below, err = repo.GroupLog(ctx, mb, first); err != nil {
			return Span{}, err
		}
		if len(below) > 0 && below[0].SHA == first {
			below = below[1:]
		}
	}
	span.Before = mb
	for _, c := range below {
		if len(c.Groups) > 0 {
			span.Before = c.SHA
			break
		}
	}
	return span, nil
}

// Outcome is how one command ended in one tree.
type Outcome struct {
	Command  string
	ExitCode int
	TimedOut bool
	// Log is the masked tail of its output, headed by the command; callers
	// keep it where it is evidence (a `fails` command that passed before the
	// group's change). "" when not kept.
	Log string
}

// Passed reports whether the command exited 0 within its time.
func (o Outcome) Passed() bool { return o.ExitCode == 0 && !o.TimedOut }

// Verdict is one `fails` command across a group's change.
type Verdict struct {
	Command string
	Before  Outcome
	After   Outcome
	// RanBefore and RanAfter say the command ran on that side at all.
	RanBefore, RanAfter bool
	// Held: it failed before the group's change and passed after it.
	Held bool
}

// Judgement is a group's fail-to-pass, every `fails` command judged.
type Judgement struct {
	Held     bool // every command held
	Verdicts []Verdict
	// Failed is the first command that did not hold, and Log the evidence:
	// its output before the change when it passed there, else why not.
	Failed, Log string
}

// Judge judges each of a group's `fails` commands (blank ones skipped, each
// once) by how it ended on the tree before the group's change and after it.
func Judge(fails []string, before, after []Outcome) Judgement {
	index := func(os []Outcome) map[string]Outcome {
		m := map[string]Outcome{}
		for _, o := range os {
			m[strings.TrimSpace(o.Command)] = o
		}
		return m
	}
	bs, as := index(before), index(after)
	j := Judgement{Held: true}
	seen := map[string]bool{}
	for _, cmd := range fails {
		cmd = strings.TrimSpace(cmd)
		if cmd == "" || seen[cmd] {
			continue
		}
		seen[cmd] = true
		v := Verdict{Command: cmd}
		v.Before, v.RanBefore = bs[cmd]
		v.After, v.RanAfter = as[cmd]
		v.Held = v.RanBefore && !v.Before.Passed() && v.RanAfter && v.After.Passed()
		j.Verdicts = append(j.Verdicts, v)
		if v.Held || !j.Held {
			continue
		}
		j.Held, j.Failed = false, cmd
		switch {
		case !v.RanBefore:
			j.Log = "$ " + cmd + "\n[not run before the group's change]"
		case v.Before.Passed() && v.Before.Log != "":
			j.Log = v.Before.Log
		case v.Before.Passed():
			j.Log = "$ " + cmd + "\n[exit 0: this command must fail before the group's change]"
		case !v.RanAfter:
			j.Log = "$ " + cmd + "\n[not run after the group's change]"
		case v.After.Log != "":
			j.Log = v.After.Log
		default:
			j.Log = fmt.Sprintf("$ %s\n[exit %d after the group's change]", cmd, v.After.ExitCode)
		}
	}
	return j
}

// BeforeRunner runs cmds, every one to its end, in dir (the workspace in
// the tree before a group), inside an isolation boundary it opens and
// closes, and says how each ended. A command that exits non-zero is an
// Outcome, not an error.
type BeforeRunner func(ctx context.Context, dir string, cmds []string) ([]Outcome, error)

// GroupCheck is one group's fail-to-pass: its `fails` commands on the tree
// before the group, with the group's test files laid over it, judged with
// how they ended after the group's change.
type GroupCheck struct {
	Repo *git.Repo
	Span Span // from BeforeGroup
	// Target is the tree whose test files are laid over the before tree; ""
	// is Span.End. Implement gives the work tree as the group's commit will
	// hold it (git.WorkTreeTree).
	Target string
	// Sub is the workspace's place in the repository, slash-separated; ""
	// is its top.
	Sub string
	// TempDir holds the worktree ("" is the system's).
	TempDir string
	Fails   []string
	Run     BeforeRunner
	// After is how the commands ended after the group's change: the
	// group's checks at the head, which the caller ran.
	After []Outcome
}

// GroupResult is a GroupCheck's outcome.
type GroupResult struct {
	Judgement
	Before  string   // the commit the before tree was made from
	Overlay []string // the test files laid over it
}

// Check makes the tree before the group in a worktree of its own, runs the
// `fails` commands there and judges them. The error is a before tree that
// could not be had: callers report fail-to-pass as not checked, with it.
func (c GroupCheck) Check(ctx context.Context) (GroupResult, error) {
	res := GroupResult{Before: c.Span.Before}
	target := c.Target
	if target == "" {
		target = c.Span.End
	}
	if target == c.Span.Before {
		return res, fmt.Errorf("the group has no change of its own after %s", c.Span.Before)
	}
	if c.Run == nil {
		return res, errors.New("no isolation boundary for the tree before the group")
	}
	tmp := c.TempDir
	if tmp == "" {
		tmp = os.TempDir()
	}
	wt, err := c.Repo.AddWorktree(ctx, c.Span.Before, tmp)
	if err != nil {
		return res, fmt.Errorf("the tree before the group: %w", err)
	}
	defer wt.Remove(ctx)
	if res.Overlay, err = wt.Overlay(ctx, c.Span.Before, target, IsTestFile); err != nil {
		return res, fmt.Errorf("the group's test files: %w", err)
	}
	dir := wt.Dir
	if sub := path.Clean("/" + filepath.ToSlash(c.Sub))[1:]; sub != "" {
		dir = filepath.Join(wt.Dir, filepath.FromSlash(sub))
		if _, err := os.Stat(dir); err != nil {
			return res, fmt.Errorf("the workspace %s does not exist at %s", sub, c.Span.Before)
		}
	}
	before, err := c.Run(ctx, dir, c.Fails)
	if err != nil {
		return res, err
	}
	res.Judgement = Judge(c.Fails, before, c.After)
	return res, nil
}
