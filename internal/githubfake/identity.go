package githubfake

import "strings"

// Kind is what a token is, as far as GitHub's rules for starting workflow
// runs care: a workflow's GITHUB_TOKEN, a person's token, or a GitHub App's
// installation token.
type Kind string

const (
	// WorkflowToken is a workflow's GITHUB_TOKEN, acting as
	// github-actions[bot]: the events it causes start no workflow runs,
	// except workflow_dispatch and repository_dispatch.
	WorkflowToken Kind = "github_token"
	// PersonalToken is a person's token (a personal access token, or an
	// OAuth token acting for the person).
	PersonalToken Kind = "user"
	// AppToken is a GitHub App's installation token, acting as the app's
	// bot ("roadmap[bot]").
	AppToken Kind = "app"
)

// Identity is who a token acts as.
type Identity struct {
	Login string
	// Kind is what the token is; "" follows from Login (kindOf).
	Kind Kind
	// ReadOnly tokens get 403 on every write.
	ReadOnly bool
	// Name, when set, is logged with each request the token makes
	// (LoggedRequest.TokenName), so a test can tell apart two tokens that
	// act as one login: the GITHUB_TOKEN of two runs at once.
	Name string
}

// actionsBot is the login of a workflow's GITHUB_TOKEN.
const actionsBot = "github-actions[bot]"

// kindOf is the kind of token a login's requests come from when nothing
// else says so: github-actions[bot] is the workflow's GITHUB_TOKEN, another
// "[bot]" login is a GitHub App's, anything else a person's.
func kindOf(login string) Kind {
	switch {
	case login == actionsBot:
		return WorkflowToken
	case strings.HasSuffix(login, "[bot]"):
		return AppToken
	default:
		return PersonalToken
	}
}
