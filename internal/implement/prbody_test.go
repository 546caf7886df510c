package implement_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// TestPRBodyKeptTrue: the PR's body says what the PR is now. After a Job
// that stopped in group 2 it closes the issue, says the item stopped and
// ticks group 1 only; after the Job that marks it ready it says ready and
// ticks every task, and never again that it holds only the plan. It costs
// one request for the Job that stopped and none for the ready one (the
// body rides in its mark-ready request), none per group.
//
// The same two Jobs show issue 17's gap 9 (it was
// TestSpendLinesNumberCallsPerJob, two Jobs of the same shape): spend lines
// number the calls of their Job from 1, as report reads them against the
// Job's line in implement.jobs to find a killed Job's unmarked spend.
func TestPRBodyKeptTrue(t *testing.T) {
	w := newWorld(t, 2, "")
	convs := w.conversations()
	// Job 1 passes group 1 and stops in group 2 (its step never writes the file).
	first := w.newJob([]*llm.Conversation{convs[0], conv(t, "group-2", 2, finish)})
	first.opts.RepairRounds = 1
	res := first.run()
	if res.Result != record.ResultStopped || res.Group != 1 {
		t.Fatalf("Job 1 ended %s at group %d, want a stop in group 2 after group 1\n%s", res.Result, res.Group, first.log.String())
	}
	if res.PR == 0 {
		// A Job that stopped before the watch opens no PR: open it as
		// stage does, holding the plan.
		t.Fatalf("Job 1 opened no PR: %+v", res)
	}
	body := func() string {
		t.Helper()
		is, ok := w.fake.Issue(res.PR)
		if !ok {
			t.Fatalf("no PR #%d", res.PR)
		}
		return is.Body
	}
	b := body()
	for _, want := range []string{
		fmt.Sprintf("Closes #%d.", w.issue),
		"**State:** Draft: " + string(res.Result),
		"- [x] 1.1 Write greeting-1.txt",
		"- [ ] 2.1 Write greeting-2.txt",
		"**1. Greeting 1** (1 of 1 done)",
	} {
		if !strings.Contains(b, want) {
			t.Errorf("after Job 1 the PR body lacks %q:\n%s", want, b)
		}
	}
	patches := func() int {
		n := 0
		for _, r := range w.fake.Requests() {
			if r.Endpoint == "PATCH /repos/{owner}/{repo}/pulls/{pull_number}" {
				n++
			}
		}
		return n
	}
	if got := patches(); got > 1 {
		t.Errorf("Job 1 wrote the PR %d times, want at most once (none per group)", got)
	}

	second := w.newJob(convs)
	res2 := second.runWithGreenCI()
	if res2.Result != record.ResultReady {
		t.Fatalf("Job 2 ended %s (%s), want ready\n%s", res2.Result, res2.Reason, second.log.String())
	}
	b = body()
	for _, want := range []string{
		fmt.Sprintf("Closes #%d.", w.issue),
		"**State:** Ready for review",
		"- [x] 1.1 ", "- [x] 2.1 ",
	} {
		if !strings.Contains(b, want) {
			t.Errorf("after the ready Job the PR body lacks %q:\n%s", want, b)
		}
	}
	for _, stale := range []string{"- [ ]", "Draft:", "holds only the plan"} {
		if strings.Contains(b, stale) {
			t.Errorf("after the ready Job the PR body still says %q:\n%s", stale, b)
		}
	}
	if is, _ := w.fake.Issue(res.PR); is.Pull.Draft {
		t.Error("the PR is still a draft")
	}
	if got := patches(); got > 1 {
		t.Errorf("the ready Job wrote the PR body with a request of its own (%d PR writes in all), want it in the mark-ready request", got)
	}

	t.Run("spend lines number the calls of their Job", func(t *testing.T) {
		log, err := trace.ParseSpendLines(strings.NewReader(second.log.String()))
		if err != nil {
			t.Fatal(err)
		}
		var calls []int
		for _, e := range log.Entries {
			if e.Job != 2 {
				t.Errorf("Job 2's log has a spend line of Job %d", e.Job)
			}
			calls = append(calls, e.Call)
		}
		jobs, _ := w.record().Jobs()
		var marked int
		for _, jo := range jobs {
			if jo.Job == 2 {
				marked = jo.Spend.ModelCalls
			}
		}
		if len(calls) == 0 || marked != len(calls) {
			t.Fatalf("Job 2: %d spend lines, %d calls in its implement.jobs line; want equal and not 0", len(calls), marked)
		}
		for i, c := range calls {
			if c != i+1 {
				t.Errorf("Job 2's spend line %d numbers call %d, want %d: report would count marked calls again", i+1, c, i+1)
			}
		}
	})
}
