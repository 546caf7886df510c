package stage_test

import (
	"context"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/report"
	"github.com/roadmap-dev/roadmap/internal/stage"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// spendOf sums the Job's spend lines as report counts them: each call
// booked before it was sent, at its settling line (a cancelled call's is its
// booking: it ended with no answer), or, for a call the Job was killed in,
// at its booking.
func spendOf(t *testing.T, j *job) (calls int, in, out int64) {
	t.Helper()
	log, err := trace.ParseSpendLines(strings.NewReader(j.log.String()))
	if err != nil {
		t.Fatal(err)
	}
	settled := map[int]trace.SpendEntry{}
	for _, e := range log.Entries {
		settled[e.Call] = e
	}
	for _, b := range log.Booked {
		e, ok := settled[b.Call]
		if !ok {
			e = b
		}
		calls++
		in += e.TokensIn
		out += e.TokensOut
	}
	return calls, in, out
}

// bookingOf is the booking of call n in the Job's log.
func bookingOf(t *testing.T, j *job, n int) trace.SpendEntry {
	t.Helper()
	log, err := trace.ParseSpendLines(strings.NewReader(j.log.String()))
	if err != nil || len(log.Booked) < n {
		t.Fatalf("no booking of call %d in the log (%v)", n, err)
	}
	return log.Booked[n-1]
}

func TestStageKilledResumes(t *testing.T) {
	t.Run("mid-investigation", func(t *testing.T) {
		w := newWorld(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		j1 := w.newJob(soundPlanner("Write the plan for issue"), cleanVerifier("Review the plan for issue"))
		// The runner asks the Job to stop while the planner is on its third
		// call: two calls were made and paid for, and the third, which may
		// have been served, stays at its booking.
		j1.model.Before = func(n int, _ agent.ModelRequest) {
			if n == 3 {
				cancel()
			}
		}
		r1 := j1.run(ctx)
		if r1.Result != stage.ResultYielded || r1.Failure != "killed" {
			t.Fatalf("Job 1: %s (%s), want yielded (killed)\n%s", r1.Result, r1.Failure, j1.log.String())
		}
		c1, in1, out1 := spendOf(t, j1)
		third := bookingOf(t, j1, 3)
		if c1 != 3 || in1 != 2000+third.TokensIn || r1.JobSpend.ModelCalls != c1 || r1.JobSpend.TokensIn != in1 {
			t.Fatalf("Job 1: %d calls (%d tokens in) in its log, %+v in its result; want 3 calls, 2,000 tokens in and the cancelled third's booking (%d in)",
				c1, in1, r1.JobSpend, third.TokensIn)
		}
		if n := w.record().SpendEstimated(); n != 1 {
			t.Errorf("implement.spend_estimated = %d, want 1 (the cancelled call)", n)
		}
		if sp, _ := w.record().Spend(); sp.ModelCalls != c1 || sp.TokensIn != in1 || sp.TokensOut != out1 {
			t.Fatalf("the record holds %+v after the kill, want what Job 1 spent", sp)
		}
		j2 := w.newJob(soundPlanner("Write the plan for issue"), cleanVerifier("Review the plan for issue"))
		r2 := j2.run(context.Background())
		if r2.Result != stage.ResultStaged {
			t.Fatalf("Job 2: %s (%s: %s), want staged\n%s", r2.Result, r2.Failure, r2.Reason, j2.log.String())
		}
		c2, in2, out2 := spendOf(t, j2)
		want := record.Spend{TokensIn: in1 + in2, TokensOut: out1 + out2, ModelCalls: c1 + c2}
		got, _ := w.record().Spend()
		if got.ModelCalls != want.ModelCalls || got.TokensIn != want.TokensIn || got.TokensOut != want.TokensOut {
			t.Errorf("the item's spend %+v; want the sum of every call made, %+v", got, want)
		}
		if r2.Spend != got {
			t.Errorf("Job 2's result says %+v, the record %+v", r2.Spend, got)
		}
	})
	t.Run("killed without a signal: report keeps the spend its log holds", func(t *testing.T) {
		// A hard kill (OOM, a lost runner): the Job writes no last mark, and
		// the calls it made since its round's mark are only in its log's
		// spend lines. Report after the stage job reads them back.
		w := newWorld(t)
		bad := "## 1. Hello\n\n- [ ] 1.1 Implement Hello\n"
		j1 := w.newJob(
			conv("planner round 1: a plan the gates refuse", "Write the plan for issue",
				planFile("proposal.md", proposal), planFile("tasks.md", bad), planFile("specs/greetings/spec.md", spec), finish("wrote it")),
			conv("planner round 2: killed on its third call", "Revise the plan for issue",
				read("greet.go"), read("README.md"), finish("x")))
		runID := w.fake.AddRun(githubfake.Run{WorkflowFile: "roadmap-caller.yml", HeadBranch: "main", Event: "issues", Status: "completed", Conclusion: "failure"})
		j1.opts.RunID = runID
		revisions := 0
		j1.model.Before = func(n int, req agent.ModelRequest) {
			if strings.Contains(req.Messages[1].Content, "Revise the plan") {
				if revisions++; revisions == 3 {
					runtime.Goexit() // the process is gone: no last mark, no output
				}
			}
		}
		done := make(chan struct{})
		go func() { defer close(done); j1.run(context.Background()) }()
		<-done
		if _, ok := j1.outputs["result"]; ok {
			t.Fatal("the killed Job wrote a result")
		}
		c1, in1, out1 := spendOf(t, j1)
		if sp, _ := w.record().Spend(); c1 != 7 || sp.ModelCalls != 4 {
			t.Fatalf("Job 1 booked %d calls and the record counts %d; want 7 booked (6 made, the 7th killed before it was sent), the 4 of round 1 marked", c1, sp.ModelCalls)
		}
		log := j1.log.String() + "##[error]Process completed with exit code 137.\n"
		if _, err := w.fake.AddJob(runID, githubfake.Job{Name: "roadmap / stage", Conclusion: "failure", Log: log}); err != nil {
			t.Fatal(err)
		}
		masker := redact.New(redact.Config{Secrets: []string{token}})
		out, err := report.Run(context.Background(), report.Options{Issue: w.issue, GitHub: j1.opts.GitHub, Phase: report.PhaseStage,
			JobResult: "failure", RunID: runID, Workflow: "roadmap-caller.yml", Ref: "main", Clock: w.clock, Mask: masker.Mask})
		if err != nil {
			t.Fatal(err)
		}
		if out.Action != report.ActionContinue || out.SpendRecovered.ModelCalls != 3 || out.SpendEstimated.ModelCalls != 1 {
			t.Fatalf("report: %s → %s, recovered %+v (%d estimated); want a continuation and the 3 calls past the mark, the killed one at its booking",
				out.Class, out.Action, out.SpendRecovered, out.SpendEstimated.ModelCalls)
		}
		if d := w.fake.Dispatches(); len(d) != 1 || d[0].Inputs["phase"] != "stage" {
			t.Fatalf("dispatches %+v, want one stage continuation", d)
		}
		j2 := w.newJob(
			conv("planner round 2: fixes the plan", "Revise the plan for issue", planFile("tasks.md", tasks), finish("fixed")),
			cleanVerifier("Review the plan for issue"))
		r2 := j2.run(context.Background())
		if r2.Result != stage.ResultStaged || r2.Job != 2 {
			t.Fatalf("Job 2: %s as stage Job %d (%s), want staged as Job 2\n%s", r2.Result, r2.Job, r2.Reason, j2.log.String())
		}
		c2, in2, out2 := spendOf(t, j2)
		want := record.Spend{TokensIn: in1 + in2, TokensOut: out1 + out2, ModelCalls: c1 + c2}
		got, _ := w.record().Spend()
		if got.ModelCalls != want.ModelCalls || got.TokensIn != want.TokensIn || got.TokensOut != want.TokensOut {
			t.Errorf("the item's spend %+v; want the sum of every call made, %+v", got, want)
		}
		if lines, _ := w.record().StageJobs(); len(lines) != 2 || lines[0].Spend.ModelCalls != c1 || lines[1].Result != record.ResultStaged {
			t.Errorf("stage.jobs = %+v; want Job 1 with its %d calls and Job 2 staged", lines, c1)
		}
	})
	t.Run("after a pushed round", func(t *testing.T) {
		w := newWorld(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		j1 := w.newJob(soundPlanner("Write the plan for issue"), cleanVerifier("Review the plan for issue"))
		// Killed in the verifier: round 1 is committed and pushed, its
		// findings are not recorded.
		j1.model.Before = func(n int, req agent.ModelRequest) {
			if strings.Contains(req.Messages[1].Content, "Review the plan") {
				cancel()
			}
		}
		r1 := j1.run(ctx)
		if r1.Result != stage.ResultYielded {
			t.Fatalf("Job 1: %s, want yielded", r1.Result)
		}
		j2 := w.newJob(cleanVerifier("Review the plan for issue"))
		r2 := j2.run(context.Background())
		if r2.Result != stage.ResultStaged || r2.Rounds != 1 {
			t.Fatalf("Job 2: %s after %d rounds (%s), want staged after 1\n%s", r2.Result, r2.Rounds, r2.Reason, j2.log.String())
		}
		for _, req := range j2.model.Requests() {
			if strings.Contains(req.Messages[1].Content, "Write the plan") {
				t.Error("Job 2 paid the planner again for the round Job 1 pushed")
			}
		}
		c1, _, _ := spendOf(t, j1)
		c2, _, _ := spendOf(t, j2)
		if got, _ := w.record().Spend(); got.ModelCalls != c1+c2 {
			t.Errorf("the item's spend counts %d calls; %d were made", got.ModelCalls, c1+c2)
		}
	})
	t.Run("after a recorded round with findings", func(t *testing.T) {
		w := newWorld(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		bad := "## 1. Hello\n\n- [ ] 1.1 Implement Hello\n"
		j1 := w.newJob(
			conv("planner round 1: a plan the gates refuse", "Write the plan for issue",
				planFile("proposal.md", proposal), planFile("tasks.md", bad), planFile("specs/greetings/spec.md", spec), finish("wrote it")),
			conv("planner round 2: never answered", "Revise the plan for issue", finish("x")))
		// Killed when round 2's planner asks the model: round 1 and its
		// findings are recorded.
		j1.model.Before = func(n int, req agent.ModelRequest) {
			if strings.Contains(req.Messages[1].Content, "Revise the plan") {
				cancel()
			}
		}
		if r1 := j1.run(ctx); r1.Result != stage.ResultYielded || r1.Rounds != 1 {
			t.Fatalf("Job 1: %s after %d rounds, want yielded after 1", r1.Result, r1.Rounds)
		}
		j2 := w.newJob(
			conv("planner round 2: fixes the plan", "Revise the plan for issue",
				planFile("tasks.md", tasks), finish("fixed")),
			cleanVerifier("Review the plan for issue"))
		r2 := j2.run(context.Background())
		if r2.Result != stage.ResultStaged || r2.Rounds != 2 {
			t.Fatalf("Job 2: %s after %d rounds (%s), want staged after 2\n%s", r2.Result, r2.Rounds, r2.Reason, j2.log.String())
		}
		first := j2.model.Requests()[0].Messages[1].Content
		if !strings.Contains(first, "Revise the plan") || !strings.Contains(first, "roadmap/verify-command") {
			t.Errorf("Job 2's first call is not round 2 with round 1's findings:\n%s", first)
		}
	})
}

// TestStageFindsItsPRComment: a Job that opened the draft PR and posted the
// findings comment, then lost its staged mark (here the record write fails;
// a kill there is the same), leaves both behind. The next Job finds the PR
// and must update that comment, not post a second one (found by the fault
// suite, docs/reliability.md).
func TestStageFindsItsPRComment(t *testing.T) {
	w := newWorld(t)
	// No acceptance criteria: an INFO finding, so the PR gets a comment.
	if err := w.fake.SetIssueBody(w.issue, "alice", "The greet package is empty: callers need a greeting."); err != nil {
		t.Fatal(err)
	}
	w.fake.AddFault(githubfake.Rule{Method: http.MethodPost, Path: "/repos/acme/widgets/issues/1/comments", Call: 1, Status: 403,
		Body: `{"message":"Resource not accessible by integration"}`})
	j1 := w.newJob(soundPlanner("Write the plan for issue"), cleanVerifier("Review the plan for issue"))
	if r1 := j1.run(context.Background()); r1.Result == stage.ResultStaged || r1.PR == 0 {
		t.Fatalf("Job 1: %s with PR #%d, want the staged mark lost after the PR opened\n%s", r1.Result, r1.PR, j1.log.String())
	}
	j2 := w.newJob(cleanVerifier("Review the plan for issue"))
	r2 := j2.run(context.Background())
	if r2.Result != stage.ResultStaged {
		t.Fatalf("Job 2: %s (%s), want staged\n%s", r2.Result, r2.Reason, j2.log.String())
	}
	if n := len(w.pulls()); n != 1 {
		t.Errorf("%d PRs, want 1", n)
	}
	marked := 0
	for _, c := range w.fake.Comments(r2.PR) {
		if strings.Contains(c.Body, "<!-- roadmap:stage -->") {
			marked++
		}
	}
	if marked != 1 {
		t.Errorf("%d stage comments on PR #%d, want 1", marked, r2.PR)
	}
}
