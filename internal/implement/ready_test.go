package implement_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/report"
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
//     first model call is refused once with a 429 and retried);
//   - the merged check is free when the head has the base: the base did
//     not move, so the head contains it and its scoped checks were the
//     merged checks: no scratch tree, no check run beyond the groups' and
//     the head's, and the base is recorded as checked (the before tree is
//     wired as the verb wires it).
//
// These were six Jobs, one per concern; none of them changes what the
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
	var dirs []string
	withBeforeTree(tj.job, &dirs)
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

	t.Run("the merged check is free when the head has the base", func(t *testing.T) {
		// Each group's verify command once at the group's end and both
		// once at the head; the before tree of fail-to-pass is the one
		// other tree (the sample groups have no `fails` command, so none).
		if len(dirs) != 0 {
			t.Errorf("trees opened besides the work tree: %q, want none", dirs)
		}
		if len(tj.checks.cmds) != 4 {
			t.Errorf("check commands run: %q, want 4 (each group's, then both at the head)", tj.checks.cmds)
		}
		if mb, _ := w.record().MergedBase(); string(mb) != w.base.RemoteHead("main") {
			t.Errorf("implement.merged_base = %q, want main's tip %s", mb, w.base.RemoteHead("main"))
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

// writer is another writer of the work branch: a clone of the remote that
// commits a new file and pushes with real git.
type writer struct {
	t      *testing.T
	dir    string
	branch string
	n      int
}

func newWriter(t *testing.T, w *world) *writer {
	t.Helper()
	dir := filepath.Join(w.dir, "other-writer")
	run(t, w.dir, "git", "clone", "-q", w.remote, dir)
	branch := fmt.Sprintf("roadmap/%d-add-greetings", w.issue)
	run(t, dir, "git", "checkout", "-q", "-b", branch)
	return &writer{t: t, dir: dir, branch: branch}
}

// commit commits NOTES-<n>.md on top of what the writer has of the branch
// (the remote's, once it exists there) and returns its name.
func (o *writer) commit() string {
	o.t.Helper()
	if out, err := gitOut(o.dir, "ls-remote", "--heads", "origin", o.branch); err == nil && out != "" {
		run(o.t, o.dir, "git", "fetch", "-q", "origin", o.branch)
		run(o.t, o.dir, "git", "reset", "-q", "--hard", "FETCH_HEAD")
	}
	o.n++
	name := fmt.Sprintf("NOTES-%d.md", o.n)
	if err := os.WriteFile(filepath.Join(o.dir, name), []byte("a note from another writer\n"), 0o644); err != nil {
		o.t.Fatal(err)
	}
	run(o.t, o.dir, "git", "add", "-A")
	run(o.t, o.dir, "git", "commit", "-q", "-m", "another writer's note "+name)
	return name
}

// push commits a note and pushes it to the branch.
func (o *writer) push() string {
	o.t.Helper()
	name := o.commit()
	run(o.t, o.dir, "git", "push", "-q", "origin", "HEAD:refs/heads/"+o.branch)
	return name
}

func gitOut(dir string, args ...string) (string, error) {
	out, err := theworld.Git(gitEnv(), dir, args...)
	return strings.TrimSpace(out), err
}

// beforePushes makes the other writer push before each of the Job's first
// n pushes of the work branch: every one of them finds the branch moved.
func beforePushes(j *job, o *writer, n int) *[]string {
	var notes []string
	pushes := 0
	j.opts.Repo.Hook = func(args []string, done bool, err error) {
		if done || len(args) == 0 || args[0] != "push" || git.NotePush(args) {
			return
		}
		if pushes++; pushes <= n {
			notes = append(notes, o.push())
		}
	}
	return &notes
}

// remoteFiles lists the files of the work branch on the remote.
func remoteFiles(t *testing.T, w *world, branch string) string {
	t.Helper()
	out, err := gitOut(w.remote, "ls-tree", "-r", "--name-only", "refs/heads/"+branch)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPushRejectedTwiceIsConflict: a push refused because the branch moved
// on the remote is conflict (DESIGN §4: fetch, rebase, push again), however
// often in a row within a bound and however it is refused: another writer
// pushing before ours (non-fast-forward), twice in a row, or the remote's
// ref moving while ours is in flight ("failed to update ref"). Past the
// bound the Job ends conflict, and report continues the item: it never
// stops as unknown.
func TestPushRejectedTwiceIsConflict(t *testing.T) {
	t.Run("another writer pushes twice before a group push", func(t *testing.T) {
		w := newWorld(t, 1, "")
		o := newWriter(t, w)
		j := w.newJob(w.conversations())
		notes := beforePushes(j, o, 2)
		res := j.runWithGreenCI()
		if res.Result != record.ResultReady {
			t.Fatalf("result = %s/%s (%s), want ready after rebasing twice\n%s", res.Result, res.Failure, res.Reason, j.log.String())
		}
		files := remoteFiles(t, w, o.branch)
		for _, f := range append(*notes, "greeting-1.txt") {
			if !strings.Contains(files, f) {
				t.Errorf("the branch lacks %s: both writers' work must be on it\n%s", f, files)
			}
		}
		if len(*notes) != 2 {
			t.Errorf("the other writer pushed %d times, want 2", len(*notes))
		}
	})

	t.Run("the remote's ref moves while the push is in flight", func(t *testing.T) {
		w := newWorld(t, 1, "")
		o := newWriter(t, w)
		note := o.commit()
		// A pre-receive hook on the remote lets another push land while
		// ours waits for it, once: the remote then cannot move the branch
		// from where our push found it.
		marker := filepath.Join(w.dir, "raced")
		hook := fmt.Sprintf(`#!/bin/sh
grep -q ' refs/heads/' || exit 0 # the item's lease is not the branch's push
if [ ! -e '%[1]s' ]; then
  touch '%[1]s'
  env -i PATH="$PATH" HOME='%[2]s' GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null git -C '%[3]s' push -q origin HEAD:refs/heads/%[4]s >&2 || exit 1
fi
exit 0
`, marker, w.dir, o.dir, o.branch)
		if err := os.WriteFile(filepath.Join(w.remote, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
			t.Fatal(err)
		}
		var refused []string
		j := w.newJob(w.conversations())
		j.opts.Repo.Hook = func(args []string, done bool, err error) {
			if done && len(args) > 0 && args[0] == "push" && err != nil {
				refused = append(refused, err.Error())
			}
		}
		res := j.runWithGreenCI()
		if _, err := os.Stat(marker); err != nil {
			t.Fatal("the race never happened: the hook did not run")
		}
		if res.Result != record.ResultReady {
			t.Fatalf("result = %s/%s (%s), want ready after rebasing onto the push that raced ours\n%s", res.Result, res.Failure, res.Reason, j.log.String())
		}
		if files := remoteFiles(t, w, o.branch); !strings.Contains(files, note) || !strings.Contains(files, "greeting-1.txt") {
			t.Errorf("the branch holds\n%s\nwant both writers' files", files)
		}
		if !strings.Contains(j.log.String(), "failed to update ref") {
			t.Errorf("the log does not show the refused push (the remote's 'failed to update ref'); git said %q\n%s", refused, j.log.String())
		}
	})

	t.Run("past the bound the Job ends conflict and the item continues", func(t *testing.T) {
		w := newWorld(t, 1, "")
		o := newWriter(t, w)
		j := w.newJob(w.conversations())
		beforePushes(j, o, 100)
		res := j.run()
		if res.Failure != string(failure.Conflict) {
			t.Fatalf("result = %s/%s (%s), want the class conflict\n%s", res.Result, res.Failure, res.Reason, j.log.String())
		}
		w.fake.AddWorkflow("roadmap.yml")
		gh, err := w.base.GitHub(nil)
		if err != nil {
			t.Fatal(err)
		}
		out, err := report.Run(context.Background(), report.Options{Issue: w.issue, GitHub: gh, JobResult: "success",
			Result: string(res.Result), Failure: res.Failure, Attempt: res.Attempt, RunID: j.opts.RunID,
			Workflow: "roadmap.yml", Ref: "main", Clock: w.clock, Mask: w.base.Masker.Mask})
		if err != nil {
			t.Fatalf("report: %v", err)
		}
		if out.Class != failure.Conflict || out.Action != report.ActionContinue || out.Stopped {
			t.Errorf("report: %s → %s (stopped %v), want conflict → continue", out.Class, out.Action, out.Stopped)
		}
		if len(w.fake.Dispatches()) != 1 || slices.Contains(w.fake.Labels(w.issue), "roadmap:stopped") {
			t.Errorf("dispatches %+v, labels %v: want one continuation, no stop", w.fake.Dispatches(), w.fake.Labels(w.issue))
		}
	})
}

// TestPRBodyKeptTrue: the PR's body says what the PR is now. After a Job
// that stopped in group 2 it closes the issue, says the item stopped and
// ticks group 1 only; after the Job that marks it ready it says ready and
// ticks every task, and never again that it holds only the plan. It costs
// one request for the Job that stopped and none for the ready one (the
// body rides in its mark-ready request), none per group.
//
// The same two Jobs show issue 17's gap 9 (it was
// TestSpendLinesNumberCallsPerJob, two Jobs of the same shape): spend lines
// number the calls of their Job from 1, as report reads them against the
// Job's line in implement.jobs to find a killed Job's unmarked spend.
func TestPRBodyKeptTrue(t *testing.T) {
	w := newWorld(t, 2, "")
	convs := w.conversations()
	// Job 1 passes group 1 and stops in group 2 (its step never writes the file).
	first := w.newJob([]*llm.Conversation{convs[0], conv(t, "group-2", 2, finish)})
	first.opts.RepairRounds = 1
	res := first.run()
	if res.Result != record.ResultStopped || res.Group != 1 {
		t.Fatalf("Job 1 ended %s at group %d, want a stop in group 2 after group 1\n%s", res.Result, res.Group, first.log.String())
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

	t.Run("spend lines number the calls of their Job", func(t *testing.T) {
		log, err := trace.ParseSpendLines(strings.NewReader(second.log.String()))
		if err != nil {
			t.Fatal(err)
		}
		var calls []int
		for _, e := range log.Entries {
			if e.Job != 2 {
				t.Errorf("Job 2's log has a spend line of Job %d", e.Job)
			}
			calls = append(calls, e.Call)
		}
		jobs, _ := w.record().Jobs()
		var marked int
		for _, jo := range jobs {
			if jo.Job == 2 {
				marked = jo.Spend.ModelCalls
			}
		}
		if len(calls) == 0 || marked != len(calls) {
			t.Fatalf("Job 2: %d spend lines, %d calls in its implement.jobs line; want equal and not 0", len(calls), marked)
		}
		for i, c := range calls {
			if c != i+1 {
				t.Errorf("Job 2's spend line %d numbers call %d, want %d: report would count marked calls again", i+1, c, i+1)
			}
		}
	})
}

// goWorld is an item whose one group adds Greet, calling the base's Hello,
// and whose verify command is the build: `go build ./...`.
func goWorld(t *testing.T) *world {
	t.Helper()
	return newWorldWith(t, 1, "", func(o *theworld.Options) {
		o.Files = map[string]string{
			"README.md":              "# widgets\n",
			"go.mod":                 "module example.com/widgets\n\ngo 1.22\n",
			"hello.go":               "package widgets\n\n// Hello is the greeting.\nfunc Hello() string { return \"hello\" }\n",
			planDir + "/proposal.md": "# Add greetings\n\nGreet says hello to the world.\n",
			planDir + "/tasks.md":    "## 1. Greet\n\n- [ ] 1.1 Add Greet in greet.go, calling Hello; verify: `go build ./...`\n",
		}
	})
}

// moveBase commits files on main in the world's seed clone and pushes it:
// the base moving on the remote while the item is worked. It returns the
// new tip.
func (w *world) moveBase(msg string, files map[string]string) string {
	t := w.t
	seed := w.base.Seed
	run(t, seed, "git", "pull", "-q", "--ff-only", "origin", "main")
	if err := theworld.WriteFiles(seed, files); err != nil {
		t.Fatal(err)
	}
	for name := range files {
		run(t, seed, "git", "add", "--", name)
	}
	run(t, seed, "git", "commit", "-q", "-m", msg)
	run(t, seed, "git", "push", "-q", "origin", "main")
	return w.base.RemoteHead("main")
}

func (w *world) branchFile(path string) string {
	return run(w.t, w.dir, "git", "--git-dir", w.remote, "show", fmt.Sprintf("roadmap/%d-add-greetings:%s", w.issue, path))
}

func (w *world) branchContains(rev string) bool {
	_, err := theworld.Git(gitEnv(), w.dir, "--git-dir", w.remote, "merge-base", "--is-ancestor", rev, fmt.Sprintf("roadmap/%d-add-greetings", w.issue))
	return err == nil
}

// greetConv is group 1: Greet in greet.go calling fn, then finish.
func greetConv(t *testing.T, name, match, fn string) *llm.Conversation {
	return conversation(t, name, match, "greet.go", "package widgets\n\n// Greet greets the world.\nfunc Greet() string { return "+fn+"() + \" world\" }\n")
}

// renameHello is the base's change after the branch was cut: Hello becomes
// Salute. The branch alone builds, the base alone builds; merged, Greet
// calls a function that no longer exists.
var renameHello = map[string]string{"hello.go": "package widgets\n\n// Salute is the greeting.\nfunc Salute() string { return \"hello\" }\n"}

// TestMergedTreeChecked: the base renames Hello while the item's group adds
// a caller of it. The head is green, the base is green, the merge does not
// build: the item does not end ready on the green head. The merged check
// fails, the base is merged into the branch and the head repaired (ready,
// with the merged base recorded), or, with no repair that holds, the item
// stops checks_failed with the build's log and the PR stays a draft.
func TestMergedTreeChecked(t *testing.T) {
	for _, tc := range []struct {
		name   string
		repair string // the function the repair's Greet calls
	}{
		{"repaired", "Salute"},
		{"stopped", "Hello"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := goWorld(t)
			w.fake.ScriptCI(ciWorkflow, githubfake.CIJob{Name: "test"})
			j := w.newJob([]*llm.Conversation{
				greetConv(t, "group-1", "task group 1 of", "Hello"),
				greetConv(t, "repair", "a check fails at the head", tc.repair),
			})
			var dirs []string
			withBeforeTree(j, &dirs)
			j.opts.CIWorkflows = []string{ciWorkflow}
			j.opts.RepairRounds = 1
			var moved string
			j.model.Before = func(n int, _ agent.ModelRequest) {
				if n == 1 {
					moved = w.moveBase("rename Hello to Salute", renameHello)
				}
			}
			res := j.run()
			log := j.log.String()
			if moved == "" {
				t.Fatal("the base never moved")
			}
			if len(dirs) == 0 {
				t.Fatalf("no merged tree was checked\n%s", log)
			}
			if !strings.Contains(log, "merged check failed: go build ./... exited 1") {
				t.Errorf("the log does not name the merged check's failure:\n%s", log)
			}
			if !w.branchContains(moved) {
				t.Errorf("the branch does not take in the base %s after the merged check failed", moved)
			}
			if tc.repair == "Hello" {
				if res.Result != record.ResultStopped || res.Failure != "checks_failed" {
					t.Fatalf("Job ended %s/%s (%s), want stopped checks_failed: no repair holds on the merged tree\n%s", res.Result, res.Failure, res.Reason, log)
				}
				if !w.draft(t, j, res.PR) {
					t.Errorf("PR #%d is ready; the merged tree does not build", res.PR)
				}
				if cl, _ := w.record().CheckLog(); !strings.Contains(cl, "undefined: Hello") {
					t.Errorf("implement.check_log = %q, want the merged build's error", cl)
				}
				if mb, ok := w.record().MergedBase(); ok && string(mb) == moved {
					t.Errorf("implement.merged_base = %s, the base the merged checks failed on", mb)
				}
				return
			}
			if res.Result != record.ResultReady {
				t.Fatalf("Job ended %s/%s (%s), want ready after the repair on the merged tree\n%s", res.Result, res.Failure, res.Reason, log)
			}
			var prompt string
			for _, r := range j.model.Requests() {
				if strings.Contains(firstUser(r), "a check fails at the head") {
					for _, m := range r.Messages {
						prompt += m.Content + "\n"
					}
					break
				}
			}
			if !strings.Contains(prompt, "merged check") || !strings.Contains(prompt, "undefined: Hello") {
				t.Errorf("the repair step's prompt lacks the merged check's log:\n%s", prompt)
			}
			if got := w.branchFile("greet.go"); !strings.Contains(got, "Salute()") {
				t.Errorf("greet.go on the branch = %q, want the repair calling Salute", got)
			}
			if mb, _ := w.record().MergedBase(); string(mb) != moved {
				t.Errorf("implement.merged_base = %q, want %s (the base the checks passed on)", mb, moved)
			}
		})
	}
}

// TestStaleBaseRechecked: the base moves once before the merged check
// (checked on a scratch tree) and once more after it, before ready. The
// base's tip read right before the mark ready is not the one checked: the
// merged tree is checked again on the new base, and the recorded merged
// base is the new tip.
func TestStaleBaseRechecked(t *testing.T) {
	w := goWorld(t)
	w.fake.ScriptCI(ciWorkflow, githubfake.CIJob{Name: "test"})
	j := w.newJob([]*llm.Conversation{greetConv(t, "group-1", "task group 1 of", "Hello")})
	var dirs []string
	withBeforeTree(j, &dirs)
	j.opts.CIWorkflows = []string{ciWorkflow}
	var first, second string
	j.model.Before = func(n int, _ agent.ModelRequest) {
		if n == 1 {
			first = w.moveBase("docs: usage", map[string]string{"USAGE.md": "call Hello\n"})
		}
	}
	// The base moves again once the first merged tree is done with: after
	// the merged check, before ready.
	hook := j.opts.Repo.Hook
	j.opts.Repo.Hook = func(args []string, done bool, err error) {
		if hook != nil {
			hook(args, done, err)
		}
		if done && second == "" && len(args) > 1 && args[0] == "worktree" && args[1] == "remove" {
			second = w.moveBase("docs: more usage", map[string]string{"MORE.md": "call Hello twice\n"})
		}
	}
	res := j.run()
	log := j.log.String()
	if res.Result != record.ResultReady {
		t.Fatalf("Job ended %s/%s (%s), want ready\n%s", res.Result, res.Failure, res.Reason, log)
	}
	if first == "" || second == "" {
		t.Fatalf("the base moved to %q then %q, want twice", first, second)
	}
	if len(dirs) != 2 {
		t.Errorf("merged trees checked: %d (%q), want 2: one per base", len(dirs), dirs)
	}
	if !strings.Contains(log, "checking again before ready") || !strings.Contains(log, "merged check passed: ") {
		t.Errorf("the log does not show the re-check before ready:\n%s", log)
	}
	if mb, _ := w.record().MergedBase(); string(mb) != second {
		t.Errorf("implement.merged_base = %q, want the base's tip at ready %s (not %s)", mb, second, first)
	}
	// A merged check that passed does not touch the branch.
	if w.branchContains(first) {
		t.Errorf("the branch took in the base though the merged checks passed")
	}
}

// TestArchiveRefusedReturnsThePlan: a change whose delta cannot apply (a
// MODIFIED requirement the main spec does not have) is not archived: the item
// goes back to stage with OpenSpec's finding and the PR stays a draft.
func TestArchiveRefusedReturnsThePlan(t *testing.T) {
	w := newWorldFiles(t, 1, "", map[string]string{
		planDir + "/specs/greet/spec.md": "## MODIFIED Requirements\n\n### Requirement: Greeting\nThe system SHALL greet.\n\n#### Scenario: Hello\n- **WHEN** asked\n- **THEN** it greets\n",
	})
	j := w.newJob(w.conversations())
	res := j.runWithGreenCI()
	if res.Result != record.ResultReturned || !strings.Contains(res.Reason, "cannot be archived") {
		t.Fatalf("Job ended %s (%s %s), want returned: the change cannot be archived\n%s", res.Result, res.Failure, res.Reason, j.log.String())
	}
	if w.prReady() {
		t.Error("the PR was marked ready with a change that cannot be archived")
	}
}

// prReady reports whether the PR was marked ready for review (the GraphQL
// mutation was sent).
func (w *world) prReady() bool {
	for _, r := range w.fake.Requests() {
		if r.Endpoint == "POST /graphql" && strings.Contains(r.Body, "markPullRequestReadyForReview") {
			return true
		}
	}
	return false
}

// TestArchiveRefusesSymlink: a symlink under openspec/ is not a fault of the
// plan, so it never goes back to stage as plan_wrong: one in the tree when
// the Job starts stops it before any group (the archive would refuse it
// after the work), and one planted during the groups (by a process left
// behind) stops it at the archive. Both stop with class unknown, nothing
// outside the work tree is written, and the PR is not marked ready.
func TestArchiveRefusesSymlink(t *testing.T) {
	for _, when := range []string{"at the start", "during the groups"} {
		t.Run(when, func(t *testing.T) {
			w := newWorld(t, 1, "")
			outside := t.TempDir()
			j := w.newJob(w.conversations())
			plant := func() {
				link := filepath.Join(j.ws, "openspec", "specs", "greet")
				if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(outside, link); err != nil {
					t.Fatal(err)
				}
			}
			step := "archive"
			if when == "at the start" {
				step = "plan"
				plant()
			} else {
				j.opts.CheckRunner = &plantingRunner{Runner: j.opts.CheckRunner, plant: plant}
			}
			res := j.runWithGreenCI()
			if res.Result != record.ResultStopped || res.Failure != "unknown" || !strings.Contains(res.Reason, "openspec/specs/greet is a symlink") {
				t.Fatalf("Job ended %s (%s %s), want stopped (unknown) for the symlink\n%s", res.Result, res.Failure, res.Reason, j.log.String())
			}
			if c, ok := w.recordComment(); !ok || !strings.Contains(c.Body, "stopped (unknown) in "+step) {
				t.Errorf("the record comment does not say it stopped in %s:\n%s", step, c.Body)
			}
			if entries, _ := os.ReadDir(outside); len(entries) > 0 {
				t.Errorf("the Job wrote outside the work tree: %v", entries)
			}
			if w.prReady() {
				t.Error("the PR was marked ready")
			}
		})
	}
}

// plantingRunner plants a symlink in the work tree when the first check
// runs, as a process a tool command left behind could.
type plantingRunner struct {
	checks.Runner
	plant func()
	done  bool
}

func (p *plantingRunner) Run(ctx context.Context, dir string, argv []string) (checks.Result, error) {
	if !p.done {
		p.done = true
		p.plant()
	}
	return p.Runner.Run(ctx, dir, argv)
}
