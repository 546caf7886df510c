package faults

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/sandbox"
	"github.com/roadmap-dev/roadmap/internal/stage"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// The stage part of a history: the issue has no plan; stage Jobs write it in
// two rounds (the verifier objects to round 1, round 2 is clean), open the
// draft PR and mark the item staged; then implement and report take it to
// ready, as `roadmap demo` does with processes.

// maxStageJobs bounds the stage part: a stage Job killed or yielded is run
// again (the stage workflow has no report: a re-run does it), until staged.
const maxStageJobs = 4

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
func round1Tasks() string {
	var b strings.Builder
	for i := 1; i <= groups; i++ {
		fmt.Fprintf(&b, "## %d. Greeting %d\n\n- [ ] %d.1 Write greeting-%d.txt saying hello %d; verify: `%s%d.txt`\n\n", i, i, i, i, i, stagePlanMarker, i)
	}
	return b.String()
}

// stageConversations are stage's recorded answers; every call costs 1,000
// tokens in and 100 out, as implement's do.
func stageConversations(mutate func(name string, c *llm.Conversation)) ([]*llm.Conversation, error) {
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
			write("proposal.md", stageProposal), write("tasks.md", round1Tasks()), write("specs/greetings/spec.md", stageSpec),
			turn("finish", map[string]any{"summary": "wrote the plan"})}},
		{convVerifier1, map[string]string{"match_regexp": `(?s)Review the plan for issue.*` + stagePlanMarker}, []map[string]any{
			turn("verdict", map[string]any{"objections": planDir + "/tasks.md:3: the verify command only checks that greeting-1.txt exists, not that it says hello 1"})}},
		{convPlanner2, map[string]string{"match": "Revise the plan for issue"}, []map[string]any{
			write("tasks.md", tasksMD()),
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

// stagePhase runs stage Jobs until the item is staged; it returns the record
// comment's id for implement.
func (l *life) stagePhase() (int64, error) {
	w := l.w
	runID := w.fake.AddRun(githubfake.Run{WorkflowFile: "roadmap-stage.yml", HeadBranch: "main", Event: "issues", Status: "in_progress"})
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
		if se.Killed == "" && se.Result.Result == stage.ResultStaged {
			break
		}
		// Killed or yielded: the stage workflow is run again.
		runID = w.fake.AddRun(githubfake.Run{WorkflowFile: "roadmap-stage.yml", HeadBranch: "main", Event: "workflow_dispatch", Status: "in_progress"})
	}
	st, err := l.stagedNow()
	if err != nil {
		return 0, err
	}
	l.stagedAt = &st
	l.stageEffects = len(l.c.log)
	return rc, nil
}

// stageJob runs one stage Job in this process; a kill unwinds it.
func (l *life) stageJob(n int, runID, rc int64) (se stageEnd, err error) {
	w := l.w
	if w.branch != "" {
		if head := w.remoteHead(); head != "" {
			se.Pushed = w.pushedRounds(head)
		}
	}
	served := len(w.replay.Stats().Served)
	ws, err := w.workspace(fmt.Sprintf("stage-%d", n))
	if err != nil {
		return se, err
	}
	p := &proc{c: l.c}
	repo, err := git.Open(l.ctx, ws, gitEnv())
	if err != nil {
		return se, err
	}
	repo.Hook = p.gitHook()
	gh, err := w.client(&transport{p: p, base: &http.Transport{DisableKeepAlives: true}, issue: w.issue})
	if err != nil {
		return se, err
	}
	bound, err := sandbox.Open(l.ctx, sandbox.Options{Mode: sandbox.ModeNone, Workspace: ws, Environ: gitEnv()})
	if err != nil {
		return se, err
	}
	defer bound.Close()
	sb := policy.NewSandbox(bound, policy.Default(), gitEnv())
	model, err := llm.New(llm.Config{Provider: llm.ProviderOpenAICompatible, BaseURL: w.modelURL + "/v1", Model: "replay-model",
		InputWindow: l.window, Prices: map[string]llm.Price{"replay-model": {Input: 1, Output: 10}}}, llm.WithClock(w.clock))
	if err != nil {
		return se, err
	}
	log := &lockedBuffer{}
	m := masker()
	tr, err := trace.NewRecorder(&lockedBuffer{}, m, w.clock.Now, 0)
	if err != nil {
		return se, err
	}
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
		se.Result, err = stage.Run(l.ctx, stage.Options{
			Issue: w.issue, RunID: runID, GitHub: gh, Repo: repo, RecordComment: rc,
			Planner: []agent.Tier{{Name: "replay-model", Model: model}}, Sandbox: toolSandbox{sb},
			Clock: w.clock, Log: log, Trace: tr, Mask: m.Mask,
		})
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
		out, err := gitIn(w.remote, "ls-tree", "-r", head, "--", planDir)
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
