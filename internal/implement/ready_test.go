package implement_test

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/trace"
	theworld "github.com/roadmap-dev/roadmap/internal/world"
)

// TestReadyJob is one Job that takes a fresh item of two groups to ready,
// wired as the implement verb wires it (traceJob), and what only such a
// whole Job shows, each concern a subtest on the same run:
//
//   - its typed result, in the result, the outputs and the record's last
//     write;
//   - its log's sections, one per phase, in the life's order;
//   - the PR checks it watches are not roadmap's own statuses: the head
//     carries roadmap/implement's failure from an earlier Job, and the
//     PR's CI passes;
//   - the approved plan is not the agent's: in group 1 the model weakens
//     group 2's verify command, ticks every task, rewrites the proposal
//     and adds a spec; the runner undoes it, ticks group 1 alone and says
//     so, and group 2 is still held to its own verify command;
//   - its trace: the JSONL artifact and the record's bounded copy, every
//     event type that occurred, in the life's order, with their fields (the
//     first model call is refused once with a 429 and retried).
//
// These were five Jobs, one per concern; none of them changes what the
// others look at.
func TestReadyJob(t *testing.T) {
	w := newWorld(t, 2, "")
	original := theworld.SampleRepo(2)[planDir+"/tasks.md"]
	weakened := strings.ReplaceAll(strings.ReplaceAll(original, "- [ ]", "- [x]"), "`grep -q \"hello 2\" greeting-2.txt`", "`true`")
	convs := w.conversations()
	// Group 1's first call forges the plan; then the group writes its file
	// and finishes, as the sample's conversation does.
	forge := llm.Turn{Response: llm.Response{ToolCalls: []llm.FixtureToolCall{
		{Name: "write_file", Arguments: llm.Arguments(jsonArgs(t, map[string]string{"path": planDir + "/tasks.md", "content": weakened}))},
		{Name: "write_file", Arguments: llm.Arguments(jsonArgs(t, map[string]string{"path": planDir + "/proposal.md", "content": "# Nothing to do\n"}))},
		{Name: "write_file", Arguments: llm.Arguments(jsonArgs(t, map[string]string{"path": planDir + "/specs/x/spec.md", "content": "## ADDED Requirements\n"}))},
	}, Usage: llm.FixtureUsage{TokensIn: 1000, TokensOut: 100}}}
	convs[0].Turns = append([]llm.Turn{forge}, convs[0].Turns...)
	// The first model call is refused once with a 429 asking for a second's
	// wait: the provider retries, and the retry is traced.
	convs[0].Turns[0].Errors = []llm.InjectedError{{Status: 429, RetryAfter: "1"}}
	tj := traceJob(t, w.newJob(convs), convs, redact.New(redact.Config{Secrets: []string{token}}))
	tj.opts.PollInterval = time.Minute
	// A restarted item: the head carries roadmap's own failing status from
	// an earlier Job, and the PR's CI passes.
	tj.opts.Clock = ciClock{ManualClock: w.clock, w: w, state: "success", own: "roadmap/implement"}
	res := tj.run()
	if res.Result != record.ResultReady {
		t.Fatalf("Job ended %s (%s: %s), want ready (roadmap's own status read as a PR check would fail it)\n%s",
			res.Result, res.Failure, res.Reason, tj.log.String())
	}

	t.Run("typed result", func(t *testing.T) {
		if got := tj.outputs["result"]; got != "ready" {
			t.Errorf("output result = %q, want ready", got)
		}
		if got, _ := w.record().Result(); got != record.ResultReady {
			t.Errorf("record result = %q, want ready", got)
		}
		lastPatchHasResult(t, w, record.ResultReady)
	})

	t.Run("log sections", func(t *testing.T) {
		// Each phase is a collapsible section (::group:: … ::endgroup::):
		// each task group, the scoped checks, the archive and the watch, in
		// order, none left open and none nested.
		var titles []string
		open := false
		for i, line := range strings.Split(tj.log.String(), "\n") {
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
			t.Errorf("the log's sections (-want +got):\n%s\nlog:\n%s", diff, tj.log.String())
		}
	})

	t.Run("the plan is immutable to the agent", func(t *testing.T) {
		head := w.base.RemoteHead(w.base.Branch())
		tasks := run(t, w.remote, "git", "show", head+":"+archivedTasks(t, w, head))
		want := strings.ReplaceAll(original, "- [ ]", "- [x]")
		if strings.TrimSpace(tasks) != strings.TrimSpace(want) {
			t.Errorf("tasks.md on the branch is not the approved plan with the runner's ticks:\n%s\nwant:\n%s", tasks, want)
		}
		first := run(t, w.remote, "git", "log", "--format=%H", "--reverse", "main.."+head)
		group1 := strings.Fields(first)[0]
		if got := run(t, w.remote, "git", "show", group1+":"+planDir+"/tasks.md"); strings.Contains(got, "`true`") ||
			strings.Count(got, "- [x]") != 1 {
			t.Errorf("group 1's commit carries the agent's plan change (want group 1 ticked alone):\n%s", got)
		}
		if files := run(t, w.remote, "git", "show", "--name-only", "--format=", group1); strings.Contains(files, "proposal.md") || strings.Contains(files, "specs/x") {
			t.Errorf("group 1's commit carries the agent's changes to the plan: %s", files)
		}
		// Group 2 was held to its own verify command, not the forged `true`.
		var verified bool
		for _, c := range tj.checks.cmds {
			verified = verified || strings.Contains(c, "greeting-2.txt")
		}
		if !verified {
			t.Errorf("group 2's verify command never ran: %q", tj.checks.cmds)
		}
		if !strings.Contains(tj.log.String(), "the agent changed the approved plan") {
			t.Errorf("the log does not say the plan change was refused:\n%s", tj.log.String())
		}
		c, _ := w.recordComment()
		if !strings.Contains(c.Body, "changes were refused and undone") {
			t.Errorf("the record comment does not note the refusal:\n%s", c.Body)
		}
	})

	t.Run("trace", func(t *testing.T) { traceWritten(t, w, tj) })
}

// traceWritten checks the trace of TestReadyJob's Job: the artifact is what
// was recorded, and it and the record's copy hold the Job's life.
func traceWritten(t *testing.T, w *world, tj *tracedJob) {
	events := tj.artifact(t)
	if diff := cmp.Diff(tj.rec.Events(), events); diff != "" {
		t.Fatalf("the artifact differs from the events recorded (-recorded +artifact):\n%s", diff)
	}

	t.Run("every type that occurred", func(t *testing.T) {
		seen := map[trace.Type]int{}
		for _, e := range events {
			seen[e.Type]++
		}
		for _, typ := range []trace.Type{trace.TypeModelCall, trace.TypeToolCall, trace.TypeCheckRun, trace.TypeRetry, trace.TypePhase} {
			if seen[typ] == 0 {
				t.Errorf("no %s event in the artifact", typ)
			}
		}
		// Group 1: the forging call (three writes), its write and its
		// finish; group 2: its write and its finish. One tool call event
		// per call the model made.
		if seen[trace.TypeModelCall] != 5 || seen[trace.TypeToolCall] != 7 {
			t.Errorf("%d model calls and %d tool calls, want 5 and 7", seen[trace.TypeModelCall], seen[trace.TypeToolCall])
		}
	})

	t.Run("in order", func(t *testing.T) {
		for i, e := range events {
			if e.Seq != i+1 {
				t.Errorf("event %d has seq %d, want %d", i+1, e.Seq, i+1)
			}
			if e.Job != 1 {
				t.Errorf("event %d has job %d, want 1", e.Seq, e.Job)
			}
			if e.Time.IsZero() || i > 0 && e.Time.Before(events[i-1].Time) {
				t.Errorf("event %d at %s: times must be set and never go back", e.Seq, e.Time)
			}
		}
		type phase struct {
			Phase trace.Phase
			Group int
		}
		var got []phase
		for _, e := range events {
			if e.Type == trace.TypePhase {
				got = append(got, phase{e.Phase, e.Group})
			}
		}
		// The life of a Job (DESIGN §2): per group agent step, checks (ended
		// inside the agent's span, so recorded first), commit, push, mark;
		// then the scoped checks at the head, the watch, ready.
		want := []phase{{trace.PhaseJobStarted, 0}}
		for g := 1; g <= 2; g++ {
			want = append(want, phase{trace.PhaseGroupStarted, g}, phase{trace.PhaseChecks, g}, phase{trace.PhaseAgent, g},
				phase{trace.PhaseCommit, g}, phase{trace.PhasePush, g}, phase{trace.PhaseGroupPassed, g})
		}
		// After the scoped checks, the OpenSpec archive's commit is pushed.
		want = append(want, phase{trace.PhaseChecks, 0}, phase{trace.PhasePush, 0}, phase{trace.PhaseWatch, 0}, phase{trace.PhaseReady, 0})
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("phases out of the life-cycle order (-want +got):\n%s", diff)
		}
	})

	t.Run("fields", func(t *testing.T) {
		firstCall := true
		for _, e := range events {
			switch e.Type {
			case trace.TypeModelCall:
				// The fixture's usage at the configured price: 1,000 in at $1
				// and 100 out at $10 per million tokens.
				if e.Model != "replay-model" || e.TokensIn != 1000 || e.TokensOut != 100 || e.Outcome != "ok" || e.Group == 0 ||
					fmt.Sprintf("%.6f", e.USD) != "0.002000" {
					t.Errorf("model_call %d = %+v, want replay-model, 1000 in, 100 out, $0.002, ok, in a group", e.Seq, e)
				}
				// The call that waited out the 429 took the second it waited.
				if firstCall && e.Duration != time.Second {
					t.Errorf("the retried model call took %s, want 1s", e.Duration)
				}
				firstCall = false
			case trace.TypeToolCall:
				if (e.Tool != "write_file" && e.Tool != "finish") || !digestRE.MatchString(e.ArgsDigest) || e.ResultClass != "ok" || e.Group == 0 {
					t.Errorf("tool_call %d = %+v, want write_file or finish, a 16-digit digest, ok, in a group", e.Seq, e)
				}
			case trace.TypeCheckRun:
				// Each group's verify command at its group, and both again in
				// the scoped checks at the head (group 0).
				if !strings.HasPrefix(e.Command, `grep -q "hello `) || e.Step == "" || e.ExitCode != 0 {
					t.Errorf("check_run %d = %+v, want a verify command, its step and exit 0", e.Seq, e)
				}
			case trace.TypeRetry:
				if !strings.Contains(e.Reason, "429") || e.Attempt != 1 || e.Wait != time.Second {
					t.Errorf("retry %d = %+v, want the 429, attempt 1, a wait of 1s", e.Seq, e)
				}
			case trace.TypePhase:
				switch e.Phase {
				case trace.PhaseGroupStarted:
					if e.Step == "" {
						t.Errorf("group_started %d names no step", e.Seq)
					}
				case trace.PhaseAgent:
					if e.Outcome != "finished" || e.Attempt != 1 {
						t.Errorf("agent span %d = %+v, want finished after 1 round", e.Seq, e)
					}
				case trace.PhaseWatch:
					// One poll interval passed before CI reported green.
					if e.Duration < 30*time.Second {
						t.Errorf("watch span %d took %s, want at least the 30s poll interval", e.Seq, e.Duration)
					}
				}
			}
		}
	})

	t.Run("the record keeps the newest events", func(t *testing.T) {
		rc := recordTrace(t, w.record())
		if rc.Dropped+len(rc.Events) != len(events) {
			t.Fatalf("record copy: %d dropped + %d kept, want the %d events of the run", rc.Dropped, len(rc.Events), len(events))
		}
		if diff := cmp.Diff(recordForm(events[rc.Dropped:]), rc.Events); diff != "" {
			t.Errorf("implement.trace differs from the newest events of the run (-artifact +record):\n%s", diff)
		}
	})
}

// archivedTasks is the path of tasks.md at head: the change is archived in
// the last commit.
func archivedTasks(t *testing.T, w *world, head string) string {
	t.Helper()
	for _, p := range strings.Fields(run(t, w.remote, "git", "ls-tree", "-r", "--name-only", head)) {
		if strings.HasSuffix(p, "add-greetings/tasks.md") {
			return p
		}
	}
	t.Fatal("no tasks.md at head")
	return ""
}

func jsonArgs(t *testing.T, v map[string]string) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
