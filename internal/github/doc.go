// Package github is roadmap's only door to GitHub. It wraps go-github (REST)
// and githubv4 (GraphQL) behind a small set of domain methods that take and
// return the product's own types (Issue, Comment, PullRequest, CheckSummary,
// WorkflowJob), so no wire type leaks past it.
//
// Everything GitHub makes hard is handled here, once: every request is
// counted by endpoint and kind (a Job's spend is readable from Requests);
// GETs are conditional so an unchanged answer is a free 304; primary and
// secondary rate limits are waited out as GitHub documents, or returned as a
// *RateLimitError when the wait would pass the Job's deadline; 5xx and
// connection errors are retried for idempotent requests only; the issue
// record is written with a read-merge-write protocol that reads its own
// write back; the marker comment is updated in place and never duplicated;
// and every text that leaves the process passes the secret masker.
// docs/github.md describes the accounting, the limits and the protocol.
package github
