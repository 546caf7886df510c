package implement_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// TestNestedRepositoryStopsTheJob: while group 1 works, the model makes
// sub/.git with a clean filter in that repository's own config and commits
// through it. The group's commit is refused and the Job stops as unknown
// (all state kept, a person looks), naming sub/.git; nothing is pushed and
// the filter never runs as roadmap.
func TestNestedRepositoryStopsTheJob(t *testing.T) {
	w := newWorld(t, 2, "")
	j := w.newJob(w.conversations())
	mark := filepath.Join(t.TempDir(), "clean.ran")
	filter := filepath.Join(t.TempDir(), "clean")
	if err := os.WriteFile(filter, []byte("#!/bin/sh\ntouch '"+mark+"'\ncat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	planted := false
	j.model.Before = func(n int, req agent.ModelRequest) {
		if planted || !strings.Contains(req.Messages[1].Content, "task group 1 of") || n < 2 {
			return
		}
		planted = true
		sub := filepath.Join(j.ws, "sub")
		run(t, j.ws, "git", "init", "-q", "sub")
		run(t, sub, "git", "config", "filter.x.clean", filter)
		os.WriteFile(filepath.Join(sub, ".gitattributes"), []byte("* filter=x\n"), 0o644)
		os.WriteFile(filepath.Join(sub, "f.txt"), []byte("nested\n"), 0o644)
		run(t, sub, "git", "add", ".")
		run(t, sub, "git", "commit", "-q", "-m", "nested")
		os.Remove(mark)
	}
	res := j.run()
	if !planted {
		t.Fatal("group 1's second model call never came")
	}
	if res.Result != record.ResultStopped || res.Failure != "unknown" || !strings.Contains(res.Reason, `"sub/.git"`) {
		t.Fatalf("result = %s/%s (%s), want stopped/unknown naming \"sub/.git\"\n%s", res.Result, res.Failure, res.Reason, j.log.String())
	}
	if got, _ := w.record().Failure(); got != "unknown" {
		t.Errorf("record failure = %q, want unknown", got)
	}
	if refs := run(t, w.dir, "git", "--git-dir", w.remote, "for-each-ref", "--format=%(refname)", "refs/heads/roadmap"); refs != "" {
		t.Errorf("the remote got %s: a refused group pushes nothing", refs)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("the nested repository's clean filter ran as roadmap")
	}
}
