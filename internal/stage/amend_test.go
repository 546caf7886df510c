package stage_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/kernel"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/sandbox/sandboxtest"
	"github.com/roadmap-dev/roadmap/internal/stage"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

const tasks2 = "## 1. Hello\n\n" +
	"- [ ] 1.1 Write `hello.txt` saying hello to Ada; verify: `grep -q hello hello.txt`\n\n" +
	"## 2. Goodbye\n\n" +
	"- [ ] 2.1 Write `gone/bye.txt` saying bye; verify: `grep -q bye gone/bye.txt`\n"

const amended = "## 1. Hello\n\n" +
	"- [ ] 1.1 Write `hello.txt` saying hello to Ada; verify: `grep -q hello hello.txt`\n\n" +
	"## 2. Goodbye\n\n" +
	"- [ ] 2.1 Write `bye.txt` saying bye; verify: `grep -q bye bye.txt`\n"

// implementJob wires an implement Job on a fresh clone of w's remote, as
// the implement harness does.
func (w *world) implementJob(convs ...string) (*job, implement.Options) {
	j := w.newJob(convs...)
	masker := redact.New(redact.Config{Secrets: []string{token}})
	sb := policy.NewSandbox(sandboxtest.None(w.t, j.ws, gitEnv()), policy.Default(), gitEnv())
	tr, err := trace.NewRecorder(&bytes.Buffer{}, masker, w.clock.Now, 0)
	if err != nil {
		w.t.Fatal(err)
	}
	return j, implement.Options{
		Options: kernel.Options{
			Issue:     w.issue,
			RunID:     j.opts.RunID,
			GitHub:    j.opts.GitHub,
			Repo:      j.opts.Repo,
			Remote:    "origin",
			Base:      "main",
			Sandbox:   toolSandbox{sb},
			Clock:     w.clock,
			Log:       &j.log,
			Trace:     tr,
			Mask:      masker.Mask,
			SetOutput: func(k, v string) { j.outputs[k] = v },
		},
		Models:       j.opts.Planner,
		CheckRunner:  checks.SandboxRunner(sb),
		Split:        policy.Split,
		RepairRounds: 1,
		PollInterval: 30 * time.Second,
		WatchTimeout: 10 * time.Minute,
		// The sample repository has no CI: ready is allowed without it.
		ReadyWithoutCI: true,
	}
}

// returnedAtGroup2 stages the two-group plan and runs implement until it
// returns the item with plan_wrong at group 2. It returns the draft PR.
func returnedAtGroup2(t *testing.T, w *world) int {
	t.Helper()
	s1 := w.newJob(
		conv("planner: a two-group plan whose group 2 writes into a directory that will not exist", "Write the plan for issue",
			planFile("proposal.md", proposal), planFile("tasks.md", tasks2), planFile("specs/greetings/spec.md", spec), finish("wrote the plan")),
		cleanVerifier("Review the plan for issue"))
	if res := s1.run(context.Background()); res.Result != stage.ResultStaged {
		t.Fatalf("stage: %s (%s)", res.Result, res.Reason)
	}
	pr, _ := w.record().StagePR()

	// implement passes group 1 and returns the plan at group 2.
	i1, o1 := w.implementJob(
		conv("group 1 writes hello.txt", "task group 1 of", writeFile("hello.txt", "hello Ada\n"), finish("wrote hello.txt")),
		conv("group 2 finds the plan wrong", "task group 2 of",
			call{"plan_wrong", map[string]any{"reason": "gone/ is removed by the release script (see Makefile): bye.txt belongs at the root"}}))
	r1, err := implement.Run(context.Background(), o1)
	if err != nil || r1.Result != record.ResultReturned || r1.Failure != "plan_wrong" || r1.Group != 1 {
		t.Fatalf("implement Job 1: %+v, %v\n%s", r1, err, i1.log.String())
	}
	return pr
}

func TestPlanAmendment(t *testing.T) {
	w := newWorld(t)
	pr := returnedAtGroup2(t, w)

	// stage amends: group 1 kept, group 2 rewritten with the evidence.
	s2 := w.newJob(
		conv("planner: amends group 2 with implement's evidence", "Amend the plan for issue",
			read(changeDir+"/tasks.md"), planFile("tasks.md", amended), finish("moved bye.txt to the root")),
		cleanVerifier("Review the plan for issue"))
	res := s2.run(context.Background())
	if res.Result != stage.ResultStaged || !res.Amended || res.From != 2 || res.PR != pr {
		t.Fatalf("amendment: %+v\n%s", res, s2.log.String())
	}
	// The amender saw implement's evidence.
	var evidence bool
	for _, req := range s2.model.Requests() {
		evidence = evidence || strings.Contains(req.Messages[1].Content, "removed by the release script")
	}
	if !evidence {
		t.Error("the amending planner did not get implement's evidence")
	}
	branch := git.WorkBranch(w.issue, "Add greetings")
	got, _ := w.branchFile(branch, changeDir+"/tasks.md")
	if !strings.Contains(got, "- [x] 1.1 Write `hello.txt`") || !strings.Contains(got, "- [ ] 2.1 Write `bye.txt`") {
		t.Errorf("the amended tasks.md does not keep group 1 passed and rewrite group 2:\n%s", got)
	}
	if rr, ok := w.record().Result(); ok {
		t.Errorf("implement.result is still %s after the amendment", rr)
	}

	// implement runs the amended group 2 onward, on the same PR, to ready.
	i2, o2 := w.implementJob(
		conv("group 1 must not run again", "task group 1 of", finish("nothing")),
		conv("group 2 writes bye.txt", "task group 2 of", writeFile("bye.txt", "bye\n"), finish("wrote bye.txt")))
	r2, err := implement.Run(context.Background(), o2)
	if err != nil || r2.Result != record.ResultReady || r2.PR != pr {
		t.Fatalf("implement Job 2: %+v, %v\n%s", r2, err, i2.log.String())
	}
	for _, req := range i2.model.Requests() {
		if strings.Contains(req.Messages[1].Content, "task group 1 of") {
			t.Error("implement ran group 1 again after the amendment")
		}
	}
	if len(w.pulls()) != 1 {
		t.Errorf("%d PRs; the amendment works on the same one", len(w.pulls()))
	}
}

// TestPlanAmendmentKeepsPassedGroups: an amendment that rewrites a group
// that passed is a finding; the planner's next round restores it.
func TestPlanAmendmentKeepsPassedGroups(t *testing.T) {
	w := newWorld(t)
	returnedAtGroup2(t, w)
	rewritten := strings.Replace(amended, "saying hello to Ada", "saying hi to Ada", 1)
	s2 := w.newJob(
		conv("planner: amends group 2 and rewrites group 1 as well", "Amend the plan for issue",
			planFile("tasks.md", rewritten), finish("rewrote both")),
		conv("planner: restores group 1", "Revise the plan for issue",
			planFile("tasks.md", amended), finish("kept group 1")),
		cleanVerifier("Review the plan for issue"))
	res := s2.run(context.Background())
	if res.Result != stage.ResultStaged || res.Rounds != 3 {
		t.Fatalf("amendment: %s after %d rounds (%s); want staged after 3 (1 plan, 2 amendment rounds)\n%s", res.Result, res.Rounds, res.Reason, s2.log.String())
	}
	var revise string
	for _, req := range s2.model.Requests() {
		if c := req.Messages[1].Content; strings.Contains(c, "Revise the plan") {
			revise = c
		}
	}
	if !strings.Contains(revise, "roadmap/stage/amend-kept") {
		t.Errorf("the second round did not get the kept-groups finding:\n%s", revise)
	}
	got, _ := w.branchFile(git.WorkBranch(w.issue, "Add greetings"), changeDir+"/tasks.md")
	if !strings.Contains(got, "- [x] 1.1 Write `hello.txt` saying hello to Ada") {
		t.Errorf("group 1 is not as it passed:\n%s", got)
	}
}

// toolSandbox gives the policy sandbox the agent's Run signature, for the
// runner this test wires by hand.
type toolSandbox struct{ *policy.Sandbox }

func (s toolSandbox) Run(ctx context.Context, argv []string) (agent.RunResult, error) {
	r, err := s.Sandbox.Run(ctx, argv)
	return agent.RunResult(r), err
}
