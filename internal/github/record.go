package github

import (
	"fmt"
	"strings"

	gogithub "github.com/google/go-github/v66/github"
)

// DefaultIdentity is the login GITHUB_TOKEN writes as.
const DefaultIdentity = "github-actions[bot]"

// Identity is the login roadmap writes as: the record is read only from a
// comment by it.
func (c *Client) Identity() string { return c.identity }

func (c *Client) ownComment(cm *gogithub.IssueComment) bool {
	return strings.EqualFold(cm.GetUser().GetLogin(), c.identity)
}

// issueOf reads the issue number from a comment's issue_url; 0 when absent
// (then the id is trusted as given).
func issueOf(cm *gogithub.IssueComment) int {
	u := cm.GetIssueURL()
	i := strings.LastIndexByte(u, '/')
	if i < 0 {
		return 0
	}
	var n int
	if _, err := fmt.Sscanf(u[i+1:], "%d", &n); err != nil {
		return 0
	}
	return n
}
