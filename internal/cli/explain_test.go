package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/explain"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

const explainToken = "ghs_explaintesttoken000000000000000000"

// explainWorld is a fake GitHub over HTTP holding the issues explain reads.
type explainWorld struct {
	t       *testing.T
	fake    *githubfake.Fake
	environ []string
}

func newExplainWorld(t *testing.T) *explainWorld {
	t.Helper()
	fake := githubfake.New(githubfake.Options{Token: explainToken, Owner: "acme", Repo: "widgets"})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return &explainWorld{t: t, fake: fake, environ: []string{
		"GITHUB_TOKEN=" + explainToken, "GITHUB_API_URL=" + srv.URL, "GITHUB_REPOSITORY=acme/widgets"}}
}

// issue creates an issue with body, the person's text, and no comment.
func (w *explainWorld) issue(body string) int {
	return w.fake.CreateIssue(githubfake.Issue{Title: "Add greetings", Body: body, Author: "alice"})
}

// item creates an issue whose record comment, written as roadmap's
// identity, is comment; the body is the person's text only.
func (w *explainWorld) item(comment string) int {
	w.t.Helper()
	n := w.issue("Add greetings, one file per group.\n")
	addRecordComment(w.t, w.fake, n, comment)
	return n
}

// blockComment is a record comment holding lines as its block, written by
// hand (it may be malformed): the visible line is line 1, the opener line 3,
// the first key line 4.
func blockComment(lines ...string) string {
	return "**roadmap** · implementing\n\n<!-- roadmap:record v1\n" + strings.Join(lines, "\n") + "\n-->"
}

func (w *explainWorld) explain(args ...string) (code int, stdout, stderr string) {
	w.t.Helper()
	var out, errb bytes.Buffer
	code = Main(context.Background(), append([]string{"explain"}, args...), w.environ, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// explainJSON runs explain --json and decodes what it printed.
func (w *explainWorld) explainJSON(args ...string) explain.Output {
	w.t.Helper()
	code, stdout, stderr := w.explain(append(args, "--json")...)
	if code != ExitOK {
		w.t.Fatalf("explain %v --json: exit %d, want 0\n%s", args, code, stderr)
	}
	var got explain.Output
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		w.t.Fatalf("explain --json printed no JSON object: %v\n%s", err, stdout)
	}
	return got
}

// traceRun records the events of a Job the way the implement runner does: phase
// markers and spans, model and tool calls, check runs and retries, through a
// real Recorder with the real masker.
type traceRun struct {
	t   *testing.T
	rec *trace.Recorder
	now time.Time
}

func newTraceRun(t *testing.T, w *bytes.Buffer, job int, start time.Time) *traceRun {
	t.Helper()
	r := &traceRun{t: t, now: start}
	rec, err := trace.NewRecorder(w, redact.New(redact.Config{}), func() time.Time { return r.now }, job)
	if err != nil {
		t.Fatal(err)
	}
	r.rec = rec
	return r
}

// add records e after took has passed; a span's Duration is took.
func (r *traceRun) add(took time.Duration, e trace.Event) {
	r.t.Helper()
	r.now = r.now.Add(took)
	if e.Type == trace.TypePhase && e.Phase.Span() || e.Type != trace.TypePhase && e.Type != trace.TypeRetry {
		e.Duration = took
	}
	if err := r.rec.Add(e); err != nil {
		r.t.Fatal(err)
	}
}

// group records one group: rounds agent rounds of two model calls and two
// tool calls each, a check after each round, passing after the last when
// pass is set.
func (r *traceRun) group(g, rounds int, pass bool) {
	step := fmt.Sprintf("group %d", g)
	cmd := fmt.Sprintf("grep -q \"hello %d\" greeting-%d.txt", g, g)
	r.add(0, trace.Event{Type: trace.TypePhase, Phase: trace.PhaseGroupStarted, Group: g, Step: fmt.Sprintf("Greeting %d", g)})
	for round := 1; round <= rounds; round++ {
		if round > 1 {
			r.add(0, trace.Event{Type: trace.TypeRetry, Group: g, Reason: "checks_failed: repair round in the same conversation", Attempt: round})
		}
		r.add(2*time.Second, trace.Event{Type: trace.TypeModelCall, Group: g, Model: "gpt-4o-mini", TokensIn: 1000, TokensOut: 100, USD: 0.0002, Outcome: "ok"})
		r.add(300*time.Millisecond, trace.Event{Type: trace.TypeToolCall, Group: g, Tool: "write_file",
			ArgsDigest: trace.ArgsDigest(fmt.Sprintf(`{"path":"greeting-%d.txt","round":%d}`, g, round)), ResultClass: "ok"})
		r.add(time.Second, trace.Event{Type: trace.TypeModelCall, Group: g, Model: "gpt-4o-mini", TokensIn: 1100, TokensOut: 50, USD: 0.0002, Outcome: "ok"})
		r.add(0, trace.Event{Type: trace.TypeToolCall, Group: g, Tool: "finish", ArgsDigest: trace.ArgsDigest(`{"summary":"done"}`), ResultClass: "ok"})
		exit := 1
		if pass && round == rounds {
			exit = 0
		}
		r.add(150*time.Millisecond, trace.Event{Type: trace.TypeCheckRun, Group: g, Step: step, Command: cmd, ExitCode: exit})
		outcome := "failed"
		if exit == 0 {
			outcome = "passed"
		}
		r.add(200*time.Millisecond, trace.Event{Type: trace.TypePhase, Phase: trace.PhaseChecks, Group: g, Step: step, Outcome: outcome})
	}
	if pass {
		r.add(0, trace.Event{Type: trace.TypePhase, Phase: trace.PhaseAgent, Group: g, Step: step, Attempt: rounds, Outcome: "finished"})
		r.add(100*time.Millisecond, trace.Event{Type: trace.TypePhase, Phase: trace.PhaseCommit, Group: g, Step: step})
		r.add(time.Second, trace.Event{Type: trace.TypePhase, Phase: trace.PhasePush, Group: g, Step: step})
		r.add(0, trace.Event{Type: trace.TypePhase, Phase: trace.PhaseGroupPassed, Group: g, Step: step})
		return
	}
	r.add(0, trace.Event{Type: trace.TypePhase, Phase: trace.PhaseAgent, Group: g, Step: step, Attempt: rounds, Outcome: "checks_failed"})
	r.add(0, trace.Event{Type: trace.TypePhase, Phase: trace.PhaseGroupFailed, Group: g, Step: step, Reason: fmt.Sprintf("checks still fail after %d rounds", rounds)})
}

// stoppedRun is a Job that passes group 1 and stops on group 2 after rounds
// repair rounds.
func stoppedRun(t *testing.T, w *bytes.Buffer, job, rounds int) []trace.Event {
	r := newTraceRun(t, w, job, time.Date(2026, 11, 29, 10, 15, 0, 0, time.UTC))
	r.add(0, trace.Event{Type: trace.TypePhase, Phase: trace.PhaseJobStarted, Step: fmt.Sprintf("job %d", job)})
	r.group(1, 1, true)
	r.group(2, rounds, false)
	r.add(0, trace.Event{Type: trace.TypePhase, Phase: trace.PhaseStopped, Step: "group 2", Outcome: "checks_failed",
		Reason: fmt.Sprintf("checks still fail after %d rounds", rounds)})
	return r.rec.Events()
}

// stoppedComment is the record comment a stopped second Job leaves: the
// record the implement runner writes, through the record package, with the
// bounded copy of events.
func stoppedComment(t *testing.T, events []trace.Event) string {
	t.Helper()
	sum := trace.Sum(events)
	second := record.Spend{TokensIn: sum.TokensIn, TokensOut: sum.TokensOut, USD: sum.USD, ModelCalls: sum.ModelCalls}
	first := record.Spend{TokensIn: 2100, TokensOut: 150, USD: 0.0004, ModelCalls: 2}
	var ch record.Changes
	ch.SetResult(record.ResultStopped)
	ch.SetFailure("checks_failed")
	ch.SetStopped("group 2")
	ch.SetCheckLog("$ grep -q \"hello 2\" greeting-2.txt\ngrep: greeting-2.txt: No such file or directory\nexit status 2")
	ch.SetGroup(1)
	ch.SetStagePR(7)
	ch.SetAttempt(2)
	ch.SetSpend(first.Add(second))
	ch.SetJobs([]record.JobOutcome{
		{Job: 1, RunID: 101, Result: record.ResultYielded, Failure: "rate_limited", Spend: first, Requests: 9},
		{Job: 2, RunID: 102, Result: record.ResultStopped, Failure: "checks_failed", Group: 1, Spend: second, Requests: 7},
	})
	_, copyText := trace.Bound(events, trace.RecordLimit)
	ch.SetTrace(json.RawMessage(copyText))
	return recordCommentText(t, ch)
}

// traceRows returns the rows of the trace table: the lines after its SEQ
// header, split into fields.
func traceRows(t *testing.T, stdout string) [][]string {
	t.Helper()
	_, table, ok := strings.Cut(stdout, "\nSEQ ")
	if !ok {
		t.Fatalf("no trace table (a SEQ header) in:\n%s", stdout)
	}
	var rows [][]string
	for _, l := range strings.Split(table, "\n")[1:] {
		if strings.TrimSpace(l) == "" {
			break
		}
		rows = append(rows, strings.Fields(l))
	}
	return rows
}

// toSeconds is e as the record copy keeps it: whole seconds.
func toSeconds(events []trace.Event) []trace.Event {
	out := make([]trace.Event, len(events))
	for i, e := range events {
		e.Time = e.Time.Truncate(time.Second)
		out[i] = e
	}
	return out
}

func TestExplainTrace(t *testing.T) {
	t.Run("record copy", func(t *testing.T) {
		w := newExplainWorld(t)
		// Enough repair rounds that the copy cannot hold them all: the newest
		// events are kept and the rest counted as dropped.
		events := stoppedRun(t, &bytes.Buffer{}, 2, 40)
		n := w.item(stoppedComment(t, events))

		got := w.explainJSON(strconv.Itoa(n), "--trace")
		if got.Trace == nil {
			t.Fatal("--json --trace printed no trace")
		}
		tr := got.Trace
		if tr.Dropped == 0 || tr.Dropped+len(tr.Events) != len(events) {
			t.Fatalf("dropped %d + kept %d, want a positive drop count adding up to the %d events of the run", tr.Dropped, len(tr.Events), len(events))
		}
		want := toSeconds(events[tr.Dropped:])
		if diff := cmp.Diff(want, tr.Events); diff != "" {
			t.Errorf("--json events differ from the newest events of the run (-want +got):\n%s", diff)
		}
		if tr.Job != 2 || tr.Source != "record" {
			t.Errorf("trace job %d source %q, want job 2 from the record", tr.Job, tr.Source)
		}

		code, stdout, stderr := w.explain(strconv.Itoa(n), "--trace")
		if code != ExitOK {
			t.Fatalf("explain --trace: exit %d\n%s", code, stderr)
		}
		if want := fmt.Sprintf("%d events; %d older events dropped", len(tr.Events), tr.Dropped); !strings.Contains(stdout, want) {
			t.Errorf("the trace header does not say %q:\n%s", want, stdout)
		}
		rows := traceRows(t, stdout)
		if len(rows) != len(want) {
			t.Fatalf("%d rows in the trace table, want %d:\n%s", len(rows), len(want), stdout)
		}
		for i, e := range want {
			row := rows[i]
			if len(row) < 6 {
				t.Fatalf("row %d has %d fields: %q", i+1, len(row), row)
			}
			if row[0] != strconv.Itoa(e.Seq) || row[1] != e.Time.Format("15:04:05") || row[2] != string(e.Type) {
				t.Errorf("row %d = %q, want seq %d at %s, type %s", i+1, row[:3], e.Seq, e.Time.Format("15:04:05"), e.Type)
			}
			line := strings.Join(row, " ")
			for _, field := range []string{e.Model, e.Tool, e.ResultClass, string(e.Phase), e.Outcome} {
				if field != "" && !strings.Contains(line, field) {
					t.Errorf("row %d lacks %q: %q", i+1, field, line)
				}
			}
			if e.Type == trace.TypeCheckRun && !strings.Contains(line, "exit "+strconv.Itoa(e.ExitCode)) {
				t.Errorf("row %d lacks the exit code %d: %q", i+1, e.ExitCode, line)
			}
			if e.Duration > 0 && row[len(row)-1] != e.Duration.String() {
				t.Errorf("row %d ends %q, want the duration %s", i+1, row[len(row)-1], e.Duration)
			}
		}
	})

	t.Run("artifact", func(t *testing.T) {
		w := newExplainWorld(t)
		// A runner that kept its temporary directory appended two Jobs to
		// one file: the newest is the last run.
		var artifact bytes.Buffer
		stoppedRun(t, &artifact, 1, 1)
		last := stoppedRun(t, &artifact, 2, 3)
		path := filepath.Join(t.TempDir(), "roadmap-trace.jsonl")
		if err := os.WriteFile(path, artifact.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		n := w.item(stoppedComment(t, last))

		got := w.explainJSON(strconv.Itoa(n), "--trace-file", path)
		if got.Trace == nil || got.Trace.Source != path || got.Trace.Job != 2 || got.Trace.Dropped != 0 {
			t.Fatalf("trace = %+v, want Job 2 from %s with nothing dropped", got.Trace, path)
		}
		// The artifact keeps full times: the events come back exactly.
		if diff := cmp.Diff(last, got.Trace.Events); diff != "" {
			t.Errorf("--json events differ from the last run in the artifact (-want +got):\n%s", diff)
		}
		code, stdout, stderr := w.explain("--trace-file", path, strconv.Itoa(n))
		if code != ExitOK {
			t.Fatalf("explain --trace-file: exit %d\n%s", code, stderr)
		}
		rows := traceRows(t, stdout)
		if len(rows) != len(last) {
			t.Fatalf("%d rows, want the %d events of Job 2:\n%s", len(rows), len(last), stdout)
		}
		for i, e := range last {
			if rows[i][0] != strconv.Itoa(e.Seq) || rows[i][1] != e.Time.Format("15:04:05.000") {
				t.Errorf("row %d = %q, want seq %d at %s", i+1, rows[i][:2], e.Seq, e.Time.Format("15:04:05.000"))
			}
		}
	})

	t.Run("no trace in the record", func(t *testing.T) {
		w := newExplainWorld(t)
		n := w.item(blockComment("implement.result: yielded"))
		code, stdout, stderr := w.explain(strconv.Itoa(n), "--trace")
		if code != ExitOK || !strings.Contains(stderr, "no trace in its record") || strings.Contains(stdout, "SEQ") {
			t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant exit 0, a note on stderr and no table", code, stderr, stdout)
		}
		if got := w.explainJSON(strconv.Itoa(n), "--trace"); got.Trace != nil {
			t.Errorf("trace = %+v, want null", got.Trace)
		}
	})
}

// fieldsRow finds the line whose fields start with want.
func fieldsRow(out string, want ...string) bool {
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= len(want) && cmp.Equal(f[:len(want)], want) {
			return true
		}
	}
	return false
}

func TestExplainCost(t *testing.T) {
	w := newExplainWorld(t)
	events := stoppedRun(t, &bytes.Buffer{}, 2, 2)
	n := w.item(stoppedComment(t, events))
	sum := trace.Sum(events)

	got := w.explainJSON(strconv.Itoa(n))
	want := explain.Output{
		Issue: n, Title: "Add greetings", Result: "stopped", Failure: "checks_failed", Stopped: "group 2", Group: 1, PR: 7,
		Spend: record.Spend{TokensIn: 2100 + sum.TokensIn, TokensOut: 150 + sum.TokensOut, USD: 0.0004 + sum.USD, ModelCalls: 2 + sum.ModelCalls},
		// 9 + 7: the counted requests of both Jobs.
		Requests: 16,
		Jobs: []explain.Job{
			{Job: 1, RunID: 101, Result: "yielded", Failure: "rate_limited", TokensIn: 2100, TokensOut: 150, USD: 0.0004, ModelCalls: 2, Requests: 9},
			{Job: 2, RunID: 102, Result: "stopped", Failure: "checks_failed", Group: 1, TokensIn: sum.TokensIn, TokensOut: sum.TokensOut,
				USD: sum.USD, ModelCalls: sum.ModelCalls, Requests: 7},
		},
		Stage: explain.Stage{Jobs: []explain.Job{}},
		Waits: explain.Waits{Who: "person", What: "the item stopped on checks_failed at group 2; the check log below goes to the next Job's first step",
			CheckLog: "$ grep -q \"hello 2\" greeting-2.txt\ngrep: greeting-2.txt: No such file or directory\nexit status 2"},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return fmt.Sprintf("%.9f", a) == fmt.Sprintf("%.9f", b) })); diff != "" {
		t.Errorf("explain --json (-want +got):\n%s", diff)
	}

	code, stdout, stderr := w.explain(strconv.Itoa(n))
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, row := range [][]string{
		{"JOB", "RUN", "RESULT", "FAILURE", "LAST", "GROUP", "TOKENS", "IN", "TOKENS", "OUT", "USD", "MODEL", "CALLS", "GITHUB", "REQUESTS"},
		{"1", "101", "yielded", "rate_limited", "0", "2,100", "150", "$0.0004", "2", "9"},
		{"2", "102", "stopped", "checks_failed", "1", "6,300", "450", "$0.0012", "6", "7"},
	} {
		if !fieldsRow(stdout, row...) {
			t.Errorf("no row %q in:\n%s", row, stdout)
		}
	}
	for _, s := range []string{
		"What ran", "What it cost", "What waits",
		"item spend: 8,400 tokens in, 600 out, $0.0016, 8 model calls",
		"GitHub requests by the Jobs: 16 over 2 Job(s), stage's included",
		"person: the item stopped on checks_failed at group 2",
		"    grep: greeting-2.txt: No such file or directory",
	} {
		if !strings.Contains(stdout, s) {
			t.Errorf("the output lacks %q:\n%s", s, stdout)
		}
	}
	if strings.Contains(stdout, "SEQ") {
		t.Errorf("without --trace the output holds a trace table:\n%s", stdout)
	}
}

func TestExplainWaits(t *testing.T) {
	block := blockComment
	tests := []struct {
		name     string
		comment  string
		who      string
		what     string
		question string
		checkLog string
	}{
		{
			name: "stopped: a person, with the check log tail",
			comment: block(`implement.check_log: "`+strings.Repeat(`noise\n`, 30)+`FAIL: TestGreeting"`, "implement.failure: checks_failed",
				"implement.result: stopped", `implement.stopped: "group 2"`),
			who: "person", what: "the item stopped on checks_failed at group 2",
			checkLog: strings.Repeat("noise\n", explain.CheckLogLines-1) + "FAIL: TestGreeting",
		},
		{
			name:    "yielded: a continuation resumes after the last group",
			comment: block("implement.failure: rate_limited", "implement.group: 2", "implement.result: yielded"),
			who:     "continuation", what: "a continuation Job resumes after group 2, the last that passed (the Job yielded on rate_limited)",
		},
		{
			name:    "yielded before any group",
			comment: block("implement.result: yielded"),
			who:     "continuation", what: "a continuation Job resumes from the first group",
		},
		{
			name:    "returned: the plan goes back to stage",
			comment: block("implement.failure: plan_wrong", "implement.group: 1", "implement.result: returned"),
			who:     "stage", what: "stage amends it, then implement resumes after group 1",
		},
		{
			name:    "returned: a question for a person",
			comment: block("implement.failure: needs_input", `implement.question: "Keep the v1 endpoint?"`, "implement.result: returned"),
			who:     "person", what: "answer the question on the issue", question: "Keep the v1 endpoint?",
		},
		{
			name:    "ready: review the PR",
			comment: block("implement.result: ready", "stage.pr: 7"),
			who:     "reviewer", what: "review PR #7",
		},
		{
			name: "the last Job wrote no result",
			comment: block("implement.group: 1", `implement.jobs: [{"job":1,"run_id":101,"result":"yielded","spend":{"tokens_in":1,"tokens_out":1,"usd":0,"model_calls":1}},{"job":2,"run_id":102,"group":1,"spend":{"tokens_in":1,"tokens_out":1,"usd":0,"model_calls":1},"requests":4}]`,
				"implement.result: yielded"),
			who: "report", what: "Job 2 (run 102) wrote no result: it is still running, or it was killed; report classifies a killed Job from its log and dispatches a continuation, which resumes after group 1",
		},
		{
			name:    "only stage has run",
			comment: block("stage.state: planned"),
			who:     "", what: "no implement Job has recorded an outcome yet (stage.state: planned)",
		},
	}
	w := newExplainWorld(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := w.item(tt.comment)
			got := w.explainJSON(strconv.Itoa(n)).Waits
			if got.Who != tt.who || !strings.Contains(got.What, tt.what) || got.Question != tt.question || got.CheckLog != tt.checkLog {
				t.Errorf("waits = %+v\nwant who %q, what containing %q, question %q, check log %q", got, tt.who, tt.what, tt.question, tt.checkLog)
			}
			code, stdout, _ := w.explain(strconv.Itoa(n))
			if code != ExitOK || !strings.Contains(stdout, "What waits\n") || !strings.Contains(stdout, tt.what) {
				t.Errorf("exit %d; the human output does not say %q under What waits:\n%s", code, tt.what, stdout)
			}
		})
	}
}

func TestExplainErrors(t *testing.T) {
	w := newExplainWorld(t)
	noRecord := w.issue("Just an idea, nothing has run.\n")
	// The body is the person's: a record block there is not the record.
	inBody := w.issue("Text.\n\n<!-- roadmap:record v1\nimplement.result: ready\n-->\n")
	malformed := w.item(blockComment("implement.group: two"))
	badTrace := w.item(blockComment("implement.result: stopped", `implement.trace: {"v":2,"ev":[]}`))
	ok := w.item(blockComment("implement.result: ready"))
	missing := filepath.Join(t.TempDir(), "missing.jsonl")

	tests := []struct {
		name    string
		args    []string
		environ []string
		code    int
		stderr  string
	}{
		{"no issue", nil, nil, ExitUsage, "usage: roadmap explain ISSUE"},
		{"two issues", []string{"1", "2"}, nil, ExitUsage, "usage"},
		{"not a number", []string{"twelve"}, nil, ExitUsage, `"twelve" is not an issue number`},
		{"zero", []string{"0"}, nil, ExitUsage, "not an issue number"},
		{"unknown flag", []string{"1", "--verbose"}, nil, ExitUsage, "unknown flag: --verbose"},
		{"no such issue", []string{"999"}, nil, ExitUsage, "issue #999 not found in acme/widgets"},
		{"no record", []string{strconv.Itoa(noRecord)}, nil, ExitUsage, "has no roadmap record"},
		{"a record block in the body only", []string{strconv.Itoa(inBody)}, nil, ExitUsage, "a record block in the issue body or in a comment not by github-actions[bot] is ignored"},
		{"malformed record", []string{strconv.Itoa(malformed)}, nil, ExitUsage, "line 4"},
		{"malformed trace copy", []string{strconv.Itoa(badTrace), "--trace"}, nil, ExitUsage, "implement.trace: parse trace record copy: version 2"},
		{"unreadable trace file", []string{strconv.Itoa(ok), "--trace-file", missing}, nil, ExitUsage, "trace file"},
		{"no token", []string{strconv.Itoa(ok)}, []string{"GITHUB_REPOSITORY=acme/widgets"}, ExitAuth, "roadmap explain: no GitHub token: set GH_TOKEN or GITHUB_TOKEN, or log in with 'gh auth login'"},
		{"no repository", []string{strconv.Itoa(ok)}, []string{"GITHUB_TOKEN=" + explainToken}, ExitUsage, "GITHUB_REPOSITORY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			environ := w.environ
			if tt.environ != nil {
				environ = tt.environ
			}
			var out, errb bytes.Buffer
			env := newEnv(append([]string{"explain"}, tt.args...), environ, strings.NewReader(""), &out, &errb)
			env.ghAuthToken = noGHLogin
			code := run(context.Background(), env)
			if code != tt.code || !strings.Contains(errb.String(), tt.stderr) {
				t.Errorf("exit %d, stderr %q; want exit %d and a message containing %q", code, errb.String(), tt.code, tt.stderr)
			}
			if out.Len() != 0 {
				t.Errorf("a failed explain printed data on stdout: %q", out.String())
			}
		})
	}

	t.Run("API failure", func(t *testing.T) {
		w.fake.AddFault(githubfake.Rule{Method: "GET", Path: "/repos/acme/widgets/issues/*", Status: 403,
			Body: `{"message":"Resource not accessible by integration"}`})
		t.Cleanup(w.fake.ClearFaults)
		code, stdout, stderr := w.explain(strconv.Itoa(ok))
		if code != ExitInternal || !strings.Contains(stderr, "403") || stdout != "" {
			t.Errorf("exit %d, stderr %q, stdout %q; want exit 3 naming the 403", code, stderr, stdout)
		}
	})
}

func TestExplainReadsTheIssueOnce(t *testing.T) {
	w := newExplainWorld(t)
	n := w.item(stoppedComment(t, stoppedRun(t, &bytes.Buffer{}, 2, 2)))
	w.fake.ResetLog()
	if code, _, stderr := w.explain(strconv.Itoa(n), "--trace", "--json"); code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var got []string
	for _, r := range w.fake.Requests() {
		got = append(got, r.Method+" "+r.Path)
	}
	// The issue for its title, its comments once for the record comment
	// (explain has no comment id to read it by), and nothing else.
	want := []string{fmt.Sprintf("GET /repos/acme/widgets/issues/%d", n), fmt.Sprintf("GET /repos/acme/widgets/issues/%d/comments", n)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// The record is anyone's to edit: what it holds must not drive the terminal.
func TestExplainTerminalSafe(t *testing.T) {
	w := newExplainWorld(t)
	var buf bytes.Buffer
	r := newTraceRun(t, &buf, 1, time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC))
	r.add(0, trace.Event{Type: trace.TypePhase, Phase: trace.PhaseGroupStarted, Group: 1, Step: "Greeting\x1b]52;c;cm0gLXJmIH4=\x07 1\tx"})
	r.add(time.Second, trace.Event{Type: trace.TypeCheckRun, Group: 1, Command: "make \u202etest\x1b[2J", ExitCode: 2})
	_, copyText := trace.Bound(r.rec.Events(), trace.RecordLimit)
	var ch record.Changes
	ch.SetResult(record.ResultStopped)
	ch.SetStopped("group 1")
	ch.SetCheckLog("\x1b[31mFAIL\x1b[0m TestGreeting")
	ch.SetTrace(json.RawMessage(copyText))
	n := w.item(recordCommentText(t, ch))
	code, stdout, stderr := w.explain(strconv.Itoa(n), "--trace")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, bad := range []string{"\x1b", "\x07", "\u202e", "\t"} {
		if strings.Contains(stdout, bad) {
			t.Errorf("the output holds %q:\n%q", bad, stdout)
		}
	}
	for _, want := range []string{`Greeting\x1b]52;c;cm0gLXJmIH4=\x07 1\x09x`, `make \u202etest\x1b[2J`, `\x1b[31mFAIL\x1b[0m TestGreeting`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the output does not show %q escaped:\n%s", want, stdout)
		}
	}
}

func TestParseInterspersed(t *testing.T) {
	tests := []struct {
		args  []string
		pos   []string
		trace bool
	}{
		{[]string{"12", "--trace"}, []string{"12"}, true},
		{[]string{"--trace", "12"}, []string{"12"}, true},
		{[]string{"12"}, []string{"12"}, false},
		{[]string{"--", "--trace"}, []string{"--trace"}, false},
		{[]string{"12", "--", "13"}, []string{"12", "13"}, false},
	}
	for _, tt := range tests {
		env := &Env{Stderr: &bytes.Buffer{}}
		fs := newFlags(env, "explain")
		tr := fs.Bool("trace", false, "")
		_, ok := parseFlags(fs, tt.args)
		if pos := fs.Args(); !ok || !cmp.Equal(pos, tt.pos) || *tr != tt.trace {
			t.Errorf("parseFlags(%q): args %q, trace %v, ok %v; want %q, trace %v", tt.args, pos, *tr, ok, tt.pos, tt.trace)
		}
	}
}

// noGHLogin stands for a machine whose gh CLI is missing or logged out.
func noGHLogin(context.Context) (string, error) { return "", errors.New("gh: not logged in") }

// TestExplainOffline: a saved fake GitHub state (what `roadmap demo --keep
// DIR` leaves) is read with no GITHUB_REPOSITORY and no token, by --state and
// by the state beside a --trace-file.
func TestExplainOffline(t *testing.T) {
	w := newExplainWorld(t)
	n := strconv.Itoa(w.item(blockComment("implement.result: ready", "stage.pr: 7")))
	dir := t.TempDir()
	if err := w.fake.Save(filepath.Join(dir, explain.StateFile)); err != nil {
		t.Fatal(err)
	}
	tracePath := filepath.Join(dir, "trace-job-1.jsonl")
	var tb bytes.Buffer
	stoppedRun(t, &tb, 1, 1)
	if err := os.WriteFile(tracePath, tb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{n, "--state", dir}, {n, "--trace-file", tracePath}} {
		var out, errb bytes.Buffer
		env := newEnv(append([]string{"explain"}, args...), nil, strings.NewReader(""), &out, &errb)
		env.ghAuthToken = noGHLogin
		if code := run(context.Background(), env); code != ExitOK || !strings.Contains(out.String(), "issue #"+n+": Add greetings") ||
			!strings.Contains(out.String(), "result: ready") {
			t.Errorf("explain %v offline: exit %d\nstdout: %s\nstderr: %s", args, code, out.String(), errb.String())
		}
	}
	// The trace alone, with no state beside it.
	alone := filepath.Join(t.TempDir(), "trace-job-1.jsonl")
	if err := os.WriteFile(alone, tb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	env := newEnv([]string{"explain", n, "--trace-file", alone}, nil, strings.NewReader(""), &out, &errb)
	env.ghAuthToken = noGHLogin
	if code := run(context.Background(), env); code != ExitOK || !strings.Contains(out.String(), "Trace of Job 1") {
		t.Errorf("explain --trace-file alone: exit %d\nstdout: %s\nstderr: %s", code, out.String(), errb.String())
	}
}
