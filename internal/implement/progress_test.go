package implement_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"

	"github.com/roadmap-dev/roadmap/internal/progress"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// TestProgressChecklist (issue 47, item 4): one Job of a 3-group plan whose
// groups take minutes keeps the PR comment's checklist ticked at each group
// and its now line true, and pays for it at most progress.MaxWrites counted
// requests more than the list and the write the Job's end always made:
// N = 3, one write at the start of group 2 (group 1 ticked: the PR exists
// from group 1's push), one at the start of group 3, one at the scoped
// checks (group 3 ticked). The checked mark comes within a minute of it:
// the watch's now line waits for the end's write.
func TestProgressChecklist(t *testing.T) {
	w := newWorld(t, 3, "")
	before := len(w.fake.Requests())
	j := w.newJob(w.conversations())
	// Each model call takes a minute: a group (two calls) takes two, more
	// than progress.Interval.
	j.model.Before = func(int, agent.ModelRequest) { w.clock.Advance(time.Minute) }
	res := j.runWithGreenCI()
	if res.Result != record.ResultReady || res.PR == 0 {
		t.Fatalf("Job: %s/%s (%s) PR %d, want ready\n%s", res.Result, res.Failure, res.Reason, res.PR, j.log.String())
	}
	const marker = "<!-- roadmap:implement -->"
	var bodies []string
	requests := 0 // the PR comment's counted requests: its list and its writes
	for _, r := range w.fake.Requests()[before:] {
		if r.Status == 304 {
			continue
		}
		switch {
		case r.Endpoint == "GET /repos/{owner}/{repo}/issues/{n}/comments" && strings.Contains(r.Path, fmt.Sprintf("/issues/%d/", res.PR)):
			requests++
		case (r.Endpoint == "POST /repos/{owner}/{repo}/issues/{n}/comments" || r.Endpoint == "PATCH /repos/{owner}/{repo}/issues/comments/{id}") &&
			strings.Contains(r.Body, "roadmap:implement"):
			requests++
			var c struct{ Body string }
			if err := json.Unmarshal([]byte(r.Body), &c); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(c.Body, marker) {
				t.Fatalf("a PR comment write without the marker first:\n%s", c.Body)
			}
			bodies = append(bodies, c.Body)
		}
	}
	steps := []struct {
		ticked []bool
		now    string
	}{
		{[]bool{true, false, false}, "now: implementing group 2 of 3"},
		{[]bool{true, true, false}, "now: implementing group 3 of 3"},
		{[]bool{true, true, true}, "now: running the scoped checks"},
		{[]bool{true, true, true}, "now: ready"},
	}
	if len(bodies) != len(steps) {
		t.Fatalf("%d writes of the PR comment, want %d (3 progress writes and the end's):\n%s", len(bodies), len(steps), strings.Join(bodies, "\n-----\n"))
	}
	for i, s := range steps {
		for g, ticked := range s.ticked {
			line := fmt.Sprintf("- [ ] group %d: ", g+1)
			if ticked {
				line = fmt.Sprintf("- [x] group %d: ", g+1)
			}
			if !strings.Contains(bodies[i], "\n"+line) {
				t.Errorf("write %d lacks %q:\n%s", i+1, line, bodies[i])
			}
		}
		if !strings.Contains(bodies[i], "\n"+s.now) {
			t.Errorf("write %d lacks %q:\n%s", i+1, s.now, bodies[i])
		}
	}
	if got := w.prComment(res.PR); got != bodies[len(bodies)-1] {
		t.Errorf("the PR comment is not the last write:\n%s", got)
	}
	// Before the checklist a Job's PR comment cost its end's list and
	// write (2); the progress adds at most N = progress.MaxWrites.
	const n = progress.MaxWrites
	if requests > 2+n {
		t.Errorf("the PR comment cost %d counted requests in the Job, want at most 2 + N = %d", requests, 2+n)
	}
	t.Logf("the PR comment cost %d counted requests (N = %d over the 2 of the end's write)", requests, n)
}
