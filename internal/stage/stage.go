package stage

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/prbody"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/instructions"
	"github.com/roadmap-dev/roadmap/internal/kernel"
	"github.com/roadmap-dev/roadmap/internal/next"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// The results of a stage Job (the stage action's `result` output).
const (
	// ResultStaged: the plan is clean and in a draft PR; implement can start.
	ResultStaged = "staged"
	// ResultReturned: the plan still has findings after the last round, or
	// the planner asked a question: the item goes to a person.
	ResultReturned = "returned"
	// ResultStopped: the Job ended on a failure; Failure holds its class.
	ResultStopped = "stopped"
	// ResultYielded: the Job gave its slot back (signal, deadline); the next
	// stage Job resumes after the last recorded round.
	ResultYielded = "yielded"
)

// The values of stage.state (next decides on them).
const (
	StatePlanning = next.StatePlanning
	StateStaged   = next.StateStaged
	StateReturned = next.StateReturned
	StateStopped  = next.StateStopped
)

// Result is how a stage Job ended. Its fields are the stage action's outputs.
type Result struct {
	Result  string `json:"result"`
	Failure string `json:"failure,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Job is this stage Job's number (its line in stage.jobs).
	Job int `json:"job"`
	// Plan is the OpenSpec change directory, PR the draft PR holding it.
	Plan string `json:"plan,omitempty"`
	PR   int    `json:"pr,omitempty"`
	// Rounds is the number of plan rounds the item has had; Findings are
	// those of the last one.
	Rounds   int            `json:"rounds"`
	Findings []plan.Finding `json:"findings"`
	// Amended is set when the Job amended a plan implement returned; From
	// is the first group the amendment may change.
	Amended bool `json:"amended,omitempty"`
	From    int  `json:"from_group,omitempty"`
	// Question is the planner's question when it asked one.
	Question string `json:"question,omitempty"`
	// Spend is the item's sum over every Job; JobSpend is this Job's share.
	Spend         record.Spend `json:"spend"`
	JobSpend      record.Spend `json:"job_spend"`
	RecordComment int64        `json:"record_comment,omitempty"`
	Requests      int          `json:"requests"`
}

// ending is how the rounds end.
type ending struct {
	result   string
	class    failure.Class
	reason   string
	question string
}

// endingOf is the ending a decision of next gives.
func endingOf(e next.Ending) ending {
	return ending{result: string(e.Result), class: e.Class, reason: e.Reason}
}

type runner struct {
	o Options
	// j is the Job kernel: the issue and the record as read once, the
	// spend, the Job's number (its line in stage.jobs and the job of its
	// spend lines, so report can add what a killed Job's log holds past its
	// last mark), the notes and the mark path.
	j *kernel.Job
	// answer is a person's answer to the planner's question (the item was
	// returned with it); answerUsed: a planner step has it, so the next
	// write clears the question and the answer.
	question, answer string
	answerUsed       bool
	// plannerModel is the model the planner's last round ran on, which
	// the verifier should not be.
	plannerModel string
	// verifierModel is the model the verifier's last round ran on.
	verifierModel string
	// ended is the result the last mark writes to the Job's line.
	ended    string
	endClass string
	round    int

	branch   string
	id       string // the change id
	dir      string // openspec/changes/<id>
	findings []plan.Finding
	rounds   int // rounds with a durable commit and findings
	pr       int

	amend     bool
	amendFrom int    // the group implement returned at
	evidence  string // implement's reason and log
	kept      string // tasks.md of the groups that passed, for the check

	// repo is the repository as the prompts show it, read once (repoMap).
	repo *repoMap
	// instr are the repository's instructions at the base commit.
	instr *instructions.Source
	// acMap is the last verified round's acceptance map, one line per
	// criterion (acceptance): the draft PR's body shows it.
	acMap []string

	// pendingRound holds a clean round's marks: they ride with the staged mark.
	pendingRound record.Changes
	// blocked, when set, is what the item waits for: the Job ends at its
	// start (kernel.Job.Blockers).
	blocked *kernel.Blocked
	// tracker, when set, says what makes the item a tracker: the Job ends
	// at its start and report drives the sub-issues (kernel.Job.Tracker).
	tracker string
	// pushed is the last round this Job pushed itself. A round an earlier
	// Job pushed may have its draft PR and comment already (that Job lost
	// its staged mark): only a PR for a round of this Job is surely new.
	pushed int
}

// Run runs one stage Job for the item and returns how it ended. An error is
// returned only when the Job could not even read its item.
func Run(ctx context.Context, o Options) (Result, error) {
	if err := o.defaults(); err != nil {
		return Result{}, err
	}
	r := &runner{o: o}
	if err := r.start(ctx); err != nil {
		if r.j != nil {
			r.j.Release(ctx)
		}
		return Result{}, err
	}
	if r.j.Busy != nil {
		// A live Job holds the item's lease: no mark, no number; report
		// leaves the item to the holder.
		res := Result{Result: ResultYielded, Failure: string(failure.Busy), Reason: r.j.Leave(), Findings: []plan.Finding{}, Spend: r.j.Total()}
		for k, v := range map[string]string{"result": res.Result, "failure": res.Failure, "spend": spendJSON(res.Spend), "job": "0"} {
			o.SetOutput(k, v)
		}
		return res, nil
	}
	if r.tracker != "" {
		// A tracker: no number, no model call; report drives its sub-issues.
		res := Result{Result: ResultYielded, Failure: string(failure.Tracker), Reason: r.j.HandOver(ctx, r.tracker), Findings: []plan.Finding{},
			Spend: r.j.Total(), RecordComment: r.j.RC.ID}
		for k, v := range map[string]string{"result": res.Result, "failure": res.Failure, "spend": spendJSON(res.Spend), "job": "0",
			"record_comment": intOutput(int(res.RecordComment))} {
			o.SetOutput(k, v)
		}
		return res, nil
	}
	if r.blocked != nil {
		// An open blocker: no number, no model call; report dispatches nothing.
		res := Result{Result: ResultYielded, Failure: string(failure.Blocked), Reason: r.j.Wait(ctx, r.blocked), Findings: []plan.Finding{},
			Spend: r.j.Total(), RecordComment: r.j.RC.ID}
		for k, v := range map[string]string{"result": res.Result, "failure": res.Failure, "spend": spendJSON(res.Spend), "job": "0",
			"record_comment": intOutput(int(res.RecordComment))} {
			o.SetOutput(k, v)
		}
		return res, nil
	}
	end := r.plan(ctx)
	return r.finish(ctx, end), nil
}

// start reads the item: the issue, the record and where the plan stands.
func (r *runner) start(ctx context.Context) error {
	o := r.o
	j, err := kernel.Start(ctx, o.Options, 0)
	if err != nil {
		return err
	}
	r.j = j
	if j.Busy != nil {
		return nil
	}
	if r.tracker = j.Tracker(); r.tracker != "" {
		return nil
	}
	if r.blocked, err = j.Blockers(ctx); err != nil || r.blocked != nil {
		return err
	}
	r.pr, _ = j.Rec.StagePR()
	if st, _ := j.Rec.StageState(); st == StateReturned {
		r.question, _ = j.Rec.Question()
		r.answer, _ = j.Rec.Answer()
	}
	j.Started("stage")
	r.wake(ctx)
	j.Logf("roadmap: stage issue #%d, item spend so far %s", o.Issue, kernel.SpendText(j.Prior))
	j.Doing = "staging: reading the issue and the code"
	return nil
}

// plan runs the rounds: planner, gates, verifier, until the plan is clean or
// the rounds are spent.
func (r *runner) plan(ctx context.Context) ending {
	o := r.o
	rec := r.j.Rec
	v := next.StageView{Unisolated: o.Unisolated}
	v.StoppedBy, _ = rec.StoppedBy()
	v.State, _ = rec.StageState()
	v.Result, _ = rec.Result()
	v.Failure, _ = rec.Failure()
	step := next.StageStart(v)
	switch step.Kind {
	case next.Yield, next.Stop:
		return endingOf(step.Ending)
	case next.Nothing:
		r.dir, _ = rec.StagePlan()
		r.rounds, _ = rec.StageRound()
		r.j.Logf("roadmap: the plan is already staged (%s, PR #%d); nothing to do", r.dir, r.pr)
		return endingOf(step.Ending)
	}
	r.amend = step.Amend
	r.branch = git.WorkBranch(o.Issue, r.j.Issue.Title)
	if err := o.Repo.CheckoutBranch(ctx, o.Remote, r.branch, o.Base); err != nil {
		return r.fail(ctx, err)
	}
	instr, err := instructions.At(ctx, o.Repo, o.Remote+"/"+o.Base, o.Mask)
	if err != nil {
		return r.fail(ctx, err)
	}
	r.instr = instr
	r.dir, _ = rec.StagePlan()
	if r.dir == "" {
		r.id = ChangeID(o.Issue, r.j.Issue.Title)
		taken, err := o.Repo.PathExists(ctx, o.Remote+"/"+o.Base, plan.ChangeDir("", r.id))
		if err != nil {
			return r.fail(ctx, err)
		}
		if taken {
			// Another change of the repository has the name: this one
			// carries the issue's number.
			r.id = fmt.Sprintf("%s-%d", r.id, o.Issue)
		}
		r.dir = plan.ChangeDir("", r.id)
	} else {
		r.id = r.dir[strings.LastIndex(r.dir, "/")+1:]
	}
	if err := record.CheckPlanPath(r.dir); err != nil {
		return ending{result: ResultStopped, class: failure.Unknown, reason: fmt.Sprintf("stage.plan: %v", err)}
	}
	if r.amend {
		if end, ok := r.startAmendment(ctx); !ok {
			return end
		}
	}
	// Resume: the rounds a killed Job already paid for are on the branch
	// and, with their findings, in the record.
	done, _, err := o.Repo.PlanRounds(ctx, o.Remote+"/"+o.Base)
	if err != nil {
		return r.fail(ctx, err)
	}
	rv := next.RoundsView{Amend: r.amend, State: v.State, Pushed: done, Bound: o.Rounds}
	rv.Recorded, _ = rec.StageRound()
	recorded := parseFindings(rec)
	rv.RecordedClean = !failing(recorded)
	step = next.StageRounds(rv)
	if step.Resume > 0 {
		r.rounds, r.findings = step.Resume, recorded
		r.j.Logf("roadmap: rounds 1-%d are on %s; resuming after them", step.Resume, r.branch)
	}
	if step.Recheck > 0 {
		r.j.Logf("roadmap: round %d is on %s without its findings; checking it again", step.Recheck, r.branch)
		r.round = step.Recheck
		if end, ok := r.check(ctx); !ok {
			return end
		}
		if !failing(r.findings) {
			return r.staged(ctx)
		}
	}
	if step.Kind == next.Staged {
		return r.staged(ctx)
	}
	for r.round = step.First; r.round <= step.Last; r.round++ {
		end, ok, clean := r.oneRound(ctx)
		switch {
		case !ok:
			return end
		case clean:
			return r.staged(ctx)
		}
	}
	return ending{result: ResultReturned, class: failure.PlanWrong,
		reason: fmt.Sprintf("the plan still has %d findings after %d rounds", countFailing(r.findings), r.rounds)}
}

// oneRound is one round in its own section of the job log: the planner,
// then the gates and the verifier.
func (r *runner) oneRound(ctx context.Context) (end ending, ok, clean bool) {
	defer r.j.Section("roadmap: plan round %d", r.round)()
	if end, ok := r.planRound(ctx); !ok {
		return end, false, false
	}
	if end, ok := r.check(ctx); !ok {
		return end, false, false
	}
	if failing(r.findings) {
		r.j.Logf("roadmap: round %d has %d findings", r.round, countFailing(r.findings))
		return ending{}, true, false
	}
	return ending{}, true, true
}

// planRound runs the planner for r.round, keeps only the plan's files,
// commits the round and pushes it.
func (r *runner) planRound(ctx context.Context) (ending, bool) {
	o := r.o
	r.j.Doing = fmt.Sprintf("staging: writing the plan, round %d", r.round)
	start := o.Clock.Now()
	out, err := agent.Run(ctx, r.plannerConfig(), r.plannerStep(ctx))
	r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseAgent, Step: fmt.Sprintf("round %d: planner", r.round),
		Outcome: string(out.Status), Duration: o.Clock.Now().Sub(start), Model: out.Model})
	if out.Model != "" {
		r.plannerModel = out.Model
	}
	if err != nil {
		return r.fail(ctx, err), false
	}
	switch out.Status {
	case agent.StatusFinished:
	case agent.StatusNeedsInput:
		return ending{result: ResultReturned, class: failure.NeedsInput, reason: "the planner asked a question", question: out.Question}, false
	case agent.StatusBudgetExhausted:
		return ending{result: ResultStopped, class: failure.BudgetExhausted, reason: out.Reason}, false
	case agent.StatusModelError:
		return ending{result: ResultYielded, class: failure.Transient, reason: out.Reason}, false
	default:
		return ending{result: ResultStopped, class: failure.Unknown, reason: fmt.Sprintf("planner ended %s: %s", out.Status, out.Reason)}, false
	}
	discarded, err := o.Repo.DiscardOutside(ctx, r.dir)
	if err != nil {
		return r.fail(ctx, err), false
	}
	if len(discarded) > 0 {
		r.j.Logf("roadmap: the planner changed files outside the plan; discarded: %s", strings.Join(capList(discarded, 10), ", "))
	}
	if r.amend {
		if err := r.keepPassedGroups(); err != nil {
			return r.fail(ctx, err), false
		}
	}
	subject := fmt.Sprintf("stage: plan for #%d, round %d", o.Issue, r.round)
	if r.amend {
		subject = fmt.Sprintf("stage: amend the plan for #%d from group %d", o.Issue, r.amendFrom)
	}
	if _, err := o.Repo.CommitPlanRound(ctx, r.round, git.Message{Subject: subject, Issue: o.Issue}); err != nil {
		return r.fail(ctx, err), false
	}
	start = o.Clock.Now()
	if err := o.Repo.Push(ctx, o.Remote, r.branch); err != nil {
		return r.fail(ctx, err), false
	}
	r.pushed = r.round
	r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhasePush, Step: fmt.Sprintf("round %d", r.round), Duration: o.Clock.Now().Sub(start)})
	return ending{}, true
}

// check runs the gates and the verifier on r.round's plan and makes the
// round durable: its findings and spend in one record write.
func (r *runner) check(ctx context.Context) (ending, bool) {
	o := r.o
	r.j.Doing = fmt.Sprintf("staging: checking the plan, round %d", r.round)
	start := o.Clock.Now()
	root := o.Repo.Dir
	var findings []plan.Finding
	gf, err := o.Gates(ctx, GateInput{Issue: r.j.Issue, Root: root, ChangeID: r.id})
	switch {
	case errors.Is(err, plan.ErrNoChange):
		findings = append(findings, plan.Finding{Level: plan.LevelError, Rule: "roadmap/stage/no-plan", File: r.dir, Line: 1,
			Message: "the planner wrote no plan in " + r.dir, Ours: true})
	case err != nil:
		return r.fail(ctx, fmt.Errorf("plan gates: %w", err)), false
	default:
		findings = append(findings, gf...)
	}
	if r.amend {
		findings = append(findings, r.keptFindings()...)
	}
	r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseGates, Step: fmt.Sprintf("round %d", r.round),
		Outcome: fmt.Sprintf("%d findings", countFailing(findings)), Duration: o.Clock.Now().Sub(start)})
	// The verifier reads only a plan the gates pass: its objections are
	// worth a model call when nothing cheaper has one.
	if !failing(findings) {
		vf, end, ok := r.verify(ctx, findings)
		if !ok {
			return end, false
		}
		findings = append(findings, vf...)
	}
	r.findings = findings
	r.rounds = r.round
	var ch record.Changes
	ch.SetStageState(StatePlanning)
	ch.SetStagePlan(r.dir)
	ch.SetStageRound(r.round)
	ch.SetModels(r.j.Rec.Models(), map[string]string{"planner": r.plannerModel, "verifier": r.verifierModel})
	if text := findingsText(findings); text != "" {
		ch.SetStageFindings(o.Mask(text))
	} else {
		ch.Delete(record.KeyStageFindings)
	}
	if !failing(findings) {
		// A clean round's findings ride with the staged mark.
		r.pendingRound = ch
		return ending{}, true
	}
	if err := r.write(ctx, ch); err != nil {
		return r.fail(ctx, err), false
	}
	return ending{}, true
}

// verify asks the independent verifier to refute the plan; notes are the
// gates' findings of this round, none of which fails it.
func (r *runner) verify(ctx context.Context, notes []plan.Finding) ([]plan.Finding, ending, bool) {
	o := r.o
	start := o.Clock.Now()
	tiers := r.verifierTiers()
	r.verifierModel = tiers[0].Name
	r.j.Logf("roadmap: round %d: the verifier runs on %s (the planner on %s)", r.round, tiers[0].Name, firstSet(r.plannerModel, "an unknown model"))
	cfg := r.agentConfig(tiers)
	cfg.Tools = agent.VerifierTools()
	cfg.System = verifierSystem
	out, err := agent.Run(ctx, cfg, r.verifierStep(ctx, notes))
	r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseVerifier, Step: fmt.Sprintf("round %d", r.round),
		Outcome: string(out.Status), Duration: o.Clock.Now().Sub(start), Model: tiers[0].Name})
	if err != nil {
		return nil, r.fail(ctx, err), false
	}
	switch out.Status {
	case agent.StatusFinished:
	case agent.StatusBudgetExhausted:
		return nil, ending{result: ResultStopped, class: failure.BudgetExhausted, reason: out.Reason}, false
	case agent.StatusModelError:
		return nil, ending{result: ResultYielded, class: failure.Transient, reason: out.Reason}, false
	default:
		return nil, ending{result: ResultStopped, class: failure.Unknown, reason: fmt.Sprintf("verifier ended %s: %s", out.Status, out.Reason)}, false
	}
	findings := ParseObjections(out.Summary, r.dir+"/tasks.md")
	return append(findings, r.acceptance(out.Acceptance)...), ending{}, true
}

// verifierTiers are the verifier's tiers by rule: the configured or default
// verifier (the ladder's last tier), unless it is the model the planner
// wrote this round on and the configuration did not name it; then the
// highest tier of the planner's ladder on another model, so the plan is
// judged by another model whenever the ladder offers one.
func (r *runner) verifierTiers() []agent.Tier {
	v := r.o.Verifier
	if r.o.VerifierNamed || len(v) == 0 || v[0].Name != r.plannerModel {
		return v
	}
	for i := len(r.o.Planner) - 1; i >= 0; i-- {
		if r.o.Planner[i].Name != r.plannerModel {
			return r.o.Planner[i : i+1]
		}
	}
	return v
}

func firstSet(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// staged opens (or finds) the draft PR holding the plan, writes the
// findings comment on it and the staged mark.
func (r *runner) staged(ctx context.Context) ending {
	o := r.o
	r.j.Doing = "staging: opening the draft PR"
	created := 0
	if r.pr == 0 {
		title := r.j.Issue.Title
		verdict := fmt.Sprintf("It passed the plan gates and the verifier after %d round%s", r.rounds, plural(r.rounds))
		if len(r.findings) == 0 {
			verdict += ", with no findings."
		} else {
			verdict += "; the findings of the last round are in the comment below."
		}
		body := r.prBody(verdict)
		pr, err := o.GitHub.CreateDraftPR(ctx, r.branch, o.Base, title, o.Mask(body))
		if err != nil {
			return r.fail(ctx, err)
		}
		r.pr, created = pr.Number, pr.Number
		if r.pushed == r.rounds {
			// Opened for this Job's own round: no comment of ours yet, so
			// the comment posts without listing first. Otherwise an earlier
			// Job may have opened it and commented: the upsert looks.
			o.GitHub.NewThread(r.pr, o.Marker)
		}
	}
	if r.amend && created == 0 {
		// The amended plan: the body's task list and state follow it.
		if _, err := o.GitHub.UpdatePR(ctx, r.pr, "", r.prBody(fmt.Sprintf("Amended from group %d after implement returned it.", r.amendFrom))); err != nil {
			return r.fail(ctx, err)
		}
	}
	// The findings of the last round are one marker comment on the PR. A
	// new PR whose plan has none gets no comment: its body says so.
	if len(r.findings) > 0 || r.amend || created == 0 {
		if _, err := o.GitHub.UpsertMarkerComment(ctx, r.pr, o.Marker, o.Mask(r.prComment())); err != nil {
			return r.fail(ctx, err)
		}
	}
	return ending{result: ResultStaged}
}

// prBody is the draft PR's body: it closes the issue, says the PR holds the
// plan awaiting approval (with verdict), and lists the plan's tasks.
func (r *runner) prBody(verdict string) string {
	o := r.o
	var tasks []byte
	if c, err := plan.LoadChangeIn(o.Repo.Dir, r.dir); err == nil {
		tasks, _ = c.ReadFile("tasks.md")
	}
	state := fmt.Sprintf("Draft: the plan only, awaiting a person's approval. %s Approve this PR, or label the issue `roadmap:implement`, to start implement; it commits the plan's groups here one by one.", verdict)
	return o.Mask(prbody.Render(prbody.Body{Issue: o.Issue, State: state, Plan: r.dir, Tasks: tasks, Acceptance: r.acMap, Server: o.GitHub.ServerHost(), Repo: o.GitHub.FullName()}))
}

// finish writes the last mark and the outputs.
func (r *runner) finish(ctx context.Context, end ending) Result {
	o := r.o
	if ctx.Err() != nil && end.result != ResultStaged {
		end = ending{result: ResultYielded, class: failure.Killed, reason: "the runner asked the Job to stop (signal)"}
	}
	// The last mark is written even when the Job's context was cancelled:
	// the runner's grace (7.5 s after SIGINT) is enough for one write.
	wctx, cancel := kernel.LastMarkContext(ctx)
	defer cancel()
	var ch record.Changes
	ch.Merge(r.pendingRound)
	r.ended, r.endClass = end.result, string(end.class)
	if r.dir != "" && r.branch != "" {
		// Where the plan is, whatever the end: a person, explain and the
		// next Job read it.
		ch.SetStagePlan(r.dir)
	}
	switch end.result {
	case ResultStaged:
		ch.SetStageState(StateStaged)
		if r.dir != "" {
			ch.SetStagePlan(r.dir)
		}
		if r.pr > 0 {
			ch.SetStagePR(r.pr)
		}
		if head, err := o.Repo.Head(wctx); err == nil && r.branch != "" {
			// The plan's push is the branch's last: implement's reconcile
			// has nothing to mark for it.
			ch.SetPublishedSHA(record.SHA(head))
		}
		if r.amend {
			// implement starts again from the first group the amendment
			// changed: the return and its evidence are spent.
			ch.Delete(record.KeyImplementResult, record.KeyImplementFailure, record.KeyImplementStopped, record.KeyImplementCheckLog)
		}
		r.j.Doing = fmt.Sprintf("staged: the plan is in draft PR #%d", r.pr)
		r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseStaged, Step: "staged"})
	case ResultReturned:
		ch.SetStageState(StateReturned)
		r.j.Doing = "returned: the plan needs a person"
		if end.question != "" {
			ch.SetQuestion(o.Mask(end.question))
			r.j.Doing = "returned: the planner asks a question"
		}
		r.j.Notes = append(r.j.Notes, findingNotes(r.findings)...)
		r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseReturned, Step: "stage", Reason: end.reason, Outcome: string(end.class)})
	case ResultStopped:
		ch.SetStageState(StateStopped)
		r.j.Doing = "stopped: " + string(end.class)
		r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseStopped, Step: "stage", Reason: end.reason, Outcome: string(end.class)})
	case ResultYielded:
		r.j.Doing = "yielded: a continuation resumes after the last round"
		r.j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseYielded, Step: "stage", Reason: end.reason, Outcome: string(end.class)})
	}
	// The record keeps this Job's trace copy, bounded and masked as
	// implement's (the recorder masked each event as it was added): explain
	// --trace and the console read it.
	_, copyText := trace.Bound(o.Trace.Events(), trace.RecordLimit)
	ch.SetStageTrace([]byte(copyText))
	if end.result != ResultStaged {
		level := map[string]string{ResultStopped: "error", ResultYielded: "notice", ResultReturned: "warning"}[end.result]
		r.j.Command(level, failure.TypedLine(failure.Result(end.result), end.class, end.reason))
	}
	res := Result{Result: end.result, Failure: string(end.class), Reason: end.reason, Plan: r.dir, PR: r.pr,
		Rounds: r.rounds, Findings: r.findings, Amended: r.amend, From: r.amendFrom, Question: end.question}
	if res.Findings == nil {
		res.Findings = []plan.Finding{}
	}
	already := end.result == ResultStaged && r.branch == "" // nothing happened: no write
	if !already {
		if err := r.write(wctx, ch); err != nil {
			r.j.Logf("roadmap: write the last mark: %v", err)
			if res.Result == ResultStaged {
				res.Result, res.Failure, res.Reason = ResultStopped, string(failure.ClassifyError(err)), err.Error()
			}
		}
	}
	// After the last mark: the next Job reads a record this one is done with.
	r.j.Release(wctx)
	res.Spend, res.JobSpend = r.j.Total(), r.j.Spend
	res.RecordComment, res.Job = r.j.RC.ID, r.j.Number
	res.Requests = o.GitHub.Requests().Counted()
	for k, v := range map[string]string{
		"result": res.Result, "failure": res.Failure, "plan": res.Plan, "pr": intOutput(res.PR),
		"rounds": strconv.Itoa(res.Rounds), "record_comment": intOutput(int(res.RecordComment)),
		"spend": spendJSON(res.Spend), "job": strconv.Itoa(r.j.Number),
	} {
		o.SetOutput(k, v)
	}
	r.j.Logf("roadmap: stage ended %s%s; item spend %s", res.Result, suffix(end), kernel.SpendText(res.Spend))
	return res
}

// write writes ch to the record in one write; the kernel's mark path adds
// the item's spend so far and this Job's line in stage.jobs.
func (r *runner) write(ctx context.Context, ch record.Changes) error {
	var all record.Changes
	if r.answerUsed {
		// First, so a new question in ch is kept.
		all.Delete(record.KeyImplementQuestion, record.KeyImplementAnswer)
	}
	all.Merge(ch)
	line := record.JobOutcome{Result: record.Result(r.ended), Failure: r.endClass}
	if err := r.j.Mark(ctx, all, line); err != nil {
		return fmt.Errorf("write the stage mark: %w", err)
	}
	r.pendingRound = record.Changes{}
	if r.answerUsed {
		r.answer, r.answerUsed = "", false
	}
	return nil
}

// fail turns an error into the ending its class leads to. A stage Job
// either yields (the class has an automatic action) or stops.
func (r *runner) fail(ctx context.Context, err error) ending {
	v := kernel.Judge(ctx, err)
	res := ResultStopped
	if v.Result == record.ResultYielded {
		res = ResultYielded
	}
	return ending{result: res, class: v.Class, reason: v.Reason}
}

func suffix(end ending) string {
	switch {
	case end.class != "" && end.reason != "":
		return fmt.Sprintf(" (%s: %s)", end.class, end.reason)
	case end.class != "":
		return fmt.Sprintf(" (%s)", end.class)
	}
	return ""
}

func spendJSON(s record.Spend) string {
	return fmt.Sprintf(`{"tokens_in":%d,"tokens_out":%d,"usd":%.6f,"model_calls":%d}`, s.TokensIn, s.TokensOut, s.USD, s.ModelCalls)
}

func intOutput(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func capList(l []string, n int) []string {
	if len(l) <= n {
		return l
	}
	return append(l[:n:n], fmt.Sprintf("and %d more", len(l)-n))
}
