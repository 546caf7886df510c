package implement_test

import (
	"path"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/record"
)

// TestLogSections: the job log shows each phase as a collapsible section
// (::group:: … ::endgroup::): each task group, the scoped checks, the
// archive and the watch, in order, none left open and none nested.
func TestLogSections(t *testing.T) {
	w := newWorld(t, 2, "")
	j := w.newJob(w.conversations())
	j.opts.PollInterval = time.Minute
	res := j.runWithGreenCI()
	if res.Result != record.ResultReady {
		t.Fatalf("result = %s (%s: %s), want ready\n%s", res.Result, res.Failure, res.Reason, j.log.String())
	}
	var titles []string
	open := false
	for i, line := range strings.Split(j.log.String(), "\n") {
		switch {
		case strings.HasPrefix(line, "::group::"):
			if open {
				t.Errorf("log line %d opens a section inside another: %q", i+1, line)
			}
			open = true
			title := strings.TrimPrefix(line, "::group::")
			if k := strings.LastIndex(title, ": "); k > 0 && strings.HasPrefix(title, "roadmap: group ") {
				title = title[:k] // the group's title is the plan's
			}
			if strings.HasPrefix(title, "roadmap: scoped checks at ") {
				title = "roadmap: scoped checks at"
			}
			titles = append(titles, title)
		case line == "::endgroup::":
			if !open {
				t.Errorf("log line %d closes no section", i+1)
			}
			open = false
		case strings.Contains(line, "::group::") || strings.Contains(line, "::endgroup::"):
			t.Errorf("log line %d holds a section command that is not its own line: %q", i+1, line)
		}
	}
	if open {
		t.Error("the log ends inside a section")
	}
	want := []string{"roadmap: group 1 of 2", "roadmap: group 2 of 2", "roadmap: scoped checks at",
		"roadmap: archive " + path.Base(planDir), "roadmap: watch the PR checks"}
	if diff := cmp.Diff(want, titles); diff != "" {
		t.Errorf("the log's sections (-want +got):\n%s\nlog:\n%s", diff, j.log.String())
	}
}
