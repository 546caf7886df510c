package implement

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/gates"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/kernel"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/trace"
	"github.com/roadmap-dev/roadmap/internal/waves"
)

// side is what a group that runs beside the first group of its wave has of
// its own (implement.parallel_groups): a scratch work tree of the branch at
// the wave's base, the isolation boundary opened on it, the agent's sandbox
// there and the observer its calls are booked through, and the notes it
// leaves for the record comment.
type side struct {
	g        plan.Group
	wt       *git.Worktree
	closeFn  func() error
	sandbox  agent.Sandbox
	observer agent.Observer
	notes    []string

	sub      *runner
	change   *plan.Change
	end      ending
	ok       bool
	start    time.Time
	duration time.Duration
}

// waves splits the groups this Job runs into waves (internal/waves). Without
// implement.parallel_groups, or without a boundary for a second work tree,
// or when the plan cannot be read for it, every group is a wave of its own:
// the groups run one by one as they always have.
func (r *runner) waves(change *plan.Change, todo []plan.Group) []waves.Wave {
	one := func() []waves.Wave {
		out := make([]waves.Wave, 0, len(todo))
		for _, g := range todo {
			out = append(out, waves.Wave{Groups: []plan.Group{g}})
		}
		return out
	}
	if !r.o.ParallelGroups || len(todo) < 2 {
		return one()
	}
	if r.o.GroupTree == nil {
		r.j.Logf("roadmap: parallel groups: no isolation boundary for a second work tree; the groups run one by one")
		return one()
	}
	deps, err := gates.GroupDependencies(gates.Input{Root: r.workdir, Change: change})
	if err != nil {
		r.j.Logf("roadmap: parallel groups: the group-order gate cannot read the plan (%v); the groups run one by one", err)
		return one()
	}
	units := map[int][]string{}
	for _, g := range todo {
		units[g.Number] = waves.Units(g)
	}
	ws := waves.Plan(todo, units, deps)
	for _, w := range ws {
		for i, g := range w.Groups {
			if i > 0 || g.Number != todo[0].Number {
				r.j.Logf("roadmap: parallel groups: %s", w.Why[i])
			}
		}
	}
	return ws
}

// runWave runs a wave of two or more groups. The first runs in the Job's
// own work tree as any group does; each other runs at once in a scratch
// work tree of the branch at the same commit, its agent session behind a
// boundary of its own. When all have ended, in plan order: the first is
// published (push and mark, publishGroup); each other's commit is
// cherry-picked onto the branch, its checks run at the new head, and it is
// published. A group that failed in its tree, whose commit conflicts, or
// whose checks fail on the branch runs again alone here, so nothing it did
// is taken on faith and nothing is lost without a trace in the log.
func (r *runner) runWave(ctx context.Context, change *plan.Change, w waves.Wave, first bool, last, total int) (ending, bool) {
	o := r.o
	nums := make([]string, 0, len(w.Groups))
	for _, g := range w.Groups {
		nums = append(nums, fmt.Sprint(g.Number))
	}
	if end, ok := r.checkTime(ctx, "groups "+strings.Join(nums, ", ")); !ok {
		return end, false
	}
	if end, ok := r.people(ctx, "groups "+strings.Join(nums, ", ")); !ok {
		return end, false
	}
	base := r.head
	sides, err := r.openSides(ctx, change, w.Groups[1:], base)
	defer func() {
		for _, s := range sides {
			s.close(ctx, r)
		}
	}()
	if err != nil {
		r.j.Logf("roadmap: parallel groups: a scratch tree for groups %s: %v; they run one by one", strings.Join(nums[1:], ", "), err)
		for i, g := range w.Groups {
			if end, ok := r.oneGroup(ctx, change, g, first && i == 0, last, total); !ok {
				return end, false
			}
		}
		return ending{}, true
	}
	end := r.j.Section("roadmap: groups %s of %d at once", strings.Join(nums, ", "), total)
	r.j.Logf("roadmap: groups %s run at once from %s: group %d here, the others each in a scratch work tree behind a boundary of its own; they are applied in plan order",
		strings.Join(nums, ", "), short(base), w.Groups[0].Number)
	g0 := w.Groups[0]
	r.j.Group = g0.Number
	r.j.Doing = fmt.Sprintf("implementing groups %s of %d at once", strings.Join(nums, ", "), total)
	r.showProgress(ctx)
	o.Trace.SetGroup(g0.Number)
	for _, g := range w.Groups {
		r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseGroupStarted, Group: g.Number, Step: g.Title})
	}
	// A group that fails stops the ones after it in the wave: they could
	// not be published before it anyway.
	ctxs := make([]context.Context, len(w.Groups))
	cancels := make([]context.CancelFunc, len(w.Groups))
	for i := range w.Groups {
		ctxs[i], cancels[i] = context.WithCancel(ctx)
		defer cancels[i]()
	}
	stopAfter := func(i int) {
		for k := i + 1; k < len(cancels); k++ {
			cancels[k]()
		}
	}
	var wg sync.WaitGroup
	for i, s := range sides {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.start = o.Clock.Now()
			s.end, s.ok = s.sub.runGroup(ctxs[i+1], s.change, s.g, false)
			s.duration = o.Clock.Now().Sub(s.start)
			if !s.ok {
				stopAfter(i + 1)
			}
		}()
	}
	start := o.Clock.Now()
	e0, ok0 := r.runGroup(ctxs[0], change, g0, first)
	if !ok0 {
		stopAfter(0)
	}
	wg.Wait()
	end()
	for _, s := range sides {
		r.takeSide(s)
	}
	if !ok0 {
		r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseGroupFailed, Group: g0.Number, Step: groupStep(g0), Reason: e0.reason})
		return e0, false
	}
	r.groupSecs = append(r.groupSecs, int(o.Clock.Now().Sub(start).Round(time.Second)/time.Second))
	if e, ok := r.publishGroup(ctx, g0, g0.Number == last); !ok {
		return e, false
	}
	r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseGroupPassed, Group: g0.Number, Step: groupStep(g0), Duration: o.Clock.Now().Sub(start)})
	for _, s := range sides {
		if end, ok := r.applySide(ctx, change, s, last, total); !ok {
			return end, false
		}
	}
	return ending{}, true
}

// openSides makes a scratch tree at base and opens a boundary on it for each
// group; on an error what was opened is closed by the caller.
func (r *runner) openSides(ctx context.Context, change *plan.Change, groups []plan.Group, base string) ([]*side, error) {
	o := r.o
	var out []*side
	rel, err := changeRel(r.workdir, change.Dir)
	if err != nil {
		return nil, err
	}
	for _, g := range groups {
		wt, err := o.Repo.AddWorktree(ctx, base, o.TempDir)
		if err != nil {
			return out, err
		}
		s := &side{g: g, wt: wt}
		out = append(out, s)
		sb, checkRunner, ws, closeFn, err := o.GroupTree(ctx, wt.Dir)
		if err != nil {
			return out, fmt.Errorf("the boundary of group %d's tree: %w", g.Number, err)
		}
		s.closeFn, s.sandbox, s.observer = closeFn, sb, r.j.SessionObserver(g.Number)
		// No credential (Repo.Authenticate is not inherited): a side
		// commits in its tree and never talks to the remote; the Job's own
		// Repo publishes what it did.
		repo, err := git.Open(ctx, wt.Dir, o.Repo.Env)
		if err != nil {
			return out, err
		}
		repo.Hook, repo.SecretScan = o.Repo.Hook, o.Repo.SecretScan
		if s.change, err = plan.LoadChangeIn(ws, rel); err != nil {
			return out, fmt.Errorf("the plan in group %d's tree: %w", g.Number, err)
		}
		sub := *r
		sub.o.Repo, sub.o.CheckRunner = repo, checkRunner
		sub.workdir, sub.side = ws, s
		sub.pending, sub.ready, sub.head = record.Changes{}, r.ready.ForSide(), base
		s.sub = &sub
	}
	return out, nil
}

// changeRel is the change's directory relative to the work tree.
func changeRel(workdir, dir string) (string, error) {
	rel, err := filepath.Rel(workdir, dir)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("the plan %s is not inside the work tree", dir)
	}
	return rel, nil
}

// close removes the side's tree and closes its boundary.
func (s *side) close(ctx context.Context, r *runner) {
	if s.closeFn != nil {
		if err := s.closeFn(); err != nil {
			r.j.Logf("roadmap: close the boundary of group %d's tree: %v", s.g.Number, err)
		}
		s.closeFn = nil
	}
	if s.wt != nil {
		s.wt.Remove(ctx)
		s.wt = nil
	}
}

// takeSide brings what a side's run left for the record into the Job, in
// plan order: the pending changes (the tier), the fail-to-pass, the test
// strength and the notes.
func (r *runner) takeSide(s *side) {
	if s.sub == nil {
		return
	}
	r.pending.Merge(s.sub.pending)
	r.ready.Take(s.sub.ready)
	r.j.Notes = append(r.j.Notes, s.notes...)
}

// applySide takes a side's group onto the branch: its commit cherry-picked,
// its checks run at the new head, then published as any group. A group that
// did not pass in its tree, conflicts, or fails its checks on the branch
// runs again alone.
func (r *runner) applySide(ctx context.Context, change *plan.Change, s *side, last, total int) (ending, bool) {
	o, g := r.o, s.g
	if !s.ok {
		if ctx.Err() != nil {
			return ending{result: record.ResultYielded, class: failure.Killed, step: groupStep(g), reason: kernel.Signalled}, false
		}
		r.j.Logf("roadmap: group %d did not pass beside the others (%s); it runs again alone", g.Number, s.end.reason)
		return r.oneGroup(ctx, change, g, false, last, total)
	}
	prev := r.head
	err := o.Repo.CherryPick(ctx, s.sub.head)
	var c *git.Conflict
	if errors.As(err, &c) {
		if aerr := o.Repo.AbortCherryPick(ctx); aerr != nil {
			return r.fail(ctx, groupStep(g), aerr), false
		}
		r.j.Logf("roadmap: group %d's commit %s conflicts with the groups before it (%s); it runs again alone", g.Number, short(s.sub.head), strings.Join(capList(c.Files, 10), ", "))
		return r.oneGroup(ctx, change, g, false, last, total)
	}
	if err != nil {
		return r.fail(ctx, groupStep(g), err), false
	}
	head, err := o.Repo.Head(ctx)
	if err != nil {
		return r.fail(ctx, groupStep(g), err), false
	}
	r.head = head
	r.j.Group = g.Number
	o.Trace.SetGroup(g.Number)
	rep, err := r.runChecks(ctx, g, append(g.VerifyCommands(), o.CheckCommands...))
	if err != nil {
		return r.fail(ctx, groupStep(g), err), false
	}
	if !rep.Passed {
		if err := o.Repo.ResetHard(ctx, prev); err != nil {
			return r.fail(ctx, groupStep(g), err), false
		}
		r.head = prev
		r.j.Logf("roadmap: group %d passed in its tree but %s exits %d on the branch with the groups before it; it runs again alone", g.Number, rep.FailedCommand, rep.ExitCode)
		return r.oneGroup(ctx, change, g, false, last, total)
	}
	r.j.Logf("roadmap: group %d applied in plan order as %s; its checks pass on the branch", g.Number, short(head))
	r.groupSecs = append(r.groupSecs, int(s.duration.Round(time.Second)/time.Second))
	if e, ok := r.publishGroup(ctx, g, g.Number == last); !ok {
		return e, false
	}
	r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseGroupPassed, Group: g.Number, Step: groupStep(g), Duration: s.duration})
	return ending{}, true
}
