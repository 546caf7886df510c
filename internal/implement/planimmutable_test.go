package implement_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
	theworld "github.com/roadmap-dev/roadmap/internal/world"
)

// TestPlanImmutableToAgent: the approved plan is not the agent's to change.
// In group 1 the model weakens group 2's verify command to `true`, ticks
// every task itself, rewrites the proposal and adds a spec; the runner
// undoes all of it before the group's commit, ticks group 1 alone, and says
// so. Group 2 is then still held to its own verify command.
func TestPlanImmutableToAgent(t *testing.T) {
	w := newWorld(t, 2, "")
	original := theworld.SampleRepo(2)[planDir+"/tasks.md"]
	weakened := strings.ReplaceAll(strings.ReplaceAll(original, "- [ ]", "- [x]"), "`grep -q \"hello 2\" greeting-2.txt`", "`true`")
	convs := w.conversations()
	forge := llm.Turn{Response: llm.Response{ToolCalls: []llm.FixtureToolCall{
		{Name: "write_file", Arguments: llm.Arguments(jsonArgs(t, map[string]string{"path": planDir + "/tasks.md", "content": weakened}))},
		{Name: "write_file", Arguments: llm.Arguments(jsonArgs(t, map[string]string{"path": planDir + "/proposal.md", "content": "# Nothing to do\n"}))},
		{Name: "write_file", Arguments: llm.Arguments(jsonArgs(t, map[string]string{"path": planDir + "/specs/x/spec.md", "content": "## ADDED Requirements\n"}))},
	}, Usage: llm.FixtureUsage{TokensIn: 1000, TokensOut: 100}}}
	convs[0].Turns = append([]llm.Turn{forge}, convs[0].Turns...)
	j := w.newJob(convs)
	j.opts.PollInterval = time.Minute
	res := j.runWithGreenCI()
	if res.Result != record.ResultReady {
		t.Fatalf("result = %s (%s: %s), want ready\n%s", res.Result, res.Failure, res.Reason, j.log.String())
	}
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
	if !strings.Contains(j.log.String(), "the agent changed the approved plan") {
		t.Errorf("the log does not say the plan change was refused:\n%s", j.log.String())
	}
	c, _ := w.recordComment()
	if !strings.Contains(c.Body, "changes were refused and undone") {
		t.Errorf("the record comment does not note the refusal:\n%s", c.Body)
	}
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
