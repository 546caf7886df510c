package implement_test

import (
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
	theworld "github.com/roadmap-dev/roadmap/internal/world"
)

// parCheck is a Go test in the sample repository that passes only when the
// process runs as implement.parallelism 1 says: GOMAXPROCS 1, and go test's
// -p 1 (GOFLAGS), so at most one package builds or runs at a time.
const parCheck = `package widgets

import (
	"os"
	"runtime"
	"testing"
)

func TestParallelism(t *testing.T) {
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("GOMAXPROCS %d, want 1", n)
	}
	if f := os.Getenv("GOFLAGS"); f != "-p=1" {
		t.Fatalf("GOFLAGS %q, want -p=1", f)
	}
}
`

// TestOOMLessParallelism (implement's half; report's is in internal/report):
// a Job whose record holds implement.parallelism, set by report after an
// oom, runs its scoped checks with that parallelism, and says so.
func TestOOMLessParallelism(t *testing.T) {
	for _, tc := range []struct {
		name string
		rec  string
		pass bool
	}{
		{"after an oom the checks run with parallelism 1", "implement.parallelism: 1\n", true},
		{"without it they run with the machine's own", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := theworld.SampleRepo(1)
			files["go.mod"] = "module example.com/widgets\n\ngo 1.22\n"
			files["par_test.go"] = parCheck
			rc := "**roadmap** · staged\n\n<!-- roadmap:record v1\n" + tc.rec + "stage.plan: " + planDir + "\n-->\n"
			tw, err := theworld.New(theworld.Options{Dir: t.TempDir(), Owner: owner, Repo: repo, Token: token, Start: t0,
				Files: files, Issue: &githubfake.Issue{Title: "Add greetings", Body: "Add greetings.\n\n", Author: "alice"},
				RecordComment: rc, ModelPrice: llm.Price{Input: 1, Output: 10}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(tw.Close)
			w := &world{t: t, base: tw, dir: tw.Dir, remote: tw.Remote, fake: tw.Fake, clock: tw.Clock, issue: tw.Issue, groups: 1}
			j := w.newJob(w.conversations())
			j.opts.WatchTimeout = time.Minute
			j.opts.CheckCommands = []string{"go test -count=1 -run TestParallelism ."}
			res := j.runWithCIRunning()
			log := j.log.String()
			if tc.pass {
				if res.Result != record.ResultYielded || res.Group != 1 {
					t.Fatalf("Job ended %s/%s at group %d (%s), want group 1 passed with the checks at parallelism 1\n%s",
						res.Result, res.Failure, res.Group, res.Reason, log)
				}
				if !strings.Contains(log, "less parallelism") || !strings.Contains(log, "GOMAXPROCS=1 GOFLAGS=-p=1") {
					t.Errorf("the log does not say the checks run with less parallelism:\n%s", log)
				}
				return
			}
			if res.Group != 0 || res.Result == record.ResultReady {
				t.Fatalf("without implement.parallelism the check passed (%s at group %d): it cannot tell", res.Result, res.Group)
			}
		})
	}
}
