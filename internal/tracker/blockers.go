package tracker

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/blockers"
	"github.com/roadmap-dev/roadmap/internal/github"
)

// BlockerReader is what reading an item's blockers needs (internal/github's
// *Client).
type BlockerReader interface {
	FullName() string
	BlockedBy(ctx context.Context, n int) ([]github.Dependency, error)
	IssueStates(ctx context.Context, refs []github.IssueRef) (map[github.IssueRef]github.IssueState, error)
}

// BlockerRead says what a read of an item's blockers may take as known.
type BlockerRead struct {
	// Open are issues of the item's repository known to be open (the
	// waiting items an unblock listed, a tracker's open sub-issues): a
	// reference to one needs no read.
	Open map[int]bool
	// NoDependencies: the issue read said nothing blocks the item
	// (issue_dependencies_summary.total_blocked_by is 0), so GitHub's
	// dependencies are not listed.
	NoDependencies bool
}

// BlockerStates reads the states of what issue is waits for, the one read
// every caller of blockers.Decide makes (a Job's start, the unblock, a
// tracker's drive): GitHub's issue dependencies (one request, each blocker
// with its state; none with NoDependencies; a GitHub without them answers
// 404 and the body's references are read alone) and the references of the
// body (blockers.FromBody) that the dependencies do not hold, read in one
// GraphQL query with the pull requests that close each dependency closed
// as completed: a blocker closed while the pull request that closes it is
// not merged is not met (blockers.State.ClosingPRs). At most two counted
// requests, for up to 100 references. A reference to the item itself is
// kept unread (Decide refuses it).
func BlockerStates(ctx context.Context, gh BlockerReader, is github.Issue, r BlockerRead) ([]blockers.State, error) {
	own := gh.FullName()
	local := func(repo string, n int) blockers.Ref {
		if strings.EqualFold(repo, own) {
			repo = ""
		}
		return blockers.Ref{Repo: repo, Number: n}
	}
	key := func(ref blockers.Ref) blockers.Ref {
		return blockers.Ref{Repo: strings.ToLower(ref.Repo), Number: ref.Number}
	}
	self := blockers.Ref{Number: is.Number}
	var states []blockers.State
	at := map[blockers.Ref]int{} // a blocker's index in states
	var ask []github.IssueRef
	var asked []blockers.Ref
	askFor := func(ref blockers.Ref) {
		ask = append(ask, github.IssueRef{Repo: ref.Repo, Number: ref.Number})
		asked = append(asked, ref)
	}
	if !r.NoDependencies {
		deps, err := gh.BlockedBy(ctx, is.Number)
		if err != nil && !errors.Is(err, github.ErrDependenciesUnavailable) {
			return nil, err
		}
		for _, d := range deps {
			ref := local(d.Repo, d.Number)
			if _, dup := at[key(ref)]; dup {
				continue
			}
			at[key(ref)] = len(states)
			s := blockers.State{Ref: ref, Readable: true, Open: d.State == "open", StateReason: d.StateReason,
				PullRequest: d.PullRequest, Title: d.Title}
			states = append(states, s)
			if !s.Open && !s.PullRequest && (s.StateReason == "" || s.StateReason == "completed") {
				askFor(ref) // closed as completed: by a merged pull request?
			}
		}
	}
	for _, b := range blockers.FromBody(is.Body) {
		ref := local(b.Repo, b.Number)
		if _, known := at[key(ref)]; known {
			continue
		}
		at[key(ref)] = len(states)
		switch {
		case key(ref) == self:
			states = append(states, blockers.State{Ref: ref, Readable: true})
		case ref.Repo == "" && r.Open[ref.Number]:
			states = append(states, blockers.State{Ref: ref, Readable: true, Open: true})
		default:
			states = append(states, blockers.State{Ref: ref})
			askFor(ref)
		}
	}
	if len(ask) == 0 {
		return states, nil
	}
	got, err := gh.IssueStates(ctx, ask)
	if err != nil {
		return nil, fmt.Errorf("issue %d: read the states of its blockers: %w", is.Number, err)
	}
	for i, q := range ask {
		if q.Repo == "" {
			q.Repo = own
		}
		g := got[q]
		s := &states[at[key(asked[i])]]
		if !s.Readable {
			// A body's reference: all it is comes from the query.
			s.Readable, s.Open, s.StateReason, s.Title = !g.Missing, g.State == "open", g.StateReason, g.Title
		}
		s.ClosingPRs, s.ClosingPRMerged = len(g.ClosingPRs), g.ClosingPRMerged
	}
	return states, nil
}
