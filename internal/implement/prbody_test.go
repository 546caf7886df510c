package implement_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/record"
)

// TestPRBodyKeptTrue: the PR's body says what the PR is now. After a Job
// that stopped in group 2 it closes the issue, says the item stopped and
// ticks group 1 only; after the Job that marks it ready it says ready and
// ticks every task, and never again that it holds only the plan. It costs
// one request for the Job that stopped and none for the ready one (the
// body rides in its mark-ready request), none per group.
func TestPRBodyKeptTrue(t *testing.T) {
	w := newWorld(t, 2, "")
	convs := w.conversations()
	first := w.newJob(convs[:1]) // the model answers group 1 only
	first.opts.WatchTimeout = time.Minute
	res := first.runWithCIRunning()
	if res.Result == record.ResultReady || res.Group != 1 {
		t.Fatalf("Job 1 ended %s at group %d, want a stop or yield after group 1\n%s", res.Result, res.Group, first.log.String())
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
}
