package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
)

const reportToken = "ghs_reportclitoken00000000000000000000"

// reportEnv is a fake GitHub over HTTP and the environment a report step
// sees in Actions.
type reportEnv struct {
	fake    *githubfake.Fake
	environ []string
	output  string // the GITHUB_OUTPUT file
}

func newReportEnv(t *testing.T) *reportEnv {
	t.Helper()
	fake := githubfake.New(githubfake.Options{Token: reportToken, Owner: "acme", Repo: "widgets"})
	// The repository has the caller workflow and the PR head the record names.
	fake.AddWorkflow("roadmap.yml")
	fake.AddCommit("9c1d2e3f4a5b6c7d8e9f00112233445566778899")
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	out := filepath.Join(dir, "output")
	if err := os.WriteFile(out, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return &reportEnv{fake: fake, output: out, environ: []string{
		"GITHUB_ACTIONS=true",
		"GITHUB_TOKEN=" + reportToken,
		"GITHUB_API_URL=" + srv.URL,
		"GITHUB_REPOSITORY=acme/widgets",
		"GITHUB_WORKFLOW_REF=acme/widgets/.github/workflows/roadmap.yml@refs/heads/main",
		"GITHUB_REF_NAME=main",
		"GITHUB_WORKSPACE=" + dir,
		"GITHUB_OUTPUT=" + out,
	}}
}

// issue creates an issue after Job 1 of an item (group 1 passed, yielded):
// its record comment, written as roadmap's identity, holds what Job 1 wrote.
func (e *reportEnv) issue(t *testing.T, extra func(*record.Changes), labels ...string) int {
	t.Helper()
	var ch record.Changes
	s := record.Spend{TokensIn: 5200, TokensOut: 1300, USD: 0.0123, ModelCalls: 6}
	ch.SetResult(record.ResultYielded)
	ch.SetAttempt(1)
	ch.SetGroup(1)
	ch.SetSpend(s)
	ch.SetPublishedSHA("9c1d2e3f4a5b6c7d8e9f00112233445566778899")
	ch.SetJobs([]record.JobOutcome{{Job: 1, RunID: 9001, Result: record.ResultYielded, Group: 1, Spend: s}})
	if extra != nil {
		extra(&ch)
	}
	n := e.fake.CreateIssue(githubfake.Issue{Title: "Webhook backoff", Body: "Retry deliveries with backoff.\n", Labels: labels})
	addRecordComment(t, e.fake, n, recordCommentText(t, ch))
	return n
}

func (e *reportEnv) run(t *testing.T, args []string, extraEnv ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), append([]string{"report"}, args...), append(append([]string(nil), e.environ...), extraEnv...),
		strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func (e *reportEnv) outputs(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(e.output)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReportCommand(t *testing.T) {
	t.Run("a killed Job is classified from its log and continued", func(t *testing.T) {
		e := newReportEnv(t)
		log, err := os.ReadFile(filepath.Join(logsDir, "cancelled.log"))
		if err != nil {
			t.Fatal(err)
		}
		runID := e.fake.AddRun(githubfake.Run{WorkflowFile: "roadmap.yml", Conclusion: "cancelled"})
		if _, err := e.fake.AddJob(runID, githubfake.Job{Name: "implement", Conclusion: "cancelled", Log: string(log)}); err != nil {
			t.Fatal(err)
		}
		n := e.issue(t, nil, "roadmap:implement")
		code, stdout, stderr := e.run(t, []string{"--issue", strconv.Itoa(n), "--job-result", "cancelled", "--json"},
			"GITHUB_RUN_ID="+strconv.FormatInt(runID, 10))
		if code != ExitOK {
			t.Fatalf("exit %d, stderr:\n%s", code, stderr)
		}
		var got struct {
			Class           string `json:"class"`
			KillReason      string `json:"kill_reason"`
			Action          string `json:"action"`
			Job             int    `json:"job"`
			NextAttempt     int    `json:"next_attempt"`
			DispatchedRunID int64  `json:"dispatched_run_id"`
			Evidence        string `json:"evidence"`
		}
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
		}
		if got.Class != "killed" || got.KillReason != "cancelled" || got.Action != "continue" || got.Job != 2 || got.NextAttempt != 3 {
			t.Errorf("outcome = %+v, want killed (cancelled), continue, Job 2, next 3", got)
		}
		if !strings.Contains(got.Evidence, "The operation was canceled") {
			t.Errorf("evidence = %q, want the runner's cancel line", got.Evidence)
		}
		// The continuation is handed the record comment, so it reads it by id.
		_, rc := recordOf(t, e.fake, n)
		d := e.fake.Dispatches()
		if len(d) != 1 || d[0].Workflow != "roadmap.yml" || d[0].Ref != "main" ||
			!cmp.Equal(d[0].Inputs, map[string]any{"issue": strconv.Itoa(n), "attempt": "3", "record-comment": strconv.FormatInt(rc, 10)}) {
			t.Fatalf("dispatches = %+v, want roadmap.yml on main with issue %d, attempt 3, record-comment %d", d, n, rc)
		}
		if got.DispatchedRunID == 0 || got.DispatchedRunID != d[0].RunID {
			t.Errorf("dispatched_run_id = %d, want run %d", got.DispatchedRunID, d[0].RunID)
		}
		outs := e.outputs(t)
		for _, name := range []string{"class", "action", "dispatched_run_id", "next_attempt", "stopped", "spend", "spend_lost"} {
			if !strings.Contains(outs, name+"<<") {
				t.Errorf("GITHUB_OUTPUT lacks %s:\n%s", name, outs)
			}
		}
		if !strings.Contains(outs, "\n"+strconv.FormatInt(d[0].RunID, 10)+"\n") {
			t.Errorf("GITHUB_OUTPUT lacks the dispatched run id %d:\n%s", d[0].RunID, outs)
		}
		if strings.Contains(stdout+stderr+outs, reportToken) {
			t.Error("the token leaked into the output")
		}
	})

	t.Run("a stop exits 0 and prints what happened", func(t *testing.T) {
		e := newReportEnv(t)
		n := e.issue(t, func(ch *record.Changes) {
			ch.SetResult(record.ResultStopped)
			ch.SetFailure("auth")
			ch.SetStopped("group 2")
			ch.SetAttempt(2)
		}, "roadmap:implement")
		code, stdout, stderr := e.run(t, []string{"--issue", strconv.Itoa(n), "--job-result", "failure", "--result", "stopped",
			"--failure", "auth", "--attempt", "2", "--run-id", "9002"})
		if code != ExitOK {
			t.Fatalf("exit %d, stderr:\n%s", code, stderr)
		}
		// In Actions the decision goes to the job log (stderr): stdout is for workflow commands.
		if !strings.Contains(stderr, "Job 2: stopped (auth) → stop") {
			t.Errorf("stderr = %q, want the decision", stderr)
		}
		onlyWorkflowCommands(t, "report", stdout)
		if !slices.Contains(e.fake.Labels(n), "roadmap:stopped") {
			t.Errorf("labels = %v, want roadmap:stopped", e.fake.Labels(n))
		}
	})

	t.Run("an issue_comment from a writer resumes, from a reader is ignored", func(t *testing.T) {
		for _, tc := range []struct {
			role, action string
			dispatches   int
		}{{"write", "resume", 1}, {"read", "none", 0}} {
			e := newReportEnv(t)
			n := e.issue(t, func(ch *record.Changes) {
				ch.SetResult(record.ResultReturned)
				ch.SetFailure("needs_input")
				ch.SetQuestion("Per-endpoint or global cap?")
			}, "roadmap:implement", "roadmap:needs-input")
			e.fake.SetPermission("alice", tc.role)
			payload := filepath.Join(t.TempDir(), "event.json")
			body := `{"action":"created","issue":{"number":` + strconv.Itoa(n) + `},"comment":{"id":5,"body":"Per endpoint.",` +
				`"author_association":"MEMBER","user":{"login":"alice","type":"User"}},` +
				`"repository":{"name":"widgets","owner":{"login":"acme"}}}`
			if err := os.WriteFile(payload, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := e.run(t, []string{"--json"}, "GITHUB_EVENT_NAME=issue_comment", "GITHUB_EVENT_PATH="+payload, "GITHUB_RUN_ID=9100")
			if code != ExitOK {
				t.Fatalf("%s: exit %d, stderr:\n%s", tc.role, code, stderr)
			}
			var got struct {
				Action string `json:"action"`
			}
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatal(err)
			}
			if got.Action != tc.action || len(e.fake.Dispatches()) != tc.dispatches {
				t.Errorf("%s: action %s, dispatches %d; want %s, %d", tc.role, got.Action, len(e.fake.Dispatches()), tc.action, tc.dispatches)
			}
		}
	})

	t.Run("a dispatch that does not land exits 3 with the decision in the outputs", func(t *testing.T) {
		e := newReportEnv(t)
		log, err := os.ReadFile(filepath.Join(logsDir, "cancelled.log"))
		if err != nil {
			t.Fatal(err)
		}
		runID := e.fake.AddRun(githubfake.Run{WorkflowFile: "roadmap.yml", Conclusion: "cancelled"})
		if _, err := e.fake.AddJob(runID, githubfake.Job{Name: "implement", Conclusion: "cancelled", Log: string(log)}); err != nil {
			t.Fatal(err)
		}
		n := e.issue(t, nil, "roadmap:implement")
		e.fake.AddFault(githubfake.Rule{Method: "POST", Path: "/repos/**/dispatches", Status: 403})
		code, _, stderr := e.run(t, []string{"--issue", strconv.Itoa(n), "--job-result", "cancelled"},
			"GITHUB_RUN_ID="+strconv.FormatInt(runID, 10))
		if code != ExitInternal {
			t.Fatalf("exit %d, want %d (GitHub failed report)\nstderr:\n%s", code, ExitInternal, stderr)
		}
		outs := e.outputs(t)
		for _, kv := range [][2]string{{"class", "killed"}, {"action", "continue"}, {"dispatch_failure", "auth"}} {
			if !strings.Contains(outs, kv[0]+"<<") || !strings.Contains(outs, "\n"+kv[1]+"\n") {
				t.Errorf("GITHUB_OUTPUT lacks %s=%s:\n%s", kv[0], kv[1], outs)
			}
		}
	})

	t.Run("exit codes", func(t *testing.T) {
		e := newReportEnv(t)
		n := e.issue(t, nil)
		tests := []struct {
			name string
			args []string
			env  []string
			want int
		}{
			{"bad job result", []string{"--issue", strconv.Itoa(n), "--job-result", "exploded"}, nil, ExitUsage},
			{"bad result", []string{"--issue", strconv.Itoa(n), "--result", "done"}, nil, ExitUsage},
			{"bad spend", []string{"--issue", strconv.Itoa(n), "--result", "yielded", "--spend", "{"}, nil, ExitUsage},
			{"no issue", []string{"--job-result", "failure"}, nil, ExitUsage},
			{"no run id for a Job without a result", []string{"--issue", strconv.Itoa(n), "--job-result", "failure"}, nil, ExitUsage},
			{"an argument", []string{"--issue", strconv.Itoa(n), "extra"}, nil, ExitUsage},
			{"no token", []string{"--issue", strconv.Itoa(n), "--result", "ready"}, []string{"GITHUB_TOKEN="}, ExitAuth},
			{"an issue GitHub does not have", []string{"--issue", "999", "--result", "ready", "--attempt", "2"}, nil, ExitInternal},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				code, _, stderr := e.run(t, tc.args, tc.env...)
				if code != tc.want {
					t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.want, stderr)
				}
				if stderr == "" {
					t.Error("no message on stderr")
				}
			})
		}
	})
}
