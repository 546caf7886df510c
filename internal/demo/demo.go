package demo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/roadmap-dev/roadmap/internal/dashboard"
	"github.com/roadmap-dev/roadmap/internal/explain"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/report"
	"github.com/roadmap-dev/roadmap/internal/stage"
	"github.com/roadmap-dev/roadmap/internal/text"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// Options tune a demo run.
type Options struct {
	// Dir holds everything the demo makes; "" uses a temporary directory
	// removed at the end.
	Dir string
	// Command returns the command that runs the roadmap binary with args
	// (the CLI passes its own executable; tests pass theirs).
	Command func(ctx context.Context, args []string) *exec.Cmd
	// ExtraEnv is added to the environment of every Job process.
	ExtraEnv []string
	// Progress receives the story a person watches, a short line a step;
	// nil discards it.
	Progress io.Writer
	// Log receives the Jobs' and report's own log lines, indented under
	// "│" (the CLI passes Progress with --verbose); nil discards them.
	Log io.Writer
	// Latency is added to every model call (default 150 ms).
	Latency time.Duration
	// World lays the item out; nil is NewIssueWorld, the Go sample.
	// Tests play the same life on a Python project with
	// demotest.NewPythonIssueWorld.
	World func(ctx context.Context, dir string, latency time.Duration) (*World, error)
	// Render, when set, renders each line of the Jobs' and report's logs
	// before it goes to Progress; a line it does not keep is left out. The
	// CLI renders the workflow commands (::group::, ::notice::, …) for a
	// terminal with it; without it the lines are shown as they are.
	Render func(line string) (string, bool)
	// NoKill lets Job 1 run to its end, the item's last Job, while the
	// repository's CI is played: no kill, no continuation. roadmap try
	// plays a user's item so, whose plan may have one group.
	NoKill bool
}

// Summary is the final state, what `roadmap demo --json` prints.
type Summary struct {
	Issue  int           `json:"issue"`
	PR     int           `json:"pr"`
	Result record.Result `json:"result"`
	// Jobs are the record's implement.jobs.
	Jobs []record.JobOutcome `json:"jobs"`
	// Spend is the record's implement.spend; Recorded is the sum of the
	// recorded exchanges the model server answered; Estimated the calls
	// the record holds at their booking (Job 1's call in flight when it was
	// killed: booked, never answered). Spend is Recorded plus Estimated when
	// no spend was lost.
	Spend     record.Spend `json:"spend"`
	Recorded  record.Spend `json:"recorded"`
	Estimated record.Spend `json:"estimated"`
	// Kill is how report classified the killed Job and what it did.
	Kill KillReport `json:"kill"`
	// Requests are the counted GitHub requests (304s excluded): the whole
	// demo's by phase, and the Jobs' as their record lines count them.
	Requests Requests `json:"requests"`
	// Stage is how the stage Job ended: the plan, its rounds and findings.
	Stage   StageReport `json:"stage"`
	Record  string      `json:"record"`
	Comment string      `json:"comment"`
	// Dashboard is the dashboard issue as the item left it: its body, and
	// what each report's keeping of it did.
	Dashboard DashboardReport `json:"dashboard"`
	Dir       string          `json:"dir,omitempty"`
}

// DashboardReport is the dashboard issue after the demo.
type DashboardReport struct {
	Issue int    `json:"issue"`
	Body  string `json:"body"`
	// Reports are what each report's keeping of it did, by report (stage,
	// report 1, report 2); nil where report left the dashboard alone (the
	// item was in flight, or newly staged: the refresh shows those).
	Reports []*dashboard.Kept `json:"reports"`
}

// DashboardFile is the dashboard body `roadmap demo --keep DIR` leaves in DIR.
const DashboardFile = "dashboard.md"

// StageReport is the stage Job's end: the plan, its rounds and findings.
type StageReport struct {
	Result   string         `json:"result"`
	Rounds   int            `json:"rounds"`
	Plan     string         `json:"plan"`
	PR       int            `json:"pr"`
	Findings []plan.Finding `json:"findings"`
}

// KillReport is report's view of the killed Job.
type KillReport struct {
	Class      string `json:"class"`
	Action     string `json:"action"`
	Evidence   string `json:"evidence"`
	Dispatched int64  `json:"dispatched_run_id"`
}

// Requests counts GitHub requests, 304s excluded. ByPhase and Total are
// every request the demo made: its setup, the Jobs and the reports. Jobs is
// what the Jobs' record lines (stage.jobs, implement.jobs) count, the number
// explain, the dashboard and metrics show: a Job's own requests up to its
// line, none of a killed Job's, none of report's.
type Requests struct {
	ByPhase map[string]int `json:"by_phase"`
	Total   int            `json:"total"`
	Jobs    int            `json:"jobs"`
}

// Run plays the life of the sample item and returns its final state.
func Run(ctx context.Context, o Options) (*Summary, error) {
	if o.Command == nil {
		return nil, errors.New("demo: no command to run the roadmap binary")
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Latency == 0 {
		o.Latency = 150 * time.Millisecond
	}
	dir := o.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "roadmap-demo-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	d := &run{o: o, p: o.Progress, start: time.Now()}
	if o.Log == nil {
		o.Log = io.Discard
	}
	d.log = indented{w: o.Log, render: o.Render}
	return d.play(ctx, dir)
}

type run struct {
	o     Options
	p     io.Writer
	log   indented // the Jobs' and report's log lines, under the steps
	w     *World
	gh    *github.Client
	mask  *redact.Masker
	start time.Time
	seen  int // requests in the fake's log already counted
	reqs  Requests
	dash  int // the dashboard issue
	kept  []*dashboard.Kept
}

func (d *run) step(format string, args ...any) {
	fmt.Fprintf(d.p, "%5.1fs ▸ %s\n", time.Since(d.start).Seconds(), fmt.Sprintf(format, args...))
}

// phase books the GitHub requests since the last phase under name.
func (d *run) phase(name string) {
	log := d.w.Fake.Requests()
	n := 0
	for _, r := range log[d.seen:] {
		if r.Status != http.StatusNotModified && !strings.HasPrefix(r.Path, "/_logs/") {
			n++
		}
	}
	d.seen = len(log)
	d.reqs.ByPhase[name] += n
	d.reqs.Total += n
}

func (d *run) play(ctx context.Context, dir string) (*Summary, error) {
	newWorld := d.o.World
	if newWorld == nil {
		newWorld = NewIssueWorld
	}
	w, err := newWorld(ctx, dir, d.o.Latency)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	d.w = w
	d.reqs.ByPhase = map[string]int{}
	d.mask = redact.New(redact.Config{Secrets: []string{Token}})
	owner, repo := w.Repository()
	d.gh, err = github.New(github.Options{BaseURL: w.GitHubURL() + "/", Token: Token, Owner: owner, Repo: repo, Masker: d.mask})
	if err != nil {
		return nil, err
	}
	cfg, err := w.Config()
	if err != nil {
		return nil, err
	}
	d.step("issue #%d %q is labelled roadmap:stage; it has no plan yet", w.Issue, w.item.Title)
	// The dashboard issue, as `roadmap init` opens it once for the repository.
	d.dash = w.Fake.CreateIssue(githubfake.Issue{Title: dashboard.Title, Labels: []string{dashboard.Label}, Author: github.DefaultIdentity})
	d.phase("setup")

	// Stage: the planner writes the plan, the gates and the verifier check
	// it, a draft PR holds it.
	runS := w.Fake.AddRun(githubfake.Run{WorkflowFile: "roadmap.yml", HeadBranch: "main", Event: "issues", Status: "in_progress"})
	d.step("stage (run %d): a model writes the plan; the plan gates and the verifier check it", runS)
	st, err := d.stage(ctx, runS, cfg)
	if err != nil {
		return nil, err
	}
	d.phase("stage")
	d.step("stage: %s after %s; the plan waits in draft PR #%d (%s)", st.Result, rounds(st.Rounds), st.PR, findingsCount(st.Findings))
	if st.Result != stage.ResultStaged {
		return nil, fmt.Errorf("stage ended %s (%s: %s)", st.Result, st.Failure, st.Reason)
	}
	// Report after the stage job, as in roadmap.yml: a staged plan needs
	// nothing from it, and it makes no request.
	outS, err := report.Run(ctx, report.Options{Issue: w.Issue, GitHub: d.gh, Phase: report.PhaseStage, JobResult: "success",
		Result: st.Result, Attempt: st.Job, RunID: runS, RecordComment: st.RecordComment, Dashboard: d.dash, Mask: d.mask.Mask})
	if err != nil {
		return nil, fmt.Errorf("report on the stage Job: %w", err)
	}
	d.kept = append(d.kept, outS.Dashboard)
	d.step("report after stage: %s → %s; a person approves the plan (here, at once)", st.Result, outS.Action)

	// Job 1, killed with SIGKILL in its second group.
	run1 := w.Fake.AddRun(githubfake.Run{WorkflowFile: "roadmap.yml", HeadBranch: "main", Event: "issues", Status: "in_progress"})
	d.step("implement Job 1 (run %d): carries the plan out, group by group", run1)
	if d.o.NoKill {
		return d.last(ctx, dir, cfg, st, 1, run1, st.RecordComment, KillReport{}, nil)
	}
	// Job 1 is killed while its second model call of group 2 is in flight:
	// the model server has the request and has not answered.
	inFlight := make(chan struct{})
	var once sync.Once
	w.OnModelCall(func(first string, turn int) {
		if strings.Contains(first, "task group 2 of") && turn == 1 {
			once.Do(func() { close(inFlight) })
		}
	})
	// The record comment's id rides from stage to implement (a dispatch
	// input) and from implement to report (a job output set at its start).
	rcStage := strconv.FormatInt(st.RecordComment, 10)
	log1, _, err := d.job(ctx, 1, run1, cfg, inFlight, "--record-comment", rcStage)
	if err == nil && !d.recordComment() {
		err = errors.New("job 1 made no record comment")
	}
	w.OnModelCall(nil)
	if err != nil {
		return nil, err
	}
	d.step("Job 1 is killed (SIGKILL) in group 2, a model call in flight; group 1 is kept")
	log1 += "##[error]Process completed with exit code 137.\n"
	if _, err := w.Fake.AddJob(run1, githubfake.Job{Name: "implement", Conclusion: "failure", Log: stamp(log1),
		Steps: []githubfake.Step{{Name: "Run roadmap implement", Status: "completed", Conclusion: "failure"}}}); err != nil {
		return nil, err
	}
	d.phase("job 1")

	out1, err := report.Run(ctx, report.Options{Issue: w.Issue, GitHub: d.gh, JobResult: "failure", RunID: run1, RecordComment: st.RecordComment,
		Workflow: "roadmap.yml", Ref: "main", Dashboard: d.dash, Mask: d.mask.Mask, Log: d.log})
	if err != nil {
		return nil, fmt.Errorf("report on Job 1: %w", err)
	}
	d.kept = append(d.kept, out1.Dashboard)
	d.phase("report 1")
	kill := KillReport{Class: string(out1.Class), Action: string(out1.Action), Evidence: out1.Evidence}
	if out1.Dispatched != nil {
		kill.Dispatched = out1.Dispatched.RunID
	}
	d.step("report reads Job 1's log: class %s → %s", kill.Class, kill.Action)
	fmt.Fprintf(d.log, "demo: report's evidence: %s\n", kill.Evidence)
	disp := w.Fake.Dispatches()
	if len(disp) == 0 {
		return nil, fmt.Errorf("report dispatched no continuation for class %s", kill.Class)
	}
	last := disp[len(disp)-1]
	attempt, _ := strconv.Atoi(fmt.Sprint(last.Inputs["attempt"]))
	d.step("report dispatches run %d: Job %d, the continuation, starts after group 1", last.RunID, attempt)
	fmt.Fprintf(d.log, "demo: the dispatch's inputs: %s\n", inputsLine(last.Inputs))
	rcID, _ := strconv.ParseInt(fmt.Sprint(last.Inputs["record-comment"]), 10, 64)
	return d.last(ctx, dir, cfg, st, attempt, last.RunID, rcID, kill, &out1)
}

// last runs the item's last implement Job (attempt, in run runID) to its
// end, while the repository's CI passes what it pushes, reports on it,
// keeps the state when asked, and returns the summary. out1 is report's
// outcome on the killed Job (nil when none was killed).
func (d *run) last(ctx context.Context, dir, cfg string, st stage.Result, attempt int, runID, rcID int64, kill KillReport, out1 *report.Outcome) (*Summary, error) {
	w := d.w
	// Job 2, the continuation, while the repository's CI passes what it pushes.
	ciCtx, stopCI := context.WithCancel(ctx)
	go w.PlayCI(ciCtx)
	log2, res2, err := d.job(ctx, attempt, runID, cfg, nil, "--record-comment", strconv.FormatInt(rcID, 10))
	stopCI()
	if err != nil {
		return nil, err
	}
	if _, err := w.Fake.AddJob(runID, githubfake.Job{Name: "implement", Conclusion: "success", Log: stamp(log2),
		Steps: []githubfake.Step{{Name: "Run roadmap implement", Status: "completed", Conclusion: "success"}}}); err != nil {
		return nil, err
	}
	d.phase(fmt.Sprintf("job %d", attempt))
	spendJSON, _ := json.Marshal(res2.Spend)
	out2, err := report.Run(ctx, report.Options{Issue: w.Issue, GitHub: d.gh, JobResult: "success", RunID: runID,
		Result: string(res2.Result), Failure: res2.Failure, Group: res2.Group, Spend: string(spendJSON), HeadSHA: res2.HeadSHA,
		PR: res2.PR, Attempt: res2.Attempt, RecordComment: res2.RecordComment, Workflow: "roadmap.yml", Ref: "main", Dashboard: d.dash, Mask: d.mask.Mask, Log: d.log})
	if err != nil {
		return nil, fmt.Errorf("report on Job %d: %w", attempt, err)
	}
	d.kept = append(d.kept, out2.Dashboard)
	if out2.DashboardError != "" {
		return nil, fmt.Errorf("report on Job %d did not keep the dashboard: %s", attempt, out2.DashboardError)
	}
	d.phase(fmt.Sprintf("report %d", attempt))
	if res2.Result == record.ResultReady {
		d.step("Job %d ended %s; report: %s → %s (PR #%d is ready for review)", attempt, res2.Result, res2.Result, out2.Action, res2.PR)
	} else {
		d.step("Job %d ended %s; report: %s → %s (PR #%d)", attempt, res2.Result, res2.Result, out2.Action, res2.PR)
	}
	if d.o.Dir != "" {
		// Kept: the fake GitHub's state too, so `roadmap explain --state`
		// reads the item offline.
		if err := w.Fake.Save(filepath.Join(dir, explain.StateFile)); err != nil {
			return nil, err
		}
		// And the dashboard's body, for a person to read.
		if is, ok := w.Fake.Issue(d.dash); ok {
			if err := os.WriteFile(filepath.Join(dir, DashboardFile), []byte(is.Body), 0o644); err != nil {
				return nil, err
			}
		}
	}
	sum, err := d.summary(res2, kill)
	if sum != nil && out1 != nil {
		sum.Estimated = out1.SpendEstimated
	}
	if sum != nil {
		sum.Stage = StageReport{Result: st.Result, Rounds: st.Rounds, Plan: st.Plan, PR: st.PR, Findings: st.Findings}
	}
	return sum, err
}

// stage runs the stage Job as its own process, to its end.
func (d *run) stage(ctx context.Context, runID int64, cfg string) (stage.Result, error) {
	w := d.w
	ws, err := w.Workspace("stage")
	if err != nil {
		return stage.Result{}, err
	}
	tmp := filepath.Join(w.Dir, "runner-temp-stage")
	os.MkdirAll(tmp, 0o755)
	cmd := d.o.Command(ctx, []string{"stage", "--issue", strconv.Itoa(w.Issue), "--config", cfg, "--workdir", ws,
		"--run-id", strconv.FormatInt(runID, 10), "--trace-file", filepath.Join(w.Dir, "trace-stage.jsonl"), "--json"})
	cmd.Env = append(w.Env(runID, tmp), d.o.ExtraEnv...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = lineFilter{d.log}
	runErr := cmd.Run()
	var res stage.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return stage.Result{}, fmt.Errorf("stage: %v; its result: %v", runErr, err)
	}
	return res, nil
}

// lineFilter leaves out the spend lines a person need not read.
type lineFilter struct{ w io.Writer }

func (f lineFilter) Write(p []byte) (int, error) {
	for _, l := range strings.SplitAfter(string(p), "\n") {
		if l != "" && !strings.HasPrefix(l, trace.SpendPrefix) {
			io.WriteString(f.w, l)
		}
	}
	return len(p), nil
}

// rounds is "1 round", "2 rounds".
func rounds(n int) string {
	if n == 1 {
		return "1 round"
	}
	return fmt.Sprintf("%d rounds", n)
}

// findingsCount is the findings of the last round, counted: "no findings".
func findingsCount(fs []plan.Finding) string {
	switch len(fs) {
	case 0:
		return "no findings"
	case 1:
		return "1 finding"
	}
	return fmt.Sprintf("%d findings", len(fs))
}

func findingsLine(fs []plan.Finding) string {
	if len(fs) == 0 {
		return "none"
	}
	var parts []string
	for _, f := range fs {
		parts = append(parts, f.String())
	}
	return strings.Join(parts, "; ")
}

// job runs one implement Job as its own process. When kill is closed the Job
// is SIGKILLed; a nil kill lets it run to its end.
func (d *run) job(ctx context.Context, attempt int, runID int64, cfg string, kill <-chan struct{}, extra ...string) (string, implement.Result, error) {
	w := d.w
	ws, err := w.Workspace(fmt.Sprintf("job-%d", attempt))
	if err != nil {
		return "", implement.Result{}, err
	}
	tmp := filepath.Join(w.Dir, fmt.Sprintf("runner-temp-%d", attempt))
	os.MkdirAll(tmp, 0o755)
	cmd := d.o.Command(ctx, append([]string{"implement", "--issue", strconv.Itoa(w.Issue), "--attempt", strconv.Itoa(attempt),
		"--config", cfg, "--workdir", ws, "--run-id", strconv.FormatInt(runID, 10),
		"--trace-file", filepath.Join(w.Dir, fmt.Sprintf("trace-job-%d.jsonl", attempt)), "--json"}, extra...))
	cmd.Env = append(w.Env(runID, tmp), d.o.ExtraEnv...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return "", implement.Result{}, err
	}
	if err := cmd.Start(); err != nil {
		return "", implement.Result{}, fmt.Errorf("start Job %d: %w", attempt, err)
	}
	var killed atomic.Bool
	if kill != nil {
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-kill:
				killed.Store(true)
				cmd.Process.Signal(syscall.SIGKILL)
			case <-done:
			}
		}()
	}
	var log strings.Builder
	sc := bufio.NewScanner(pipe)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		log.WriteString(line + "\n")
		if !strings.HasPrefix(line, trace.SpendPrefix) {
			d.log.Write([]byte(line + "\n"))
		}
	}
	err = cmd.Wait()
	if killed.Load() {
		return log.String(), implement.Result{}, nil
	}
	if kill != nil {
		return "", implement.Result{}, fmt.Errorf("job %d ended before the point where the demo kills it: %v", attempt, err)
	}
	var res implement.Result
	if jerr := json.Unmarshal(stdout.Bytes(), &res); jerr != nil {
		return "", implement.Result{}, fmt.Errorf("job %d: %v; its result: %v", attempt, err, jerr)
	}
	return log.String(), res, nil
}

func (d *run) summary(res implement.Result, kill KillReport) (*Summary, error) {
	w := d.w
	body, _ := d.recordBody()
	rec, err := record.Parse(body)
	if err != nil {
		return nil, fmt.Errorf("the record after the demo: %w", err)
	}
	s := &Summary{Issue: w.Issue, PR: res.PR, Kill: kill, Requests: d.reqs, Dir: w.Dir}
	s.Dashboard = DashboardReport{Issue: d.dash, Reports: d.kept}
	if is, ok := w.Fake.Issue(d.dash); ok {
		s.Dashboard.Body = is.Body
	}
	s.Result, _ = rec.Result()
	s.Jobs, _ = rec.Jobs()
	stageJobs, _ := rec.StageJobs()
	for _, j := range append(append([]record.JobOutcome{}, stageJobs...), s.Jobs...) {
		s.Requests.Jobs += j.Requests
	}
	s.Spend, _ = rec.Spend()
	if w.Replay != nil {
		st := w.Replay.Stats()
		s.Recorded = record.Spend{TokensIn: st.TokensIn, TokensOut: st.TokensOut, ModelCalls: int(st.Calls)}
	}
	for _, c := range w.Fake.Comments(res.PR) {
		if strings.Contains(c.Body, "<!-- roadmap:implement -->") {
			s.Comment = c.Body
		}
	}
	var b strings.Builder
	for _, k := range rec.Keys() {
		raw, _ := rec.Raw(k)
		if k == record.KeyImplementTrace && len(raw) > 80 {
			raw = raw[:80] + "…"
		}
		fmt.Fprintf(&b, "%s: %s\n", k, raw)
	}
	s.Record = b.String()
	return s, nil
}

// recordBody is the record comment as the fake holds it: the oldest comment
// by roadmap's identity that holds a record block.
func (d *run) recordBody() (string, bool) {
	for _, c := range d.w.Fake.Comments(d.w.Issue) {
		if c.Author == github.DefaultIdentity && record.HasBlock(c.Body) {
			return c.Body, true
		}
	}
	return "", false
}

func (d *run) recordComment() bool {
	_, ok := d.recordBody()
	return ok
}

// stamp prefixes each line with a runner-style timestamp, as a job log has.
func stamp(log string) string {
	var b strings.Builder
	now := time.Now().UTC()
	for _, l := range strings.SplitAfter(log, "\n") {
		if l == "" {
			continue
		}
		b.WriteString(now.Format("2006-01-02T15:04:05.0000000Z") + " " + l)
	}
	return b.String()
}

// indented writes log lines under the demo's steps, each rendered first
// when render is set.
type indented struct {
	w      io.Writer
	render func(string) (string, bool)
}

func (i indented) Write(p []byte) (int, error) {
	for _, l := range strings.SplitAfter(string(p), "\n") {
		if l == "" {
			continue
		}
		if i.render != nil {
			text, keep := i.render(strings.TrimSuffix(l, "\n"))
			if !keep {
				continue
			}
			l = text + "\n"
		}
		fmt.Fprintf(i.w, "        │ %s", l)
	}
	return len(p), nil
}

// inputsLine is a dispatch's inputs for a person, sorted by name:
// "attempt 2, issue 1, record-comment 1015".
func inputsLine(in map[string]any) string {
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %v", k, in[k])
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Header is the first line `roadmap demo` prints.
const Header = "roadmap demo: the life of an item on this machine, with a fake GitHub and a recorded model"

// The files a kept demo holds beside the state: the step summary every Job
// appended to and the Jobs' timeline, which the CLI writes.
const (
	StepSummaryFile = "step-summary.md"
	TimelineFile    = "timeline.md"
)

// What each count of GitHub requests counts, in every view's words: the
// Jobs' record lines (what explain, the dashboard and metrics sum) and
// everything the demo did.
const (
	JobRequestsLabel  = "GitHub requests by the Jobs"
	DemoRequestsLabel = "GitHub requests by the whole demo"
)

// Print writes the summary for a person: the result, the spend and the
// GitHub requests in a few short lines, then where to look next. verbose
// adds the PR comment, the record, the spend's check, the requests by
// phase and the dashboard.
func (s *Summary) Print(w io.Writer, verbose bool) {
	fmt.Fprintf(w, "\n── result %s\n", strings.Repeat("─", 40))
	how := ""
	if s.Kill.Class != "" && len(s.Jobs) > 1 {
		how = fmt.Sprintf(" (Job 1 %s, Job 2 continued)", s.Kill.Class)
	}
	jobs := "1 implement Job"
	if len(s.Jobs) != 1 {
		jobs = fmt.Sprintf("%d implement Jobs", len(s.Jobs))
	}
	fmt.Fprintf(w, "issue #%d is %s: PR #%d, after %s%s\n", s.Issue, s.Result, s.PR, jobs, how)
	fmt.Fprintf(w, "spend: %s for %d model calls (%d tokens in, %d out), stage and every Job\n",
		text.USD(s.Spend.USD), s.Spend.ModelCalls, s.Spend.TokensIn, s.Spend.TokensOut)
	switch {
	case s.SpendMatches() && s.Estimated.ModelCalls > 0:
		fmt.Fprintf(w, "  = %d calls the model answered + %d killed in flight, booked at their most\n",
			s.Recorded.ModelCalls, s.Estimated.ModelCalls)
	case s.SpendMatches():
		fmt.Fprintf(w, "  = the %d calls the model answered\n", s.Recorded.ModelCalls)
	default:
		fmt.Fprintln(w, "  MISMATCH: the record's spend is not the sum of the model calls made")
	}
	fmt.Fprintf(w, "%s: %d, as their record lines count them (explain, dashboard)\n", JobRequestsLabel, s.Requests.Jobs)
	fmt.Fprintf(w, "%s: %d (setup and reports too; a 304 is free)\n", DemoRequestsLabel, s.Requests.Total)
	if verbose {
		s.printDetail(w)
	}
	s.printWhere(w, verbose)
}

// printDetail is what --verbose adds: the stage's findings, the PR comment,
// the record, the spend's parts, the requests by phase, the dashboard.
func (s *Summary) printDetail(w io.Writer) {
	fmt.Fprintf(w, "stage: %s after %s, plan %s; findings of the last round: %s\n", s.Stage.Result, rounds(s.Stage.Rounds), s.Stage.Plan, findingsLine(s.Stage.Findings))
	fmt.Fprintf(w, "the killed Job: class %s → %s (evidence: %s)\n", s.Kill.Class, s.Kill.Action, s.Kill.Evidence)
	fmt.Fprintf(w, "\n── the PR comment %s\n%s\n", strings.Repeat("─", 32), strings.TrimSpace(s.Comment))
	fmt.Fprintf(w, "\n── the issue record %s\n%s", strings.Repeat("─", 30), s.Record)
	fmt.Fprintf(w, "\n── spend %s\n", strings.Repeat("─", 41))
	fmt.Fprintf(w, "record:   %d tokens in, %d out, %s, %d model calls\n", s.Spend.TokensIn, s.Spend.TokensOut, text.USD(s.Spend.USD), s.Spend.ModelCalls)
	fmt.Fprintf(w, "answered: %d tokens in, %d out, %d model calls served by the model server\n", s.Recorded.TokensIn, s.Recorded.TokensOut, s.Recorded.ModelCalls)
	if s.Estimated.ModelCalls > 0 {
		fmt.Fprintf(w, "booked:   %d tokens in, %d out, %d model calls killed in flight (implement.spend_estimated)\n",
			s.Estimated.TokensIn, s.Estimated.TokensOut, s.Estimated.ModelCalls)
	}
	fmt.Fprintf(w, "\n── %s, by phase (304s are free) %s\n", DemoRequestsLabel, strings.Repeat("─", 8))
	for _, p := range []string{"setup", "stage", "job 1", "report 1", "job 2", "report 2"} {
		if _, ok := s.Requests.ByPhase[p]; !ok {
			continue // a play without a kill has one implement Job
		}
		fmt.Fprintf(w, "%-9s %d\n", p, s.Requests.ByPhase[p])
	}
	fmt.Fprintf(w, "%-9s %d\n", "total", s.Requests.Total)
	if s.Dashboard.Body != "" {
		// The dashboard as a person reads it, up to its charts.
		head, _, _ := strings.Cut(s.Dashboard.Body, "## Stops by class")
		fmt.Fprintf(w, "\n── the dashboard (issue #%d) %s\n%s\n", s.Dashboard.Issue, strings.Repeat("─", 22), strings.TrimSpace(head))
	}
}

// printWhere says where the demo left its state and how to look at it with
// roadmap's own tools, or how to keep it.
func (s *Summary) printWhere(w io.Writer, verbose bool) {
	if s.Dir == "" {
		fmt.Fprintln(w, "\nrun it with --keep DIR to keep what it leaves (the PR comment, the record, the dashboard)")
		if !verbose {
			fmt.Fprintln(w, "and with --verbose to print them and the Jobs' own logs")
		}
		return
	}
	fmt.Fprintf(w, "\nkept in %s\n", s.Dir)
	fmt.Fprintln(w, "(the dashboard, step summary, timeline, traces, repositories); look, with no token:")
	fmt.Fprintf(w, "  roadmap explain %d --state %s\n", s.Issue, s.Dir)
	fmt.Fprintf(w, "  roadmap explain %d --trace-file %s\n", s.Issue, filepath.Join(s.Dir, "trace-job-1.jsonl"))
	fmt.Fprintf(w, "  git -C %s log --oneline --all\n", filepath.Join(s.Dir, "remote.git"))
}

// SpendMatches reports whether the record's spend is what the model server
// answered plus the bookings of the calls killed in flight, in tokens and
// calls: never less than what was served.
func (s *Summary) SpendMatches() bool {
	want := s.Recorded.Add(record.Spend{TokensIn: s.Estimated.TokensIn, TokensOut: s.Estimated.TokensOut, ModelCalls: s.Estimated.ModelCalls})
	return s.Spend.TokensIn == want.TokensIn && s.Spend.TokensOut == want.TokensOut && s.Spend.ModelCalls == want.ModelCalls
}
