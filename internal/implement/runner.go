package implement

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/citriage"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/instructions"
	"github.com/roadmap-dev/roadmap/internal/kernel"
	"github.com/roadmap-dev/roadmap/internal/next"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/ready"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// Result is how a Job ended. Its fields are the implement action's outputs.
type Result struct {
	Result  record.Result `json:"result"`
	Failure string        `json:"failure,omitempty"`
	// Reason says why in a sentence (a yield's cause, a stop's evidence).
	Reason string `json:"reason,omitempty"`
	// Group is the last group that passed (0: none yet).
	Group   int    `json:"group"`
	HeadSHA string `json:"head_sha,omitempty"`
	// Spend is the item's sum over every Job; JobSpend is this Job's share.
	Spend    record.Spend `json:"spend"`
	JobSpend record.Spend `json:"job_spend"`
	PR       int          `json:"pr,omitempty"`
	Question string       `json:"question,omitempty"`
	Attempt  int          `json:"attempt"`
	// RecordComment is the id of the issue's record comment.
	RecordComment int64 `json:"record_comment,omitempty"`
	// CI says what CI did at the head of a ready PR: "passed" (checks
	// reported and passed) or "none" (no check reported; ready because
	// implement.ready_without_ci allows it).
	CI string `json:"ci,omitempty"`
}

// handoff is what the earlier stop handed on to this Job, read before
// anything can clear it: the failing check log and the conflicting files
// its first step gets.
type handoff struct {
	log      string
	conflict []string
	pending  bool // the earlier stop's keys are still in the record
	// kept is the group commit a conflict stop kept (kept.go).
	kept kept
}

type runner struct {
	o       Options
	workdir string
	// planDir is the plan's directory as the Job found it (the PR body's
	// task list is read from it, or from where the archive moved it).
	planDir string

	// j is the Job kernel: the record, the spend, the Job's number (the
	// attempt), the notes and the mark path.
	j *kernel.Job
	// instr are the repository's instructions at the base commit the Job
	// started from (instructions.At): never the work tree's.
	instr *instructions.Source

	// handoff is what the earlier stop handed on.
	handoff handoff

	// ci is what the watch learned of CI at the head, its notes for the
	// PR comment and the re-runs it asked for (internal/citriage).
	ci *citriage.Watch

	branch    string
	head      string
	lastGroup int
	// roles is which model each role ran on in this Job and where the
	// repairs at the head are on the ladder.
	roles roles
	// planGroups are the plan's group numbers (people: the groups a merge
	// leaves).
	planGroups []int
	groupSecs  []int
	pr         github.PullRequest
	// pending holds changes that ride on the next mark (stage.pr).
	pending record.Changes
	// ready is the checks before ready (internal/ready): each group's
	// fail-to-pass and test strength, the review, its ledger and the head
	// it passed at (the watch marks the PR ready only there).
	ready ready.State

	// units are the units this Job claimed (claims.go), given back at the
	// item's end.
	units []string

	// merge is the merged check's (merged.go).
	merge mergeState

	// unlabelled, when set, is how a Job ended whose trigger label a
	// person removed before it started: it wrote nothing (people.go); or
	// one whose blockers are not met: it wrote only that (Job.Blockers).
	unlabelled *Result

	// shown is the PR comment's checklist and now line between marks
	// (comment.go, internal/progress).
	shown watchState

	// side is set on the copy of the runner that runs a group beside the
	// first of its wave, in a scratch tree (parallel.go).
	side *side
}

// Run runs one Job for the item and returns how it ended. An error is
// returned only when the Job could not even read its item; every other
// failure is a Result with a class, written to the record as the last mark.
func Run(ctx context.Context, o Options) (Result, error) {
	if err := o.defaults(); err != nil {
		return Result{}, err
	}
	r := &runner{o: o, workdir: o.Repo.Dir, ci: citriage.NewWatch(o.Mask)}
	if err := r.start(ctx); err != nil {
		if r.j != nil {
			r.j.Release(ctx)
		}
		return Result{}, err
	}
	if r.j.Busy != nil {
		return r.leave(), nil
	}
	if r.unlabelled != nil {
		return *r.unlabelled, nil
	}
	end := r.groups(ctx)
	return r.finish(ctx, end)
}

// leave ends a Job that found a live Job holding the item's lease: no mark,
// no number, no spend of its own; report leaves the item to the holder.
func (r *runner) leave() Result {
	res := Result{Result: record.ResultYielded, Failure: string(failure.Busy), Reason: r.j.Leave(), Spend: r.j.Total()}
	r.outputs(res)
	return res
}

// start reads the item: the record (hand-off, spend, attempt) and the branch.
func (r *runner) start(ctx context.Context) error {
	o := r.o
	if o.PlanDir != "" {
		if err := record.CheckPlanPath(o.PlanDir); err != nil {
			return fmt.Errorf("the plan directory (--plan): %w", err)
		}
	}
	j, err := kernel.Start(ctx, o.Options, o.Attempt)
	if err != nil {
		return err
	}
	r.j = j
	if j.Busy != nil {
		return nil
	}
	if res, gone := r.unlabelledEnd(ctx); gone {
		r.unlabelled = &res
		return nil
	}
	if kind := j.Tracker(); kind != "" && o.PlanDir == "" {
		// A tracker: no number, no model call; report drives its sub-issues.
		res := Result{Result: record.ResultYielded, Failure: string(failure.Tracker), Reason: j.HandOver(ctx, kind), Spend: j.Total(),
			RecordComment: j.RC.ID}
		r.outputs(res)
		r.unlabelled = &res
		return nil
	}
	b, err := j.Blockers(ctx)
	if err != nil {
		return err
	}
	if b != nil {
		// An open blocker: no number, no model call (people.go's ends).
		res := Result{Result: record.ResultYielded, Failure: string(failure.Blocked), Reason: j.Wait(ctx, b), Spend: j.Total(),
			RecordComment: j.RC.ID}
		r.outputs(res)
		r.unlabelled = &res
		return nil
	}
	rec := j.Rec
	// The hand-off is read before anything can clear it.
	r.handoff.log, _ = rec.CheckLog()
	r.handoff.conflict, _ = rec.Conflict()
	r.handoff.pending = r.handoff.log != "" || len(r.handoff.conflict) > 0
	if sha, ok := rec.Kept(); ok {
		r.handoff.kept.sha = string(sha)
	}
	r.lastGroup, _ = rec.Group()
	r.groupSecs, _ = rec.GroupSeconds()
	if n, ok := rec.StagePR(); ok {
		r.pr.Number = n
	}
	j.Started(fmt.Sprintf("job %d", j.Number))
	r.parallelism()
	r.wake(ctx)
	j.Logf("roadmap: issue #%d, Job %d, item spend so far %s", o.Issue, j.Number, kernel.SpendText(j.Prior))
	j.Doing = fmt.Sprintf("implementing: Job %d started", j.Number)
	if err := j.EnsureRecord(ctx); err != nil {
		return err
	}
	o.SetOutput("record_comment", fmt.Sprint(j.RC.ID))
	j.Logf("roadmap: the record is comment %d on issue #%d", j.RC.ID, o.Issue)
	return nil
}

// groups runs every group not yet passed and then the watch; it returns how
// the Job ends.
func (r *runner) groups(ctx context.Context) ending {
	o := r.o
	v := next.ImplementView{Unisolated: o.Unisolated, PlanDir: o.PlanDir}
	v.StoppedBy, _ = r.j.Rec.StoppedBy()
	key := "--plan"
	if v.PlanDir == "" {
		v.PlanDir, _ = r.j.Rec.StagePlan()
		v.PlanUnread = r.j.RC.DroppedKey(record.KeyStagePlan)
		key = string(record.KeyStagePlan)
	}
	step := next.ImplementStart(v)
	switch step.Kind {
	case next.Yield, next.Stop:
		return stepEnding(step.Ending)
	}
	// The issue as read at the start: a closed one spends nothing.
	if e, held := next.People(next.PeopleView{Issue: o.Issue, IssueState: r.j.Issue.State}); held {
		return stepEnding(e)
	}
	r.branch = git.WorkBranch(o.Issue, r.j.Issue.Title)
	if err := o.Repo.CheckoutBranch(ctx, o.Remote, r.branch, o.Base); err != nil {
		return r.fail(ctx, "checkout", err)
	}
	instr, err := instructions.At(ctx, o.Repo, o.Remote+"/"+o.Base, o.Mask)
	if err != nil {
		return r.fail(ctx, "checkout", err)
	}
	r.instr = instr
	head, err := o.Repo.Head(ctx)
	if err != nil {
		return r.fail(ctx, "checkout", err)
	}
	r.head = head
	if step.Kind == next.Return {
		// Carried out once the head is read: the result names it.
		return stepEnding(step.Ending)
	}
	planDir := v.PlanDir
	r.planDir = planDir
	if archived, ok := plan.Archived(r.workdir, planDir); ok {
		// An earlier Job archived the change at the end of its groups: the
		// plan is read where OpenSpec moved it.
		planDir = archived
	}
	if _, err := confinedPlan(r.workdir, planDir); err != nil {
		return ending{result: record.ResultStopped, class: failure.Unknown, step: "plan", reason: fmt.Sprintf("%s: %v", key, err)}
	}
	change, err := plan.LoadChangeIn(r.workdir, planDir)
	if err == nil {
		err = change.Tasks.CheckGroupCount(o.MaxGroups)
	}
	if err != nil {
		return ending{result: record.ResultReturned, class: failure.PlanWrong, step: "plan", reason: err.Error()}
	}
	if end, ok := r.claim(ctx, change); !ok {
		return end
	}
	passed, err := o.Repo.GroupCommits(ctx, o.Remote+"/"+o.Base)
	if err != nil {
		return r.fail(ctx, "reconcile", err)
	}
	gv := next.GroupsView{Passed: passed, Head: r.head, LastGroup: r.lastGroup}
	if gv.Remote, gv.OnRemote, err = o.Repo.LsRemote(ctx, o.Remote, r.branch); err != nil {
		return r.fail(ctx, "reconcile", err)
	}
	published, _ := r.j.Rec.PublishedSHA()
	gv.Published = string(published)
	for _, g := range change.Tasks.Groups {
		gv.Groups = append(gv.Groups, g.Number)
	}
	r.planGroups = gv.Groups
	step = next.ImplementGroups(gv)
	r.shown.start(change, passed, o.Clock.Now(), r.j.Doing)
	if end, ok := r.reconcile(ctx, step.Mark); !ok {
		return end
	}

	first := true
	last := step.Last // the last group this Job runs: its mark rides with the checked mark
	var todo []plan.Group
	for _, g := range change.Tasks.Groups {
		if slices.Contains(step.Todo, g.Number) {
			todo = append(todo, g)
		}
	}
	total := len(change.Tasks.Groups)
	for _, w := range r.waves(change, todo) {
		if len(w.Groups) > 1 {
			if e, ok := r.runWave(ctx, change, w, first, last, total); !ok {
				return e
			}
		} else if e, ok := r.oneGroup(ctx, change, w.Groups[0], first, last, total); !ok {
			return e
		}
		first = false
	}
	r.j.Group = 0
	o.Trace.SetGroup(0)
	// A person's review is answered before the head is checked: the new
	// head is checked, reviewed and watched as any (prfeedback.go).
	if e, ok := r.answerFeedback(ctx, change); !ok {
		return e
	}
	r.j.Doing = "running the scoped checks at the head"
	r.showProgress(ctx)
	return r.atHead(ctx, change, first)
}

// oneGroup runs one group in the Job's work tree and publishes it.
func (r *runner) oneGroup(ctx context.Context, change *plan.Change, g plan.Group, first bool, last, total int) (ending, bool) {
	o := r.o
	if end, ok := r.checkTime(ctx, fmt.Sprintf("group %d", g.Number)); !ok {
		return end, false
	}
	if end, ok := r.people(ctx, groupStep(g)); !ok {
		return end, false
	}
	start := o.Clock.Now()
	r.j.Group = g.Number
	r.j.Doing = fmt.Sprintf("implementing group %d of %d: %s", g.Number, total, g.Title)
	r.showProgress(ctx)
	o.Trace.SetGroup(g.Number)
	r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseGroupStarted, Group: g.Number, Step: g.Title})
	end := r.j.Section("roadmap: group %d of %d: %s", g.Number, total, g.Title)
	r.j.Logf("roadmap: group %d: %s", g.Number, g.Title)
	if e, ok := r.runGroup(ctx, change, g, first); !ok {
		end()
		r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseGroupFailed, Group: g.Number, Step: groupStep(g), Reason: e.reason})
		return e, false
	}
	r.groupSecs = append(r.groupSecs, int(o.Clock.Now().Sub(start).Round(time.Second)/time.Second))
	e, ok := r.publishGroup(ctx, g, g.Number == last)
	end()
	if !ok {
		return e, false
	}
	r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseGroupPassed, Group: g.Number, Step: groupStep(g),
		Duration: o.Clock.Now().Sub(start)})
	return ending{}, true
}

// scopedChecks runs every verify command of the plan and the configured
// checks at the head, once per head: a Job at the head implement.checked_sha
// names skips them. The mark is written when they pass.
func (r *runner) scopedChecks(ctx context.Context, change *plan.Change) (ending, bool) {
	if checked, _ := r.j.Rec.CheckedSHA(); string(checked) == r.head {
		r.j.Logf("roadmap: scoped checks passed at %s already (implement.checked_sha); skipping them", short(r.head))
		if !r.pending.Empty() {
			// Marks waiting for the checked mark are written now: the
			// watch can be long.
			if err := r.mark(ctx, record.Changes{}); err != nil {
				return r.fail(ctx, "mark group", err), false
			}
		}
		return ending{}, true
	}
	if end, ok := r.checkTime(ctx, "scoped checks"); !ok {
		return end, false
	}
	end := r.j.Section("roadmap: scoped checks at %s", short(r.head))
	rep, err := r.runChecks(ctx, plan.Group{}, headCommands(change, r.o.CheckCommands))
	end()
	if err != nil {
		return r.fail(ctx, "scoped checks", err), false
	}
	if !rep.Passed {
		return ending{result: record.ResultStopped, class: failure.ChecksFailed, step: "scoped checks",
			reason: fmt.Sprintf("%s exited %d at the head", rep.FailedCommand, rep.ExitCode), checkLog: rep.Log}, false
	}
	// The checks ran model-written code: what it changed in the plan is
	// undone before the archive reads the plan, as after an agent step.
	if err := r.keepPlan(ctx, change, "scoped checks"); err != nil {
		return r.fail(ctx, "scoped checks", err), false
	}
	if end, ok := r.archive(ctx, change); !ok {
		return end, false
	}
	var ch record.Changes
	ch.SetCheckedSHA(record.SHA(r.head))
	// implement.merged_base was for the head before: a new head is merged
	// with the base and checked again (mergedCheck).
	ch.Delete(record.KeyImplementMergedBase)
	r.j.Doing = "waiting on the PR checks"
	if err := r.mark(ctx, ch); err != nil {
		return r.fail(ctx, "mark checked", err), false
	}
	r.showProgress(ctx)
	return ending{}, true
}

// reconcile writes the mark of a push that happened without it (next's
// decision), never a second push.
func (r *runner) reconcile(ctx context.Context, m *next.Mark) (ending, bool) {
	if m == nil {
		return ending{}, true
	}
	r.j.Logf("roadmap: reconcile: %s is on the remote without its mark; writing the mark, not pushing again", short(m.Published))
	var ch record.Changes
	ch.SetPublishedSHA(record.SHA(m.Published))
	if m.Group > 0 {
		r.lastGroup = m.Group
		ch.SetGroup(m.Group)
		ch.SetSHA(record.SHA(m.SHA))
	}
	// Git holds what the mark says: it rides on the Job's next write, as a
	// group's mark does.
	r.pending.Merge(ch)
	return ending{}, true
}

// checkTime yields before a phase the deadline leaves no room for: recorded
// group durations say how long the next one takes.
func (r *runner) checkTime(ctx context.Context, what string) (ending, bool) {
	if err := ctx.Err(); err != nil {
		return ending{result: record.ResultYielded, class: failure.Killed, step: what, reason: kernel.Signalled}, false
	}
	if r.o.Deadline.IsZero() {
		return ending{}, true
	}
	need := r.o.Reserve
	longest := 0
	for _, s := range r.groupSecs {
		longest = max(longest, s)
	}
	need += time.Duration(longest) * time.Second
	left := r.o.Deadline.Sub(r.o.Clock.Now())
	if left < need {
		return ending{result: record.ResultYielded, step: what,
			reason: fmt.Sprintf("deadline: %s left, %s needs about %s (longest recorded group) plus %s reserve",
				left.Round(time.Second), what, (time.Duration(longest) * time.Second).String(), r.o.Reserve)}, false
	}
	return ending{}, true
}

// runGroup runs the agent step with repair rounds against the group's scoped
// checks and commits the group with its tasks ticked.
func (r *runner) runGroup(ctx context.Context, change *plan.Change, g plan.Group, first bool) (ending, bool) {
	o := r.o
	cmds := append(g.VerifyCommands(), o.CheckCommands...)
	step := agent.Step{Task: groupTask(change, g), Context: r.stepContext(ctx, change, &plan.Tasks{Groups: []plan.Group{g}})}
	startTier := 0
	if first {
		step.CheckLog, step.Conflict = r.handoff.log, r.handoff.conflict
		if a, ok := r.j.Rec.Answer(); ok {
			step.Question, _ = r.j.Rec.Question()
			step.Answer = a
		}
		// The first step goes on with the group an earlier Job stopped in,
		// on the tier its last failing round reached.
		startTier = r.j.Rec.Tier()
	}
	check := func(ctx context.Context) (bool, string, error) {
		r.ready.Round()
		rep, err := r.runChecks(ctx, g, cmds)
		if err != nil || !rep.Passed {
			return rep.Passed, rep.Log, err
		}
		if ok, log, err := r.failToPass(ctx, g); err != nil || !ok { // failtopass.go
			return ok, log, err
		}
		if !o.Strength.On {
			return true, "", nil
		}
		return r.strengthCheck(ctx, g) // quality.go
	}
	cfg := r.j.AgentConfig(o.Models)
	if r.side != nil {
		// A group beside others (parallel.go): its own tree's sandbox, and
		// its calls booked apart from the other sessions'.
		cfg.Sandbox, cfg.Observer = r.side.sandbox, r.side.observer
	}
	cfg.StartTier = startTier
	landed, err := r.resume(ctx, change, g, first, &step, check) // kept.go
	if err != nil {
		return r.fail(ctx, groupStep(g), err), false
	}
	var out agent.Outcome
	if landed {
		out = agent.Outcome{Status: agent.StatusFinished, Summary: r.handoff.kept.summary}
	} else if out, err = r.implementer(ctx, cfg, step, check, g, startTier); err != nil {
		if ctx.Err() != nil {
			return ending{result: record.ResultYielded, class: failure.Killed, step: groupStep(g), reason: kernel.Signalled}, false
		}
		return r.fail(ctx, groupStep(g), err), false
	}
	switch out.Status {
	case agent.StatusFinished:
	case agent.StatusChecksFailed:
		if r.ready.StrengthFailed() {
			return r.strengthEnding(g, out.Attempts), false
		}
		return ending{result: record.ResultStopped, class: failure.ChecksFailed, step: groupStep(g),
			reason: fmt.Sprintf("checks still fail after %d rounds", out.Attempts), checkLog: out.CheckLog}, false
	case agent.StatusNeedsInput:
		return ending{result: record.ResultReturned, class: failure.NeedsInput, step: groupStep(g), reason: "a decision is needed", question: out.Question}, false
	case agent.StatusPlanWrong:
		return ending{result: record.ResultReturned, class: failure.PlanWrong, step: groupStep(g), reason: out.Reason}, false
	case agent.StatusBudgetExhausted:
		return ending{result: record.ResultStopped, class: failure.BudgetExhausted, step: groupStep(g), reason: out.Reason}, false
	case agent.StatusModelError:
		if ctx.Err() != nil {
			return ending{result: record.ResultYielded, class: failure.Killed, step: groupStep(g), reason: kernel.Signalled}, false
		}
		class := failure.ClassifyError(errors.New(out.Reason))
		return r.classEnding(class, groupStep(g), "model: "+out.Reason), false
	default: // format_error and anything new: stop and keep all state
		return ending{result: record.ResultStopped, class: failure.Unknown, step: groupStep(g), reason: fmt.Sprintf("agent ended with %s: %s", out.Status, out.Reason)}, false
	}
	if err := r.keepPlan(ctx, change, groupStep(g)); err != nil {
		return r.fail(ctx, groupStep(g), err), false
	}
	// Tick the group's tasks in the same commit that passes them.
	src, err := change.ReadFile("tasks.md")
	if err == nil {
		var ticked []byte
		if ticked, err = plan.Tick(src, g.Number); err == nil {
			err = change.WriteFile("tasks.md", ticked)
		}
	}
	if err != nil {
		return r.fail(ctx, groupStep(g), fmt.Errorf("tick group %d: %w", g.Number, err)), false
	}
	cstart := o.Clock.Now()
	sha, err := o.Repo.CommitGroup(ctx, g.Number, git.Message{
		Subject: fmt.Sprintf("roadmap: %d. %s", g.Number, g.Title),
		Body:    o.Mask(out.Summary),
		Issue:   o.Issue,
	})
	if err != nil {
		return r.fail(ctx, "commit", err), false
	}
	r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseCommit, Group: g.Number, Step: groupStep(g), Duration: o.Clock.Now().Sub(cstart)})
	r.head = sha
	return ending{}, true
}

// implementer runs the group's agent step with its repair rounds and notes
// what the record keeps of it: the implementer's model, the answer used,
// the tier the ladder reached.
func (r *runner) implementer(ctx context.Context, cfg agent.Config, step agent.Step, check func(context.Context) (bool, string, error), g plan.Group, startTier int) (agent.Outcome, error) {
	o := r.o
	start := o.Clock.Now()
	out, err := agent.RunWithRepair(ctx, cfg, step, check, o.RepairRounds)
	r.ranAs("implementer", out.Model)
	if step.Answer != "" && out.Turns > 0 {
		// The model has seen the answer: the Job's next write clears it, so
		// no later step gets the old question and answer again.
		var ch record.Changes
		ch.Delete(record.KeyImplementAnswer, record.KeyImplementQuestion)
		r.pending.Merge(ch)
	}
	// The next Job's ladder goes on where this step left it; a step that
	// passed leaves the next failing one to start at the bottom again.
	tier := out.Tier
	if out.Status == agent.StatusFinished {
		tier = 0
	}
	if out.Turns > 0 && tier != startTier {
		var ch record.Changes
		ch.SetTier(tier)
		r.pending.Merge(ch)
	}
	r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseAgent, Group: g.Number, Step: groupStep(g),
		Duration: o.Clock.Now().Sub(start), Attempt: out.Attempts, Outcome: string(out.Status)})
	return out, err
}

// runChecks runs the scoped checks and records each command in the trace.
func (r *runner) runChecks(ctx context.Context, g plan.Group, cmds []string) (checks.Report, error) {
	start := r.o.Clock.Now()
	rep, err := checks.Run(ctx, r.o.CheckRunner, r.o.Split, r.workdir, cmds, checks.Options{Mask: r.o.Mask, Timeout: r.o.CheckTimeout})
	for _, c := range rep.Results {
		r.j.Event(trace.Event{Type: trace.TypeCheckRun, Group: g.Number, Step: groupStep(g), Command: c.Command, ExitCode: c.ExitCode, Duration: c.Duration})
	}
	r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseChecks, Group: g.Number, Step: groupStep(g), Duration: r.o.Clock.Now().Sub(start)})
	if !rep.Passed && err == nil {
		// The runner's own line, which the classifier reads in a killed Job's log.
		r.j.Command("error", failure.ChecksFailedLine(rep.FailedCommand, rep.ExitCode))
	}
	return rep, err
}

// publishGroup pushes the group's commit (unless the remote has it) and
// writes the group mark, which carries spend, published_sha and the group.
// The last group's mark is not written here: the scoped checks run next at
// the same head, and their mark (checked_sha) carries it, one write instead
// of two. A Job killed in between loses no work: the group's commit is on the
// remote, and the next Job reconciles the mark from git.
func (r *runner) publishGroup(ctx context.Context, g plan.Group, deferMark bool) (ending, bool) {
	if end, ok := r.push(ctx, g); !ok {
		return end, false
	}
	if r.handoff.kept.group == g.Number {
		// The group the kept commit started landed: the ref is done with.
		r.dropKept(ctx, r.handoff.kept.sha, "landed with "+groupStep(g)+" at "+short(r.head))
	}
	r.lastGroup = g.Number
	r.shown.pass(g.Number)
	var ch record.Changes
	ch.SetGroup(g.Number)
	ch.SetSHA(record.SHA(r.head))
	ch.SetPublishedSHA(record.SHA(r.head))
	ch.SetGroupSeconds(r.groupSecs)
	if r.ready.Measuring() {
		recorded, _ := r.j.Rec.Strength()
		ch.SetStrength(r.ready.Rows(recorded))
	}
	if deferMark || !r.j.MarkDue() {
		// The group's commits are on the remote: its mark rides on the
		// next write (the checked mark, the end, or the first group mark
		// after the mark interval), and a Job killed before it is
		// reconciled from git by the next (docs/record.md).
		r.pending.Merge(ch)
	} else if err := r.mark(ctx, ch); err != nil {
		return r.fail(ctx, "mark group", err), false
	}
	if r.pr.Number == 0 {
		if end, ok := r.ensurePR(ctx); !ok {
			return end, false
		}
	}
	return ending{}, true
}

// maxPushRebases bounds how often one push is refused because the branch
// moved on the remote (another writer's push before ours, or one that moved
// the ref while ours was in flight) and is fetched, rebased and sent again.
// Past it the Job ends conflict, whose continuation rebases again.
const maxPushRebases = 3

// push publishes r.head. The remote is asked first, so a push that happened
// before a kill is never repeated; a push refused because the branch moved
// is rebased onto the remote's and sent again, at most maxPushRebases times.
func (r *runner) push(ctx context.Context, g plan.Group) (ending, bool) {
	o := r.o
	start := o.Clock.Now()
	defer func() {
		r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhasePush, Group: g.Number, Step: groupStep(g), Duration: o.Clock.Now().Sub(start)})
	}()
	if end, ok := r.people(ctx, "push"); !ok {
		return end, false
	}
	rebases := 0
	for attempt := 1; ; attempt++ {
		remoteSHA, found, err := o.Repo.LsRemote(ctx, o.Remote, r.branch)
		if err == nil && found && remoteSHA == r.head {
			return ending{}, true
		}
		err = o.Repo.Push(ctx, o.Remote, r.branch)
		if err == nil {
			return ending{}, true
		}
		var rej *git.PushRejected
		if errors.As(err, &rej) && rej.Moved() {
			if rebases == maxPushRebases {
				return r.keepOn(ctx, g, r.classEnding(failure.Conflict, "push",
					fmt.Sprintf("the branch moved on %s under %d pushes in a row (the last: %s); a continuation rebases again", o.Remote, rebases+1, rej.Reason))), false
			}
			rebases++
			why := fmt.Sprintf("push refused (%s): the branch moved on %s; rebase onto %s/%s and push again", rej.Reason, o.Remote, o.Remote, r.branch)
			r.j.Logf("roadmap: %s: %s (%d of %d)", groupStep(g), why, rebases, maxPushRebases)
			r.j.Event(trace.Event{Type: trace.TypeRetry, Reason: why, Attempt: rebases})
			if end, ok := r.rebase(ctx, g); !ok {
				return r.keepOn(ctx, g, end), false
			}
			continue
		}
		class := failure.ClassifyError(err)
		if class == failure.Transient && attempt < 3 {
			r.j.Event(trace.Event{Type: trace.TypeRetry, Reason: "push: " + err.Error(), Attempt: attempt, Wait: time.Duration(attempt) * 2 * time.Second})
			if o.Clock.Sleep(ctx, time.Duration(attempt)*2*time.Second) != nil {
				return ending{result: record.ResultYielded, class: failure.Killed, step: "push", reason: kernel.Signalled}, false
			}
			continue
		}
		return r.fail(ctx, "push", err), false
	}
}

// rebase brings the branch onto the remote's after a non-fast-forward and runs
// the checks again at the new head.
func (r *runner) rebase(ctx context.Context, g plan.Group) (ending, bool) {
	o := r.o
	if _, err := o.Repo.Fetch(ctx, o.Remote, r.branch); err != nil {
		return r.fail(ctx, "push", err), false
	}
	if err := o.Repo.Rebase(ctx, o.Remote+"/"+r.branch); err != nil {
		var c *git.Conflict
		if errors.As(err, &c) {
			_ = o.Repo.AbortRebase(ctx)
			return ending{result: record.ResultStopped, class: failure.Conflict, step: "push",
				reason: fmt.Sprintf("rebase onto %s/%s conflicts", o.Remote, r.branch), conflict: c.Files}, false
		}
		return r.fail(ctx, "push", err), false
	}
	head, err := o.Repo.Head(ctx)
	if err != nil {
		return r.fail(ctx, "push", err), false
	}
	r.head = head
	rep, err := r.runChecks(ctx, g, append(g.VerifyCommands(), o.CheckCommands...))
	if err != nil {
		return r.fail(ctx, "checks", err), false
	}
	if !rep.Passed {
		return ending{result: record.ResultStopped, class: failure.ChecksFailed, step: "checks after rebase",
			reason: "the checks fail after rebasing onto the remote branch", checkLog: rep.Log}, false
	}
	return ending{}, true
}

// ensurePR finds the branch's pull request or opens a draft one.
func (r *runner) ensurePR(ctx context.Context) (ending, bool) {
	o := r.o
	pr, found, err := o.GitHub.FindPR(ctx, r.branch)
	if err == nil && !found {
		body := r.prBody("Draft: opened by roadmap's implement; the plan's groups are committed here one by one.")
		title := o.PRTitle
		if title == "" {
			title = r.j.Issue.Title
		}
		pr, err = o.GitHub.CreateDraftPR(ctx, r.branch, o.Base, title, body)
	}
	if err != nil {
		return r.fail(ctx, "pull request", err), false
	}
	r.pr = pr
	var ch record.Changes
	ch.SetStagePR(pr.Number)
	r.pending.Merge(ch)
	return ending{}, true
}

// watch waits for the PR checks at the head, a progress line every poll, then
// marks the PR ready.
func (r *runner) watch(ctx context.Context) ending {
	o := r.o
	defer r.j.Section("roadmap: watch the PR checks")()
	if r.pr.Number == 0 {
		if end, ok := r.ensurePR(ctx); !ok {
			return end
		}
	}
	if r.pr.NodeID == "" || r.pr.HeadSHA == "" {
		pr, err := o.GitHub.PR(ctx, r.pr.Number)
		if err != nil {
			return r.fail(ctx, "watch", err)
		}
		r.pr = pr
	}
	start := o.Clock.Now()
	until := start.Add(o.WatchTimeout)
	if !o.Deadline.IsZero() && o.Deadline.Add(-o.Reserve).Before(until) {
		until = o.Deadline.Add(-o.Reserve)
	}
	defer func() {
		r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseWatch, Step: "watch", Duration: o.Clock.Now().Sub(start)})
	}()
	// Configured CI workflows are dispatched when the head has no check;
	// the grace for a first check runs from then.
	dispatched, since := len(o.CIWorkflows) == 0, start
	for {
		all, err := o.GitHub.Checks(ctx, r.head)
		if err != nil {
			if ctx.Err() != nil {
				return ending{result: record.ResultYielded, class: failure.Killed, step: "watch", reason: kernel.Signalled}
			}
			return r.fail(ctx, "watch", err)
		}
		// roadmap's own statuses (roadmap/implement, roadmap/checks) are
		// not the PR's checks.
		sum, _ := all.Without("roadmap/")
		elapsed := o.Clock.Now().Sub(start).Round(time.Second)
		r.j.Logf("roadmap: watch PR #%d checks at %s: %s (%d of %d done, %d failed), %s elapsed",
			r.pr.Number, short(r.head), sum.State, sum.Succeeded+sum.Failed, sum.Total, sum.Failed, elapsed)
		switch {
		case sum.State == "failure":
			// Read before acted on: re-run what the infrastructure broke,
			// hand the rest to the agent (triage.go).
			if end, again := r.triage(ctx, sum); !again {
				return end
			}
		case sum.State == "success":
			end, _ := r.ciEnding(ctx, r.ci.Passed(sum.Total, r.head))
			return end
		case sum.Total == 0 && !dispatched:
			dispatched = true
			if err := r.dispatchCI(ctx); err != nil {
				return r.fail(ctx, "dispatch CI", err)
			}
			since = o.Clock.Now()
		case sum.Total == 0 && (o.NoCIPath || o.Clock.Now().Sub(since) >= o.NoChecksGrace):
			// No CI ran: never called green (triage.go).
			return r.noCI(ctx, elapsed)
		}
		if o.Clock.Now().Add(o.PollInterval).After(until) {
			return ending{result: record.ResultYielded, step: "watch", reason: fmt.Sprintf("PR checks still running after %s", elapsed)}
		}
		if err := o.Clock.Sleep(ctx, o.PollInterval); err != nil {
			return ending{result: record.ResultYielded, class: failure.Killed, step: "watch", reason: kernel.Signalled}
		}
	}
}

func groupStep(g plan.Group) string {
	if g.Number == 0 && g.Title == "archive" {
		return "archive"
	}
	if g.Number == 0 {
		return "scoped checks"
	}
	return fmt.Sprintf("group %d", g.Number)
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// archive archives the OpenSpec change the OpenSpec way once every group has
// passed and the scoped checks hold: the deltas applied to openspec/specs, the
// change moved to openspec/changes/archive/YYYY-MM-DD-<id>/, in one commit
// (trailer Roadmap-Archive) that is pushed before the watch, so the PR's
// last commit is the archive and its checks run on it. The scoped checks are
// not run again: the commit moves OpenSpec documents only. A change whose
// deltas cannot apply (a MODIFIED requirement that no longer exists) goes
// back to stage with the findings, and the PR is not marked ready.
func (r *runner) archive(ctx context.Context, change *plan.Change) (ending, bool) {
	o := r.o
	if isArchived(change.Dir) {
		return ending{}, true
	}
	defer r.j.Section("roadmap: archive %s", change.ID)()
	findings, err := plan.Archive(r.workdir, change.ID, o.Clock.Now())
	if err != nil {
		return r.fail(ctx, "archive", err), false
	}
	if len(findings) > 0 {
		var b strings.Builder
		for _, f := range findings {
			b.WriteString(f.String())
			b.WriteString("\n")
		}
		return ending{result: record.ResultReturned, class: failure.PlanWrong, step: "archive",
			reason: fmt.Sprintf("the change %s cannot be archived; the PR stays a draft: %s", change.ID, strings.TrimSpace(b.String()))}, false
	}
	sha, err := o.Repo.CommitArchive(ctx, change.ID, git.Message{
		Subject: fmt.Sprintf("roadmap: archive %s", change.ID),
		Body:    "OpenSpec archive: the change's delta specs applied to openspec/specs, the change moved to " + plan.ArchiveDir + ".",
		Issue:   o.Issue,
	})
	if err != nil {
		return r.fail(ctx, "archive", err), false
	}
	r.head = sha
	// The push of the archive belongs to no group (its trace event says
	// group 0).
	if end, ok := r.push(ctx, plan.Group{Title: "archive"}); !ok {
		return end, false
	}
	var ch record.Changes
	ch.SetSHA(record.SHA(sha))
	ch.SetPublishedSHA(record.SHA(sha))
	r.pending.Merge(ch)
	r.j.Logf("roadmap: archived %s in %s", change.ID, short(sha))
	return ending{}, true
}

// isArchived reports whether dir is a change inside OpenSpec's archive.
func isArchived(dir string) bool {
	return strings.Contains(filepath.ToSlash(dir), "/"+plan.ArchiveDir+"/")
}

// ranAs notes that role ran on model (item.models, riding on the next
// mark); an implementer's model is also the one the reviewer should not be.
func (r *runner) ranAs(role, model string) {
	if model == "" {
		return
	}
	if role == "implementer" {
		r.roles.judged = model
	}
	if r.roles.models == nil {
		r.roles.models = map[string]string{}
	}
	r.roles.models[role] = model
	var ch record.Changes
	ch.SetModels(r.j.Rec.Models(), r.roles.models)
	r.pending.Merge(ch)
}

// roles is a Job's models by role: item.models, the reviewer's other
// model, and the tier the repairs at the head climb from.
type roles struct {
	// headTier is the ladder tier the next repair at the head starts on:
	// each repair starts one tier above the one the last repair ended on,
	// as a group's failing rounds climb (headrepair.go).
	headTier int
	// judged is the model of the agent step that last changed the head in
	// this Job (a group's, a repair's): the reviewer should be another.
	judged string
	// models are the roles this Job ran and their models, for item.models.
	models map[string]string
}
