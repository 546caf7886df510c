package blockers

import (
	"fmt"
	"strings"
)

// State is what GitHub says of a blocker, read by the caller. Readable is
// false when the token could not read it (another repository, 404 or 403);
// PullRequest is true when the number is a pull request's.
type State struct {
	Ref
	Readable    bool
	Open        bool
	StateReason string // GitHub's state_reason: completed, not_planned, duplicate, reopened or ""
	PullRequest bool
	Title       string
	// ClosingPRs is how many pull requests close the blocker when merged
	// (GitHub's linked pull requests), and ClosingPRMerged whether one
	// was: a blocker closed as completed while none of them is merged (a
	// person closed it by hand) is waited for as an open one. No linked
	// pull request: the close is taken at its word.
	ClosingPRs      int
	ClosingPRMerged bool
}

// Options are the configuration's blockers section.
type Options struct {
	// NotPlannedMet counts a blocker closed as not planned (or as a
	// duplicate) as met: blockers.not_planned_met, false by default.
	NotPlannedMet bool
}

// Verdict is what an item's blockers say. Met is true when nothing blocks
// it. Waiting are the open blockers, and those closed as completed while
// the pull requests that close them are not merged (Unmerged, also in
// Waiting). NotPlanned are the blockers closed as
// not planned or as duplicates: reported either way, met only with
// Options.NotPlannedMet. Refused are the references that can never be met
// and must be said on the issue (a pull request, an unreadable issue, the
// item itself, a cycle), each with a sentence a person reads; while one
// stands the item is not met.
type Verdict struct {
	Met        bool
	Waiting    []Ref
	Unmerged   []Ref
	NotPlanned []Ref
	Refused    []Problem
}

// Problem is a reference refused, and why, in words for the issue.
type Problem struct {
	Ref Ref
	Why string
}

// Decide says whether item may start, given the states of its blockers (in
// the order they were found; a blocker named twice counts once). item.Repo
// may name the item's repository ("owner/name"): a blocker written as a URL
// or owner/repo#N into it is then known as the item's own, and the item
// itself. A blocker closed as completed, or closed with no reason (closed
// before GitHub kept reasons), is met; closed as not planned or as a
// duplicate, its work was not delivered here (a duplicate's work lives in
// an issue the item did not name), so it is NotPlanned, as the tracker's
// check calls both "dropped". A closed issue that delivered only through a
// pull request not yet merged is the caller's to read: Decide sees the
// issue's state alone.
func Decide(item Ref, states []State, o Options) Verdict {
	var v Verdict
	seen := map[Ref]bool{}
	for _, s := range states {
		r := local(s.Ref, item.Repo)
		if seen[keyOf(r)] {
			continue
		}
		seen[keyOf(r)] = true
		switch {
		case keyOf(r) == keyOf(local(item, item.Repo)):
			v.Refused = append(v.Refused, Problem{r, fmt.Sprintf("%s is this issue itself: an issue cannot wait for itself; remove the reference.", r)})
		case !s.Readable:
			v.Refused = append(v.Refused, Problem{r, fmt.Sprintf("%s could not be read with roadmap's token (another repository, deleted, or no access), so it can never be seen closed; remove the reference or give roadmap read access to it.", r)})
		case s.PullRequest:
			v.Refused = append(v.Refused, Problem{r, fmt.Sprintf("%s is a pull request, not an issue: name the issue it closes instead.", r)})
		case s.Open:
			v.Waiting = append(v.Waiting, r)
		case s.StateReason == "not_planned" || s.StateReason == "duplicate":
			v.NotPlanned = append(v.NotPlanned, r)
		case s.ClosingPRs > 0 && !s.ClosingPRMerged:
			v.Waiting = append(v.Waiting, r)
			v.Unmerged = append(v.Unmerged, r)
		}
	}
	v.Met = len(v.Waiting) == 0 && len(v.Refused) == 0 && (o.NotPlannedMet || len(v.NotPlanned) == 0)
	return v
}

// WithCycle is v with the dependency cycle path (as Cycle returns it, from
// the item back to it) refused: the item can never start until a person
// removes one of the path's references.
func (v Verdict) WithCycle(path []int) Verdict {
	if len(path) < 2 {
		return v
	}
	v.Refused = append(v.Refused, Problem{Ref{Number: path[1]},
		fmt.Sprintf("%s is a dependency cycle: none of these issues can start until one of its references is removed.", Path(path))})
	v.Met = false
	return v
}

// UnmergedWhy says why a blocker closed as completed is still waited for:
// none of the pull requests that close it is merged.
func UnmergedWhy(r Ref) string {
	return fmt.Sprintf("%s is closed, but no pull request that closes it is merged: it counts as met when one is merged.", r)
}

// Path is a path of issues as the issue names it: "#4 → #7 → #4".
func Path(path []int) string {
	parts := make([]string, len(path))
	for i, n := range path {
		parts[i] = Ref{Number: n}.String()
	}
	return strings.Join(parts, " → ")
}

// local is r with its repository dropped when it is own.
func local(r Ref, own string) Ref {
	if own != "" && strings.EqualFold(r.Repo, own) {
		r.Repo = ""
	}
	return r
}

func keyOf(r Ref) Ref { return Ref{Repo: strings.ToLower(r.Repo), Number: r.Number} }
