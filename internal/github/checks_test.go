package github

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
)

func TestCreateStatus(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	long := "checks: " + string(make([]rune, 0)) + stringsRepeat("é", 200)
	if err := e.c.CreateStatus(ctx, sha1, "roadmap/checks", "failure", long, "https://example.com/run/1"); err != nil {
		t.Fatalf("CreateStatus: %v", err)
	}
	got := e.fake.Statuses(sha1)
	if len(got) != 1 {
		t.Fatalf("statuses: %+v", got)
	}
	s := got[0]
	if s.Context != "roadmap/checks" || s.State != "failure" || s.TargetURL != "https://example.com/run/1" {
		t.Errorf("status %+v", s)
	}
	if n := len([]rune(s.Description)); n != 140 {
		t.Errorf("description is %d characters, want cut to 140", n)
	}
	if err := e.c.CreateStatus(ctx, sha1, "x", "done", "", ""); err == nil {
		t.Error("state done: no error")
	}
}

func stringsRepeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

func TestChecks(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	n := e.fake.CreatePullRequest("roadmap/issue-1", "main", "T", "", true)
	e.fake.SetPRHead(n, sha1)

	sum, err := e.c.Checks(ctx, sha1)
	if err != nil {
		t.Fatalf("Checks: %v", err)
	}
	if sum.State != "pending" || sum.Total != 0 {
		t.Errorf("no checks yet: %+v; want pending with Total 0", sum)
	}

	e.fake.AddStatus(sha1, "ci/lint", "success", "ok")
	e.fake.AddStatus(sha1, "ci/test", "pending", "running")
	run := e.fake.AddCheckRun(sha1, githubfake.CheckRun{Name: "build", Status: "in_progress"})
	vet := e.fake.AddCheckRun(sha1, githubfake.CheckRun{Name: "vet", Status: "completed", Conclusion: "success"})

	// By branch name: the fake resolves it through the pull request's head.
	sum, err = e.c.Checks(ctx, "roadmap/issue-1")
	if err != nil {
		t.Fatalf("Checks: %v", err)
	}
	want := CheckSummary{Ref: "roadmap/issue-1", SHA: sha1, State: "pending", Total: 4, Pending: 2, Succeeded: 2,
		Checks: []Check{
			{Name: "ci/lint", Kind: "status", State: "success", Detail: "success", Description: "ok"},
			{Name: "ci/test", Kind: "status", State: "pending", Detail: "pending", Description: "running"},
			{Name: "build", Kind: "check_run", State: "pending", Detail: "in_progress", ID: run, App: ActionsApp},
			{Name: "vet", Kind: "check_run", State: "success", Detail: "completed/success", ID: vet, App: ActionsApp},
		}}
	if diff := cmp.Diff(want, sum, cmpopts.IgnoreFields(Check{}, "URL")); diff != "" {
		t.Errorf("Checks (-want +got):\n%s", diff)
	}

	// Polling an unchanged ref is free.
	before := e.c.Requests()
	if _, err := e.c.Checks(ctx, "roadmap/issue-1"); err != nil {
		t.Fatal(err)
	}
	if spent := e.c.Requests().Sub(before); spent.Counted() != 0 || spent.NotModified != 2 {
		t.Errorf("unchanged poll spent %+v; want two free 304s", spent)
	}

	e.fake.SetCheckRun(run, "completed", "timed_out")
	sum, err = e.c.Checks(ctx, sha1)
	if err != nil || sum.State != "failure" || sum.Failed != 1 {
		t.Errorf("after a timed-out run: %+v, %v; want failure with 1 failed", sum, err)
	}
}
