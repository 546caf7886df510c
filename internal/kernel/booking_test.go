package kernel_test

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
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/kernel"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// TestBookingCoversServedTokens: at every kill point of a small agent run
// against the replay server over HTTP (the Job's context cancelled, the
// connection dropped once, or dropped at every retry, while call k is in
// flight and after the server served it), the spend the Job's observer counts for that call is at least the
// prompt tokens the server counted as served for it, and the Job's input
// tokens at least the server's total. The server counts as the most a real
// one could: the replay fixture's tokens_in for each turn is the request's
// ChatML rendering (Hermes tool preamble, tools indented as Llama 3.1's
// template does) at one token per byte of plain text and one per special
// token, so the booking is held against the request, not a number a fixture
// author chose.
func TestBookingCoversServedTokens(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("Greetings go in greeting.txt, one line.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	conv := &llm.Conversation{Name: "booking", Comment: "hand: list, read, finish", Source: llm.SourceHand,
		Match: "Add the greeting", Turns: []llm.Turn{
			{Response: llm.Response{ToolCalls: []llm.FixtureToolCall{{Name: "list_dir", Arguments: `{"path":"."}`}}}},
			{Response: llm.Response{ToolCalls: []llm.FixtureToolCall{{Name: "read_file", Arguments: `{"path":"notes.txt"}`}}}},
			{Response: llm.Response{ToolCalls: []llm.FixtureToolCall{{Name: "finish", Arguments: `{"summary":"read the notes, nothing to change"}`}}}},
		}}
	calls := len(conv.Turns)

	// The clean run gives each turn's request; its rendering is what the
	// server counts from then on.
	clean := runBooking(t, dir, conv, 0, "")
	if len(clean.bodies) != calls {
		t.Fatalf("the clean run sent %d requests, want %d", len(clean.bodies), calls)
	}
	for i, body := range clean.bodies {
		conv.Turns[i].Response.Usage = llm.FixtureUsage{TokensIn: serverCount(t, body), TokensOut: 50}
	}

	for _, mode := range []string{"cancel", "drop", "drop every attempt"} {
		for k := 1; k <= calls; k++ {
			t.Run(fmt.Sprintf("%s call %d", mode, k), func(t *testing.T) {
				r := runBooking(t, dir, conv, k, mode)
				served := r.stats.Served
				for i, s := range served {
					if got := serverCount(t, r.bodies[i]); got != s.TokensIn {
						t.Fatalf("request %d counts %d tokens but the fixture served %d: the run no longer sends the recorded requests", i+1, got, s.TokensIn)
					}
				}
				settled := map[int]trace.SpendEntry{}
				for _, e := range r.log.Entries {
					settled[e.Call] = e
				}
				call, ok := settled[k]
				if !ok {
					t.Fatalf("call %d was never settled; spend lines %+v", k, r.log)
				}
				// The served attempts of call k: one; dropped and retried,
				// two (the lost one and its answered retry); dropped every
				// time, each attempt the client's retries made.
				attempts := map[string]int{"cancel": 1, "drop": 2, "drop every attempt": llm.DefaultMaxRetries + 1}[mode]
				if len(served) < k-1+attempts {
					t.Fatalf("the server served %d requests, want call %d's %d attempts among them", len(served), k, attempts)
				}
				var want int64
				for _, s := range served[k-1 : k-1+attempts] {
					want += s.TokensIn
				}
				if call.TokensIn < want {
					t.Errorf("call %d is counted at %d tokens in (booked %d); the server served %d for it",
						k, call.TokensIn, r.log.Booked[k-1].TokensIn, want)
				}
				if mode != "drop" && !call.Estimated {
					t.Errorf("the cancelled call %d is settled as %+v, want its booking, flagged estimated", k, call)
				}
				if r.spend.TokensIn < r.stats.TokensIn {
					t.Errorf("the Job counts %d tokens in; the server served %d", r.spend.TokensIn, r.stats.TokensIn)
				}
			})
		}
	}
}

type bookingRun struct {
	bodies [][]byte
	stats  llm.Stats
	log    trace.SpendLog
	spend  struct{ TokensIn int64 }
}

// runBooking runs one agent step through a Job's observer against the
// replay server; the server serves request kill (from 1; 0: none) and then,
// instead of answering, cancels the step's context or drops the connection
// (mode "drop every attempt": request kill and every one after it).
func runBooking(t *testing.T, dir string, conv *llm.Conversation, kill int, mode string) bookingRun {
	t.Helper()
	replay := llm.NewReplay([]*llm.Conversation{conv})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		mu.Lock()
		bodies = append(bodies, body)
		n := len(bodies)
		mu.Unlock()
		if n != kill && (mode != "drop every attempt" || kill == 0 || n < kill) {
			replay.ServeHTTP(w, r)
			return
		}
		// Served and counted; the answer never reaches the client.
		replay.ServeHTTP(httptest.NewRecorder(), r)
		if mode == "cancel" {
			cancel()
			<-r.Context().Done()
			return
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		conn.Close()
	}))
	defer srv.Close()

	client, err := llm.New(llm.Config{Provider: llm.ProviderOpenAICompatible, BaseURL: srv.URL, Model: "m", MaxOutput: 256},
		llm.WithHTTPClient(srv.Client()), llm.WithClock(instantClock{}))
	if err != nil {
		t.Fatal(err)
	}
	var logBuf bytes.Buffer
	rec, err := trace.NewRecorder(io.Discard, nopMask{}, time.Now, 1)
	if err != nil {
		t.Fatal(err)
	}
	j := &kernel.Job{O: kernel.Options{Log: &logBuf, Trace: rec, Mask: func(s string) string { return s }}, Number: 1}
	cfg := agent.Config{Models: []agent.Tier{{Name: "m", Model: client, USDPerMTokIn: 1, USDPerMTokOut: 2}},
		Sandbox: dirSandbox(dir), Observer: j.Observer(), MaxOutput: 256}
	out, err := agent.Run(ctx, cfg, agent.Step{Task: "Add the greeting the notes ask for."})
	if want := map[string]agent.Status{"": agent.StatusFinished, "drop": agent.StatusFinished, "drop every attempt": agent.StatusModelError}[mode]; want != "" && (err != nil || out.Status != want) {
		t.Fatalf("the run ended %s (%v): %s", out.Status, err, out.Reason)
	}
	log, err := trace.ParseSpendLines(&logBuf)
	if err != nil {
		t.Fatal(err)
	}
	r := bookingRun{bodies: bodies, stats: replay.Stats(), log: log}
	r.spend.TokensIn = j.Spend.TokensIn
	return r
}

// serverCount is the most prompt tokens a server could count for an OpenAI
// chat request body: the Qwen 2.5 / Hermes chat template's rendering (its
// default system prompt and tool-use preamble, each tool as JSON indented by
// four, as Llama 3.1's template writes tools; tool-call arguments
// re-rendered one element a line), each special token one token and every
// other byte one token (a BPE token is at least a byte).
func serverCount(t *testing.T, body []byte) int64 {
	t.Helper()
	var req struct {
		Messages []struct {
			Role       string  `json:"role"`
			Content    *string `json:"content"`
			ToolCallID string  `json:"tool_call_id"`
			ToolCalls  []struct {
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("the request body: %v", err)
	}
	var text strings.Builder
	specials := int64(0)
	special := func() { specials++ }
	indented := func(raw []byte, indent string) string {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return string(raw)
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", indent)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		return strings.TrimSuffix(b.String(), "\n")
	}

	msgs := req.Messages
	system := "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
	if len(msgs) > 0 && msgs[0].Role == "system" && msgs[0].Content != nil {
		system, msgs = *msgs[0].Content, msgs[1:]
	}
	special()
	text.WriteString("system\n" + system)
	if len(req.Tools) > 0 {
		text.WriteString("\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>")
		for _, tool := range req.Tools {
			text.WriteString("\n" + indented(tool, "    "))
		}
		text.WriteString("\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>")
	}
	special()
	text.WriteString("\n")
	for _, m := range msgs {
		content := ""
		if m.Content != nil {
			content = *m.Content
		}
		special()
		switch m.Role {
		case "assistant":
			text.WriteString("assistant")
			if content != "" {
				text.WriteString("\n" + content)
			}
			for _, tc := range m.ToolCalls {
				text.WriteString("\n")
				special()
				text.WriteString("\n{\"name\": \"" + tc.Function.Name + "\", \"arguments\": " + indented([]byte(tc.Function.Arguments), "") + "}\n")
				special()
			}
		case "tool":
			text.WriteString("user\n")
			special()
			text.WriteString("\n" + content + "\n")
			special()
		default:
			text.WriteString(m.Role + "\n" + content)
		}
		special()
		text.WriteString("\n")
	}
	special()
	text.WriteString("assistant\n")
	return int64(text.Len()) + specials
}

// instantClock sleeps no time: a retry goes out at once.
type instantClock struct{}

func (instantClock) Now() time.Time                                   { return time.Now() }
func (instantClock) Sleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

type nopMask struct{}

func (nopMask) Mask(s string) string { return s }

// dirSandbox is a workspace directory with no commands.
type dirSandbox string

func (d dirSandbox) Workspace() (string, error) { return string(d), nil }
func (d dirSandbox) Resolve(p string) (string, error) {
	return filepath.Join(string(d), filepath.Clean("/"+p)), nil
}
func (dirSandbox) Split(cmd string) ([]string, error) { return strings.Fields(cmd), nil }
func (dirSandbox) Run(context.Context, []string) (agent.RunResult, error) {
	return agent.RunResult{Output: "no commands here"}, nil
}
