package demo

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/job"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/world"
)

// callLatency is what each model call of the concurrency test waits on the
// replay server; benchLatency the benchmark's. The benchmark's is a second,
// the short end of a real provider's call, so the Job's time is its model
// calls' as in life rather than its checks' (each `go test` of the demo's
// plan takes seconds on a small runner).
const (
	callLatency  = 150 * time.Millisecond
	benchLatency = time.Second
)

// groupCall is one chat request the replay server answered: the group whose
// session sent it and when it arrived.
type groupCall struct {
	group int
	at    time.Time
}

var groupOfPrompt = regexp.MustCompile(`task group (\d+) of`)

// planRun is one implement Job on the demo's item, to ready.
type planRun struct {
	res    implement.Result
	calls  []groupCall
	log    string
	world  *World
	marks  []int // the implement.group of each record write, in order
	groups []int // the Roadmap-Group trailers of the branch, oldest first
}

// runDemoPlan runs one implement Job on the demo's staged item with
// parallel groups on or off. named replaces the plan's tasks.md with the
// demo's plan with its files named (testdata/demo/tasks-named.md). The
// configuration is the shipped default under `isolation: none` (no review,
// no test strength), so the Job's time is its groups' model calls and
// checks; with no CI on the fake, the Job is ready without CI at once.
func runDemoPlan(tb testing.TB, parallel, named bool, latency time.Duration) planRun {
	tb.Helper()
	ctx := context.Background()
	var more func(files map[string]string, fixtures string) error
	if named {
		tasks, err := sample.ReadFile(goItem.Root + "/tasks-named.md")
		if err != nil {
			tb.Fatal(err)
		}
		more = func(files map[string]string, _ string) error {
			files[PlanDir+"/tasks.md"] = string(tasks)
			return nil
		}
	}
	w, err := NewSampleWorld(ctx, tb.TempDir(), latency, goItem, true, more)
	if err != nil {
		tb.Fatal(err)
	}
	defer w.Close()
	var mu sync.Mutex
	var calls []groupCall
	w.OnModelCall(func(first string, _ int) {
		m := groupOfPrompt.FindStringSubmatch(first)
		if m == nil {
			return
		}
		n, _ := strconv.Atoi(m[1])
		mu.Lock()
		calls = append(calls, groupCall{group: n, at: time.Now()})
		mu.Unlock()
	})
	ws, err := w.Workspace("job-1")
	if err != nil {
		tb.Fatal(err)
	}
	var log bytes.Buffer
	s := w.Setup(implement.Phase(), ws, "")
	s.Log = &log
	s.Config.Implement.ParallelGroups = parallel
	s.Config.Implement.ReadyWithoutCI = true
	k, err := job.Open(ctx, s)
	if err != nil {
		tb.Fatal(err)
	}
	defer k.Close()
	res, err := k.Implement(ctx, job.ImplementRun{NoChecksGrace: time.Millisecond})
	if err != nil {
		tb.Fatalf("implement: %v\n%s", err, log.String())
	}
	mu.Lock()
	defer mu.Unlock()
	run := planRun{res: res, calls: calls, world: w, log: log.String()}
	for _, r := range w.Fake.Requests() {
		if strings.Contains(r.Body, "roadmap:record") && strings.HasPrefix(r.Endpoint, "PATCH") {
			if g, ok := groupOf(r.Body); ok && (len(run.marks) == 0 || run.marks[len(run.marks)-1] != g) {
				run.marks = append(run.marks, g)
			}
		}
	}
	out, err := world.Git(w.GitEnv(), w.Remote, "log", "--reverse", "--format=%(trailers:key=Roadmap-Group,valueonly)", "main.."+w.Branch())
	if err != nil {
		tb.Fatal(err)
	}
	for _, f := range strings.Fields(out) {
		n, _ := strconv.Atoi(f)
		run.groups = append(run.groups, n)
	}
	return run
}

func groupOf(body string) (int, bool) {
	i := strings.Index(body, "<!-- roadmap:record v1")
	if i < 0 {
		return 0, false
	}
	r, err := record.Parse(body[i:])
	if err != nil {
		return 0, false
	}
	return r.Group()
}

// TestParallelGroupsDemo runs the demo's plan with its files named twice,
// parallel groups off and on. On, group 3 (README.md) runs beside group 2
// (the root package): their model calls overlap in time; the branch still
// has the groups' commits in plan order, and the record's group marks go
// up as in the sequential run.
func TestParallelGroupsDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("plays the demo's plan twice, sequential and parallel (make test runs it)")
	}
	seq := runDemoPlan(t, false, true, callLatency)
	par := runDemoPlan(t, true, true, callLatency)
	for name, r := range map[string]planRun{"sequential": seq, "parallel": par} {
		if r.res.Result != record.ResultReady {
			t.Fatalf("%s: result %s (%s: %s), want ready\n%s", name, r.res.Result, r.res.Failure, r.res.Reason, r.log)
		}
		if fmt.Sprint(r.groups) != "[1 2 3]" {
			t.Errorf("%s: the branch's group commits = %v, want [1 2 3] (plan order)", name, r.groups)
		}
	}
	if fmt.Sprint(par.marks) != fmt.Sprint(seq.marks) {
		t.Errorf("the record's group marks: parallel %v, sequential %v; want the same", par.marks, seq.marks)
	}
	if !overlap(par.calls, 2, 3, callLatency) {
		t.Errorf("parallel: the model calls of groups 2 and 3 do not overlap: %v\n%s", par.calls, par.log)
	}
	if overlap(seq.calls, 2, 3, callLatency) {
		t.Errorf("sequential: the model calls of groups 2 and 3 overlap: %v", seq.calls)
	}
	if !strings.Contains(par.log, "groups 2, 3 run at once") {
		t.Errorf("parallel: the log does not say groups 2 and 3 ran at once:\n%s", par.log)
	}
}

// overlap reports whether the model calls of groups a and b overlap in
// time: each group's span runs from its first call's arrival to its last
// call's answer (each call waits latency on the server), and the two spans
// intersect.
func overlap(calls []groupCall, a, b int, latency time.Duration) bool {
	span := func(g int) (first, last time.Time) {
		for _, c := range calls {
			if c.group != g {
				continue
			}
			if first.IsZero() || c.at.Before(first) {
				first = c.at
			}
			if c.at.After(last) {
				last = c.at
			}
		}
		return first, last.Add(latency)
	}
	fa, la := span(a)
	fb, lb := span(b)
	if fa.IsZero() || fb.IsZero() {
		return false
	}
	return fb.Before(la) && fa.Before(lb)
}

// BenchmarkParallelGroups reports the wall time of one implement Job on the
// demo's item, each model call taking benchLatency on the replay server,
// with parallel groups off and on: for the demo's plan as shipped (its
// groups 1 and 2 name no file, so every group runs alone and the two times
// are the same but for noise) and for the demo's plan with its files named
// (group 3 runs beside group 2, so its two model calls are saved).
func BenchmarkParallelGroups(b *testing.B) {
	for _, plan := range []struct {
		name  string
		named bool
	}{{"shipped", false}, {"named", true}} {
		for _, mode := range []struct {
			name     string
			parallel bool
		}{{"sequential", false}, {"parallel", true}} {
			b.Run(plan.name+"/"+mode.name, func(b *testing.B) {
				calls, beside := 0, 0
				for i := 0; i < b.N; i++ {
					r := runDemoPlan(b, mode.parallel, plan.named, benchLatency)
					if r.res.Result != record.ResultReady {
						b.Fatalf("result %s (%s: %s), want ready\n%s", r.res.Result, r.res.Failure, r.res.Reason, r.log)
					}
					calls += len(r.calls)
					beside += inFlight(r.calls, benchLatency)
				}
				b.ReportMetric(float64(calls)/float64(b.N), "model-calls/op")
				b.ReportMetric(float64(beside)/float64(b.N), "calls-beside-another-group/op")
			})
		}
	}
}

// inFlight counts the calls that arrived while another group's call was in
// flight: the calls parallel groups took off the Job's time.
func inFlight(calls []groupCall, latency time.Duration) int {
	n := 0
	for i, c := range calls {
		for j, d := range calls {
			if i != j && d.group != c.group && !c.at.Before(d.at) && c.at.Before(d.at.Add(latency)) {
				n++
				break
			}
		}
	}
	return n
}
