package agent_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
)

// fakeClock moves only when told to.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// listing is a model that lists the root forever, spending usage per call and
// advancing the clock by took.
type listing struct {
	calls int
	usage agent.Usage
	clock *fakeClock
	took  time.Duration
}

func (m *listing) Complete(ctx context.Context, req agent.ModelRequest) (agent.ModelResponse, error) {
	m.calls++
	if m.clock != nil {
		m.clock.Advance(m.took)
	}
	return agent.ModelResponse{Message: agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
		{ID: "c", Name: "list_dir", Arguments: `{}`},
	}}, Usage: m.usage}, nil
}

// TestBudgets: every budget is checked before the call that would pass it, so
// the model is never called for it. The estimator is fixed at 1,000 input
// tokens a call and MaxOutput at 100, so the numbers below are exact.
func TestBudgets(t *testing.T) {
	const estIn, maxOut = 1000, 100
	tests := []struct {
		name       string
		budget     agent.Budget
		item       agent.Budget
		spent      agent.Spend
		tier       agent.Tier
		usage      agent.Usage
		took       time.Duration
		wantCalls  int
		wantReason string
	}{
		{name: "turns", budget: agent.Budget{Turns: 3}, wantCalls: 3, wantReason: "step turns: 3 model calls made, budget 3"},
		// Each call spends 900 in; the fourth would need 2700+1000 > 3500.
		{name: "tokens in", budget: agent.Budget{TokensIn: 3500}, usage: agent.Usage{TokensIn: 900}, wantCalls: 3,
			wantReason: "step tokens in: 2700 spent + 1000 estimated"},
		// 50 out a call, 100 reserved: the fourth fits exactly (150+100 =
		// 250), the fifth would need 200+100 > 250.
		{name: "tokens out", budget: agent.Budget{TokensOut: 250}, usage: agent.Usage{TokensOut: 50}, wantCalls: 4,
			wantReason: "step tokens out: 200 spent + 100 reserved"},
		// $1/Mtok in, $10/Mtok out: the next call is estimated at $0.002.
		// The third fits (0.008+0.002 <= 0.0105), the fourth does not.
		{name: "usd with prices", budget: agent.Budget{USD: 0.0105}, usage: agent.Usage{USD: 0.004},
			tier: agent.Tier{USDPerMTokIn: 1, USDPerMTokOut: 10}, wantCalls: 3, wantReason: "step cost: $0.0120 spent + $0.0020 estimated"},
		// Same spend, a budget of 0.0095: the third call (0.008+0.002) would
		// pass it, so only two are made.
		{name: "usd estimate stops a call", budget: agent.Budget{USD: 0.0095}, usage: agent.Usage{USD: 0.004},
			tier: agent.Tier{USDPerMTokIn: 1, USDPerMTokOut: 10}, wantCalls: 2, wantReason: "step cost: $0.0080 spent + $0.0020 estimated"},
		{name: "usd without prices sees spend only", budget: agent.Budget{USD: 0.01}, usage: agent.Usage{USD: 0.004},
			wantCalls: 3, wantReason: "step cost: $0.0120 spent"},
		// The item has 4,000 of 10,000 left before this step starts: four
		// calls of 1,000, and the fifth would pass it.
		{name: "item tokens in from earlier jobs", item: agent.Budget{TokensIn: 10000}, spent: agent.Spend{TokensIn: 6000},
			usage: agent.Usage{TokensIn: 1000}, wantCalls: 4, wantReason: "item tokens in: 10000 spent + 1000 estimated"},
		{name: "item turns", item: agent.Budget{Turns: 10}, spent: agent.Spend{ModelCalls: 8}, wantCalls: 2,
			wantReason: "item turns: 10 model calls made, budget 10"},
		{name: "item spent already over", item: agent.Budget{USD: 1}, spent: agent.Spend{USD: 1.5}, wantCalls: 0,
			wantReason: "item cost: $1.5000 spent"},
		// Each call takes 40s of the minute: the third starts at 80s.
		{name: "wall", budget: agent.Budget{Wall: time.Minute}, took: 40 * time.Second, wantCalls: 2,
			wantReason: "step wall time: 1m20s elapsed of 1m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := &fakeClock{now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
			model := &listing{usage: tt.usage, clock: clock, took: tt.took}
			tier := tt.tier
			tier.Name, tier.Model = "m", model
			cfg := agent.Config{
				Models:     []agent.Tier{tier},
				Sandbox:    fakeSandbox{},
				Clock:      clock,
				Budget:     tt.budget,
				ItemBudget: tt.item,
				ItemSpent:  tt.spent,
				MaxOutput:  maxOut,
				Estimator:  func(agent.ModelRequest) int64 { return estIn },
			}
			out, err := agent.Run(context.Background(), cfg, agent.Step{Task: "list"})
			if err != nil {
				t.Fatal(err)
			}
			if out.Status != agent.StatusBudgetExhausted {
				t.Fatalf("status = %s (%s), want budget_exhausted", out.Status, out.Reason)
			}
			if model.calls != tt.wantCalls {
				t.Errorf("model called %d times, want %d", model.calls, tt.wantCalls)
			}
			if !strings.Contains(out.Reason, tt.wantReason) {
				t.Errorf("reason = %q, want it to contain %q", out.Reason, tt.wantReason)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	m := &listing{}
	for _, tt := range []struct {
		name string
		cfg  agent.Config
		want string
	}{
		{"no models", agent.Config{Sandbox: fakeSandbox{}}, "no models"},
		{"nil model", agent.Config{Models: []agent.Tier{{Name: "x"}}, Sandbox: fakeSandbox{}}, "has no model"},
		{"no sandbox", agent.Config{Models: []agent.Tier{{Name: "x", Model: m}}}, "no sandbox"},
		{"item wall", agent.Config{Models: []agent.Tier{{Name: "x", Model: m}}, Sandbox: fakeSandbox{}, ItemBudget: agent.Budget{Wall: time.Hour}}, "wall"},
		{"unknown tool", agent.Config{Models: []agent.Tier{{Name: "x", Model: m}}, Sandbox: fakeSandbox{}, Tools: []string{"shell"}}, "unknown tool"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := agent.Run(context.Background(), tt.cfg, agent.Step{Task: "x"})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run = %v, want an error mentioning %q", err, tt.want)
			}
		})
	}
	if m.calls != 0 {
		t.Errorf("a misconfigured run called the model %d times", m.calls)
	}
}

// failing is a model whose calls fail, as a provider's do after its retries.
type failing struct{ err error }

func (f failing) Complete(ctx context.Context, req agent.ModelRequest) (agent.ModelResponse, error) {
	return agent.ModelResponse{}, f.err
}

func TestModelError(t *testing.T) {
	obs := &recorder{}
	cfg := agent.Config{Models: []agent.Tier{{Name: "m", Model: failing{errors.New("HTTP 503 after 4 attempts")}}}, Sandbox: fakeSandbox{}, Observer: obs}
	out, err := agent.Run(context.Background(), cfg, agent.Step{Task: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != agent.StatusModelError || !strings.Contains(out.Reason, "HTTP 503") {
		t.Errorf("outcome = %s (%s), want model_error naming the failure", out.Status, out.Reason)
	}
	if len(obs.models) != 1 || obs.models[0].Outcome != "error" {
		t.Errorf("model events = %+v, want one with outcome error", obs.models)
	}

	// A cancelled context is the caller's, not the model's: it comes back as
	// the error, with the spend so far.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg.Models[0].Model = failing{context.Canceled}
	out, err = agent.Run(ctx, cfg, agent.Step{Task: "x"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run with a cancelled context = %v, want context.Canceled", err)
	}
	if out.Usage.ModelCalls != 0 {
		t.Errorf("usage = %+v after a cancel before any call", out.Usage)
	}
}

func TestRetryObserver(t *testing.T) {
	obs := &recorder{}
	cfg := agent.Config{Observer: obs}
	cfg.RetryObserver()(agent.RetryEvent{Reason: "rate_limited (HTTP 429)", Attempt: 1, Wait: 2 * time.Second})
	if len(obs.retries) != 1 || obs.retries[0].Reason != "rate_limited (HTTP 429)" {
		t.Errorf("retries = %+v, want the provider's event", obs.retries)
	}
	agent.Config{}.RetryObserver()(agent.RetryEvent{}) // no observer: no panic
}

// bookingObserver keeps the bookings and the ended calls in order.
type bookingObserver struct {
	recorder
	events []string
	booked []agent.ModelBookedEvent
	ended  []agent.ModelCallEvent
}

func (o *bookingObserver) ModelBooked(e agent.ModelBookedEvent) {
	o.events = append(o.events, "booked")
	o.booked = append(o.booked, e)
}

func (o *bookingObserver) ModelCall(e agent.ModelCallEvent) {
	o.events = append(o.events, "ended")
	o.ended = append(o.ended, e)
}

// refused is a provider's refusal: it answered with an HTTP status.
type refused struct{}

func (refused) Error() string   { return "HTTP 400: bad request" }
func (refused) HTTPStatus() int { return 400 }

// endsWith answers one listing call, then fails with err.
type endsWith struct {
	err      error
	calls    int
	observer *bookingObserver
	// bookedFirst: each request found its booking already made.
	bookedFirst bool
	reqs        []agent.ModelRequest
}

func (m *endsWith) Complete(ctx context.Context, req agent.ModelRequest) (agent.ModelResponse, error) {
	m.calls++
	m.reqs = append(m.reqs, req)
	m.bookedFirst = len(m.observer.booked) == m.calls
	if m.calls > 1 {
		return agent.ModelResponse{}, m.err
	}
	return agent.ModelResponse{Message: agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
		{ID: "c", Name: "list_dir", Arguments: `{}`},
	}}, Usage: agent.Usage{TokensIn: 700, TokensOut: 40, USD: 0.0011}}, nil
}

// TestModelCallBookedBeforeRequest: the observer hears of each model call
// before its request goes out, at the most it can cost (the larger of the
// estimated input and the most a server can count for the request, the
// request's max_tokens out, their price on the tier), and again when it
// ended; a call that ended with no answer says so, a refusal does not.
func TestModelCallBookedBeforeRequest(t *testing.T) {
	for _, tc := range []struct {
		name       string
		err        error
		unanswered bool
	}{
		{"a transport error: no answer, maybe served", errors.New("read tcp 127.0.0.1:1: connection reset by peer"), true},
		{"a refusal is an answer", refused{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs := &bookingObserver{}
			model := &endsWith{err: tc.err, observer: obs}
			cfg := agent.Config{
				Models:    []agent.Tier{{Name: "m", Model: model, USDPerMTokIn: 1, USDPerMTokOut: 10}},
				Sandbox:   fakeSandbox{},
				Observer:  obs,
				MaxOutput: 100,
				Estimator: func(agent.ModelRequest) int64 { return 1000 },
			}
			out, err := agent.Run(context.Background(), cfg, agent.Step{Task: "list"})
			if err != nil {
				t.Fatal(err)
			}
			if out.Status != agent.StatusModelError || model.calls != 2 || !model.bookedFirst {
				t.Fatalf("status %s after %d calls (booked first: %v); want model_error after 2, each booked before it was sent",
					out.Status, model.calls, model.bookedFirst)
			}
			if got, want := strings.Join(obs.events, " "), "booked ended booked ended"; got != want {
				t.Errorf("events %q, want %q", got, want)
			}
			for i, b := range obs.booked {
				in := max(1000, agent.MaxInputTokens(model.reqs[i]))
				want := agent.ModelBookedEvent{Model: "m", TokensIn: in, TokensOut: 100, USD: (float64(in)*1 + 100*10) / 1e6}
				if b != want {
					t.Errorf("booking %d = %+v, want the bound %+v", i+1, b, want)
				}
			}
			if obs.ended[0].Unanswered || obs.ended[0].TokensIn != 700 {
				t.Errorf("the answered call ended as %+v", obs.ended[0])
			}
			if obs.ended[1].Unanswered != tc.unanswered {
				t.Errorf("the failed call's Unanswered = %v, want %v", obs.ended[1].Unanswered, tc.unanswered)
			}
		})
	}
}
