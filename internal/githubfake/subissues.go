package githubfake

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// GitHub's limits on sub-issues (docs.github.com, "Adding sub-issues"): a
// parent holds at most 100 sub-issues, and sub-issues nest at most 8
// levels deep.
const (
	maxSubIssues     = 100
	maxSubIssueDepth = 8
)

func (f *Fake) maxSubIssues() int {
	if f.opts.MaxSubIssues > 0 {
		return f.opts.MaxSubIssues
	}
	return maxSubIssues
}

const docsSubIssues = "https://docs.github.com/rest/issues/sub-issues"

// subIssuesSummary is an issue's sub_issues_summary. completed counts every
// closed sub-issue, whatever its state_reason: GitHub does not say whether
// one closed as not planned counts (docs/fake-github.md).
func (f *Fake) subIssuesSummary(is *Issue) map[string]any {
	total, done := len(is.SubIssues), 0
	for _, n := range is.SubIssues {
		if c := f.st.Issues[n]; c != nil && c.State == "closed" {
			done++
		}
	}
	pct := 0
	if total > 0 {
		pct = int(math.Round(float64(done) * 100 / float64(total)))
	}
	return map[string]any{"total": total, "completed": done, "percent_completed": pct}
}

func (f *Fake) listSubIssues(c *call) reply {
	is, rep, ok := f.issue(c)
	if !ok {
		return rep
	}
	lo, hi, link := f.paginate(c, len(is.SubIssues))
	out := []any{}
	for _, n := range is.SubIssues[lo:hi] {
		if child := f.st.Issues[n]; child != nil {
			out = append(out, f.issueJSON(c.base, child, false))
		}
	}
	return reply{status: http.StatusOK, body: out, link: link}
}

// subIssueBody is the request schema of POST …/sub_issues and DELETE
// …/sub_issue (DELETE reads sub_issue_id only).
var subIssueBody = bodySchema{fields: map[string]field{
	"sub_issue_id":   kinds("integer"),
	"replace_parent": kinds("boolean"),
}, required: []string{"sub_issue_id"}}

// subIssueTarget reads the body's sub_issue_id (the issue's id, not its
// number) and finds the issue.
func (f *Fake) subIssueTarget(c *call, doc string) (*Issue, map[string]json.RawMessage, reply, bool) {
	in, rep, ok := parseBody(c, subIssueBody, doc)
	if !ok {
		return nil, nil, rep, false
	}
	id, err := strconv.ParseInt(string(in["sub_issue_id"]), 10, 64)
	if err != nil {
		return nil, nil, invalidRequest(doc, fmt.Sprintf("For 'properties/sub_issue_id', %s is not an integer.", compact(in["sub_issue_id"]))), false
	}
	for _, is := range f.st.Issues {
		if is.ID == id && is.Pull == nil {
			return is, in, reply{}, true
		}
	}
	return nil, nil, notFound(), false
}

// depthAbove counts is and its ancestors; heightBelow counts the levels of
// is's sub-issue tree, is included.
func (f *Fake) depthAbove(is *Issue) int {
	d := 0
	for seen := map[int]bool{}; is != nil && !seen[is.Number]; is = f.st.Issues[is.Parent] {
		seen[is.Number] = true
		d++
	}
	return d
}

func (f *Fake) heightBelow(is *Issue, guard int) int {
	h := 0
	if guard > maxSubIssueDepth+1 {
		return h
	}
	for _, n := range is.SubIssues {
		if c := f.st.Issues[n]; c != nil {
			h = max(h, f.heightBelow(c, guard+1))
		}
	}
	return h + 1
}

func (f *Fake) isAncestor(a, of *Issue) bool {
	for p, seen := of, map[int]bool{}; p != nil && !seen[p.Number]; p = f.st.Issues[p.Parent] {
		seen[p.Number] = true
		if p.Number == a.Number {
			return true
		}
	}
	return false
}

func (f *Fake) addSubIssue(c *call) reply {
	parent, rep, ok := f.issue(c)
	if !ok {
		return rep
	}
	doc := docsSubIssues + "#add-sub-issue"
	child, in, rep, ok := f.subIssueTarget(c, doc)
	if !ok {
		return rep
	}
	invalid := func(msg string) reply {
		return validation(doc, map[string]any{"resource": "Issue", "code": "invalid", "field": "sub_issue_id", "message": msg})
	}
	replace := string(in["replace_parent"]) == "true"
	switch {
	case parent.Pull != nil:
		return notFound()
	case f.isAncestor(child, parent):
		return invalid("An issue cannot be a sub-issue of itself or of its own sub-issue")
	case child.Parent == parent.Number:
		return invalid("Issue is already a sub-issue of this issue")
	case child.Parent != 0 && !replace:
		return invalid("Issue may not contain duplicate sub-issues and Sub issue may only have one parent")
	case len(parent.SubIssues) >= f.maxSubIssues():
		return invalid(fmt.Sprintf("Parent cannot have more than %d sub-issues", f.maxSubIssues()))
	case f.depthAbove(parent)+f.heightBelow(child, 0) > maxSubIssueDepth:
		return invalid(fmt.Sprintf("Sub-issues cannot be nested more than %d levels deep", maxSubIssueDepth))
	}
	f.link(parent, child)
	parent.UpdatedAt = f.stamp()
	return reply{status: http.StatusCreated, body: f.issueJSON(c.base, parent, true),
		location: fmt.Sprintf("%s/issues/%d/sub_issues", f.repoAPI(c.base), parent.Number)}
}

// link makes child a sub-issue of parent, taking it from its old parent.
func (f *Fake) link(parent, child *Issue) {
	if old := f.st.Issues[child.Parent]; old != nil {
		old.SubIssues = slices.DeleteFunc(old.SubIssues, func(n int) bool { return n == child.Number })
	}
	child.Parent = parent.Number
	parent.SubIssues = append(parent.SubIssues, child.Number)
}

func (f *Fake) removeSubIssue(c *call) reply {
	parent, rep, ok := f.issue(c)
	if !ok {
		return rep
	}
	child, _, rep, ok := f.subIssueTarget(c, docsSubIssues+"#remove-sub-issue")
	if !ok {
		return rep
	}
	if child.Parent != parent.Number {
		return notFound()
	}
	parent.SubIssues = slices.DeleteFunc(parent.SubIssues, func(n int) bool { return n == child.Number })
	child.Parent = 0
	parent.UpdatedAt = f.stamp()
	return reply{status: http.StatusOK, body: f.issueJSON(c.base, parent, true),
		location: fmt.Sprintf("%s/issues/%d/sub_issues", f.repoAPI(c.base), parent.Number)}
}

// AddSubIssue makes issue child a sub-issue of parent, as a person would in
// the web UI, under GitHub's rules: at most 100 sub-issues a parent, 8
// levels, one parent a child (use replace to move it), no cycle.
func (f *Fake) AddSubIssue(parent, child int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ch := f.st.Issues[parent], f.st.Issues[child]
	switch {
	case p == nil || ch == nil:
		return fmt.Errorf("githubfake: add sub-issue #%d to #%d: no such issue", child, parent)
	case f.isAncestor(ch, p):
		return fmt.Errorf("githubfake: add sub-issue #%d to #%d: a cycle", child, parent)
	case ch.Parent != 0:
		return fmt.Errorf("githubfake: add sub-issue #%d to #%d: it is already a sub-issue of #%d", child, parent, ch.Parent)
	case len(p.SubIssues) >= f.maxSubIssues():
		return fmt.Errorf("githubfake: add sub-issue #%d to #%d: the parent has %d sub-issues already", child, parent, f.maxSubIssues())
	case f.depthAbove(p)+f.heightBelow(ch, 0) > maxSubIssueDepth:
		return fmt.Errorf("githubfake: add sub-issue #%d to #%d: deeper than %d levels", child, parent, maxSubIssueDepth)
	}
	f.link(p, ch)
	p.UpdatedAt = f.stamp()
	return nil
}

// CloseIssue closes issue n with reason (completed, not_planned or
// duplicate; "" is completed), as a person would.
func (f *Fake) CloseIssue(n int, reason string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	is := f.st.Issues[n]
	if is == nil {
		return fmt.Errorf("githubfake: no issue %d", n)
	}
	if reason == "" {
		reason = "completed"
	}
	if !slices.Contains([]string{"completed", "not_planned", "duplicate"}, reason) {
		return fmt.Errorf("githubfake: close issue %d: %q is not a state_reason", n, reason)
	}
	t := f.stamp()
	is.State, is.StateReason, is.ClosedAt, is.UpdatedAt = "closed", reason, t, t
	return nil
}

// ReopenIssue reopens issue n, as a person's reopening does: open, with
// state_reason reopened (the seed's counterpart of CloseIssue; it records
// no event).
func (f *Fake) ReopenIssue(n int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	is := f.st.Issues[n]
	if is == nil {
		return fmt.Errorf("githubfake: no issue %d", n)
	}
	t := f.stamp()
	is.State, is.StateReason, is.ClosedAt, is.UpdatedAt = "open", "reopened", time.Time{}, t
	return nil
}

// DeleteIssue removes issue n, as deleting it on GitHub does: reading it
// is 404 from then on, it leaves its parent's sub-issues, and it blocks
// nothing any more.
func (f *Fake) DeleteIssue(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	is := f.st.Issues[n]
	if is == nil {
		return
	}
	if p := f.st.Issues[is.Parent]; p != nil {
		p.SubIssues = slices.DeleteFunc(p.SubIssues, func(c int) bool { return c == n })
	}
	for _, c := range is.SubIssues {
		if ch := f.st.Issues[c]; ch != nil {
			ch.Parent = 0
		}
	}
	// Its dependencies go with it.
	for _, o := range f.st.Issues {
		o.BlockedBy = slices.DeleteFunc(o.BlockedBy, func(b int) bool { return b == n })
	}
	delete(f.st.Issues, n)
}
