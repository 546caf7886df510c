package implement

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/kernel"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/trace"
	"github.com/roadmap-dev/roadmap/internal/verdict"
)

// atHead runs what follows the groups: the scoped checks at the head and
// the watch of the PR checks. A failure there (a group broke an earlier
// group's verify command, a PR check failed on the change) is repaired, not
// re-reported: an agent step gets the failing log, then commit, push and
// checks as for a group. The repair runs in this Job while the deadline
// allows, at most RepairRounds times; else the log goes to the next Job,
// whose first step is the repair. noGroupRan says this Job ran no group, so
// a check log an earlier Job handed on is for the head.
func (r *runner) atHead(ctx context.Context, change *plan.Change, noGroupRan bool) ending {
	// A safe point before the head's checks, review and watch: a PR or an
	// issue a person closed spends nothing more, even for a Job that only
	// watches (a continuation at a checked head).
	if end, ok := r.people(ctx, "scoped checks"); !ok {
		return end
	}
	log, why := "", ""
	if noGroupRan && r.handoff.log != "" {
		log, why = r.handoff.log, "the check log an earlier Job handed on"
		// The repair an earlier Job could not finish goes on where its
		// last failing round reached.
		r.roles.headTier = r.j.Rec.Tier()
	}
	reviews := 0 // repair rounds the review's findings have had
	moves := 0   // heads that took in a base that moved before ready
	for round := 0; ; round++ {
		// A repair after the archive reads the change where the archive
		// moved it, and the scoped checks do not archive it again.
		change = r.current(change)
		r.merge.change = change
		if log != "" {
			if end, ok := r.repairHead(ctx, change, log, why); !ok {
				return end
			}
		}
		end, ok := r.scopedChecks(ctx, change)
		if ok {
			// Before the review and the watch: a failure on the merged
			// tree moves the head (the base merged in, then repaired
			// here), which a review or a watch would be spent on.
			end, ok = r.mergedCheck(ctx, change) // merged.go
		}
		if ok {
			end, ok = r.reviewHead(ctx, change, reviews) // quality.go
		}
		if ok {
			end = r.watch(ctx)
		}
		if end.again && moves < maxBaseMoves {
			moves++
			round--
			log = ""
			continue
		}
		if end.repairable {
			// The review's blocking findings, with rounds left: the agent
			// repairs the head with them, and the new head is checked and
			// reviewed again. These rounds are the review's own.
			reviews++
			round--
			log, why = end.checkLog, "the independent review raised blocking findings (below): repair each one the review shows"
			continue
		}
		if end.class != failure.ChecksFailed || end.checkLog == "" {
			return end
		}
		if round >= r.o.RepairRounds {
			end.reason = fmt.Sprintf("%s (after %d repairs at the head)", end.reason, round)
			return end
		}
		if _, ok := r.checkTime(ctx, "repair at the head"); !ok {
			r.j.Logf("roadmap: no time left in this Job to repair the head; the log goes to the next Job")
			return end
		}
		log, why = end.checkLog, end.reason
	}
}

// repairHead is one agent step that repairs the head with the failing log,
// its own repair rounds against every verify command and the configured
// checks, then a commit (carrying the last group's trailer: the head is that
// group's, repaired) and a push.
func (r *runner) repairHead(ctx context.Context, change *plan.Change, log, why string) (ending, bool) {
	o := r.o
	if end, ok := r.checkTime(ctx, "repair at the head"); !ok {
		end.checkLog = log
		return end, false
	}
	const step = "repair at the head"
	r.j.Doing = "repairing a failure at the head"
	r.j.Logf("roadmap: repair at the head: %s", verdict.OneLine(why))
	cmds := headCommands(change, o.CheckCommands)
	check := func(ctx context.Context) (bool, string, error) {
		rep, err := r.runChecks(ctx, plan.Group{}, cmds)
		return rep.Passed, rep.Log, err
	}
	task := headTask(change, why)
	cfg := r.j.AgentConfig(o.Models)
	cfg.StartTier = min(r.roles.headTier, len(o.Models)-1)
	if len(o.Models) > 1 {
		r.j.Logf("roadmap: repair at the head starts on tier %d (%s)", cfg.StartTier, o.Models[cfg.StartTier].Name)
	}
	start := o.Clock.Now()
	out, err := agent.RunWithRepair(ctx, cfg, agent.Step{Task: task, Context: r.stepContext(ctx, change, change.Tasks), CheckLog: log}, check, o.RepairRounds)
	r.climbHead(out, cfg.StartTier)
	r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseAgent, Step: step,
		Duration: o.Clock.Now().Sub(start), Attempt: out.Attempts, Outcome: string(out.Status)})
	if end, ok := r.agentEnded(ctx, out, err, step, "at the head", log); !ok {
		return end, false
	}
	if err := r.keepPlan(ctx, change, step); err != nil {
		return r.fail(ctx, step, err), false
	}
	changed, err := o.Repo.HasChanges(ctx)
	if err != nil {
		return r.fail(ctx, "commit", err), false
	}
	if !changed {
		r.j.Logf("roadmap: repair at the head changed nothing; the checks run again as they are")
		return ending{}, true
	}
	group := max(r.lastGroup, 1)
	sha, err := o.Repo.CommitGroup(ctx, group, git.Message{
		Subject: "roadmap: repair at the head",
		Body:    o.Mask(out.Summary),
		Issue:   o.Issue,
	})
	if err != nil {
		return r.fail(ctx, "commit", err), false
	}
	r.head = sha
	r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseCommit, Step: step})
	if end, ok := r.push(ctx, plan.Group{}); !ok {
		return end, false
	}
	var ch record.Changes
	ch.SetSHA(record.SHA(sha))
	ch.SetPublishedSHA(record.SHA(sha))
	if err := r.mark(ctx, ch); err != nil {
		return r.fail(ctx, "mark repair", err), false
	}
	r.ci.Note(fmt.Sprintf("repaired the head in %s after: %s", short(sha), verdict.OneLine(o.Mask(why))))
	return ending{}, true
}

// climbHead sets the tier the next repair at the head starts on: one above
// the tier this repair's last round ran on, since the head it left failed
// again or will be checked again. A repair that did not finish leaves the
// tier it reached in the record, for the next Job that takes its log.
func (r *runner) climbHead(out agent.Outcome, startTier int) {
	if out.Turns == 0 {
		return
	}
	r.ranAs("implementer", out.Model)
	r.roles.headTier = min(out.Tier+1, len(r.o.Models)-1)
	if out.Status != agent.StatusFinished && out.Tier != startTier {
		var ch record.Changes
		ch.SetTier(out.Tier)
		r.pending.Merge(ch)
	}
}

// agentEnded maps an agent step at the head (a repair, a person's review
// comment) to how the Job goes on: a finished step goes on; any other ends
// the loop as its status says. where names the place in a check failure's
// reason; log is handed on when the Job is killed.
func (r *runner) agentEnded(ctx context.Context, out agent.Outcome, err error, step, where, log string) (ending, bool) {
	if err != nil {
		if ctx.Err() != nil {
			return ending{result: record.ResultYielded, class: failure.Killed, step: step, reason: kernel.Signalled, checkLog: log}, false
		}
		return r.fail(ctx, step, err), false
	}
	switch out.Status {
	case agent.StatusFinished:
		return ending{}, true
	case agent.StatusChecksFailed:
		return ending{result: record.ResultStopped, class: failure.ChecksFailed, step: step,
			reason: fmt.Sprintf("the checks still fail %s after %d rounds", where, out.Attempts), checkLog: out.CheckLog}, false
	case agent.StatusNeedsInput:
		return ending{result: record.ResultReturned, class: failure.NeedsInput, step: step, reason: "a decision is needed", question: out.Question}, false
	case agent.StatusPlanWrong:
		return ending{result: record.ResultReturned, class: failure.PlanWrong, step: step, reason: out.Reason}, false
	case agent.StatusBudgetExhausted:
		return ending{result: record.ResultStopped, class: failure.BudgetExhausted, step: step, reason: out.Reason}, false
	case agent.StatusModelError:
		if ctx.Err() != nil {
			return ending{result: record.ResultYielded, class: failure.Killed, step: step, reason: kernel.Signalled, checkLog: log}, false
		}
		return r.classEnding(failure.ClassifyError(errors.New(out.Reason)), step, "model: "+out.Reason), false
	}
	return ending{result: record.ResultStopped, class: failure.Unknown, step: step, reason: fmt.Sprintf("agent ended with %s: %s", out.Status, out.Reason)}, false
}

// current is change where it is now: the archive moves it within the Job.
func (r *runner) current(change *plan.Change) *plan.Change {
	rel, err := filepath.Rel(r.workdir, change.Dir)
	if err != nil {
		return change
	}
	if archived, ok := plan.Archived(r.workdir, filepath.ToSlash(rel)); ok {
		if c, err := plan.LoadChangeIn(r.workdir, archived); err == nil {
			return c
		}
	}
	return change
}

// headCommands are every verify command of the plan and the configured
// checks, each once.
func headCommands(change *plan.Change, extra []string) []string {
	var cmds []string
	seen := map[string]bool{}
	for _, g := range change.Tasks.Groups {
		for _, c := range g.VerifyCommands() {
			if !seen[c] {
				seen[c] = true
				cmds = append(cmds, c)
			}
		}
	}
	for _, c := range extra {
		if !seen[c] {
			seen[c] = true
			cmds = append(cmds, c)
		}
	}
	return cmds
}

// headTask is the instruction of the repair step at the head.
func headTask(change *plan.Change, why string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Every task group of the plan %q is done, but a check fails at the head of the branch: %s\n\n", change.ID, verdict.OneLine(why))
	b.WriteString("The failing check's log is below. Find the cause in the code and repair it, keeping every group's behaviour; ")
	b.WriteString("the verify commands of all groups must pass:\n")
	for _, g := range change.Tasks.Groups {
		for _, c := range g.VerifyCommands() {
			fmt.Fprintf(&b, "- group %d: `%s`\n", g.Number, c)
		}
	}
	b.WriteString("\nWhen they pass, call finish with a one-line summary. Do not edit tasks.md.")
	return b.String()
}
