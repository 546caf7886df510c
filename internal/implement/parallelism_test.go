package implement_test

import (
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/record"
	theworld "github.com/roadmap-dev/roadmap/internal/world"
)

// parCheck is a check in the sample repository, `make -s par`, that passes
// only when the process runs as implement.parallelism 1 says: GOMAXPROCS 1,
// and go test's -p 1 (GOFLAGS), so at most one package builds or runs at a
// time. What it proves is the environment the check runner gives a check's
// process, which a make rule reads as well as the go test it replaces did,
// without building a test binary.
const parCheck = "par:\n" +
	"\t@test \"$$GOMAXPROCS\" = 1 || { echo \"GOMAXPROCS $$GOMAXPROCS, want 1\"; exit 1; }\n" +
	"\t@test \"$$GOFLAGS\" = -p=1 || { echo \"GOFLAGS $$GOFLAGS, want -p=1\"; exit 1; }\n"

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
			body := "Add greetings.\n\n<!-- roadmap:record v1\n" + tc.rec + "stage.plan: " + planDir + "\n-->\n"
			w := newWorldWith(t, 1, body, func(o *theworld.Options) { o.Files["Makefile"] = parCheck })
			j := w.newJob(w.conversations())
			j.opts.WatchTimeout = time.Minute
			j.opts.CheckCommands = []string{"make -s par"}
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
