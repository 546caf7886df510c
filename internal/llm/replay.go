package llm

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/text"
)

// DivergenceError says a request does not follow any recording: which
// conversation and turn, and how it differs.
type DivergenceError struct {
	// Conversation is the fixture that matched the first user message; empty
	// when none did.
	Conversation string
	// Turn is the request's turn: the number of assistant messages in it.
	Turn   int
	Reason string
}

// HTTPStatus is the status the replay server answers a divergence with: a
// refusal, served and charged nothing.
func (e *DivergenceError) HTTPStatus() int { return http.StatusBadRequest }

func (e *DivergenceError) Error() string {
	if e.Conversation == "" {
		return fmt.Sprintf("replay: turn %d: %s", e.Turn, e.Reason)
	}
	return fmt.Sprintf("replay: conversation %q diverged at turn %d: %s", e.Conversation, e.Turn, e.Reason)
}

// Replay serves recorded conversations, in process (Complete) and over the
// OpenAI HTTP API (ServeHTTP). It is safe for concurrent use.
type Replay struct {
	convs []*Conversation

	mu sync.Mutex
	// started counts how often each conversation's turn 0 was served, so a
	// run that starts the same conversation twice (a fresh-context retry)
	// gets the next recording that matches, not the first one again.
	started  []int
	injected map[[2]int]int
	stats    Stats
	// now dates an injected retry-after given as an HTTP date.
	now func() time.Time
}

// Stats is what a Replay has served. Tokens are the sums of the usage of the
// responses served, so a test can compare them with the spend a run recorded.
type Stats struct {
	// Requests is every request, answered or not.
	Requests int `json:"requests"`
	// Calls is responses served.
	Calls int `json:"calls"`
	// Errors is divergences and injected refusals.
	Errors    int      `json:"errors"`
	TokensIn  int64    `json:"tokens_in"`
	TokensOut int64    `json:"tokens_out"`
	Served    []Served `json:"served"`
}

// Served is one response, in the order served.
type Served struct {
	Conversation string `json:"conversation"`
	Turn         int    `json:"turn"`
	// Model is the model the request named: which tier of a ladder asked.
	Model     string `json:"model,omitempty"`
	TokensIn  int64  `json:"tokens_in"`
	TokensOut int64  `json:"tokens_out"`
}

// NewReplay serves convs; the first in the list wins ties.
func NewReplay(convs []*Conversation) *Replay {
	return &Replay{convs: convs, started: make([]int, len(convs)), injected: map[[2]int]int{}, now: time.Now}
}

// LoadReplay serves the fixtures in dir (see LoadFixtures).
func LoadReplay(dir string) (*Replay, error) {
	convs, err := LoadFixtures(dir)
	if err != nil {
		return nil, err
	}
	return NewReplay(convs), nil
}

// NewReplayServer is the OpenAI-compatible HTTP server over the fixtures in
// dir: POST …/chat/completions and GET /_replay/stats. The handler is a
// *Replay.
func NewReplayServer(dir string) (http.Handler, error) {
	return LoadReplay(dir)
}

// Stats is a copy of what has been served so far.
func (r *Replay) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats
	s.Served = append([]Served(nil), r.stats.Served...)
	return s
}

// Complete answers req from the recordings. Usage carries tokens only; a
// Client built with provider replay prices them.
func (r *Replay) Complete(ctx context.Context, req agent.ModelRequest) (agent.ModelResponse, error) {
	if err := ctx.Err(); err != nil {
		return agent.ModelResponse{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats.Requests++
	ci, turn, err := r.find(req)
	if err != nil {
		r.stats.Errors++
		return agent.ModelResponse{}, err
	}
	c := r.convs[ci]
	t := c.Turns[turn]
	key := [2]int{ci, turn}
	if k := r.injected[key]; k < len(t.Errors) {
		r.injected[key]++
		r.stats.Errors++
		e := t.Errors[k]
		wait, _ := retryAfter(http.Header{"Retry-After": {e.RetryAfter}}, r.now())
		return agent.ModelResponse{}, &APIError{Provider: ProviderReplay, Status: e.Status, Body: injectedBody(e), RetryAfter: wait, retryAfterHeader: e.RetryAfter}
	}
	if turn == 0 {
		r.started[ci]++
	}
	resp := t.Response.model(req.Model)
	r.stats.Calls++
	r.stats.TokensIn += resp.Usage.TokensIn
	r.stats.TokensOut += resp.Usage.TokensOut
	r.stats.Served = append(r.stats.Served, Served{Conversation: c.Name, Turn: turn, Model: req.Model, TokensIn: resp.Usage.TokensIn, TokensOut: resp.Usage.TokensOut})
	return resp, nil
}

func injectedBody(e InjectedError) string {
	if e.Body != "" {
		return e.Body
	}
	return fmt.Sprintf(`{"error":{"message":"injected by the replay fixture: HTTP %d","type":"replay_injected","code":"%d"}}`, e.Status, e.Status)
}

// model converts a fixture response to the agent's type.
func (r Response) model(requested string) agent.ModelResponse {
	msg := agent.Message{Role: agent.RoleAssistant, Content: r.Content}
	for _, tc := range r.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, agent.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: string(tc.Arguments)})
	}
	model := r.Model
	if model == "" {
		model = requested
	}
	return agent.ModelResponse{
		Model: model, Message: msg, FinishReason: r.FinishReason,
		Usage: agent.Usage{TokensIn: r.Usage.TokensIn, TokensOut: r.Usage.TokensOut},
	}
}

// find picks the conversation and turn for req, or says how req diverged.
// r.mu is held.
func (r *Replay) find(req agent.ModelRequest) (int, int, error) {
	turn := 0
	first, firstFound := "", false
	for _, m := range req.Messages {
		switch m.Role {
		case agent.RoleAssistant:
			turn++
		case agent.RoleUser:
			if !firstFound {
				first, firstFound = m.Content, true
			}
		}
	}
	if !firstFound {
		return 0, 0, &DivergenceError{Turn: turn, Reason: "the request has no user message to match a conversation by"}
	}
	last := req.Messages[len(req.Messages)-1].Content

	var candidates []int
	var modelMismatch []string
	for i, c := range r.convs {
		if !c.matches(first) {
			continue
		}
		if c.Model != "" && c.Model != req.Model {
			modelMismatch = append(modelMismatch, fmt.Sprintf("%q wants model %q", c.Name, c.Model))
			continue
		}
		candidates = append(candidates, i)
	}
	if len(candidates) == 0 {
		reason := fmt.Sprintf("no conversation matches the first user message %q", text.Short(first, 120))
		if len(modelMismatch) > 0 {
			reason += fmt.Sprintf(" for model %q (%s)", req.Model, strings.Join(modelMismatch, "; "))
		}
		return 0, 0, &DivergenceError{Turn: turn, Reason: reason}
	}

	var fits []int
	var why []string
	for _, i := range candidates {
		c := r.convs[i]
		switch {
		case turn >= len(c.Turns):
			why = append(why, fmt.Sprintf("the recording has %d turns and the request is at turn %d (it holds %d assistant messages)", len(c.Turns), turn, turn))
		case c.Turns[turn].Expect != "" && !strings.Contains(last, c.Turns[turn].Expect):
			why = append(why, fmt.Sprintf("the last message should contain %q but is %q", text.Short(c.Turns[turn].Expect, 120), text.Short(last, 160)))
		default:
			fits = append(fits, i)
			why = append(why, "")
		}
	}
	if len(fits) == 0 {
		reason := why[0]
		if len(candidates) > 1 {
			reason += fmt.Sprintf(" (%d other conversations match the first user message and do not fit either)", len(candidates)-1)
		}
		return 0, 0, &DivergenceError{Conversation: r.convs[candidates[0]].Name, Turn: turn, Reason: reason}
	}
	pick := fits[0]
	if turn == 0 {
		for _, i := range fits {
			if r.started[i] < r.started[pick] {
				pick = i
			}
		}
	} else {
		for _, i := range fits {
			if r.started[i] > 0 {
				pick = i
				break
			}
		}
	}
	return pick, turn, nil
}

// replayBackend adapts a Replay to the Client's retry loop.
type replayBackend struct{ r *Replay }

func (b replayBackend) send(ctx context.Context, req agent.ModelRequest) (agent.ModelResponse, error) {
	return b.r.Complete(ctx, req)
}
