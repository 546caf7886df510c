package implement_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
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

// TestStopCommentSummary: a Job stops when group 2's checks fail every
// repair round. Group 1 passed first, so the PR exists and its marker
// comment holds the stop's summary table. (A Job that stops before its
// first push has no PR; the stop comment on the issue is report's.)
func TestStopCommentSummary(t *testing.T) {
	canary := "ghp_" + strings.Repeat("T0k", 12)
	w := newWorld(t, 2, "")
	// Group 2's check prints a file holding a token, then fails: the model
	// never writes greeting-2.txt.
	w.commitToMain(map[string]string{
		filepath.Join(planDir, "tasks.md"): "## 1. Greeting 1\n\n" +
			"- [ ] 1.1 Write greeting-1.txt saying hello 1; verify: `grep -q \"hello 1\" greeting-1.txt`\n\n" +
			"## 2. Greeting 2\n\n" +
			"- [ ] 2.1 Write greeting-2.txt saying hello 2; verify: `cat token.txt greeting-2.txt`\n",
		"token.txt": "deploy token " + canary + "\n",
	})
	convs := w.conversations()
	// Group 2 finishes without writing its file, in both rounds.
	finish := convs[1].Turns[1]
	convs[1].Turns = []llm.Turn{finish, finish}
	tj := traceJob(t, w.newJob(convs), convs, redact.New(redact.Config{Secrets: []string{token}}))
	tj.opts.RepairRounds = 2
	res := tj.run()
	if res.Result != record.ResultStopped || res.Failure != "checks_failed" {
		t.Fatalf("result = %s/%s (%s), want stopped/checks_failed\n%s", res.Result, res.Failure, res.Reason, tj.log.String())
	}
	if res.PR == 0 {
		t.Fatalf("no PR after group 1 passed\n%s", tj.log.String())
	}

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
	// group 2 two rounds of one call each, its check failing both times.
	const failing = "`cat token.txt greeting-2.txt` (exit 1)"
	for i, want := range []struct {
		step                                string
		result, attempts, in, out, cost, fc string
	}{
		{"1. ", "passed", "1", "2,000", "200", "$0.0040", "-"},
		{"2. ", "failed", "2", "2,000", "200", "$0.0040", failing},
		{"**Total**", `stopped (checks\_failed)`, "3", "4,000", "400", "$0.0080", failing},
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

	// The failing command printed a token: it reached the check log,
	// masked, and nowhere unmasked.
	if log, _ := w.record().CheckLog(); !strings.Contains(log, "deploy token "+redact.DefaultPlaceholder) {
		t.Errorf("implement.check_log should hold the check's output with the token masked:\n%s", log)
	}
	is, _ := w.fake.Issue(w.issue)
	for where, text := range map[string]string{"the PR comment": body, "the issue body": is.Body, "the Job's log": tj.log.String()} {
		if strings.Contains(text, canary) {
			t.Errorf("%s holds the token", where)
		}
	}
	for i, req := range tj.model.Requests() {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, canary) {
				t.Errorf("model request %d holds the token (a %s message)", i+1, m.Role)
			}
		}
	}
}
