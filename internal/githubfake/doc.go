// Package githubfake is a stateful, in-memory fake of the GitHub endpoints
// roadmap uses: issues, comments, labels, pull requests, commit statuses,
// check runs, workflow dispatch, workflow jobs and their logs, collaborator
// permissions, and the one GraphQL mutation (markPullRequestReadyForReview).
//
// Nothing in the product can reach GitHub in a test, so this fake is where
// GitHub's documented behaviour lives for the rest of the code: pagination
// with Link headers, ETags and free 304s, a GITHUB_TOKEN-like primary budget
// with x-ratelimit-* headers, the secondary limit on content creation, 422 on
// bodies over 65,536 characters, 401/403/404, updated_at moving on every
// write, and job logs behind a one-time redirect. Fault rules inject what the
// real service does on a bad day (5xx, delays, dropped connections, writes
// that land while the client sees an error), and every request is logged so
// tests can count what a client spent. The real go-github client talks to it
// over HTTP (httptest.NewServer(fake)). Each write GitHub would turn into an
// event (a label, a comment, a pull request, a push, a dispatch, a schedule)
// is recorded with its actor and starts the workflow runs GitHub's rules
// say it starts, read from the repository's workflow files with actionlint's
// parser (triggers.go), so an end-to-end driver can run exactly those, in
// order. `roadmap dev fake-github` serves it as a process for the end-to-end
// run and the demo. docs/fake-github.md lists each endpoint and rule and how
// it deviates from GitHub.
package githubfake
