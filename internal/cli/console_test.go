package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// TestConsoleCLI runs `roadmap console` through Main against the fake
// GitHub: the NDJSON stream of a finished item, --follow ending by itself
// when the last Job is ready, and exit 2 on bad input.
func TestConsoleCLI(t *testing.T) {
	w := newExplainWorld(t)
	run := w.fake.AddRun(githubfake.Run{WorkflowFile: "roadmap-implement.yml"})
	if _, err := w.fake.AddJob(run, githubfake.Job{Name: "implement", Status: "completed", Conclusion: "success"}); err != nil {
		t.Fatal(err)
	}
	var ch record.Changes
	ch.SetResult(record.ResultReady)
	ch.SetJobs([]record.JobOutcome{{Job: 1, RunID: run, Result: record.ResultReady, Group: 2,
		Spend: record.Spend{TokensIn: 10, TokensOut: 2, USD: 0.25, ModelCalls: 2}}})
	rec, _ := record.Parse("")
	if err := rec.Apply(ch); err != nil {
		t.Fatal(err)
	}
	rec.SetView(record.View{Doing: "ready for review " + explainToken})
	body, err := record.RenderComment(rec)
	if err != nil {
		t.Fatal(err)
	}
	n := w.item(body)

	consoleRun := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Main(context.Background(), append([]string{"console"}, args...), w.environ, strings.NewReader(""), &out, &errb)
		return code, out.String(), errb.String()
	}
	for _, args := range [][]string{{strconv.Itoa(n), "--json"}, {strconv.Itoa(n), "--json", "--follow", "--interval", "1ms"}} {
		code, stdout, stderr := consoleRun(args...)
		if code != ExitOK {
			t.Fatalf("console %v: exit %d\n%s", args, code, stderr)
		}
		if strings.Contains(stdout+stderr, explainToken) {
			t.Errorf("console %v printed the token", args)
		}
		var types []string
		for i, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
			var e struct {
				Seq      int     `json:"seq"`
				Issue    int     `json:"issue"`
				Type     string  `json:"type"`
				Phase    string  `json:"phase"`
				SpendUSD float64 `json:"spend_usd"`
			}
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("line %d is not one JSON object: %q", i+1, line)
			}
			if e.Seq != i+1 || e.Issue != n || e.Phase != "implement" {
				t.Errorf("line %d: %+v", i+1, e)
			}
			types = append(types, e.Type)
		}
		if want := "job_started job_ended run_status status"; strings.Join(types, " ") != want {
			t.Errorf("console %v types %q, want %q", args, strings.Join(types, " "), want)
		}
	}

	code, stdout, _ := consoleRun(strconv.Itoa(n))
	if code != ExitOK || !strings.Contains(stdout, "implement Job 1 · job_ended · ended ready") || !strings.Contains(stdout, "$0.25 of $5.00 item budget") {
		t.Errorf("text: exit %d\n%s", code, stdout)
	}
	for _, args := range [][]string{{"abc"}, {}, {strconv.Itoa(w.issue("no record yet"))}, {"1", "--interval", "0s"}} {
		if code, _, stderr := consoleRun(args...); code != ExitUsage {
			t.Errorf("console %v: exit %d, want %d\n%s", args, code, ExitUsage, stderr)
		}
	}
}
