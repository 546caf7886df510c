package githubfake

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
)

// GitHub's limit on issue dependencies (the changelog of 2025-08-21,
// "Dependencies on issues": "up to 50 issues for each relationship type"):
// an issue is blocked by at most 50 issues.
const maxBlockedBy = 50

const docsDependencies = "https://docs.github.com/rest/issues/issue-dependencies"

func (f *Fake) maxBlockedBy() int {
	if f.opts.MaxBlockedBy > 0 {
		return f.opts.MaxBlockedBy
	}
	return maxBlockedBy
}

// blockingOf lists the issues is blocks, by number, ascending. f.mu is held.
func (f *Fake) blockingOf(is *Issue) []int {
	var out []int
	for n, o := range f.st.Issues {
		if slices.Contains(o.BlockedBy, is.Number) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// dependenciesSummary is an issue's issue_dependencies_summary: blocked_by
// and blocking count the open issues on the other side, total_blocked_by and
// total_blocking every one (GitHub's description names the fields only; the
// fake reads the totals as open and closed together).
func (f *Fake) dependenciesSummary(is *Issue) map[string]any {
	open := func(ns []int) int {
		k := 0
		for _, n := range ns {
			if o := f.st.Issues[n]; o != nil && o.State == "open" {
				k++
			}
		}
		return k
	}
	blocking := f.blockingOf(is)
	return map[string]any{"blocked_by": open(is.BlockedBy), "blocking": open(blocking),
		"total_blocked_by": len(is.BlockedBy), "total_blocking": len(blocking)}
}

// depIssue is the issue in the path of a dependency endpoint: 404 when the
// fake has dependencies off (a GitHub without the feature), when there is
// no such issue, or, for a change, when it is a pull request (a pull
// request may block an issue; nothing blocks a pull request).
func (f *Fake) depIssue(c *call, change bool) (*Issue, reply, bool) {
	if f.opts.NoIssueDependencies {
		return nil, notFound(), false
	}
	is, rep, ok := f.issue(c)
	if ok && change && is.Pull != nil {
		return nil, notFound(), false
	}
	return is, rep, ok
}

func listDependencies(blocking bool) handlerFunc {
	return func(f *Fake, c *call) reply {
		is, rep, ok := f.depIssue(c, false)
		if !ok {
			return rep
		}
		ns := is.BlockedBy
		if blocking {
			ns = f.blockingOf(is)
		}
		lo, hi, link := f.paginate(c, len(ns))
		out := []any{}
		for _, n := range ns[lo:hi] {
			if o := f.st.Issues[n]; o != nil {
				out = append(out, f.issueJSON(c.base, o, false))
			}
		}
		return reply{status: http.StatusOK, body: out, link: link}
	}
}

// byID finds an issue, or a pull request's issue side, by its id. f.mu is
// held.
func (f *Fake) byID(id int64) *Issue {
	for _, is := range f.st.Issues {
		if is.ID == id {
			return is
		}
	}
	return nil
}

// refuseBlocker says why blocker may not be added to is's blockers ("" when
// it may), under GitHub's rules as the fake reads them.
func (f *Fake) refuseBlocker(is, blocker *Issue) string {
	switch {
	case is.Number == blocker.Number:
		return "An issue cannot be blocked by itself"
	case slices.Contains(is.BlockedBy, blocker.Number):
		return "Issue is already blocked by this issue"
	case len(is.BlockedBy) >= f.maxBlockedBy():
		return fmt.Sprintf("An issue cannot be blocked by more than %d issues", f.maxBlockedBy())
	}
	return ""
}

var blockedByBody = bodySchema{fields: map[string]field{"issue_id": kinds("integer")}, required: []string{"issue_id"}}

func (f *Fake) addBlockedBy(c *call) reply {
	is, rep, ok := f.depIssue(c, true)
	if !ok {
		return rep
	}
	doc := docsDependencies + "#add-a-dependency-an-issue-is-blocked-by"
	in, rep, ok := parseBody(c, blockedByBody, doc)
	if !ok {
		return rep
	}
	id, err := strconv.ParseInt(string(in["issue_id"]), 10, 64)
	if err != nil {
		return invalidRequest(doc, fmt.Sprintf("For 'properties/issue_id', %s is not an integer.", compact(in["issue_id"])))
	}
	blocker := f.byID(id)
	if blocker == nil {
		return notFound()
	}
	if why := f.refuseBlocker(is, blocker); why != "" {
		return validation(doc, map[string]any{"resource": "Issue", "code": "invalid", "field": "issue_id", "message": why})
	}
	is.BlockedBy = append(is.BlockedBy, blocker.Number)
	is.UpdatedAt = f.stamp()
	f.dependencyEvent(c, "blocked_by_added", is, blocker)
	return reply{status: http.StatusCreated, body: f.issueJSON(c.base, is, true),
		location: fmt.Sprintf("%s/issues/%d/dependencies/blocked_by", f.repoAPI(c.base), is.Number)}
}

func (f *Fake) removeBlockedBy(c *call) reply {
	is, rep, ok := f.depIssue(c, true)
	if !ok {
		return rep
	}
	id, err := strconv.ParseInt(c.params["id"], 10, 64)
	if err != nil {
		return notFound()
	}
	blocker := f.byID(id)
	if blocker == nil || !slices.Contains(is.BlockedBy, blocker.Number) {
		return notFound()
	}
	is.BlockedBy = slices.DeleteFunc(is.BlockedBy, func(n int) bool { return n == blocker.Number })
	is.UpdatedAt = f.stamp()
	f.dependencyEvent(c, "blocked_by_removed", is, blocker)
	return reply{status: http.StatusOK, body: f.issueJSON(c.base, is, true)}
}

// dependencyEvent records the issue_dependencies event of a change made over
// the API. It is not among the events that trigger workflows, so it starts
// no run, whoever caused it. f.mu is held.
func (f *Fake) dependencyEvent(c *call, action string, is, blocker *Issue) {
	f.emit(c, &Event{Name: "issue_dependencies", Action: action, Number: is.Number, Blocking: blocker.Number,
		Notes: []string{"issue_dependencies: not an event that triggers workflows, starts no run (" + docsEvents + ")"}})
}

// AddBlockedBy marks issue as blocked by blocker, as a person would in the
// web UI, under GitHub's rules: not by itself, not twice, at most 50
// blockers (Options.MaxBlockedBy). A pull request may block an issue; an
// issue may block its own blocker (GitHub refuses no cycle but the
// one-issue one). Like every seeding method it records no event.
func (f *Fake) AddBlockedBy(issue, blocker int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	is, b := f.st.Issues[issue], f.st.Issues[blocker]
	switch {
	case is == nil || b == nil:
		return fmt.Errorf("githubfake: block #%d by #%d: no such issue", issue, blocker)
	case is.Pull != nil:
		return fmt.Errorf("githubfake: block #%d by #%d: #%d is a pull request", issue, blocker, issue)
	}
	if why := f.refuseBlocker(is, b); why != "" {
		return fmt.Errorf("githubfake: block #%d by #%d: %s", issue, blocker, why)
	}
	is.BlockedBy = append(is.BlockedBy, blocker)
	is.UpdatedAt = f.stamp()
	return nil
}
