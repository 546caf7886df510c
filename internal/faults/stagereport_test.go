package faults

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/report"
)

// stageRuns plays the crash-free run from no plan and sc on it.
func stageRuns(t *testing.T, sc scenario) (base, got *played) {
	t.Helper()
	dir := t.TempDir()
	base, err := play(context.Background(), filepath.Join(dir, "base"), scenario{Name: "crash-free", Expect: expectReady, Stage: true}, false)
	if err != nil {
		t.Fatal(err)
	}
	got, err = play(context.Background(), filepath.Join(dir, "h"), sc, false)
	if err != nil {
		t.Fatal(err)
	}
	return base, got
}

// stageReports are a history's report runs on stage Jobs.
func stageReports(l *life) []reportEnd {
	var out []reportEnd
	for _, r := range l.reps {
		if r.Stage {
			out = append(out, r)
		}
	}
	return out
}

// TestStageReportKeepsKilledSpend: a stage Job killed before its first push
// (the planner's five calls of round 1, no mark) is reported on like an implement Job: report
// reads the calls from its log into the record, dispatches one stage
// continuation, and the next stage Job runs in the dispatched run. The
// record ends holding every call the model server answered. Dropping the
// report's recovery from the final state is caught as spend lost.
func TestStageReportKeepsKilledSpend(t *testing.T) {
	if testing.Short() {
		t.Skip("plays two histories")
	}
	sc := scenario{Name: "stage: kill before push#1", Kind: "stage_crash", Branch: "stage_replan", Expect: expectReady, Stage: true,
		arms: []string{"before push#1"}}
	base, p := stageRuns(t, sc)
	l := p.l
	out := check(l, sc, base.st, p.st)
	if len(out.Violations) != 0 || !out.Recovered || out.SpendLost != 0 {
		t.Fatalf("violations %q, recovered %v, spend lost %d; want none, true, 0\ntrace: %s", out.Violations, out.Recovered, out.SpendLost, strings.Join(l.trace, "; "))
	}
	if p.st.Spend.TokensIn != p.st.Served.TokensIn || p.st.Spend.TokensOut != p.st.Served.TokensOut {
		t.Errorf("record spend %+v, model server answered %+v", p.st.Spend, p.st.Served)
	}

	reps := stageReports(l)
	if len(reps) != 2 {
		t.Fatalf("%d stage report runs, want 2 (one per stage Job): %+v", len(reps), reps)
	}
	first := reps[0].Outcome
	// The killed Job made the five calls of round 1's planner conversation
	// (1,000 in and 100 out each), none of them marked: the verifier runs
	// after the push.
	want := record.Spend{TokensIn: 5000, TokensOut: 500, ModelCalls: 5}
	if first.Job != 1 || first.Class != failure.Killed || first.Action != report.ActionContinue ||
		first.SpendRecovered.TokensIn != want.TokensIn || first.SpendRecovered.TokensOut != want.TokensOut || first.SpendRecovered.ModelCalls != want.ModelCalls {
		t.Errorf("report on the killed stage Job: Job %d, %s → %s, recovered %+v; want Job 1, killed → continue, %+v",
			first.Job, first.Class, first.Action, first.SpendRecovered, want)
	}
	if reps[1].Outcome.Action != report.ActionNone || reps[1].Job != 2 {
		t.Errorf("report on stage Job %d: %s, want stage Job 2: none (staged)", reps[1].Job, reps[1].Outcome.Action)
	}

	ds := l.w.fake.Dispatches()
	if len(ds) != 1 {
		t.Fatalf("%d dispatches, want 1: %+v", len(ds), ds)
	}
	rc, _ := l.w.recordComment()
	wantIn := map[string]any{"issue": fmt.Sprint(l.w.issue), "phase": "stage", "record-comment": fmt.Sprint(rc.ID)}
	if diff := cmp.Diff(wantIn, ds[0].Inputs); diff != "" || ds[0].Workflow != stageWorkflow {
		t.Errorf("dispatch of %s (-want +got inputs):\n%s", ds[0].Workflow, diff)
	}
	if len(l.stages) != 2 || l.stages[1].RunID != ds[0].RunID || first.DispatchedRunID != ds[0].RunID {
		t.Errorf("stage Job 2 ran in run %d; report dispatched run %d (outcome %d)", l.stages[1].RunID, ds[0].RunID, first.DispatchedRunID)
	}
	jobs, _ := mustRecord(t, l).StageJobs()
	if len(jobs) != 2 || jobs[0].Failure != string(failure.Killed) || jobs[0].Spend.ModelCalls != 5 {
		t.Errorf("stage.jobs = %+v, want stage Job 1 killed with its 5 calls, then stage Job 2", jobs)
	}

	// Planted: the state as if report had not read the killed Job's log.
	dropped := p.st
	dropped.Spend.TokensIn -= first.SpendRecovered.TokensIn
	dropped.Spend.TokensOut -= first.SpendRecovered.TokensOut
	dropped.Spend.ModelCalls -= first.SpendRecovered.ModelCalls
	lost := check(l, sc, base.st, dropped)
	if !strings.Contains(strings.Join(lost.Violations, "\n"), "spend lost") || lost.SpendLost != 5500 || lost.Recovered {
		t.Errorf("with the recovery dropped: violations %q, spend lost %d, recovered %v; want spend lost 5500 and no recovery",
			lost.Violations, lost.SpendLost, lost.Recovered)
	}
}

// TestStageReportRerunDispatchesOnce: report on a killed stage Job is itself
// killed before and after its dispatch; its re-run (the run's next attempt)
// sends the dispatch that never landed, or finds the one that did: one
// stage continuation either way. A second dispatch for the same stage Job,
// planted by another writer just after report's, is caught.
func TestStageReportRerunDispatchesOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("plays histories")
	}
	for _, when := range []string{"before", "after"} {
		t.Run(when, func(t *testing.T) {
			sc := scenario{Name: "stage: kill before push#1, then " + when + " dispatch#1", Kind: "stage_crash", Branch: "stage_continue_killed",
				Expect: expectReady, Stage: true, arms: []string{"before push#1", when + " dispatch#1"}}
			base, p := stageRuns(t, sc)
			out := check(p.l, sc, base.st, p.st)
			if len(out.Violations) != 0 || !out.Recovered || out.Duplicates != 0 {
				t.Fatalf("violations %q, recovered %v, duplicates %d\ntrace: %s", out.Violations, out.Recovered, out.Duplicates, strings.Join(p.l.trace, "; "))
			}
			reps := stageReports(p.l)
			if len(reps) != 3 || reps[0].Killed == "" || reps[1].Killed != "" || reps[1].Job != 1 {
				t.Errorf("stage report runs %+v, want report on stage Job 1 killed once and re-run, then stage Job 2's", reps)
			}
			if n := len(p.l.w.fake.Dispatches()); n != 1 {
				t.Errorf("%d dispatches, want 1", n)
			}
		})
	}

	t.Run("a planted second dispatch is caught", func(t *testing.T) {
		sc := scenario{Name: "stage: kill before push#1, another dispatch after report's", Kind: "stage_crash", Branch: "stage_continue_killed",
			Expect: expectReady, Stage: true, arms: []string{"before push#1"}}
		sc.setup = func(l *life) error {
			return l.afterPoint("dispatch#1", func() error {
				gh, err := l.w.client(&http.Transport{DisableKeepAlives: true})
				if err != nil {
					return err
				}
				_, err = gh.DispatchWorkflow(l.ctx, stageWorkflow, "main", map[string]any{"issue": fmt.Sprint(l.w.issue), "phase": "stage"})
				return err
			})
		}
		base, p := stageRuns(t, sc)
		out := check(p.l, sc, base.st, p.st)
		if all := strings.Join(out.Violations, "\n"); !strings.Contains(all, "2 dispatches of stage Job 1") || out.Duplicates != 1 || out.Recovered {
			t.Errorf("violations %q, duplicates %d, recovered %v; want 2 dispatches of stage Job 1 caught", out.Violations, out.Duplicates, out.Recovered)
		}
	})
}

func mustRecord(t *testing.T, l *life) *record.Record {
	t.Helper()
	rec, err := l.w.record()
	if err != nil {
		t.Fatal(err)
	}
	return rec
}
