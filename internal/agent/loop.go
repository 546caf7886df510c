package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// session is one step: its configuration, the tools offered and the spend
// across every round and conversation.
type session struct {
	cfg          Config
	specs        []ToolSpec
	offered      map[string]bool
	offeredNames []string
	start        time.Time
	spend        Spend
	turns        int
	// refused is, per tier, the estimate of the smallest request the
	// provider refused as over its context length: later requests of the
	// step are cut below it (the provider counts tokens, we estimate them).
	refused map[int]int64
	// root is the workspace the file tools open files in (workspace.go),
	// opened at the first file tool call and closed when the step ends.
	root    *os.Root
	ws      string
	rootErr error
}

// maxOverflows bounds the retries after context-length refusals in a step.
const maxOverflows = 3

// contextOverflow reports whether err is the provider refusing a request as
// longer than the model's context (OpenAI's context_length_exceeded and the
// like; the provider packages say which).
func contextOverflow(err error) bool {
	var o interface{ ContextOverflow() bool }
	return errors.As(err, &o) && o.ContextOverflow()
}

func newSession(cfg Config) (*session, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &session{cfg: cfg, offered: map[string]bool{}, start: cfg.Clock.Now()}
	names := cfg.Tools
	if names == nil {
		names = ToolNames()
	}
	for _, t := range tools {
		for _, n := range names {
			if n == t.name && !s.offered[n] {
				s.offered[n] = true
				s.offeredNames = append(s.offeredNames, n)
				s.specs = append(s.specs, t.spec())
			}
		}
	}
	return s, nil
}

func (s *session) request(msgs []Message, tier int) ModelRequest {
	return ModelRequest{Model: s.cfg.Models[tier].Name, Messages: msgs, Tools: s.specs, MaxTokens: s.maxOutput(tier)}
}

// maxOutput is tier's max_tokens: its own, else the step's.
func (s *session) maxOutput(tier int) int {
	if m := s.cfg.Models[tier].MaxOutput; m > 0 {
		return m
	}
	return s.cfg.MaxOutput
}

// window is tier's input window: its own, else the step's (0: unbounded).
func (s *session) window(tier int) int64 {
	w := s.cfg.Window
	if t := s.cfg.Models[tier].Window; t > 0 {
		w = t
	}
	if r := s.refused[tier]; r > 0 && (w <= 0 || r-1 < w) {
		w = r - 1
	}
	return w
}

// conversation is one thread of messages with one tier of the ladder.
type conversation struct {
	tier int
	msgs []Message
}

// Run runs one step: it asks the model, runs the tools it calls, and ends when
// the model calls finish, ask or plan_wrong, or a budget, the malformed-call
// limit or a model error ends it.
//
// The error is non-nil only for a configuration error, when ctx ends, or
// when a tool meets a full disk (it wraps syscall.ENOSPC: the machine's
// failure, which the model is not asked to work around); the Outcome's
// Usage is valid either way, so no spend is lost.
func Run(ctx context.Context, cfg Config, step Step) (Outcome, error) {
	return RunWithRepair(ctx, cfg, step, nil, 1)
}

// RunWithRepair runs the step and, each time it finishes, runs check. A failing
// check hands the end of its log (Config.CheckLogCap) to the next round, in
// the same conversation. The strategy changes — a fresh conversation holding
// the task and the latest log only, on the next tier of the ladder — when a
// failure repeats the previous round's log (timings and addresses aside), and
// after two rounds in one conversation, whichever comes first. At most rounds
// rounds run; when they are used up the status is checks_failed.
//
// Budgets cover every round: Outcome.Usage sums them, Outcome.Attempts counts
// them. Outcome.CheckLog is the last failing log whatever ends the step, so a
// step that runs out of budget mid-repair still hands it on. Each repair is
// reported to the Observer as a retry. A nil check means no checks: the first
// finish ends the step.
func RunWithRepair(ctx context.Context, cfg Config, step Step, check func(ctx context.Context) (passed bool, log string, err error), rounds int) (Outcome, error) {
	s, err := newSession(cfg)
	if err != nil {
		return Outcome{}, err
	}
	defer s.close()
	if rounds < 1 {
		rounds = 1
	}
	start := min(max(s.cfg.StartTier, 0), len(s.cfg.Models)-1)
	conv := &conversation{tier: start, msgs: s.firstMessages(step, "", start)}
	fresh := 0 // conversations started after the first
	inConv := 0
	prevLog := ""
	var out Outcome
	for r := 1; r <= rounds; r++ {
		end, err := s.round(ctx, conv)
		out = s.outcome(end, r, conv.tier)
		// Whatever ends a later round, the last failing log goes with it:
		// the caller hands it to the next Job.
		out.CheckLog = prevLog
		if err != nil {
			return out, err
		}
		if end.status != StatusFinished || check == nil {
			return out, nil
		}
		inConv++
		passed, log, err := check(ctx)
		if err != nil {
			return out, fmt.Errorf("run checks after round %d: %w", r, err)
		}
		if passed {
			out.CheckLog = ""
			return out, nil
		}
		log = tail(log, s.cfg.CheckLogCap)
		out.Status, out.CheckLog = StatusChecksFailed, log
		if r == rounds {
			break
		}
		repeated := prevLog != "" && sameFailure(log, prevLog)
		prevLog = log
		if repeated || inConv >= 2 {
			fresh++
			tier := min(start+fresh, len(s.cfg.Models)-1)
			s.cfg.Observer.Retry(RetryEvent{Reason: fmt.Sprintf("checks_failed: fresh context on tier %d (%s)", tier, s.cfg.Models[tier].Name), Attempt: r + 1})
			conv = &conversation{tier: tier, msgs: s.firstMessages(step, log, tier)}
			inConv = 0
			continue
		}
		s.cfg.Observer.Retry(RetryEvent{Reason: "checks_failed: repair round in the same conversation", Attempt: r + 1})
		conv.msgs = append(conv.msgs, repairMessage(log, r))
	}
	return out, nil
}

func (s *session) outcome(end ending, rounds, tier int) Outcome {
	return Outcome{
		Status:     end.status,
		Summary:    end.summary,
		Acceptance: end.acceptance,
		Question:   end.question,
		Reason:     end.reason,
		Usage:      s.spend,
		Turns:      s.turns,
		Attempts:   rounds,
		Tier:       tier,
		Model:      s.cfg.Models[tier].Name,
	}
}

// round drives the conversation until something ends the step.
func (s *session) round(ctx context.Context, conv *conversation) (ending, error) {
	tier := s.cfg.Models[conv.tier]
	malformed, overflows := 0, 0
	for {
		if err := ctx.Err(); err != nil {
			return ending{status: StatusModelError, reason: "cancelled"}, err
		}
		if !s.fit(conv.msgs, conv.tier) {
			return ending{status: StatusBudgetExhausted,
				reason: fmt.Sprintf("the conversation no longer fits the input window of %d tokens", s.window(conv.tier))}, nil
		}
		// The request gets its own copy: later elision must not rewrite what
		// a model (or a recording of it) was sent.
		req := s.request(append([]Message(nil), conv.msgs...), conv.tier)
		estIn, maxOut := s.cfg.Estimator(req), s.maxOutput(conv.tier)
		if reason := s.overBudget(estIn, tier, maxOut); reason != "" {
			return ending{status: StatusBudgetExhausted, reason: reason}, nil
		}
		// Booked before it is sent: a kill before the answer is recorded
		// leaves this as the call's spend, never nothing, so it is booked at
		// the most the server can count for the request (MaxInputTokens),
		// not at the estimate the window and the budgets use.
		book := estimateSpend(max(estIn, MaxInputTokens(req)), tier, maxOut)
		s.cfg.Observer.ModelBooked(ModelBookedEvent{Model: tier.Name, TokensIn: book.TokensIn, TokensOut: book.TokensOut, USD: book.USD})
		t0 := s.cfg.Clock.Now()
		resp, err := tier.Model.Complete(ctx, req)
		took := s.cfg.Clock.Now().Sub(t0)
		if err != nil {
			outcome := "error"
			if ctx.Err() != nil {
				outcome = "cancelled"
			}
			lost := unansweredAttempts(err, ctx.Err() != nil)
			s.cfg.Observer.ModelCall(ModelCallEvent{Model: tier.Name, Duration: took, Outcome: outcome,
				Unanswered: lost > 0, Attempts: lost})
			if ctx.Err() != nil {
				return ending{status: StatusModelError, reason: "cancelled"}, ctx.Err()
			}
			if contextOverflow(err) {
				// The provider counts more than our estimate: cut the next
				// request below this one (old tool output is elided) and
				// ask again. When nothing more can be cut, the step ends as
				// a conversation that no longer fits.
				est := s.cfg.Estimator(req)
				if s.refused == nil {
					s.refused = map[int]int64{}
				}
				if r := s.refused[conv.tier]; r == 0 || est < r {
					s.refused[conv.tier] = est
				}
				if overflows++; overflows <= maxOverflows {
					continue
				}
				return ending{status: StatusBudgetExhausted,
					reason: fmt.Sprintf("the provider refused %d requests in a row as over the model's context length: %s", overflows, err)}, nil
			}
			return ending{status: StatusModelError, reason: err.Error()}, nil
		}
		s.turns++
		s.spend = s.spend.Add(Spend{TokensIn: resp.Usage.TokensIn, TokensOut: resp.Usage.TokensOut, USD: resp.Usage.USD, ModelCalls: 1})
		name := resp.Model
		if name == "" {
			name = tier.Name
		}
		s.cfg.Observer.ModelCall(ModelCallEvent{Model: name, TokensIn: resp.Usage.TokensIn, TokensOut: resp.Usage.TokensOut,
			USD: resp.Usage.USD, Duration: took, Outcome: "ok"})

		msg := resp.Message
		msg.Role = RoleAssistant
		for i := range msg.ToolCalls {
			if msg.ToolCalls[i].ID == "" {
				msg.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", s.turns, i+1)
			}
		}
		conv.msgs = append(conv.msgs, msg)

		if len(msg.ToolCalls) == 0 {
			malformed++
			s.cfg.Observer.ToolCall(ToolCallEvent{ResultClass: ResultMalformed, ArgsDigest: digest("")})
			conv.msgs = append(conv.msgs, Message{Role: RoleUser, Content: "Error: your reply called no tool. Work only through the tools: call finish(summary) when the task is done and verified, ask(question) for a decision only a person can make, plan_wrong(reason) when the plan cannot work."})
			if malformed >= s.cfg.MaxMalformed {
				return ending{status: StatusFormatError, reason: fmt.Sprintf("%d replies in a row without a valid tool call; the last called no tool", malformed)}, nil
			}
			continue
		}

		var end *ending
		for _, call := range msg.ToolCalls {
			if end != nil {
				conv.msgs = append(conv.msgs, Message{Role: RoleTool, ToolCallID: call.ID, Content: "Not run: the step ended at an earlier call."})
				continue
			}
			t0 := s.cfg.Clock.Now()
			res, err := s.dispatch(ctx, call)
			s.cfg.Observer.ToolCall(ToolCallEvent{Name: call.Name, ArgsDigest: digest(call.Arguments), ResultClass: res.class, Duration: s.cfg.Clock.Now().Sub(t0)})
			if err != nil && ctx.Err() != nil {
				return ending{status: StatusModelError, reason: "cancelled"}, err
			}
			if err != nil {
				return ending{status: StatusModelError, reason: err.Error()}, err
			}
			conv.msgs = append(conv.msgs, Message{Role: RoleTool, ToolCallID: call.ID, Content: res.content})
			if res.class == ResultMalformed {
				malformed++
				if malformed >= s.cfg.MaxMalformed {
					end = &ending{status: StatusFormatError, reason: fmt.Sprintf("%d malformed tool calls in a row; the last: %s", malformed, res.content)}
				}
				continue
			}
			malformed = 0
			end = res.end
		}
		if end != nil {
			return *end, nil
		}
	}
}

// estimateSpend is what a call can cost at most: its estimated input, maxOut
// tokens out, and their price on tier. The budget check reserves it and the
// observer books it before the request goes out.
func estimateSpend(estIn int64, tier Tier, maxOut int) Spend {
	return Spend{
		TokensIn:   estIn,
		TokensOut:  int64(maxOut),
		USD:        (float64(estIn)*tier.USDPerMTokIn + float64(maxOut)*tier.USDPerMTokOut) / 1e6,
		ModelCalls: 1,
	}
}

// refusal reports whether a model call's error is the provider's answer
// (an HTTP status): a refused request is not charged. Anything else (a
// transport error, a timeout) may have been served.
func refusal(err error) bool {
	var st interface{ HTTPStatus() int }
	return errors.As(err, &st) && st.HTTPStatus() >= 400
}

// unansweredAttempts is how many attempts of a failed call may have been
// served with their answer lost: what the provider says
// (UnansweredAttempts, one per dropped attempt of its retries), else one
// when the call ended with no answer (the context ended, a transport
// error), none for a refusal.
func unansweredAttempts(err error, cancelled bool) int {
	var u interface{ UnansweredAttempts() int }
	n := 0
	if errors.As(err, &u) {
		n = u.UnansweredAttempts()
	}
	if n == 0 && (cancelled || !refusal(err)) {
		n = 1
	}
	return n
}

// overBudget names the first budget the next call would pass, or "". The
// next call counts in full: its estimated input, MaxOutput tokens out, and
// their price on this tier.
func (s *session) overBudget(estIn int64, tier Tier, maxOut int) string {
	next := estimateSpend(estIn, tier, maxOut)
	for _, b := range []struct {
		name   string
		budget Budget
		spent  Spend
	}{
		{"step", s.cfg.Budget, s.spend},
		{"item", s.cfg.ItemBudget, s.cfg.ItemSpent.Add(s.spend)},
	} {
		if r := exceeds(b.name, b.budget, b.spent, next); r != "" {
			return r
		}
	}
	if w := s.cfg.Budget.Wall; w > 0 {
		if el := s.cfg.Clock.Now().Sub(s.start); el >= w {
			return fmt.Sprintf("step wall time: %s elapsed of %s", el.Round(time.Second), w)
		}
	}
	return ""
}

func exceeds(name string, b Budget, spent, next Spend) string {
	switch {
	case b.Turns > 0 && spent.ModelCalls+next.ModelCalls > b.Turns:
		return fmt.Sprintf("%s turns: %d model calls made, budget %d", name, spent.ModelCalls, b.Turns)
	case b.TokensIn > 0 && spent.TokensIn+next.TokensIn > b.TokensIn:
		return fmt.Sprintf("%s tokens in: %d spent + %d estimated for the next call > budget %d", name, spent.TokensIn, next.TokensIn, b.TokensIn)
	case b.TokensOut > 0 && spent.TokensOut+next.TokensOut > b.TokensOut:
		return fmt.Sprintf("%s tokens out: %d spent + %d reserved for the next call > budget %d", name, spent.TokensOut, next.TokensOut, b.TokensOut)
	case b.USD > 0 && spent.USD+next.USD > b.USD:
		return fmt.Sprintf("%s cost: $%.4f spent + $%.4f estimated for the next call > budget $%.4f", name, spent.USD, next.USD, b.USD)
	}
	return ""
}
