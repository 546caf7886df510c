package stage_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/explain"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/stage"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// TestStageTraceInRecord: a stage Job writes its trace copy into the
// record under stage.trace, bounded and masked as implement's copy is, and
// roadmap explain --trace reads it. The planner investigates for 30
// turns, each answer naming a long model (the copy keeps 200 characters of
// it): more than the copy's bound holds, so the oldest events are dropped.
// Its last turns, which the copy keeps, carry secrets in the model's answer
// (untrusted text): tools named after the Job's token and a GitHub token,
// and a model named after the GitHub token.
func TestStageTraceInRecord(t *testing.T) {
	w := newWorld(t)
	canary := "ghp_" + strings.Repeat("Zq8", 12)
	var turns [][]call
	for range 30 {
		turns = append(turns, []call{read("greet.go"), read("README.md")})
	}
	turns = append(turns, []call{{name: token, args: map[string]any{}}, {name: canary, args: map[string]any{}}},
		[]call{planFile("proposal.md", proposal)}, []call{planFile("tasks.md", tasks)},
		[]call{planFile("specs/greetings/spec.md", spec)}, []call{finish("wrote the plan")})
	model := func(i int) string {
		if i == len(turns)-1 {
			return "replay-model " + canary
		}
		return fmt.Sprintf("replay-model-%d-%s", i, strings.Repeat("m", 200))
	}
	j := w.newJob(convTurns("planner: secret-named tools, then a long investigation", "Write the plan for issue", turns, model),
		cleanVerifier("Review the plan for issue"))
	res := j.run(context.Background())
	if res.Result != stage.ResultStaged {
		t.Fatalf("result %s (%s: %s), want staged\n%s", res.Result, res.Failure, res.Reason, j.log.String())
	}
	rec := w.record()
	raw, ok := rec.Raw(record.KeyStageTrace)
	if !ok {
		t.Fatalf("the record has no stage.trace:\n%s", w.recordText())
	}
	if len(raw) > trace.RecordLimit {
		t.Errorf("stage.trace is %d characters, want at most %d", len(raw), trace.RecordLimit)
	}
	if _, ok := rec.Raw(record.KeyImplementTrace); ok {
		t.Errorf("a stage-only item's record holds implement.trace")
	}
	for name, s := range map[string]string{"the Job's token": token, "a GitHub token": canary} {
		if strings.Contains(w.recordText(), s) {
			t.Errorf("%s named by the model reached the record", name)
		}
	}
	// The copy is masked before it is written, not only by the client
	// that sends the body: the events it is made of hold no secret.
	_, copyText := trace.Bound(j.opts.Trace.Events(), trace.RecordLimit)
	for name, s := range map[string]string{"the Job's token": token, "a GitHub token": canary} {
		if strings.Contains(copyText, s) {
			t.Errorf("%s named by the model is in the Job's trace copy before the write", name)
		}
	}
	// The secrets reached the copy, masked.
	if n := strings.Count(raw, "[masked]"); n < 3 {
		t.Errorf("stage.trace holds %d masked texts, want the two tools' names and the model's (3):\n%s", n, raw)
	}
	rc, err := trace.ParseRecordCopy(raw)
	if err != nil {
		t.Fatalf("stage.trace does not parse: %v\n%s", err, raw)
	}
	if rc.Dropped == 0 {
		t.Errorf("no event was dropped from a trace of %d events: the test no longer exercises the bound", len(j.opts.Trace.Events()))
	}
	// The copy is the newest events of this Job's trace, as the recorder
	// (which masks) holds them.
	all := j.opts.Trace.Events()
	if got, want := rc.Dropped+len(rc.Events), len(all); got != want {
		t.Errorf("the copy counts %d events (%d dropped), the Job recorded %d", got, rc.Dropped, want)
	}
	last := rc.Events[len(rc.Events)-1]
	if last.Type != trace.TypePhase || last.Phase != trace.PhaseStaged || last.Job != res.Job {
		t.Errorf("the copy's newest event is %+v; want the staged phase of Job %d", last, res.Job)
	}
	var rounds int
	for _, e := range rc.Events {
		if e.Type == trace.TypePhase && e.Phase == trace.PhaseAgent && strings.HasPrefix(e.Step, "round 1") {
			rounds++
		}
	}
	if rounds == 0 {
		t.Errorf("the copy holds no event of round 1's planner or verifier")
	}

	// explain --trace reads it, as it reads implement's.
	gh, err := w.base.GitHub(http.DefaultTransport)
	if err != nil {
		t.Fatal(err)
	}
	out, note, err := explain.Explain(context.Background(), explain.Options{Issue: w.issue, GitHub: gh, Trace: true})
	if err != nil || out.Trace == nil {
		t.Fatalf("explain --trace: %v (note %q)", err, note)
	}
	if out.Trace.Key != string(record.KeyStageTrace) || out.Trace.Job != res.Job || len(out.Trace.Events) != len(rc.Events) {
		t.Errorf("explain read %s of Job %d with %d events; want stage.trace of Job %d with %d", out.Trace.Key, out.Trace.Job,
			len(out.Trace.Events), res.Job, len(rc.Events))
	}
	var text bytes.Buffer
	if err := explain.Print(&text, out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "the record's stage.trace") || !strings.Contains(text.String(), "staged") {
		t.Errorf("explain's text does not show the stage trace:\n%s", text.String())
	}
}

// convTurns is conv with several tool calls in a turn: the model's turn
// budget counts turns, not calls.
func convTurns(comment, match string, turns [][]call, model func(int) string) string {
	type tc struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	type usage struct {
		TokensIn  int `json:"tokens_in"`
		TokensOut int `json:"tokens_out"`
	}
	type response struct {
		Model     string `json:"model,omitempty"`
		ToolCalls []tc   `json:"tool_calls"`
		Usage     usage  `json:"usage"`
	}
	type turn struct {
		Response response `json:"response"`
	}
	c := struct {
		Comment string `json:"comment"`
		Source  string `json:"source"`
		Match   string `json:"match"`
		Turns   []turn `json:"turns"`
	}{Comment: comment, Source: "hand", Match: match}
	for i, calls := range turns {
		r := response{Model: model(i), Usage: usage{1000, 100}}
		for _, k := range calls {
			r.ToolCalls = append(r.ToolCalls, tc{k.name, k.args})
		}
		c.Turns = append(c.Turns, turn{r})
	}
	data, err := json.Marshal(c)
	if err != nil {
		panic(err)
	}
	return string(data)
}
