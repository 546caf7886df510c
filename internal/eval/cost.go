package eval

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// The review's conversations open with these words (internal/review's
// reviewer and refuter tasks); the replay matches its fixtures on them too.
var reviewOpenings = []string{"Review this change", "Refute these findings"}

// reviewMeter counts the review's share of the model requests, and the
// GitHub requests the fake answers from the reviewer's request to the end
// of the review's last answer: the review's own GitHub cost. It sits
// inside the masker, so the requests it reads are the masked ones; it
// keeps no text of them.
type reviewMeter struct {
	agent.Model
	// requests is the world's count of GitHub requests so far.
	requests func() int

	mu   sync.Mutex
	cost ReviewCost
	// open is a review in progress: from is the count at its first
	// request, upto the count after its latest answer.
	open       bool
	from, upto int
}

// Complete passes req on, counting it as the review's when its first user
// message opens one of the review's conversations.
func (m *reviewMeter) Complete(ctx context.Context, req agent.ModelRequest) (agent.ModelResponse, error) {
	review, first := isReviewRequest(req)
	if !review {
		// Not the review's: a review in progress ends at its last answer,
		// so what this call costs is never counted as the review's.
		return m.Model.Complete(ctx, req)
	}
	m.mu.Lock()
	if first {
		// A reviewer's request opens a new review: the previous one ended
		// at its last answer.
		m.closeLocked()
	}
	if !m.open {
		m.open, m.from = true, m.requests()
		m.upto = m.from
	}
	m.mu.Unlock()
	resp, err := m.Model.Complete(ctx, req)
	m.mu.Lock()
	m.cost.ModelCalls++
	m.cost.TokensIn += max(resp.Usage.TokensIn, 0)
	m.cost.TokensOut += max(resp.Usage.TokensOut, 0)
	if resp.Usage.USD > 0 {
		m.cost.USD += resp.Usage.USD
	}
	m.upto = m.requests()
	m.mu.Unlock()
	return resp, err
}

// closeLocked ends the review in progress, adding the GitHub requests
// answered during it.
func (m *reviewMeter) closeLocked() {
	if m.open {
		m.cost.Requests += max(m.upto-m.from, 0)
		m.open = false
	}
}

// total is the cost so far, a review in progress included.
func (m *reviewMeter) total() ReviewCost {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closeLocked()
	return m.cost
}

// isReviewRequest reports whether req belongs to the review (its first
// user message opens a reviewer's or a refuter's conversation) and whether
// it is a reviewer's, the first of a review.
func isReviewRequest(req agent.ModelRequest) (review, reviewer bool) {
	first := firstUser(req)
	for i, opening := range reviewOpenings {
		if strings.Contains(first, opening) {
			return true, i == 0 && assistantTurns(req) == 0
		}
	}
	return false, false
}

func firstUser(req agent.ModelRequest) string {
	for _, msg := range req.Messages {
		if msg.Role == agent.RoleUser {
			return msg.Content
		}
	}
	return ""
}

func assistantTurns(req agent.ModelRequest) int {
	n := 0
	for _, msg := range req.Messages {
		if msg.Role == agent.RoleAssistant {
			n++
		}
	}
	return n
}

// reviewsIn counts the review phase spans of a Job's trace: one per review
// that ran to an answer or an error.
func reviewsIn(events []trace.Event) int {
	n := 0
	for _, e := range events {
		if e.Type == trace.TypePhase && e.Phase == trace.PhaseReview {
			n++
		}
	}
	return n
}

// add sums two costs.
func (c ReviewCost) add(o ReviewCost) ReviewCost {
	return ReviewCost{Reviews: c.Reviews + o.Reviews, ModelCalls: c.ModelCalls + o.ModelCalls,
		TokensIn: c.TokensIn + o.TokensIn, TokensOut: c.TokensOut + o.TokensOut, USD: c.USD + o.USD, Requests: c.Requests + o.Requests}
}

// strengthLine is the groups' test strength in the progress line:
// "g1 1.00 (5 killed, 0 survived)", "g2 not measured".
func strengthLine(gs []record.GroupStrength) string {
	if len(gs) == 0 {
		return "not measured"
	}
	parts := make([]string, 0, len(gs))
	for _, g := range gs {
		if g.Unmeasured != "" {
			parts = append(parts, fmt.Sprintf("g%d not measured", g.Group))
			continue
		}
		parts = append(parts, fmt.Sprintf("g%d %.2f (%d killed, %d survived)", g.Group, g.Score, g.Killed, g.Survived))
	}
	return strings.Join(parts, ", ")
}
