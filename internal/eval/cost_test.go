package eval

import (
	"context"
	"errors"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// countingModel answers every request with usage and counts, through
// onCall, a GitHub request for each request whose first message says so.
type countingModel struct {
	onCall func(req agent.ModelRequest)
	err    error
}

func (m countingModel) Complete(_ context.Context, req agent.ModelRequest) (agent.ModelResponse, error) {
	m.onCall(req)
	return agent.ModelResponse{Usage: agent.Usage{TokensIn: 100, TokensOut: 10, USD: 0.5}}, m.err
}

func req(first string, assistantTurns int) agent.ModelRequest {
	r := agent.ModelRequest{Messages: []agent.Message{{Role: agent.RoleSystem, Content: "Review this change (the system says)"}, {Role: agent.RoleUser, Content: first}}}
	for range assistantTurns {
		r.Messages = append(r.Messages, agent.Message{Role: agent.RoleAssistant, Content: "…"}, agent.Message{Role: agent.RoleUser, Content: "tool result"})
	}
	return r
}

func TestIsReviewRequest(t *testing.T) {
	for _, tt := range []struct {
		name             string
		req              agent.ModelRequest
		review, reviewer bool
	}{
		{"reviewer's first", req("Review this change: report only…", 0), true, true},
		{"reviewer's second turn", req("Review this change: report only…", 1), true, false},
		{"refuter", req("Refute these findings: for each…", 0), true, false},
		{"an agent's group", req("task group 1 of 1: Review this code", 0), false, false},
		{"the words only in the system message", req("task group 1 of 1", 0), false, false},
		{"no user message", agent.ModelRequest{}, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			review, reviewer := isReviewRequest(tt.req)
			if review != tt.review || reviewer != tt.reviewer {
				t.Errorf("isReviewRequest = %v, %v; want %v, %v", review, reviewer, tt.review, tt.reviewer)
			}
		})
	}
}

// TestReviewMeter: only the review's requests count, and the GitHub
// requests answered while a review runs are its own; those of the agent's
// calls and of the marks between reviews are not.
func TestReviewMeter(t *testing.T) {
	github := 0
	m := &reviewMeter{requests: func() int { return github }}
	m.Model = countingModel{onCall: func(r agent.ModelRequest) {
		// Each call stands for a GitHub request made while it runs.
		github++
	}}
	ctx := context.Background()
	calls := []agent.ModelRequest{
		req("task group 1 of 1", 0),
		req("Review this change", 0),
		req("Refute these findings", 0),
		req("the independent review: repair", 0), // a repair round, not the review's
		req("Review this change", 0),
	}
	for _, c := range calls {
		if _, err := m.Complete(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	github += 3 // the marks after the last review are not its own
	got := m.total()
	want := ReviewCost{ModelCalls: 3, TokensIn: 300, TokensOut: 30, USD: 1.5, Requests: 3}
	if got != want {
		t.Errorf("cost %+v, want %+v", got, want)
	}

	// A failed call is still the review's spend as far as it counted.
	m = &reviewMeter{requests: func() int { return 0 }, Model: countingModel{onCall: func(agent.ModelRequest) {}, err: errors.New("down")}}
	if _, err := m.Complete(ctx, req("Review this change", 0)); err == nil {
		t.Fatal("the model's error was lost")
	}
	if got := m.total(); got.ModelCalls != 1 || got.Requests != 0 {
		t.Errorf("after a failed call: %+v, want 1 call and no request", got)
	}
}

func TestProgressLine(t *testing.T) {
	res := ImplementCaseResult{Name: "c", Verdict: Full, Score: 1, Result: "ready", Jobs: 1, Requests: 13,
		Spend: record.Spend{ModelCalls: 7, TokensIn: 8400, TokensOut: 1050, USD: 0.00189}, Seconds: 2.5}
	if got := progressLine(res); got != "c                                        FULL    score 1.0  ready after 1 Job(s), 13 GitHub requests, 7 model calls, 8400 tokens in, 1050 out, $0.0019, 2.5s" {
		t.Errorf("a case with no review or strength: %q", got)
	}
	res.Review = ReviewCost{Reviews: 1, ModelCalls: 2, TokensIn: 4200, TokensOut: 270}
	res.Strength = []record.GroupStrength{{Group: 1, Generated: 5, Killed: 4, Survived: 1, Score: 0.8}, {Group: 2, Unmeasured: "no changed line of Go code"}}
	res.Judged = &JudgedStrength{Floor: 0.8, Score: 0.8, Killed: 4, Survived: 1, Passed: true}
	want := "; review: 1 run(s), 2 model calls, 4200 tokens in, 270 out, 0 GitHub requests; test strength: g1 0.80 (4 killed, 1 survived), g2 not measured; judged strength 0.80 (floor 0.80: 4 killed, 1 survived)"
	if got := progressLine(res); len(got) < len(want) || got[len(got)-len(want):] != want {
		t.Errorf("progress line %q, want it to end %q", got, want)
	}
}
