package eval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/text"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/f2p"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/job"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/sandbox"
	"github.com/roadmap-dev/roadmap/internal/strength"
)

// ImplementCaseResult is one implement case's verdict and what it cost.
type ImplementCaseResult struct {
	Name    string  `json:"name"`
	Verdict Verdict `json:"verdict"`
	Score   float64 `json:"score"`
	// Result and Failure are how the last Job ended.
	Result  string `json:"result"`
	Failure string `json:"failure,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Jobs is how many Jobs ran (a killed one included); Killed is how many
	// of them were killed.
	Jobs   int `json:"jobs"`
	Killed int `json:"killed"`
	// Requests are the counted GitHub requests of the whole item.
	Requests int `json:"requests"`
	// Spend is the item's recorded spend over every Job.
	Spend record.Spend `json:"spend"`
	// Seconds is the case's wall time, the judging included.
	Seconds float64 `json:"seconds"`
	// WantF2P and WantP2P are the case's; F2P, P2P and Broken what the tests
	// said at the base and at the end.
	WantF2P []string `json:"want_f2p"`
	WantP2P []string `json:"want_p2p"`
	F2P     []string `json:"f2p"`
	P2P     []string `json:"p2p"`
	Broken  []string `json:"broken"`
	// Hidden are the case's hidden test files (hidden/), by their path in
	// the repository: laid over both trees before the tests ran, never in
	// the world the Jobs ran in. Empty: the case judges by the
	// repository's and the agent's own tests.
	Hidden []string `json:"hidden"`
	// Review is what the review before ready cost over every Job (zero
	// when the case runs none).
	Review ReviewCost `json:"review"`
	// Strength is each group's test strength as the record holds it at
	// the end (implement.strength): what roadmap measured.
	Strength []record.GroupStrength `json:"strength"`
	// Judged is the eval's own test strength of the head, from main, when
	// the case expects one (expected.json strength); a head under its
	// floor is NO.
	Judged *JudgedStrength `json:"judged_strength,omitempty"`
}

// ReviewCost is the review's share of an item's spend, counted from the
// model requests the reviewer and the refuter sent (the conversations
// replay matches as the review's: a first user message holding "Review
// this change" or "Refute these findings") and the GitHub requests the fake
// answered while they ran. The review writes its ledger on the next mark,
// so Requests is 0 when it costs no request of its own.
type ReviewCost struct {
	// Reviews is how many reviews ran (the trace's review phase spans).
	Reviews    int     `json:"reviews"`
	ModelCalls int     `json:"model_calls"`
	TokensIn   int64   `json:"tokens_in"`
	TokensOut  int64   `json:"tokens_out"`
	USD        float64 `json:"usd"`
	Requests   int     `json:"requests"`
}

// JudgedStrength is the eval's mutation judgement of the head's tests.
type JudgedStrength struct {
	Floor     float64 `json:"floor"`
	Score     float64 `json:"score"`
	Generated int     `json:"generated"`
	Killed    int     `json:"killed"`
	Survived  int     `json:"survived"`
	TimedOut  int     `json:"timed_out"`
	Passed    bool    `json:"passed"`
	Reason    string  `json:"reason,omitempty"`
}

// ImplementReport is the result of `roadmap eval implement`.
type ImplementReport = Report[ImplementCaseResult]

// Implement scores the implement golden set in o.Dir: each case replayed
// through the real implement Job.
func Implement(ctx context.Context, o Options) (*ImplementReport, error) {
	names, err := caseDirs(o.Dir)
	if err != nil {
		return nil, err
	}
	rep := &ImplementReport{Cases: []ImplementCaseResult{}, Floor: o.Floor}
	var scores []float64
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if skip, err := realCaseSkip(filepath.Join(o.Dir, name), len(o.Models) > 0); err != nil {
			return nil, fmt.Errorf("case %s: %w", name, err)
		} else if skip != "" {
			o.progress("%-40s skipped: %s", name, skip)
			continue
		}
		start := time.Now()
		res, err := implementCase(ctx, o, name)
		if err != nil {
			return nil, fmt.Errorf("case %s: %w", name, err)
		}
		res.Seconds = seconds(time.Since(start))
		o.progress("%s", progressLine(res))
		rep.Cases = append(rep.Cases, res)
		scores = append(scores, res.Score)
	}
	if len(rep.Cases) == 0 {
		return nil, fmt.Errorf("the golden set %s holds no case to run (every one skipped, above)", o.Dir)
	}
	rep.Score = Mean(scores)
	rep.Passed = rep.Score >= o.Floor
	return rep, nil
}

// progressLine is a case's line on stderr: the verdict and the item's cost,
// then, where the case runs them, the review's cost and the test strength.
func progressLine(res ImplementCaseResult) string {
	line := fmt.Sprintf("%-40s %-7s score %.1f  %s after %d Job(s), %d GitHub requests, %d model calls, %d tokens in, %d out, $%.4f, %.1fs",
		res.Name, res.Verdict, res.Score, res.Result, res.Jobs, res.Requests, res.Spend.ModelCalls, res.Spend.TokensIn, res.Spend.TokensOut, res.Spend.USD, res.Seconds)
	if rc := res.Review; rc.Reviews > 0 || rc.ModelCalls > 0 {
		line += fmt.Sprintf("; review: %d run(s), %d model calls, %d tokens in, %d out, %d GitHub requests",
			rc.Reviews, rc.ModelCalls, rc.TokensIn, rc.TokensOut, rc.Requests)
	}
	if len(res.Hidden) > 0 {
		line += fmt.Sprintf("; judged by %d hidden test file(s)", len(res.Hidden))
	}
	if len(res.Strength) > 0 {
		line += "; test strength: " + strengthLine(res.Strength)
	}
	if j := res.Judged; j != nil {
		line += fmt.Sprintf("; judged strength %.2f (floor %.2f: %d killed, %d survived)", j.Score, j.Floor, j.Killed, j.Survived)
	}
	return line
}

// implementCase reads a case, plays its item and judges the end.
func implementCase(ctx context.Context, o Options, name string) (ImplementCaseResult, error) {
	dir := filepath.Join(o.Dir, name)
	res := ImplementCaseResult{Name: name, Verdict: No}
	src, err := readCaseFile(dir, "issue.md", false)
	if err != nil {
		return res, err
	}
	is, err := ParseIssue(src)
	if err != nil {
		return res, err
	}
	if src, err = readCaseFile(dir, "expected.json", false); err != nil {
		return res, err
	}
	want, err := ParseImplementExpected(src)
	if err != nil {
		return res, err
	}
	res.WantF2P, res.WantP2P = want.F2P, orEmpty(want.P2P)
	var settings ImplementSettings
	if src, err := readCaseFile(dir, "case.json", true); err != nil {
		return res, err
	} else if src != nil {
		if settings, err = ParseImplementSettings(src); err != nil {
			return res, err
		}
	}
	hidden, err := readHidden(dir)
	if err != nil {
		return res, err
	}
	res.Hidden = hiddenPaths(hidden)
	repoDir := filepath.Join(dir, "repo")
	ids, err := plan.ListChanges(repoDir)
	if err != nil {
		return res, err
	}
	if len(ids) != 1 {
		return res, fmt.Errorf("repo/%s holds %d changes; a case implements exactly one", plan.ChangesDir, len(ids))
	}
	fixtures := filepath.Join(dir, "fixtures")
	if len(o.Models) == 0 && !hasFixtures(dir) {
		return res, errors.New("no fixtures/ directory: the recorded model exchanges")
	}
	if len(o.Models) > 0 {
		// A kill point is a turn of the recorded exchanges: a model of
		// one's own talks its own way, so the item runs unkilled.
		settings.Kill = nil
	}

	tmp, err := os.MkdirTemp(o.TempDir, "roadmap-eval-implement-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(tmp)
	w, err := newWorld(tmp, repoDir, is)
	if err != nil {
		return res, err
	}
	defer w.close()
	if err := w.staged(plan.ChangeDir("", ids[0]), settings.CheckLog); err != nil {
		return res, err
	}

	p := &player{w: w, fixtures: fixtures, settings: settings, o: &o}
	last, _, err := p.play(ctx)
	if err != nil {
		return res, err
	}
	res.Jobs, res.Killed = w.jobs, p.killed
	res.Result, res.Failure, res.Reason = string(last.Result), last.Failure, text.Short(last.Reason, 300)
	res.Spend = last.Spend
	res.Requests = w.requests()
	res.Review = p.review
	if res.Strength, err = w.strength(); err != nil {
		return res, err
	}

	// The judge: the case's tests at the base and at the work branch's end,
	// and, when the case asks, the head's tests' strength by mutation.
	pol, err := settings.policy()
	if err != nil {
		return res, err
	}
	rep, judged, ok, err := p.compare(ctx, settings.Test, pol, hidden, want.Strength)
	if err != nil {
		return res, err
	}
	res.F2P, res.P2P, res.Broken = []string{}, []string{}, []string{}
	if ok {
		res.F2P, res.P2P, res.Broken = rep.F2P, rep.P2P, rep.Broken
	}
	res.Judged = judged
	res.Verdict = Judge(want.F2P, want.P2P, res.F2P, res.P2P)
	if want.Strength != nil && (judged == nil || !judged.Passed) {
		// Tests that pass and pin nothing resolve nothing.
		res.Verdict = No
	}
	res.Score = res.Verdict.Score()
	return res, nil
}

// strength is each group's test strength in the item's record at the end
// (none when the record holds none).
func (w *world) strength() ([]record.GroupStrength, error) {
	c, ok := w.RecordComment()
	if !ok {
		return []record.GroupStrength{}, nil
	}
	rec, err := record.Parse(c.Body)
	if err != nil {
		return nil, fmt.Errorf("read the item's record: %w", err)
	}
	gs, _ := rec.Strength()
	return orEmptyStrength(gs), nil
}

func orEmptyStrength(gs []record.GroupStrength) []record.GroupStrength {
	if gs == nil {
		return []record.GroupStrength{}
	}
	return gs
}

// staged leaves the item as the stage phase does: the plan named in the
// record comment, written by roadmap's identity; checkLog, when set, is an
// earlier Job's stop with its failing check log handed over.
func (w *world) staged(planDir, checkLog string) error {
	rec, err := record.Parse("")
	if err != nil {
		return err
	}
	var ch record.Changes
	ch.SetStagePlan(planDir)
	if checkLog != "" {
		ch.SetCheckLog(checkLog)
		ch.SetResult(record.ResultStopped)
		ch.SetFailure("checks_failed")
	}
	if err := rec.Apply(ch); err != nil {
		return err
	}
	block, err := record.Render(rec)
	if err != nil {
		return err
	}
	_, err = w.fake.AddComment(w.issue, github.DefaultIdentity, "**roadmap** · staged\n\n"+block)
	return err
}

// player runs the Jobs of one item.
type player struct {
	w        *world
	fixtures string
	settings ImplementSettings
	o        *Options
	killed   int
	// review is the review's cost over the Jobs so far.
	review ReviewCost
}

// maxJobs bounds the Jobs of one case: a kill and a continuation, and a
// yield or two after it.
const maxJobs = 4

// play runs Jobs until one ends other than yielded (or is killed and
// continued) and returns the last one's result and workspace.
func (p *player) play(ctx context.Context) (implement.Result, string, error) {
	var last implement.Result
	ws := ""
	for p.w.jobs < maxJobs {
		var kill *KillPoint
		if p.w.jobs == 0 {
			kill = p.settings.Kill
		}
		res, jobWS, killed, err := p.job(ctx, kill)
		if err != nil {
			return last, ws, err
		}
		ws = jobWS
		if killed {
			p.killed++
			continue
		}
		last = res
		if res.Result != record.ResultYielded {
			break
		}
	}
	return last, ws, nil
}

// job runs one Job. At a kill point the Job is killed: its model call never
// returns, so nothing after that point reaches GitHub or git, as with
// SIGKILL; the Job's goroutine is left blocked and the next Job starts
// from a fresh clone, as a new runner would.
func (p *player) job(ctx context.Context, kill *KillPoint) (implement.Result, string, bool, error) {
	w := p.w
	killedAt := make(chan struct{})
	var meters []*reviewMeter
	wrap := func(m agent.Model) agent.Model {
		if kill != nil {
			m = &killingModel{Model: m, at: *kill, killed: killedAt}
		}
		rm := &reviewMeter{Model: m, requests: w.requests}
		meters = append(meters, rm)
		return rm
	}
	j, err := w.openJob(ctx, jobSetup{phase: implement.Phase(), fixtures: p.fixtures, wrap: wrap,
		// The CI plays on the manual clock: the watch sees a passing status
		// on the head the first time it waits (ciClock).
		clock:     ciClock{ManualClock: w.clock, w: w},
		configure: p.settings.configure, o: p.o})
	if err != nil {
		return implement.Result{}, "", false, err
	}
	// However the Job ends, its review's cost is the item's.
	defer func() {
		c := ReviewCost{Reviews: reviewsIn(j.kit.Trace.Events())}
		for _, m := range meters {
			c = c.add(m.total())
		}
		p.review = p.review.add(c)
	}()
	type done struct {
		res implement.Result
		err error
	}
	end := make(chan done, 1)
	go func() {
		res, err := j.kit.Implement(ctx, job.ImplementRun{})
		end <- done{res, err}
	}()
	select {
	case d := <-end:
		// A Job that ended closes its boundary; a killed one keeps it, as a
		// killed process leaves its files.
		j.kit.Close()
		if d.err != nil {
			return implement.Result{}, j.ws, false, fmt.Errorf("implement Job %d: %w", w.jobs, d.err)
		}
		if kill != nil {
			return implement.Result{}, j.ws, false, fmt.Errorf("job %d ended %s before its kill point (%q at turn %d)", w.jobs, d.res.Result, kill.Match, kill.Turn)
		}
		return d.res, j.ws, false, nil
	case <-killedAt:
		return implement.Result{}, j.ws, true, nil
	case <-ctx.Done():
		return implement.Result{}, j.ws, false, ctx.Err()
	}
}

// configure is the case's configuration over the shipped one: the repair
// rounds (2 unless the case says), a watch long enough for the played CI, no
// checks detected from the case's repository,
// test strength and the review as case.json turns them on, and the case's
// policy rows.
func (s ImplementSettings) configure(c *config.Config) {
	c.Implement.RepairRounds = s.RepairRounds
	if c.Implement.RepairRounds == 0 {
		c.Implement.RepairRounds = 2
	}
	c.Implement.WatchTimeout = 10 * time.Minute
	// A case's checks are the plan's verify commands and what case.json
	// names, not those detected from its repository (checks.detect, on by
	// default): its recorded model calls were made for those.
	c.Checks.Detect = false
	c.Implement.TestStrength = s.TestStrength
	if s.TestStrengthFloor > 0 {
		c.Implement.TestStrengthFloor = s.TestStrengthFloor
	}
	c.Review.Enabled = s.Review
	if s.ReviewRounds > 0 {
		c.Review.Rounds = s.ReviewRounds
	}
	// Checked when case.json was parsed.
	if n, _ := s.policyNode(); n != nil {
		c.Policy = *n
	}
}

// killingModel kills the Job at a request: it never answers it.
type killingModel struct {
	agent.Model
	at     KillPoint
	killed chan struct{}
}

func (m *killingModel) Complete(ctx context.Context, req agent.ModelRequest) (agent.ModelResponse, error) {
	turn, first := 0, ""
	for _, msg := range req.Messages {
		switch msg.Role {
		case agent.RoleAssistant:
			turn++
		case agent.RoleUser:
			if first == "" {
				first = msg.Content
			}
		}
	}
	if turn == m.at.Turn && strings.Contains(first, m.at.Match) {
		close(m.killed)
		select {} // the process is gone: this call never returns
	}
	return m.Model.Complete(ctx, req)
}

// ciClock plays the repository's CI on the manual clock: whenever a Job
// waits, the work branch's head gets a passing status (once), so the result
// never depends on what implement does when no CI ran.
type ciClock struct {
	*githubfake.ManualClock
	w *world
}

func (c ciClock) Sleep(ctx context.Context, d time.Duration) error {
	if sha, err := runGit(c.w.remote, "rev-parse", "-q", "--verify", "refs/heads/"+c.w.branch()); err == nil && sha != "" {
		if len(c.w.fake.Statuses(sha)) == 0 {
			c.w.fake.AddStatus(sha, "ci/test", "success", "go test ./... passed")
		}
	}
	return c.ManualClock.Sleep(ctx, d)
}

// compare runs the case's tests at main and at the work branch's head, each
// in a worktree of its own with the hidden tests laid over it, as `roadmap
// ci fail-to-pass` does, and, when
// want is set, measures the head's tests by mutation on every line the item
// changed from main. ok is false when the item left no work branch (nothing
// to test).
func (p *player) compare(ctx context.Context, test []string, pol *policy.Policy, hidden []f2p.File, want *StrengthExpected) (f2p.Report, *JudgedStrength, bool, error) {
	w := p.w
	head, err := runGit(w.remote, "rev-parse", "-q", "--verify", "refs/heads/"+w.branch())
	if err != nil || head == "" {
		return f2p.Report{}, nil, false, nil
	}
	base, err := runGit(w.remote, "rev-parse", "refs/heads/main")
	if err != nil {
		return f2p.Report{}, nil, false, err
	}
	judgeDir := filepath.Join(w.dir, "judge")
	if _, err := runGit(w.dir, "clone", "-q", w.remote, judgeDir); err != nil {
		return f2p.Report{}, nil, false, err
	}
	if _, err := runGit(judgeDir, "fetch", "-q", "origin", w.branch()); err != nil {
		return f2p.Report{}, nil, false, err
	}
	repo, err := git.Open(ctx, judgeDir, gitEnv())
	if err != nil {
		return f2p.Report{}, nil, false, err
	}
	if len(test) == 0 {
		test = []string{"go", "test", "-json", "./..."}
	}
	open := func(ctx context.Context, dir string) (f2p.Tree, error) {
		b, err := judgeBoundary(ctx, p.o.Isolation, dir)
		if err != nil {
			return nil, err
		}
		return f2p.SandboxTree(policy.NewSandbox(b, pol, gitEnv()), b.Close), nil
	}
	rep, err := f2p.Options{Repo: repo, Base: base, Head: head, Command: test, Open: open, TempDir: w.dir, Mask: w.masker.Mask, Overlay: hidden}.Compare(ctx)
	if err != nil {
		return f2p.Report{}, nil, false, fmt.Errorf("fail-to-pass: %w", err)
	}
	if want == nil {
		return rep, nil, true, nil
	}
	judged, err := w.judgeStrength(ctx, p.o.Isolation, pol, judgeDir, base, head, want.Floor)
	if err != nil {
		return f2p.Report{}, nil, false, err
	}
	return rep, judged, true, nil
}

// judgeStrength measures the tests at head by mutation on the lines the
// item changed from base: the clone in dir is checked out at head, and the
// tests are `go test` of the packages holding changed Go files, and
// `python3 -m pytest -q` for changed Python files, as `roadmap ci
// test-strength` runs with no --test, under the case's policy (pol). It is the eval's own
// judgement, apart from anything the Jobs measured or recorded. The hidden
// tests are not laid over here: it measures the tests the item wrote.
func (w *world) judgeStrength(ctx context.Context, iso config.Isolation, pol *policy.Policy, dir, base, head string, floor float64) (*JudgedStrength, error) {
	if _, err := runGit(dir, "checkout", "-q", "--detach", head); err != nil {
		return nil, fmt.Errorf("check out the head to judge its tests: %w", err)
	}
	b, err := judgeBoundary(ctx, iso, dir)
	if err != nil {
		return nil, fmt.Errorf("judge the test strength: %w", err)
	}
	defer b.Close()
	rep, err := strength.Run(ctx, strength.Options{Dir: dir, Base: base, Split: policy.Split, GitEnv: gitEnv(), Mask: w.masker.Mask,
		Runner: checks.SandboxRunner(policy.NewSandbox(b, pol, gitEnv()))}, floor)
	if err != nil {
		// The head's own tests fail unmutated, or git could not say what
		// changed: no strength stands for the head.
		return &JudgedStrength{Floor: floor, Reason: text.Short(w.masker.Mask(err.Error()), 300)}, nil
	}
	return &JudgedStrength{Floor: floor, Score: round(rep.Score), Generated: rep.Generated, Killed: rep.Killed, Survived: rep.Survived,
		TimedOut: rep.TimedOut, Passed: rep.Passed, Reason: text.Short(rep.Reason, 300)}, nil
}

// judgeBoundary opens the boundary the judge runs the head's tests in, as
// the Jobs' boundary is opened (job.OpenBoundary), in the same isolation:
// the head holds code the model wrote. "" is `none`, the replay's. Where
// the boundary cannot be set up the judge runs nothing and says why.
func judgeBoundary(ctx context.Context, iso config.Isolation, dir string) (*sandbox.Boundary, error) {
	cfg := config.Default()
	cfg.Isolation = config.IsolationNone
	if iso != "" {
		cfg.Isolation = iso
	}
	env := map[string]string{}
	for _, kv := range gitEnv() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	b, err := job.OpenBoundary(ctx, cfg, dir, env, nil)
	var u *sandbox.Unavailable
	if errors.As(err, &u) {
		return nil, fmt.Errorf("the judge runs the code the model wrote, and no isolation boundary can be set up (%v): it runs nothing outside one (docs/isolation.md)", u)
	}
	return b, err
}

func orEmpty(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}
