package faults

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/job"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/report"
	"github.com/roadmap-dev/roadmap/internal/stage"
)

// The stage part of a history: the issue has no plan; stage Jobs write it in
// two rounds (the verifier objects to round 1, round 2 is clean), open the
// draft PR and mark the item staged; then implement and report take it to
// ready, as `roadmap demo` does with processes.

// maxStageJobs bounds the stage part: report runs after every stage Job and
// a stage Job killed or yielded goes on in the continuation report
// dispatches; a history that needs more stage Jobs than this repeats work
// without end.
const maxStageJobs = 4

// stageWorkflow is the workflow whose runs hold the stage Jobs (phase:
// stage), and on which report dispatches stage continuations: the one
// reusable workflow runs stage or implement by its phase input.
const stageWorkflow = "roadmap.yml"

// The stage conversations' names, as the replay server's stats give them.
const (
	convPlanner1  = "stage-planner-1"
	convPlanner2  = "stage-planner-2"
	convVerifier1 = "stage-verifier-1"
	convVerifier2 = "stage-verifier-2"
)

// stagePlanMarker is in round 1's tasks.md only: the verifier of round 1
// matches on it, the verifier of round 2 on its absence (the rounds' plans,
// not the order of calls, pick the recording, so a re-run Job gets the same
// answers).
const stagePlanMarker = "test -f greeting-"

const stageProposal = "# Add greetings\n\n## Why\n\nThe repository greets nobody: people asked for greetings.\n\n" +
	"## What Changes\n\n- One greeting file per group, each saying hello.\n"

const stageSpec = "## ADDED Requirements\n\n### Requirement: Greeting files\n\n" +
	"The repository SHALL hold greeting-N.txt saying hello N for each greeting N.\n\n" +
	"#### Scenario: The first greeting\n\n- **WHEN** greeting-1.txt is read\n- **THEN** it says hello 1\n"

// round1Tasks is the plan the verifier objects to: its verify commands only
// check that the files exist.
func round1Tasks(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "## %d. Greeting %d\n\n- [ ] %d.1 Write greeting-%d.txt saying hello %d; verify: `%s%d.txt`\n\n", i, i, i, i, i, stagePlanMarker, i)
	}
	return b.String()
}

// stageConversations are stage's recorded answers; every call costs 1,000
// tokens in and 100 out, as implement's do.
func stageConversations(n int, mutate func(name string, c *llm.Conversation)) ([]*llm.Conversation, error) {
	type call struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	turn := func(name string, args map[string]any) map[string]any {
		return map[string]any{"response": map[string]any{"tool_calls": []call{{Name: name, Arguments: args}},
			"usage": map[string]int{"tokens_in": 1000, "tokens_out": 100}}}
	}
	write := func(path, text string) map[string]any {
		return turn("write_plan_file", map[string]any{"path": path, "content": text})
	}
	defs := []struct {
		name  string
		match map[string]string
		turns []map[string]any
	}{
		{convPlanner1, map[string]string{"match": "Write the plan for issue"}, []map[string]any{
			turn("read_file", map[string]any{"path": "README.md"}),
			write("proposal.md", stageProposal), write("tasks.md", round1Tasks(n)), write("specs/greetings/spec.md", stageSpec),
			turn("finish", map[string]any{"summary": "wrote the plan"})}},
		{convVerifier1, map[string]string{"match_regexp": `(?s)Review the plan for issue.*` + stagePlanMarker}, []map[string]any{
			turn("verdict", map[string]any{"objections": PlanDir + "/tasks.md:3: the verify command only checks that greeting-1.txt exists, not that it says hello 1"})}},
		{convPlanner2, map[string]string{"match": "Revise the plan for issue"}, []map[string]any{
			write("tasks.md", tasksMD(n)),
			turn("finish", map[string]any{"summary": "the verify commands check the text"})}},
		{convVerifier2, map[string]string{"match_regexp": `(?s)Review the plan for issue.*grep -q "hello 2"`}, []map[string]any{
			turn("verdict", map[string]any{"objections": "none"})}},
	}
	var out []*llm.Conversation
	for _, d := range defs {
		c := map[string]any{"comment": "written by hand for the fault suite: stage's " + d.name, "source": "hand", "turns": d.turns}
		for k, v := range d.match {
			c[k] = v
		}
		data, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		conv, err := llm.ParseConversation(d.name, data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.name, err)
		}
		if mutate != nil {
			mutate(d.name, conv)
		}
		out = append(out, conv)
	}
	return out, nil
}

// stageEnd is how one stage Job of a history ended.
type stageEnd struct {
	// RunID is the workflow run the Job ran in.
	RunID  int64
	Killed string
	Result stage.Result
	// Pushed is the highest plan round on the remote branch when the Job
	// began; Planned the rounds whose planner conversation it began.
	Pushed  int
	Planned []int
	Log     string
}

// staged is what the stage part left: the plan on the branch, the PRs.
type stagedState struct {
	Plan    map[string]string `json:"plan"`
	PRs     int               `json:"prs"`
	Draft   bool              `json:"draft"`
	Rounds  int               `json:"rounds"`
	Comment int               `json:"pr_comments"`
}

// stagePhase runs stage Jobs, each followed by report on it as the stage
// workflow's report job runs it, and follows what report did: after staged
// (action none) the item goes to implement; a continuation runs as the next
// stage Job in the run report dispatched; a stop ends the stage part, and the
// history, stopped. It returns the record comment's id for implement.
func (l *life) stagePhase() (int64, error) {
	w := l.w
	runID := w.fake.AddRun(githubfake.Run{WorkflowFile: stageWorkflow, HeadBranch: "main", Event: "issues", Status: "in_progress"})
	var rc int64
	for n := 1; n <= maxStageJobs; n++ {
		se, err := l.stageJob(n, runID, rc)
		if err != nil {
			return 0, err
		}
		l.stages = append(l.stages, se)
		if se.Result.RecordComment != 0 {
			rc = se.Result.RecordComment
		}
		out, err := l.stageReport(n, se, rc)
		if err != nil {
			return 0, err
		}
		l.stageLast = out
		if out.Action != report.ActionContinue || out.DispatchedRunID == 0 {
			break
		}
		// The continuation is the run report dispatched (or, re-run, found
		// landed), with the inputs it gave it.
		runID = out.DispatchedRunID
		if id := dispatchedRecordComment(w, runID); id != 0 {
			rc = id
		}
	}
	st, err := l.stagedNow()
	if err != nil {
		return 0, err
	}
	l.stagedAt = &st
	l.stageEffects = len(l.c.log)
	l.stageRequests = len(w.fake.Requests())
	return rc, nil
}

// stageReport runs report with phase stage on stage Job n, the way the
// report job after the stage job would (roadmap.yml): its log stamped into
// the run's job "stage", its outputs (result, failure, spend, pr, job) when
// it wrote them.
func (l *life) stageReport(n int, se stageEnd, rc int64) (report.Outcome, error) {
	w := l.w
	o := report.Options{Issue: w.issue, Phase: report.PhaseStage, RunID: se.RunID, RecordComment: rc,
		Workflow: stageWorkflow, Ref: "main", Mask: masker().Mask, Clock: w.clock}
	if se.Killed == "" {
		r := se.Result
		o.Result, o.Failure, o.Spend, o.PR, o.Attempt = r.Result, r.Failure, jsonString(r.Spend), r.PR, r.Job
	}
	return l.reportOn(reportEnd{Job: n, Stage: true}, "stage", se.Killed != "", se.Log, o)
}

// dispatchedRecordComment is the record-comment input of a dispatched run
// (0 when it has none).
func dispatchedRecordComment(w *world, runID int64) int64 {
	for _, r := range w.fake.Runs() {
		if r.ID != runID {
			continue
		}
		if id, err := strconv.ParseInt(fmt.Sprint(r.Inputs["record-comment"]), 10, 64); err == nil && id > 0 {
			return id
		}
	}
	return 0
}

// staged says whether the stage part ended with the item staged: report on
// the last stage Job found it staged (from its outputs, or from its mark
// when a kill lost them) and had nothing to do.
func (l *life) staged() bool {
	return len(l.stages) > 0 && l.stageLast.Action == report.ActionNone && l.stageLast.Result == stage.ResultStaged
}

// stageJob runs one stage Job in this process; a kill unwinds it.
func (l *life) stageJob(n int, runID, rc int64) (se stageEnd, err error) {
	w := l.w
	if w.branch != "" {
		if head := w.remoteHead(); head != "" {
			se.Pushed = w.pushedRounds(head)
		}
	}
	se.RunID = runID
	served := len(w.replay.Stats().Served)
	ws, err := w.workspace(fmt.Sprintf("stage-%d", n))
	if err != nil {
		return se, err
	}
	p := &proc{c: l.c}
	log := &lockedBuffer{}
	kit, err := l.open(l.ctx, stage.Phase(), 0, runID, rc, ws, p, log)
	if err != nil {
		return se, err
	}
	defer kit.Close()
	func() {
		defer func() {
			if v := recover(); v != nil {
				k, ok := v.(killed)
				if !ok {
					panic(v)
				}
				se.Killed = k.point
			}
		}()
		se.Result, err = kit.Stage(l.ctx, job.StageRun{})
	}()
	p.dead.Store(true)
	se.Log = log.String()
	for _, s := range w.replay.Stats().Served[served:] {
		if s.Turn != 0 {
			continue
		}
		switch s.Conversation {
		case convPlanner1:
			se.Planned = append(se.Planned, 1)
		case convPlanner2:
			se.Planned = append(se.Planned, 2)
		}
	}
	if err != nil && se.Killed == "" {
		return se, fmt.Errorf("stage job %d: %w", n, err)
	}
	if se.Killed != "" {
		l.note("stage job %d killed %s", n, se.Killed)
	} else {
		l.note("stage job %d %s %s round %d", n, se.Result.Result, se.Result.Failure, se.Result.Rounds)
	}
	return se, nil
}

// pushedRounds is the highest Roadmap-Stage-Round trailer on the remote
// branch's commits since main.
func (w *world) pushedRounds(head string) int {
	out, err := gitIn(w.remote, "log", "--format=%(trailers:key="+git.TrailerStageRound+",valueonly)", "main.."+head)
	if err != nil {
		return 0
	}
	best := 0
	for _, f := range strings.Fields(out) {
		var n int
		if _, err := fmt.Sscanf(f, "%d", &n); err == nil && n > best {
			best = n
		}
	}
	return best
}

// stagedNow reads what the stage part left.
func (l *life) stagedNow() (stagedState, error) {
	w := l.w
	st := stagedState{Plan: map[string]string{}}
	if head := w.remoteHead(); head != "" {
		out, err := gitIn(w.remote, "ls-tree", "-r", head, "--", PlanDir)
		if err != nil {
			return st, err
		}
		for _, line := range strings.Split(out, "\n") {
			meta, path, ok := strings.Cut(line, "\t")
			if !ok {
				continue
			}
			f := strings.Fields(meta)
			st.Plan[path] = f[len(f)-1]
		}
		st.Rounds = w.pushedRounds(head)
	}
	for n := 1; ; n++ {
		is, ok := w.fake.Issue(n)
		if !ok {
			break
		}
		if is.Pull != nil && strings.HasPrefix(is.Pull.Head, fmt.Sprintf("roadmap/%d-", w.issue)) {
			st.PRs++
			st.Draft = is.Pull.Draft
			for _, c := range w.fake.Comments(n) {
				if strings.Contains(c.Body, stageMarker) {
					st.Comment++
				}
			}
		}
	}
	return st, nil
}

// stageMarker is stage's PR comment marker (stage.Options.Marker's default).
const stageMarker = "<!-- roadmap:stage -->"

// stageKinds are the fault kinds of the stage histories; TestFaultsRun
// holds the suite to injecting and recovering each.
var stageKinds = []string{
	"stage_crash", "stage_github_5xx", "stage_github_apply_then_fail", "stage_github_403_secondary",
	"stage_model_429", "stage_model_500", "stage_model_malformed_tool_call", "stage_model_context_overflow",
}

// stageBranches are stage's recovery branches: the round planned again
// (killed before its push), checked again (pushed, its findings lost),
// resumed after (pushed and recorded), the draft PR found rather than
// opened twice, the staged mark read by the next Job, and report continuing
// a killed stage Job (its run of report killed around the dispatch).
var stageBranches = []string{
	"stage_replan", "stage_recheck_round", "stage_resume_round", "stage_pr_found", "stage_already_staged",
	"stage_continue_killed",
}

// stageBranchAt is the recovery branch a kill at point leaves the next stage
// Job: it follows what the crash-free run's effects before it made durable.
func stageBranchAt(effects []string, when, point string) string {
	n := len(effects)
	for i, e := range effects {
		if e == point {
			n = i
			if when == "after" {
				n++
			}
			break
		}
	}
	applied := effects[:n]
	pushed, recorded, pr, staged := 0, 0, false, false
	for _, e := range applied {
		switch {
		case strings.HasPrefix(e, EffPush+"#"):
			pushed++
		case e == lastOf(effects, EffRecord):
			staged = true // the last record write is the staged mark
		case strings.HasPrefix(e, EffRecord+"#"):
			recorded++ // a round's findings
		case strings.HasPrefix(e, EffPRNew+"#"):
			pr = true
		}
	}
	switch {
	case staged:
		return "stage_already_staged"
	case pr:
		return "stage_pr_found"
	case pushed > recorded:
		return "stage_recheck_round"
	case recorded > 0:
		return "stage_resume_round"
	}
	return "stage_replan"
}

func lastOf(effects []string, name string) string {
	last := ""
	for _, e := range effects {
		if strings.HasPrefix(e, name+"#") {
			last = e
		}
	}
	return last
}

// stageScenarios are the stage histories of one seed: a kill before and
// after each of stage's durable effects in the crash-free run, model faults
// in the planner and the verifier, GitHub faults on stage's writes.
func stageScenarios(seed int64, effects []string, writes []Request, record func(Request) bool) []scenario {
	rng := rand.New(rand.NewSource(1000 + seed))
	var out []scenario
	for _, p := range effects {
		for _, when := range []string{"before", "after"} {
			out = append(out, scenario{Name: "stage: kill " + when + " " + p, Kind: "stage_crash", Stage: true,
				Branch: stageBranchAt(effects, when, p), Expect: expectReady, arms: []string{when + " " + p}})
		}
	}
	// Effects only report on a killed stage Job makes: the dispatch of the
	// stage continuation, killed before and after (report is re-run).
	if first := EffPush + "#1"; slices.Contains(effects, first) {
		for _, when := range []string{"before", "after"} {
			out = append(out, scenario{Name: "stage: kill before " + first + ", then " + when + " " + EffDispatch + "#1", Kind: "stage_crash",
				Stage: true, Branch: "stage_continue_killed", Expect: expectReady, arms: []string{"before " + first, when + " " + EffDispatch + "#1"}})
		}
	}

	// Model faults: the seed picks the planner's round and the verifier's,
	// alternating, so any two seeds in a row fault all four conversations.
	planner := []string{convPlanner1, convPlanner2}[(seed+1)%2]
	verifier := []string{convVerifier1, convVerifier2}[seed%2]
	overflow := `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9371 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`
	for _, conv := range []string{planner, verifier} {
		conv := conv
		at := func(kind, branch string, f func(c *llm.Conversation)) scenario {
			return scenario{Name: fmt.Sprintf("stage: %s in %s", kind, conv), Kind: "stage_" + kind, Branch: branch, Expect: expectReady, Stage: true,
				mutateStage: func(name string, c *llm.Conversation) {
					if name == conv {
						f(c)
					}
				}}
		}
		bad := llm.Turn{Response: llm.Response{ToolCalls: []llm.FixtureToolCall{{Name: "write_plan_file", Arguments: `{"path": "tasks.`}},
			Usage: llm.FixtureUsage{TokensIn: 1000, TokensOut: 100}}}
		if strings.Contains(conv, "verifier") {
			bad.Response.ToolCalls[0] = llm.FixtureToolCall{Name: "verdict", Arguments: `{"objections": "no`}
		}
		out = append(out,
			at("model_429", "retry", func(c *llm.Conversation) {
				c.Turns[0].Errors = append(c.Turns[0].Errors, llm.InjectedError{Status: 429, RetryAfter: "3"})
			}),
			at("model_500", "retry", func(c *llm.Conversation) {
				c.Turns[len(c.Turns)-1].Errors = append(c.Turns[len(c.Turns)-1].Errors, llm.InjectedError{Status: 500})
			}),
			at("model_malformed_tool_call", "agent_repair", func(c *llm.Conversation) {
				c.Turns = append([]llm.Turn{bad}, c.Turns...)
			}),
			// The overflow comes after a read of the plan's tasks with an
			// exchange between (the last exchange is never cut), so there
			// is old tool output to cut.
			at("model_context_overflow", "trim_context", func(c *llm.Conversation) {
				read := func(path string) llm.Turn {
					return llm.Turn{Response: llm.Response{ToolCalls: []llm.FixtureToolCall{{Name: "read_file", Arguments: llm.Arguments(`{"path":"` + path + `"}`)}},
						Usage: llm.FixtureUsage{TokensIn: 1000, TokensOut: 100}}}
				}
				if n := len(c.Turns); n >= 2 {
					c.Turns = slices.Insert(c.Turns, n-2, read(PlanDir+"/tasks.md"))
				} else {
					c.Turns = slices.Insert(c.Turns, 0, read(PlanDir+"/tasks.md"), read("README.md"))
				}
				last := len(c.Turns) - 1
				c.Turns[last].Errors = append(c.Turns[last].Errors, llm.InjectedError{Status: 400, Body: overflow})
			}),
		)
	}

	// GitHub faults on stage's writes.
	rule := func(r Request, rl githubfake.Rule) githubfake.Rule {
		rl.Method, rl.Path, rl.Call = r.Method, r.Path, r.Call
		return rl
	}
	gh := func(kind, branch string, r Request, rl githubfake.Rule) scenario {
		return scenario{Name: fmt.Sprintf("stage: %s on %s %s (call %d)", kind, r.Method, r.Path, r.Call), Kind: "stage_" + kind, Branch: branch,
			Expect: expectReady, Stage: true, setup: func(l *life) error { l.w.fake.AddFault(rule(r, rl)); return nil }}
	}
	gh5xx := func(r Request) scenario {
		return gh("github_5xx", fiveXXBranch(r, record), r, githubfake.Rule{Status: 502})
	}
	secondary := `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`
	out = append(out,
		gh5xx(writes[rng.Intn(len(writes))]),
		gh("github_403_secondary", "wait_rate_limit", writes[rng.Intn(len(writes))],
			githubfake.Rule{Status: 403, Body: secondary, Headers: map[string]string{"retry-after": "30"}}),
	)
	for _, r := range writes {
		branch := "reconcile"
		if record(r) {
			branch = "reapply_record"
		}
		out = append(out, gh("github_apply_then_fail", branch, r, githubfake.Rule{ApplyThenFail: true, Status: 502}))
	}
	return out
}

// checkStage holds a history that began with no plan to stage's promises:
// the stage Jobs ended staged with one draft PR and the crash-free run's
// plan, one marker comment at most, and no plan round paid twice (a round
// pushed when a Job began is never planned again by it).
func checkStage(l *life, base, got State, bad func(string, ...any)) (repeated int) {
	if got.Staged == nil || base.Staged == nil {
		bad("the stage part left no state")
		return 0
	}
	s, b := got.Staged, base.Staged
	switch n := len(l.stages); {
	case l.stageLast.Action == report.ActionStop:
		bad("report stopped the item in stage after stage Job %d (%s): %s", n, l.stageLast.Class, l.stageLast.Reason)
	case !l.staged():
		bad("the stage Jobs did not end staged (%d Jobs; report on the last: %s %s → %s)", n, l.stageLast.Result, l.stageLast.Class, l.stageLast.Action)
	}
	// One report per stage Job, and report's number for it is the suite's.
	reported := map[int]int{}
	for _, r := range l.reps {
		if !r.Stage || r.Killed != "" {
			continue
		}
		reported[r.Job]++
		if r.Outcome.Job != 0 && r.Outcome.Job != r.Job {
			bad("report on stage Job %d named it stage Job %d", r.Job, r.Outcome.Job)
		}
	}
	for i := range l.stages {
		if reported[i+1] != 1 {
			bad("stage job %d was reported on %d times, want 1", i+1, reported[i+1])
		}
	}
	for i, j := range l.stages {
		if j.Killed == "" && !slices.Contains([]string{stage.ResultStaged, stage.ResultReturned, stage.ResultStopped, stage.ResultYielded}, j.Result.Result) {
			bad("stage job %d ended with no typed result (%q)", i+1, j.Result.Result)
		}
		for _, r := range j.Planned {
			if r <= j.Pushed {
				repeated++
				bad("stage job %d planned round %d again: it was pushed when the Job began (round %d on the branch)", i+1, r, j.Pushed)
			}
		}
	}
	if s.PRs != 1 || !s.Draft {
		bad("stage left %d PR(s) for the item (draft %v), want exactly one draft", s.PRs, s.Draft)
	}
	if !maps.Equal(s.Plan, b.Plan) || s.Rounds != b.Rounds {
		bad("the plan on the branch differs from the crash-free run's: got %v after %d rounds, want %v after %d", s.Plan, s.Rounds, b.Plan, b.Rounds)
	}
	if s.Comment > 1 {
		bad("%d stage comments on the PR, want at most 1", s.Comment)
	}
	return repeated
}

// checkStageDispatches holds the stage continuations to one dispatch per
// stage Job that report continued, and none for any other. A stage dispatch
// carries no Job number (phase: stage), so it is keyed by the stage Job
// whose report was running when the fake received it; it returns the
// duplicates.
func checkStageDispatches(l *life, ds []githubfake.Dispatch, bad func(string, ...any)) (dups int) {
	by := map[int64]int{} // dispatched run → stage Job
	continued := map[int]bool{}
	for _, r := range l.reps {
		if !r.Stage {
			continue
		}
		for _, id := range r.Dispatched {
			by[id] = r.Job
		}
		if r.Killed == "" {
			continued[r.Job] = r.Outcome.Action == report.ActionContinue
		}
	}
	count := map[int]int{}
	for _, d := range ds {
		n, ok := by[d.RunID]
		if !ok {
			dups++
			bad("a stage dispatch (run %d) that no report on a stage Job made", d.RunID)
			continue
		}
		count[n]++
	}
	for n := 1; n <= len(l.stages); n++ {
		switch c := count[n]; {
		case continued[n] && c == 0:
			bad("report continued stage Job %d and dispatched no stage continuation", n)
		case continued[n] && c > 1:
			dups += c - 1
			bad("%d dispatches of stage Job %d's continuation, want 1", c, n)
		case !continued[n] && c > 0:
			dups += c
			bad("%d dispatches of stage Job %d's continuation, which report did not continue", c, n)
		}
	}
	return dups
}

// stageInjected is the evidence a stage fault happened.
func stageInjected(l *life, sc scenario, base State) bool {
	st := l.w.replay.Stats()
	switch sc.Kind {
	case "stage_model_429", "stage_model_500":
		return st.Errors > 0
	case "stage_model_malformed_tool_call":
		return st.Calls > base.Served.ModelCalls
	case "stage_model_context_overflow":
		return l.w.fitted.Load() > 0
	}
	return false
}

// stageReached is the evidence of a stage recovery branch.
func stageReached(l *life, branch string) bool {
	logs := func(s string) bool {
		for _, j := range l.stages {
			if strings.Contains(j.Log, s) {
				return true
			}
		}
		return false
	}
	switch branch {
	case "stage_replan":
		return len(l.stages) > 1 && l.stages[0].Killed != "" && slices.Contains(l.stages[len(l.stages)-1].Planned, 1)
	case "stage_recheck_round":
		return logs("without its findings; checking it again")
	case "stage_resume_round":
		return logs("resuming after them")
	case "stage_pr_found":
		for _, r := range l.w.fake.Requests() {
			if r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/pulls") && r.Status == http.StatusUnprocessableEntity {
				return true
			}
		}
		return false
	case "stage_already_staged":
		// A Job killed after its staged mark: report reads the mark in
		// its line (the outputs died with it) and implement takes it on.
		n := len(l.stages)
		return n > 0 && l.stages[n-1].Killed != "" && l.staged() || logs("the plan is already staged")
	case "stage_continue_killed":
		for _, r := range l.reps {
			if r.Stage && r.Killed == "" && r.Outcome.Class == failure.Killed && r.Outcome.Action == report.ActionContinue {
				return true
			}
		}
		return false
	}
	return false
}
