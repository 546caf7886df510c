package githubfake

import (
	"fmt"
	"io"
	"net/http"
	"testing"
)

// TestJobLogWhileRunning holds the fake to what GitHub does with a job that
// is still running: its REST log is a 404 however much the runner has
// printed, its jobs list answers conditional reads with a free 304 until
// the job changes, and the whole log is served (302 to a blob) once the job
// completes.
func TestJobLogWhileRunning(t *testing.T) {
	h := newHarness(t, Options{})
	run := h.f.AddRun(Run{WorkflowFile: "roadmap-implement.yml", Status: "in_progress"})
	id, err := h.f.AddJob(run, Job{Name: "implement", Status: "in_progress"})
	if err != nil {
		t.Fatal(err)
	}
	logs := fmt.Sprintf("/repos/acme/widgets/actions/jobs/%d/logs", id)
	jobs := fmt.Sprintf("/repos/acme/widgets/actions/runs/%d/jobs", run)

	resp, _ := h.do(t, "GET", jobs, "")
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != 200 || etag == "" {
		t.Fatalf("jobs list: %d, ETag %q", resp.StatusCode, etag)
	}
	for _, line := range []string{"roadmap: group 1 of 2\n", "roadmap::spend {\"job\":1}\n"} {
		if err := h.f.AppendJobLog(id, line); err != nil {
			t.Fatal(err)
		}
		if resp, _ := h.do(t, "GET", logs, ""); resp.StatusCode != 404 || resp.Header.Get("ETag") != "" {
			t.Errorf("log of a running job: %d ETag %q, want 404 without an ETag", resp.StatusCode, resp.Header.Get("ETag"))
		}
		if resp, _ := h.do(t, "GET", jobs, "", "If-None-Match", etag); resp.StatusCode != 304 {
			t.Errorf("jobs list with nothing changed: %d, want 304", resp.StatusCode)
		}
	}

	if err := h.f.SetJobStatus(id, "completed", ""); err == nil {
		t.Error("SetJobStatus completed without a conclusion: no error")
	}
	if err := h.f.SetJobStatus(id, "completed", "success"); err != nil {
		t.Fatal(err)
	}
	resp, data := h.do(t, "GET", jobs, "", "If-None-Match", etag)
	if resp.StatusCode != 200 {
		t.Fatalf("jobs list after the job completed: %d, want 200", resp.StatusCode)
	}
	got := decode[struct {
		Jobs []struct{ Status, Conclusion string }
	}](t, data)
	if len(got.Jobs) != 1 || got.Jobs[0].Status != "completed" || got.Jobs[0].Conclusion != "success" {
		t.Errorf("jobs list: %s", data)
	}

	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest("GET", h.srv.URL+logs, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	r2, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.StatusCode != 302 {
		t.Fatalf("log of a completed job: %d, want 302", r2.StatusCode)
	}
	blob, err := http.Get(r2.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(blob.Body)
	blob.Body.Close()
	if want := "roadmap: group 1 of 2\nroadmap::spend {\"job\":1}\n"; string(body) != want {
		t.Errorf("log: %q, want %q", body, want)
	}
}
