package record

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/plan"
)

// TestBoundsOnUntrustedInput feeds each input nobody here controls — a record
// block a person edited, a plan a model wrote, a configuration, a model's
// answer — malformed or oversized, and holds the clear error that names the
// limit. Most of the bounds are the record block's, so the table lives here.
func TestBoundsOnUntrustedInput(t *testing.T) {
	block := func(lines ...string) string {
		return "<!-- roadmap:record v1\n" + strings.Join(lines, "\n") + "\n-->"
	}
	parseErr := func(body string, kind ErrorKind, has ...string) func(t *testing.T) {
		return func(t *testing.T) {
			_, err := Parse(body)
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Kind != kind {
				t.Fatalf("Parse() error = %v, want a %s error", err, kind)
			}
			for _, h := range has {
				if !strings.Contains(err.Error(), h) {
					t.Errorf("Parse() error %q does not say %q", err, h)
				}
			}
		}
	}
	found := func(body, text string) func(t *testing.T) {
		return func(t *testing.T) {
			r, err := Parse(body)
			if err != nil {
				t.Fatalf("Parse() error = %v", err)
			}
			if g, ok := r.Group(); !ok || g != 2 {
				t.Errorf("Group() = %d, %v; want the block found, group 2", g, ok)
			}
			if r.Text() != text {
				t.Errorf("Text() = %q, want %q", r.Text(), text)
			}
		}
	}
	configErr := func(yml string, has ...string) func(t *testing.T) {
		return func(t *testing.T) {
			_, err := config.Parse("roadmap.yml", []byte(yml))
			if err == nil {
				t.Fatal("config.Parse() accepted it")
			}
			for _, h := range has {
				if !strings.Contains(err.Error(), h) {
					t.Errorf("config.Parse() error %q does not say %q", err, h)
				}
			}
		}
	}
	groups := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "## %d. Group %d\n\n- [ ] %d.1 Do it\n\n", i, i, i)
		}
		return b.String()
	}

	for _, tc := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"record block behind a BOM", found("\uFEFF"+block("implement.group: 2"), "")},
		{"record opener indented by three spaces", found("Intro.\n\n   "+block("  implement.group: 2"), "Intro.\n")},
		{"record opener indented by four spaces is code", func(t *testing.T) {
			r, err := Parse("Intro.\n\n    " + block("implement.group: 2"))
			if err != nil || r.Has(KeyImplementGroup) {
				t.Errorf("Parse(indented code) = %v, %v; want text, no block", r, err)
			}
		}},
		{"NUL byte in a value", parseErr(block("implement.stopped: a\x00b"), KindEncoding, "line 2", "NUL")},
		{"NUL byte in an unknown key's value", parseErr(block("zeta.note: \x00"), KindEncoding, "NUL")},
		{"invalid UTF-8 in a value", parseErr(block(`implement.check_log: "tail `+"\xff\xfe"+`"`), KindEncoding, "0xff", "not UTF-8")},
		{"half a surrogate pair escaped", parseErr(block(`implement.check_log: "a \ud800 b"`), KindType, `\ud800`, "surrogate")},
		{"70,000-character value", parseErr(block("zeta.note: "+strings.Repeat("x", 70_000)), KindTooLarge,
			"line 1", "at line 2", fmt.Sprint(MaxBlockChars))},
		{"50,000-character value", parseErr(block("implement.group: 2", "zeta.note: "+strings.Repeat("x", 50_000)), KindTooLarge,
			"line 3", "zeta.note", "50000 characters", fmt.Sprint(MaxValueChars))},
		{"block over the limit", parseErr(block("zeta.a: "+strings.Repeat("a", 30_000), "zeta.b: "+strings.Repeat("b", 30_000),
			"zeta.c: "+strings.Repeat("c", 30_000)), KindTooLarge, "line 1", fmt.Sprint(MaxBlockChars))},
		{"setters' largest value under the value bound", func(t *testing.T) {
			r := worstCase(t)
			for _, k := range r.Keys() {
				raw, _ := r.Raw(k)
				if n := utf8.RuneCountInString(raw); n > MaxValueChars*9/10 {
					t.Errorf("%s is written with %d characters, within 10%% of MaxValueChars %d", k, n, MaxValueChars)
				}
			}
		}},
		{"a write of bytes that are not UTF-8 is refused", func(t *testing.T) {
			var c Changes
			c.set(KeyImplementStopped, "step \xff")
			if err := (&Record{}).Apply(c); err == nil || !strings.Contains(err.Error(), "not UTF-8") {
				t.Errorf("Apply(invalid UTF-8) error = %v, want a refusal", err)
			}
		}},
		{"10,000-group plan", func(t *testing.T) {
			tasks, err := plan.Parse([]byte(groups(10_000)))
			if err != nil {
				t.Fatal(err)
			}
			err = tasks.CheckGroupCount(0)
			if err == nil || !strings.Contains(err.Error(), "10000 task groups") || !strings.Contains(err.Error(), "at most 50 (implement.max_groups)") {
				t.Errorf("CheckGroupCount(default) = %v, want an error naming the limit 50 and implement.max_groups", err)
			}
			if err := tasks.CheckGroupCount(10_000); err != nil {
				t.Errorf("CheckGroupCount(10000) = %v, want none", err)
			}
		}},
		{"50-group plan passes the default", func(t *testing.T) {
			tasks, err := plan.Parse([]byte(groups(plan.DefaultMaxGroups)))
			if err != nil {
				t.Fatal(err)
			}
			if err := tasks.CheckGroupCount(config.Default().Implement.MaxGroups); err != nil {
				t.Errorf("CheckGroupCount(%d groups) = %v", plan.DefaultMaxGroups, err)
			}
		}},
		{"group limit in config", configErr("implement:\n  max_groups: 5000\n", "implement.max_groups", "1 to 1000")},
		{"20 MB label name", configErr("labels:\n  stage: "+strings.Repeat("l", 20<<20)+"\n", "20971538 bytes", "at most 1048576")},
		{"51-character label name", configErr("labels:\n  stage: "+strings.Repeat("é", 51)+"\n", "labels.stage", "51 characters", "at most 50")},
		{"long configuration string", configErr("checks:\n  commands:\n    - "+strings.Repeat("c", 5000)+"\n", "checks.commands[0]", "5000 characters", "at most 4096")},
		{"model answer over the limit", func(t *testing.T) {
			// The first answer is over the limit and calls no tool: kept,
			// the loop would send it back with a note on the next call.
			var calls atomic.Int32
			var largest atomic.Int64
			answer := func(content string) string {
				return fmt.Sprintf(`{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}]}`, content)
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n, _ := io.Copy(io.Discard, r.Body)
				if n > largest.Load() {
					largest.Store(n)
				}
				w.Header().Set("Content-Type", "application/json")
				if calls.Add(1) == 1 {
					io.WriteString(w, answer(strings.Repeat("a", llm.MaxAnswerBytes)))
					return
				}
				io.WriteString(w, answer("no tool"))
			}))
			defer srv.Close()
			c, err := llm.New(llm.Config{Provider: llm.ProviderOpenAICompatible, BaseURL: srv.URL, Model: "m", InputWindow: 1 << 20},
				llm.WithHTTPClient(srv.Client()))
			if err != nil {
				t.Fatal(err)
			}
			cfg := agent.Config{Models: []agent.Tier{{Name: "m", Model: c}}, Sandbox: noSandbox{}, MaxMalformed: 2}
			out, err := agent.Run(context.Background(), cfg, agent.Step{Task: "x"})
			if err != nil {
				t.Fatal(err)
			}
			if out.Status != agent.StatusModelError || !strings.Contains(out.Reason, fmt.Sprintf("%d-byte limit on one answer (llm.MaxAnswerBytes)", llm.MaxAnswerBytes)) {
				t.Errorf("outcome = %s (%s), want a model error naming the limit", out.Status, out.Reason)
			}
			if n := calls.Load(); n != 1 {
				t.Errorf("the server was asked %d times, want once (a refused answer is neither retried nor answered)", n)
			}
			if n := largest.Load(); n > 64<<10 {
				t.Errorf("a request of %d bytes went out: the refused answer was sent back", n)
			}
			// The runner classifies the step's reason by its text.
			if got := failure.ClassifyError(errors.New(out.Reason)); got != failure.Unknown {
				t.Errorf("class of the refused answer = %s, want %s", got, failure.Unknown)
			}
		}},
	} {
		t.Run(tc.name, tc.run)
	}
}

// noSandbox runs nothing: the answer-size case ends before any tool runs.
type noSandbox struct{}

func (noSandbox) Workspace() (string, error)     { return "", errors.New("no workspace") }
func (noSandbox) Resolve(string) (string, error) { return "", errors.New("no workspace") }
func (noSandbox) Split(string) ([]string, error) { return nil, errors.New("no workspace") }
func (noSandbox) Run(context.Context, []string) (agent.RunResult, error) {
	return agent.RunResult{}, errors.New("no workspace")
}
