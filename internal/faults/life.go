package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	theworld "github.com/roadmap-dev/roadmap/internal/world"

	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/job"
	"github.com/roadmap-dev/roadmap/internal/kernel"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/report"
)

// MaxJobs bounds a history: a life that needs more Jobs than this is a
// violation (work repeated without end).
const MaxJobs = 6

func masker() *redact.Masker { return redact.New(redact.Config{Secrets: []string{Token}}) }

// jobEnd is how one implement Job of a history ended.
type jobEnd struct {
	Attempt int
	Killed  string // the kill point; "" when the Job ended by itself
	Result  implement.Result
	// Passed is implement.group when the Job started, OnRemote the groups
	// whose commits the work branch held then (git's trailers: a group
	// whose mark waits for the Job's next write is there before it is in
	// the record): the groups it must not repeat. Started are the groups
	// whose agent step it began.
	Passed   int
	OnRemote map[int]bool
	Started  []int
	Log      string
}

// reportEnd is one report run.
type reportEnd struct {
	// Job is the Job reported on: an implement Job's attempt, or with Stage
	// the stage Job's number as the suite counts them (1, 2, … in the
	// history), whatever report makes of it.
	Job     int
	Stage   bool
	Killed  string
	Outcome report.Outcome
	// Dispatched are the runs of the dispatches the fake received while
	// this report ran (a killed run's too).
	Dispatched []int64
}

// life is one history being played.
type life struct {
	w    *world
	c    *crasher
	ctx  context.Context
	jobs []jobEnd
	reps []reportEnd
	// window is the model's input window (0: the default).
	window int
	// signal, when set, is closed to deliver SIGINT to the running Job;
	// interrupt delivers it, synchronously, from the effect hook that
	// closes signal, so the Job's next step sees it in every play.
	signal    chan struct{}
	sigSent   bool
	interrupt func()
	// writerEdited is set when the concurrent writer acted.
	writerEdited bool
	// configure, when set, changes the suite's configuration for this
	// history (a budget, a check command), as a repository's
	// .github/roadmap.yml would.
	configure func(*config.Config)
	sigTerm   time.Duration // SIGTERM after SIGINT (the runner: 7.5 s)
	sigKill   time.Duration // the kill after SIGTERM (the runner: 2.5 s)
	logExtra  string        // appended to a killed Job's log (OOM evidence)
	// foreign are files another writer put on the branch.
	foreign map[string]bool
	trace   []string
	// afterJob runs after each Job (a person re-dispatching after a stop).
	afterJob     func(l *life, je jobEnd) (resume bool)
	redispatched bool
	// hooks act at exact effects; keep are record keys others wrote that
	// must survive.
	hooks []hook
	keep  []string
	// window are keys another writer adds inside the Job's read→PATCH
	// window: the record write protocol cannot keep them (docs/github.md).
	windowKeys []string
	hookErr    error
	playErr    error
	preHead    string
	dupPushes  int
	// stages are the stage Jobs of a history that starts with no plan;
	// stagedAt is what they left, stageEffects how many effects they made.
	stages       []stageEnd
	stagedAt     *stagedState
	stageEffects int
	// stageRequests is how many requests the fake had at the stage's end.
	stageRequests int
	// noRetry turns the GitHub clients' transient retries off.
	noRetry bool
	// logs and traces are every Job's and report run's log and trace:
	// the evidence of the recovery branches they took.
	logs, traces []*lockedBuffer
	// Issue 46's and 47's faults. omitLists is how many lists of the
	// issue's comments still leave the record out, omitted how many record
	// comments they left out; fresh hands every Job no record id;
	// beforeJob runs before each implement Job (attempt 1, 2, …); budget
	// holds the life to ItemRequestBudget; checks wraps a Job's check
	// runner (a full disk), diskFilled says it failed; acted is a person's
	// act on the item; broken: a person broke the record block.
	omitLists, omitted atomic.Int64
	fresh              bool
	beforeJob          func(l *life, attempt int) error
	budget             bool
	checks             func(checks.Runner) checks.Runner
	diskFilled         bool
	acted              string
	actCalls           int
	broken             bool
	overGroup          int
	// stageLast is what report did after the last stage Job: none after
	// staged (implement goes on), a stop (the history ends stopped).
	stageLast report.Outcome
}

// hook is something that happens at one effect of the history.
type hook struct {
	point string
	done  bool
	f     func() error
}

// The runner's signal timings (DESIGN §6), not scaled: a scaled-down grace
// raced the Job's own last marks under load, so two plays of one history
// differed. The promise is that the Job's marks fit in the runner's grace;
// the wait costs the suite nothing (the timer ends with the history).
const (
	sigTerm = 7500 * time.Millisecond // SIGTERM 7.5 s after SIGINT
	sigKill = 2500 * time.Millisecond // the kill 2.5 s after SIGTERM
)

// onEffect is the crasher's observer: CI reports on what was pushed, and the
// scenario's hooks run at their points.
func (l *life) onEffect(point string, done, ok bool) {
	if strings.HasPrefix(point, EffPush+"#") {
		if !done {
			l.preHead = l.w.remoteHead()
		} else if ok && l.preHead != "" && l.w.remoteHead() == l.preHead {
			l.dupPushes++
		}
	}
	for i := range l.hooks {
		h := &l.hooks[i]
		if h.f != nil && h.point == point && h.done == done {
			f := h.f
			h.f = nil
			if err := f(); err != nil && l.hookErr == nil {
				l.hookErr = fmt.Errorf("at %s: %w", point, err)
			}
		}
	}
	if done && strings.HasPrefix(point, EffPush+"#") {
		l.w.playCI()
	}
}

func (l *life) note(format string, args ...any) {
	l.trace = append(l.trace, fmt.Sprintf(format, args...))
}

// play runs Jobs and reports until the item settles.
func (l *life) play() error {
	w := l.w
	var rc int64
	if w.staging {
		var err error
		if rc, err = l.stagePhase(); err != nil {
			return err
		}
		if !l.staged() {
			// Report stopped the item in stage, or stage never got it
			// staged: implement has no plan to start on (checkStage says
			// which).
			return nil
		}
	}
	runID := w.fake.AddRun(githubfake.Run{WorkflowFile: "roadmap.yml", HeadBranch: "main", Event: "issues", Status: "in_progress"})
	attempt := 1
	for n := 0; n < MaxJobs; n++ {
		if l.beforeJob != nil {
			if err := l.beforeJob(l, attempt); err != nil {
				return err
			}
		}
		jrc := rc
		if l.fresh {
			jrc = 0 // a Job handed no record id
		}
		je, err := l.job(attempt, runID, jrc)
		if err != nil {
			return err
		}
		l.jobs = append(l.jobs, je)
		if je.Result.RecordComment != 0 {
			rc = je.Result.RecordComment
		}
		out, err := l.report(je, runID, rc)
		if err != nil {
			return err
		}
		if out.DispatchedRunID != 0 && out.NextAttempt != 0 {
			attempt, runID = out.NextAttempt, out.DispatchedRunID
			continue
		}
		if l.afterJob != nil && l.afterJob(l, je) {
			attempt++
			runID = w.fake.AddRun(githubfake.Run{WorkflowFile: "roadmap.yml", HeadBranch: "main", Event: "workflow_dispatch", Status: "in_progress"})
			continue
		}
		return nil
	}
	return nil
}

// open builds a Job the way the binary does (job.Open), on the suite's
// world (its Setup: the shipped defaults, config.Default as the binary
// takes them when the repository has no .github/roadmap.yml, with the
// replay model server as the one tier and no isolation boundary, the
// suite's agents being recorded, not hostile): GitHub's requests through
// the fault transport of p, git's commands through p's hook, the log in
// memory.
func (l *life) open(ctx context.Context, phase kernel.Phase, number int, runID, rc int64, ws string, p *proc, log io.Writer) (*job.Kit, error) {
	w := l.w
	s := w.base.Setup(phase, ws, "")
	s.Number, s.RunID, s.RecordComment, s.Log = number, runID, rc, log
	s.Transport = &transport{p: p, base: &http.Transport{DisableKeepAlives: true}, issue: w.issue, answered: l.answered}
	s.GitHook = p.gitHook()
	s.GitHubNoRetry = l.noRetry
	tr := &lockedBuffer{}
	s.TraceOut = tr
	l.traces = append(l.traces, tr)
	if lb, ok := log.(*lockedBuffer); ok {
		l.logs = append(l.logs, lb)
	}
	cfg := s.Config
	cfg.Models[0].InputWindow = l.window
	cfg.Prices = map[string]config.Price{theworld.ModelName: {Input: 1, Output: 10}}
	cfg.Implement.RepairRounds = 2
	cfg.Implement.WatchTimeout = 10 * time.Minute
	// The suite's recorded conversations are the groups' and the planner's:
	// the review and test strength, on by default, have suites of their
	// own (internal/review, internal/strength, the e2e's whole items).
	cfg.Review.Enabled, cfg.Implement.TestStrength = false, false
	if l.configure != nil {
		l.configure(cfg)
	}
	kit, err := job.Open(ctx, s)
	if err == nil && l.checks != nil {
		kit.CheckRunner = l.checks(kit.CheckRunner)
	}
	return kit, err
}

// job runs one implement Job in this process; a kill unwinds it.
func (l *life) job(attempt int, runID, rc int64) (je jobEnd, err error) {
	w := l.w
	je.Attempt = attempt
	if rec, err := w.record(); err == nil {
		je.Passed, _ = rec.Group()
	}
	je.OnRemote = w.remoteGroups()
	served := len(w.replay.Stats().Served)
	ws, err := w.workspace(fmt.Sprintf("job-%d-%d", attempt, len(l.jobs)))
	if err != nil {
		return je, err
	}
	p := &proc{c: l.c}
	ctx, cancel := context.WithCancel(l.ctx)
	defer cancel()
	log := &lockedBuffer{}
	kit, err := l.open(ctx, implement.Phase(), attempt, runID, rc, ws, p, log)
	if err != nil {
		return je, err
	}
	defer kit.Close()
	l.interrupt = nil
	if l.signal != nil && !l.sigSent {
		// The signal reaches the first Job only.
		l.sigSent = true
		l.interrupt = func() {
			cancel() // SIGINT: the binary's context ends, before its next step
			// SIGTERM changes nothing more in the binary (the same context);
			// the runner kills the process sigTerm+sigKill after SIGINT.
			go func() {
				select {
				case <-time.After(l.sigTerm + l.sigKill):
					p.dead.Store(true)
				case <-l.ctx.Done():
				}
			}()
		}
	}
	func() {
		defer func() {
			if v := recover(); v != nil {
				k, ok := v.(killed)
				if !ok {
					panic(v)
				}
				je.Killed = k.point
			}
		}()
		var res implement.Result
		res, err = kit.Implement(ctx, job.ImplementRun{NoChecksGrace: time.Minute})
		je.Result = res
	}()
	p.dead.Store(true) // the process is gone; a stray goroutine writes nothing
	je.Log = log.String()
	for _, s := range w.replay.Stats().Served[served:] {
		var g int
		if _, err := fmt.Sscanf(s.Conversation, "group-%d", &g); err == nil && s.Turn == 0 {
			je.Started = append(je.Started, g)
		}
	}
	if err != nil && je.Killed == "" {
		return je, fmt.Errorf("job %d: %w", attempt, err)
	}
	if je.Killed != "" {
		l.note("job %d killed %s", attempt, je.Killed)
	} else {
		l.note("job %d %s %s group %d", attempt, je.Result.Result, je.Result.Failure, je.Result.Group)
	}
	return je, nil
}

// report posts the Job to the fake's Actions API as GitHub would and runs
// report on it; a killed report run is re-run (the failed job's rerun).
func (l *life) report(je jobEnd, runID, rc int64) (report.Outcome, error) {
	w := l.w
	o := report.Options{Issue: w.issue, RunID: runID, RecordComment: rc,
		Workflow: "roadmap.yml", Ref: "main", Mask: masker().Mask, Clock: w.clock}
	if je.Killed == "" {
		r := je.Result
		o.Result, o.Failure, o.Group, o.Spend, o.HeadSHA, o.PR, o.Attempt, o.Reason =
			string(r.Result), r.Failure, r.Group, jsonString(r.Spend), r.HeadSHA, r.PR, r.Attempt, r.Reason
	}
	return l.reportOn(reportEnd{Job: je.Attempt}, "implement", je.Killed != "", je.Log, o)
}

// reportOn posts a Job (implement or stage, named name in the run o.RunID)
// with its log to the fake, as GitHub would, and runs report on it with o; a
// killed report run is re-run as the run's next attempt. Every run of report
// is kept in l.reps, with the dispatches the fake received during it.
func (l *life) reportOn(rep0 reportEnd, name string, dead bool, log string, o report.Options) (report.Outcome, error) {
	w := l.w
	job := githubfake.Job{Name: name, Conclusion: "success",
		Steps: []githubfake.Step{{Name: "Run roadmap " + name, Status: "completed", Conclusion: "success"}}}
	if dead {
		log += l.logExtra + "##[error]Process completed with exit code 137.\n"
		job.Conclusion = "failure"
		job.Steps[0].Conclusion = "failure"
	}
	job.Log = Stamp(log)
	if _, err := w.fake.AddJob(o.RunID, job); err != nil {
		return report.Outcome{}, err
	}
	o.JobResult = job.Conclusion
	what := fmt.Sprintf("job %d", rep0.Job)
	if rep0.Stage {
		what = "stage " + what
	}
	var out report.Outcome
	for try := 0; try < 3; try++ {
		p := &proc{c: l.c}
		rlog := &lockedBuffer{}
		l.logs = append(l.logs, rlog)
		gh, err := w.reportClient(&transport{p: p, base: &http.Transport{DisableKeepAlives: true}, issue: w.issue, answered: l.answered}, rlog, l.noRetry)
		if err != nil {
			return out, err
		}
		o.GitHub = gh
		// A re-run of report is a later attempt of the same workflow run.
		o.RunAttempt = try + 1
		rep := rep0
		sent := len(w.fake.Dispatches())
		func() {
			defer func() {
				if v := recover(); v != nil {
					k, ok := v.(killed)
					if !ok {
						panic(v)
					}
					rep.Killed = k.point
				}
			}()
			o.Log = rlog
			out, err = report.Run(l.ctx, o)
		}()
		p.dead.Store(true)
		for _, d := range w.fake.Dispatches()[sent:] {
			rep.Dispatched = append(rep.Dispatched, d.RunID)
		}
		rep.Outcome = out
		l.reps = append(l.reps, rep)
		if rep.Killed != "" {
			l.note("report on %s killed %s", what, rep.Killed)
			continue
		}
		if err != nil {
			return out, fmt.Errorf("report on %s: %w", what, err)
		}
		l.note("report on %s: %s %s → %s", what, out.Result, out.Class, out.Action)
		return out, nil
	}
	return out, fmt.Errorf("report on %s was killed three times", what)
}

// state is what a history leaves: the parts the invariants compare.
type State struct {
	Result    string            `json:"result"`
	Failure   string            `json:"failure,omitempty"`
	Group     int               `json:"group"`
	Files     map[string]string `json:"files"`
	PRs       int               `json:"prs"`
	PRDraft   bool              `json:"pr_draft"`
	PRState   string            `json:"pr_state"`
	Archived  bool              `json:"archived"`
	Status    string            `json:"status"`
	StopLabel bool              `json:"stop_label"`
	Spend     record.Spend      `json:"spend"`
	// SpendEstimated is implement.spend_estimated: calls counted at their
	// booking, with no answer read.
	SpendEstimated int          `json:"spend_estimated,omitempty"`
	Served         record.Spend `json:"served"`
	RecordKeys     []string     `json:"record_keys"`
	// Staged is what the stage part left (histories with no plan at first).
	Staged *stagedState `json:"staged,omitempty"`
}

// final reads the state a history left.
func (l *life) final() (State, error) {
	w := l.w
	var s State
	rec, err := w.record()
	if err != nil && l.broken {
		// A person broke the block and nothing repaired it: the checks
		// say so (check reads the record again).
		rec, _ = record.Parse("")
	} else if err != nil {
		return s, err
	}
	res, _ := rec.Result()
	s.Result = string(res)
	s.Failure, _ = rec.Failure()
	s.Group, _ = rec.Group()
	s.Spend, _ = rec.Spend()
	s.SpendEstimated = rec.SpendEstimated()
	s.Staged = l.stagedAt
	st := w.replay.Stats()
	s.Served = record.Spend{TokensIn: st.TokensIn, TokensOut: st.TokensOut, ModelCalls: int(st.Calls)}
	for _, k := range rec.Keys() {
		s.RecordKeys = append(s.RecordKeys, string(k))
	}
	for _, k := range l.windowKeys {
		if !rec.Has(record.Key(k)) {
			l.note("%s lost: written inside the Job's read→PATCH window (docs/github.md, not guaranteed)", k)
		}
	}
	s.Files = map[string]string{}
	if head := w.remoteHead(); head != "" {
		out, err := gitIn(w.remote, "ls-tree", "-r", head)
		if err != nil {
			return s, err
		}
		for _, line := range strings.Split(out, "\n") {
			meta, path, ok := strings.Cut(line, "\t")
			if !ok || l.foreign[path] {
				continue
			}
			f := strings.Fields(meta)
			s.Files[path] = f[len(f)-1]
			if strings.HasPrefix(path, "openspec/changes/archive/") {
				s.Archived = true
			}
		}
		for _, st := range w.fake.Statuses(head) {
			if st.Context == report.StatusContext {
				s.Status = st.State
			}
		}
	}
	for n := 1; ; n++ {
		is, ok := w.fake.Issue(n)
		if !ok {
			break
		}
		if is.Pull != nil && strings.HasPrefix(is.Pull.Head, fmt.Sprintf("roadmap/%d-", w.issue)) {
			s.PRs++
			s.PRDraft = is.Pull.Draft
			s.PRState = is.State
			w.branch = is.Pull.Head
		}
	}
	for _, lb := range w.fake.Labels(w.issue) {
		if lb == report.DefaultLabels().Stopped {
			s.StopLabel = true
		}
	}
	return s, nil
}

func (s State) String() string {
	b, _ := json.Marshal(s)
	return string(b)
}

func (l *life) signalled() bool {
	if l.signal == nil {
		return false
	}
	select {
	case <-l.signal:
		return true
	default:
		return false
	}
}

func (l *life) writerActed() bool {
	return l.writerEdited
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
