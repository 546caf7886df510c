package githubfake

import (
	"regexp"
	"slices"
	"strconv"
)

// closingRE is a closing keyword and the issue it names in a pull
// request's description (its body; GitHub does not read the title for
// them): "Fixes #12", "closes: #3", "Resolved #40".
// Only this repository's "#N" form is read.
var closingRE = regexp.MustCompile(`(?i)\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?):?\s+#([1-9][0-9]{0,8})\b`)

// closeLinked closes, as completed, the open issues a merged pull request
// names with a closing keyword in its body, when it was merged into
// the default branch, as GitHub does; each close is an issues closed event
// by the merger, so a person's merge starts runs for it and GITHUB_TOKEN's
// does not. f.mu is held.
func (f *Fake) closeLinked(c *call, pr *Issue) {
	if pr.Pull == nil || pr.Pull.Base != f.opts.DefaultBranch {
		return
	}
	seen := map[int]bool{}
	for _, m := range closingRE.FindAllStringSubmatch(pr.Body, -1) {
		n, err := strconv.Atoi(m[1])
		if err != nil || seen[n] {
			continue
		}
		seen[n] = true
		is := f.st.Issues[n]
		if is == nil || is.Pull != nil || is.State != "open" {
			continue
		}
		t := f.stamp()
		is.State, is.StateReason, is.ClosedAt, is.UpdatedAt = "closed", "completed", t, t
		f.issueEvent(c, is, "closed", "")
	}
}

// closingPulls are the pull requests into the default branch whose body
// names issue n with a closing keyword, as GitHub links them
// (closedByPullRequestsReferences), by number; closed ones that were not
// merged only with includeClosed. f.mu is held.
func (f *Fake) closingPulls(n int, includeClosed bool) []*Issue {
	var out []*Issue
	for _, pr := range f.st.Issues {
		if pr.Pull == nil || pr.Pull.Base != f.opts.DefaultBranch || (pr.State == "closed" && !pr.Pull.Merged && !includeClosed) {
			continue
		}
		for _, m := range closingRE.FindAllStringSubmatch(pr.Body, -1) {
			if m[1] == strconv.Itoa(n) {
				out = append(out, pr)
				break
			}
		}
	}
	slices.SortFunc(out, func(a, b *Issue) int { return a.Number - b.Number })
	return out
}
