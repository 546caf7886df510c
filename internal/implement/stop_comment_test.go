package implement_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// tableRows returns the rows of the Markdown table whose header starts with
// "| Step |", each split into its trimmed cells.
func tableRows(body string) (header []string, rows [][]string) {
	cells := func(line string) []string {
		line = strings.TrimSpace(line)
		line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
		var out []string
		for _, c := range strings.Split(line, " | ") {
			out = append(out, strings.TrimSpace(c))
		}
		return out
	}
	in := false
	for _, l := range strings.Split(body, "\n") {
		switch {
		case strings.HasPrefix(l, "| Step |"):
			in, header = true, cells(l)
		case in && strings.HasPrefix(l, "|---"):
		case in && strings.HasPrefix(l, "|"):
			rows = append(rows, cells(l))
		case in:
			return header, rows
		}
	}
	return header, rows
}

// TestStoppedJob: a Job stops when group 2's checks fail every repair
// round, after group 1 passed, so the PR exists, and what only that whole
// Job shows:
//
//   - the PR's marker comment holds the stop's summary table, a row a step
//     and the total (a Job that stops before its first push has no PR; the
//     stop comment on the issue is report's);
//   - no secret reaches a store. One canary of each kind is planted where a
//     Job meets untrusted text: the model's output (the model name it
//     answers with, a tool it names, the arguments of a write), a check
//     command and that command's output (a token in a file of the
//     repository, the file the model wrote). None reaches the JSONL
//     artifact, the issue record (implement.trace and the whole body), the
//     PR, its comments, the model's prompts or the Job's log, and each did
//     reach the stores, masked.
//
// (These were two Jobs, TestStopCommentSummary's and TestTraceMaskingJob's,
// of the same stop.)
func TestStoppedJob(t *testing.T) {
	c := newCanaries()
	canary := "ghp_" + strings.Repeat("T0k", 12)
	// Group 2's check prints a file holding a token and the file the model
	// wrote, names canaries, and fails: cat has no such files.
	check := fmt.Sprintf("cat token.txt secret-out.txt %s %s %s %s", c.github, c.aws, c.host, c.ip)
	w := newWorldFiles(t, 2, "", map[string]string{
		planDir + "/tasks.md": "## 1. Greeting 1\n\n" +
			"- [ ] 1.1 Write greeting-1.txt saying hello 1; verify: `grep -q \"hello 1\" greeting-1.txt`\n\n" +
			"## 2. Greeting 2\n\n" +
			"- [ ] 2.1 Write greeting-2.txt saying hello 2; verify: `" + check + "`\n",
		"token.txt": "deploy token " + canary + "\n",
	})

	content := strings.Join([]string{"token " + c.github, "aws " + c.aws, "host " + c.host + " at " + c.ip,
		"configured " + c.secret, "base64 " + base64.StdEncoding.EncodeToString([]byte(c.secret)),
		"json " + strings.Trim(jsonText(t, c.secret), `"`)}, "\n") + "\n"
	usage := `"usage":{"tokens_in":1000,"tokens_out":100}`
	// Round 1: a tool named by a canary, the write, a finish; round 2: a
	// finish. The check fails after both.
	group2 := `{"comment":"written by hand: group 2 meets secrets in the model's output, its tool calls and its check","source":"hand",
"match":"task group 2 of","turns":[
 {"response":{"content":` + jsonText(t, "calling "+c.github) + `,"tool_calls":[{"name":` + jsonText(t, c.github) + `,"arguments":{}}],` + usage + `}},
 {"response":{"model":` + jsonText(t, "replay-model "+c.host) + `,"content":` + jsonText(t, "writing "+c.aws) + `,
   "tool_calls":[{"name":"write_file","arguments":{"path":"secret-out.txt","content":` + jsonText(t, content) + `}}],` + usage + `}},
 {"response":{"tool_calls":[{"name":"finish","arguments":{"summary":` + jsonText(t, "done with "+c.secret) + `}}],` + usage + `}},
 {"response":{"tool_calls":[{"name":"finish","arguments":{"summary":"still done"}}],` + usage + `}}]}`
	conv2, err := llm.ParseConversation("group-2", []byte(group2))
	if err != nil {
		t.Fatal(err)
	}
	convs := w.conversations()
	convs[1] = conv2

	masker := redact.New(redact.Config{Secrets: []string{token, c.secret}})
	tj := traceJob(t, w.newJob(convs), convs, masker)
	tj.opts.RepairRounds = 2
	res := tj.run()
	if res.Result != record.ResultStopped || res.Failure != "checks_failed" || res.PR == 0 {
		t.Fatalf("result = %s/%s, PR %d; want stopped/checks_failed with a PR\n%s", res.Result, res.Failure, res.PR, tj.log.String())
	}
	const failing = "`cat token.txt secret-out.txt [masked] [masked] [masked] [masked]` (exit 1)"

	var body string
	marked := 0
	for _, c := range w.fake.Comments(res.PR) {
		if strings.Contains(c.Body, "<!-- roadmap:implement -->") {
			body = c.Body
			marked++
		}
	}
	if marked != 1 {
		t.Fatalf("%d marker comments on PR #%d, want 1", marked, res.PR)
	}

	t.Run("the PR comment's summary table", func(t *testing.T) {
		header, rows := tableRows(body)
		wantHeader := []string{"Step", "Result", "Attempts", "Tokens in", "Tokens out", "Cost", "Last failing command"}
		if diff := cmp.Diff(wantHeader, header); diff != "" {
			t.Fatalf("the summary table's header (-want +got):\n%s\n%s", diff, body)
		}
		if len(rows) != 3 {
			t.Fatalf("%d rows, want group 1, group 2 and the total:\n%s", len(rows), body)
		}
		// Each model call of the fixtures is 1,000 tokens in and 100 out at $1
		// and $10 per million: $0.002. Group 1 took one round of two calls;
		// group 2 two rounds, of three calls and of one, its check failing
		// both times.
		for i, want := range []struct {
			step                                string
			result, attempts, in, out, cost, fc string
		}{
			{"1. ", "passed", "1", "2,000", "200", "$0.0040", "-"},
			{"2. ", "failed", "2", "4,000", "400", "$0.0080", failing},
			{"**Total**", `stopped (checks\_failed)`, "3", "6,000", "600", "$0.01", failing}, // $0.012: two decimals from a cent up
		} {
			row := rows[i]
			if !strings.HasPrefix(row[0], want.step) {
				t.Errorf("row %d names step %q, want one starting %q", i+1, row[0], want.step)
			}
			got := fmt.Sprint(row[1:])
			if w := fmt.Sprint([]string{want.result, want.attempts, want.in, want.out, want.cost, want.fc}); got != w {
				t.Errorf("row %d (%s) = %s, want %s", i+1, row[0], got, w)
			}
		}
		if !strings.Contains(body, "**Stopped** at group 2: `checks_failed`") {
			t.Errorf("the comment does not say where the Job stopped:\n%s", body)
		}
	})

	t.Run("no secret reaches a store", func(t *testing.T) {
		artifact, err := os.ReadFile(tj.path)
		if err != nil {
			t.Fatal(err)
		}
		is, _ := w.fake.Issue(w.issue)
		r := w.record()
		rawTrace, _ := r.Trace()
		var comments []string
		for _, n := range []int{w.issue, res.PR} {
			for _, cm := range w.fake.Comments(n) {
				comments = append(comments, cm.Body)
			}
		}
		pr, _ := w.fake.Issue(res.PR)
		var prompts []string
		for _, req := range tj.model.Requests() {
			prompts = append(prompts, prompt(req))
		}

		noCanary(t, "the JSONL artifact", string(artifact), c)
		noCanary(t, "implement.trace", string(rawTrace), c)
		noCanary(t, "the issue body", is.Body, c)
		noCanary(t, "the PR comments", strings.Join(comments, "\n"), c)
		noCanary(t, "the PR", pr.Title+"\n"+pr.Body, c)
		noCanary(t, "the Job's log", tj.log.String(), c)
		// The token the check printed.
		for where, text := range map[string]string{"the PR comment": body, "the issue body": is.Body, "the Job's log": tj.log.String(),
			"the JSONL artifact": string(artifact), "implement.trace": string(rawTrace)} {
			if strings.Contains(text, canary) {
				t.Errorf("%s holds the token", where)
			}
		}
		for i, p := range prompts {
			if strings.Contains(p, canary) {
				t.Errorf("model request %d holds the token", i+1)
			}
		}

		// And the canaries did reach each store, masked: a test whose
		// secrets never got there would pass on a masker that does nothing.
		var maskedModel, maskedTool, maskedCommand bool
		for _, e := range tj.artifact(t) {
			maskedModel = maskedModel || e.Type == trace.TypeModelCall && e.Model == "replay-model "+redact.DefaultPlaceholder
			maskedTool = maskedTool || e.Type == trace.TypeToolCall && e.Tool == redact.DefaultPlaceholder
			maskedCommand = maskedCommand || e.Type == trace.TypeCheckRun && e.ExitCode != 0 &&
				e.Command == "cat token.txt secret-out.txt [masked] [masked] [masked] [masked]"
		}
		if !maskedModel || !maskedTool || !maskedCommand {
			t.Errorf("the artifact lacks a masked model name (%v), tool name (%v) or check command (%v):\n%s", maskedModel, maskedTool, maskedCommand, artifact)
		}
		if !strings.Contains(string(rawTrace), `"cmd":"cat token.txt secret-out.txt [masked] [masked] [masked] [masked]"`) {
			t.Errorf("implement.trace lacks the masked check command:\n%s", rawTrace)
		}
		log, _ := r.CheckLog()
		if !strings.Contains(log, "deploy token "+redact.DefaultPlaceholder) || strings.Count(log, redact.DefaultPlaceholder) < 8 {
			t.Errorf("implement.check_log should hold the check's output with the token and each canary masked:\n%s", log)
		}
		if !strings.Contains(body, failing) {
			t.Errorf("the PR comment's table lacks the masked failing command:\n%s", body)
		}
	})
}
