package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/demo"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/ledger"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// TestImplementDayBudget: `roadmap implement` with a day budget bounded in
// tokens does not start a Job once the dashboard's ledger for today has
// reached the token bound, though its USD is far below the USD bound.
func TestImplementDayBudget(t *testing.T) {
	refusedPastDayBudget(t, "implement", "--attempt", "1")
}

// TestStageDayBudget: `roadmap stage` is held to the day's budget as
// implement is: past it, no stage Job starts and no model is called.
func TestStageDayBudget(t *testing.T) {
	refusedPastDayBudget(t, "stage")
}

// refusedPastDayBudget runs verb on the demo's issue with a dashboard whose
// ledger for today holds 6,000 tokens in against a day bound of 5,000: the
// Job must not start, and must end as a Job that yielded on
// day_budget_exhausted, for report to wait for the next day.
func refusedPastDayBudget(t *testing.T, verb string, args ...string) {
	t.Helper()
	ctx := context.Background()
	w, err := demo.NewWorld(ctx, t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var calls atomic.Int32
	w.OnModelCall(func(string, int) { calls.Add(1) })
	base, _ := w.Config()
	data, _ := os.ReadFile(base)
	cfg := filepath.Join(t.TempDir(), "roadmap.yml")
	os.WriteFile(cfg, append(data, []byte("budgets:\n  day: {usd: 100, tokens_in: 5000}\n")...), 0o644)
	dash := w.Fake.CreateIssue(githubfake.Issue{Title: "roadmap dashboard"})
	line := ledger.Line(ledger.Entry{Day: ledger.Day(time.Now()), Issue: 99, Job: 1, USD: 0.01, TokensIn: 6000, TokensOut: 100, ModelCalls: 3})
	if _, err := w.Fake.AddComment(dash, github.DefaultIdentity, "<!-- roadmap:ledger issue=99 job=1 -->\n"+line); err != nil {
		t.Fatal(err)
	}
	ws, err := w.Workspace("day")
	if err != nil {
		t.Fatal(err)
	}
	outputs := filepath.Join(t.TempDir(), "outputs")
	env := append(w.Env(8100, t.TempDir()), "GITHUB_OUTPUT="+outputs)
	var stdout, stderr bytes.Buffer
	argv := append([]string{verb, "--issue", fmt.Sprint(w.Issue), "--config", cfg, "--workdir", ws, "--dashboard", fmt.Sprint(dash)}, args...)
	if code := Main(ctx, argv, env, strings.NewReader(""), &stdout, &stderr); code != ExitOK {
		t.Fatalf("%s exited %d\n%s", verb, code, stderr.String())
	}
	if !strings.Contains(stderr.String(), string(failure.DayBudgetExhausted)) || !strings.Contains(stderr.String(), "5000 tokens in") {
		t.Errorf("the Job's log does not say the day's token budget is spent:\n%s", stderr.String())
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("%d model calls past the day's token budget, want 0: the Job started", n)
	}
	out, _ := os.ReadFile(outputs)
	for _, want := range []string{"result<<", "\nyielded\n", "failure<<", "\nday_budget_exhausted\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the Job's outputs lack %q: report could not tell it yielded on the day's budget:\n%s", want, out)
		}
	}
}

// The tests below run `roadmap implement` against a model server of their
// own: the demo world's fake GitHub and repository, and conversations the
// test writes, served over the OpenAI-compatible API on loopback.

// modelServer serves conversations as a hosted model would and keeps the
// model and max_tokens of every chat request, in order.
type modelServer struct {
	URL string

	mu   sync.Mutex
	sent []sentRequest
}

type sentRequest struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
}

func newModelServer(t *testing.T, convs []*llm.Conversation) *modelServer {
	t.Helper()
	s := &modelServer{}
	replay := llm.NewReplay(convs)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		var req sentRequest
		if json.Unmarshal(body, &req) == nil {
			s.mu.Lock()
			s.sent = append(s.sent, req)
			s.mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		replay.ServeHTTP(rw, r)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/v1"
	return s
}

func (s *modelServer) requests() []sentRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sentRequest(nil), s.sent...)
}

// Tool calls for the demo's task group 1: a test of Hello alone does not
// compile, so the group's checks fail until Hello is written.
const (
	callWriteHelloTest = `{"name":"write_file","arguments":{"path":"greet_test.go","content":"package greet\n\nimport \"testing\"\n\nfunc TestHello(t *testing.T) {\n\tif got, want := Hello(\"Ada\"), \"Hello, Ada!\"; got != want {\n\t\tt.Errorf(\"Hello(Ada) = %q, want %q\", got, want)\n\t}\n}\n"}}`
	callWriteHello     = `{"name":"write_file","arguments":{"path":"greet.go","content":"// Package greet says hello and goodbye.\npackage greet\n\n// Hello greets name.\nfunc Hello(name string) string { return \"Hello, \" + name + \"!\" }\n"}}`
	callFinish         = `{"name":"finish","arguments":{"summary":"done"}}`
)

// groupOne is a conversation for task group 1, on model when it is not
// empty, one turn per tool call, each costing 1,000 tokens in and 100 out.
func groupOne(t *testing.T, name, model string, calls ...string) *llm.Conversation {
	t.Helper()
	var turns []string
	for _, c := range calls {
		turns = append(turns, fmt.Sprintf(`{"response":{"tool_calls":[%s],"usage":{"tokens_in":1000,"tokens_out":100}}}`, c))
	}
	data := fmt.Sprintf(`{"comment":"written by hand for issue 17's link tests","source":"hand","match":"task group 1 of","model":%q,"turns":[%s]}`,
		model, strings.Join(turns, ","))
	c, err := llm.ParseConversation(name, []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// demoConversations are the demo's recorded conversations, without group 1's
// when the test brings its own.
func demoConversations(t *testing.T, w *demo.World, withGroupOne bool) []*llm.Conversation {
	t.Helper()
	convs, err := llm.LoadFixtures(filepath.Join(w.Dir, "fixtures"))
	if err != nil {
		t.Fatal(err)
	}
	var out []*llm.Conversation
	for _, c := range convs {
		if withGroupOne || !strings.HasPrefix(c.Name, "group-1-") {
			out = append(out, c)
		}
	}
	return out
}

// linkWorld is the demo world with its CI playing.
func linkWorld(t *testing.T) *demo.World {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	w, err := demo.NewWorld(ctx, t.TempDir(), 0)
	if err != nil {
		stop()
		t.Fatal(err)
	}
	go w.PlayCI(ctx)
	t.Cleanup(func() { stop(); w.Close() })
	return w
}

// writeConfig writes a repository configuration: the models block given, the
// demo's checks and implement settings, and extra.
func writeConfig(t *testing.T, models, implement, extra string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "roadmap.yml")
	data := "models:\n" + models +
		"prices:\n  demo-model: {input: 0.15, output: 0.60}\n  small: {input: 0.15, output: 0.60}\n  large: {input: 2.50, output: 10.00}\n" +
		"checks:\n  commands: [\"go vet ./...\"]\n" +
		"implement:\n  poll_interval: 1s\n  watch_timeout: 60s\n" + implement + extra
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func oneModel(url string) string {
	return "  - provider: openai-compatible\n    name: demo-model\n    base_url: " + url + "\n"
}

// TestImplementProviderRetryInTrace: a model server that refuses a call once
// with a 429 and once with a 500 leaves two retry events in the Job's trace
// file, the one the step uploads, and the Job goes on to its end. Both
// refusals are group 1's (its first and second turns): the plan is cut to it
// (oneGroupWorld), the Job still whole to ready.
func TestImplementProviderRetryInTrace(t *testing.T) {
	w := linkWorld(t)
	oneGroupWorld(t, w)
	convs := demoConversations(t, w, true)
	for _, c := range convs {
		if strings.HasPrefix(c.Name, "group-1-") {
			c.Turns[0].Errors = []llm.InjectedError{{Status: http.StatusTooManyRequests, RetryAfter: "0"}}
			c.Turns[1].Errors = []llm.InjectedError{{Status: http.StatusInternalServerError}}
		}
	}
	srv := newModelServer(t, convs)
	cfg := writeConfig(t, oneModel(srv.URL), "", "")
	traceFile := filepath.Join(t.TempDir(), "trace.jsonl")
	res := runImplementJob(t, w, cfg, 1, "--trace-file", traceFile)
	if res.Result != "ready" {
		t.Errorf("result %s/%s (%s), want ready: the retried calls should succeed", res.Result, res.Failure, res.Reason)
	}
	f, err := os.Open(traceFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	events, err := trace.ReadJSONL(f)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range events {
		if e.Type == trace.TypeRetry && strings.Contains(e.Reason, "HTTP") {
			got = append(got, fmt.Sprintf("group %d: %s", e.Group, e.Reason))
		}
	}
	want := []string{"group 1: rate_limited (HTTP 429)", "group 1: transient (HTTP 500)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the trace file's retry events of the model server's refusals (-want +got):\n%s", diff)
	}
}

// TestImplementRepairRounds: with implement.repair_rounds: 1, a group whose
// checks fail in its first round stops the Job with checks_failed after that
// one round, though the model would fix it in a second.
func TestImplementRepairRounds(t *testing.T) {
	w := linkWorld(t)
	convs := append([]*llm.Conversation{groupOne(t, "group-1", "", callWriteHelloTest, callFinish, callWriteHello, callFinish)},
		demoConversations(t, w, false)...)
	srv := newModelServer(t, convs)
	cfg := writeConfig(t, oneModel(srv.URL), "  repair_rounds: 1\n", "")
	res, code, log := implementJob(t, w, cfg, 1)
	if code != ExitFindings || res.Result != "stopped" || res.Failure != "checks_failed" {
		t.Fatalf("exit %d, result %s/%s (%s), want exit %d, stopped/checks_failed\n%s", code, res.Result, res.Failure, res.Reason, ExitFindings, log)
	}
	if !strings.Contains(res.Reason, "after 1 rounds") {
		t.Errorf("reason %q, want the checks failing after 1 round", res.Reason)
	}
	// One round is the two calls of its conversation up to finish.
	if n := len(srv.requests()); n != 2 {
		t.Errorf("%d model calls, want 2: one round", n)
	}
}

// ladderConversations: on tier 0 ("small") group 1 writes a test of Hello
// alone and finishes twice with the same failure, so the third round starts
// afresh on tier 1 ("large"), whose conversation is fixes. The demo's groups
// 2 and 3 answer any tier.
func ladderConversations(t *testing.T, w *demo.World, fixes []string) []*llm.Conversation {
	return append([]*llm.Conversation{
		groupOne(t, "group-1-small", "small", callWriteHelloTest, callFinish, callFinish),
		groupOne(t, "group-1-large", "large", fixes...),
	}, demoConversations(t, w, false)...)
}

// ladderModels are the two tiers on one server, each with its own max_output.
func ladderModels(url string) string {
	return "  - provider: openai-compatible\n    name: small\n    base_url: " + url + "\n    max_output: 500\n" +
		"  - provider: openai-compatible\n    name: large\n    base_url: " + url + "\n    max_output: 1500\n"
}

// TestImplementLadder: with two tiers where tier 0 fails group 1 and tier 1
// fixes it, the Job passes, and the job log's spend lines show group 1's
// last calls made on tier 1's model. The ladder is group 1's: the plan is
// cut to it (oneGroupWorld), the Job still whole to ready.
func TestImplementLadder(t *testing.T) {
	w := linkWorld(t)
	oneGroupWorld(t, w)
	srv := newModelServer(t, ladderConversations(t, w, []string{callWriteHello, callFinish}))
	cfg := writeConfig(t, ladderModels(srv.URL), "  repair_rounds: 3\n", "")
	res, code, log := implementJob(t, w, cfg, 1)
	if code != ExitOK || res.Result != "ready" {
		t.Fatalf("exit %d, result %s/%s (%s), want ready: tier 1 fixes group 1\n%s", code, res.Result, res.Failure, res.Reason, log)
	}
	spend, err := trace.ParseSpendLines(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range spend.Entries {
		if e.Group == 1 {
			got = append(got, e.Model)
		}
	}
	want := []string{"small", "small", "small", "large", "large"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("models of group 1's spend lines (-want +got):\n%s", diff)
	}
}

// TestImplementTierMaxOutput: each tier's requests carry the tier's own
// max_output as max_tokens, not tier 0's.
func TestImplementTierMaxOutput(t *testing.T) {
	w := linkWorld(t)
	// Tier 1 fails too: the Job stops after group 1's three rounds.
	srv := newModelServer(t, ladderConversations(t, w, []string{callFinish}))
	cfg := writeConfig(t, ladderModels(srv.URL), "  repair_rounds: 3\n", "")
	res, _, log := implementJob(t, w, cfg, 1)
	if res.Failure != "checks_failed" {
		t.Fatalf("result %s/%s (%s), want checks_failed after tier 1's round\n%s", res.Result, res.Failure, res.Reason, log)
	}
	want := []sentRequest{{"small", 500}, {"small", 500}, {"small", 500}, {"large", 1500}}
	if diff := cmp.Diff(want, srv.requests()); diff != "" {
		t.Errorf("model and max_tokens of the requests the model server got (-want +got):\n%s", diff)
	}
}

// TestImplementItemBudget: a small budgets.item in tokens in stops the Job
// with budget_exhausted before its spend passes the bound.
func TestImplementItemBudget(t *testing.T) {
	const bound = 4000 // the demo's group 1 alone takes 8,710 tokens in
	w := linkWorld(t)
	base, err := w.Config()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "roadmap.yml")
	if err := os.WriteFile(cfg, append(data, fmt.Sprintf("budgets:\n  item: {tokens_in: %d}\n", bound)...), 0o644); err != nil {
		t.Fatal(err)
	}
	res, code, log := implementJob(t, w, cfg, 1)
	if code != ExitFindings || res.Result != "stopped" || res.Failure != "budget_exhausted" {
		t.Fatalf("exit %d, result %s/%s (%s), want exit %d, stopped/budget_exhausted\n%s", code, res.Result, res.Failure, res.Reason, ExitFindings, log)
	}
	if res.Spend.TokensIn > bound || res.Spend.ModelCalls == 0 {
		t.Errorf("item spend %d tokens in over %d calls, want some calls and at most %d", res.Spend.TokensIn, res.Spend.ModelCalls, bound)
	}
}
