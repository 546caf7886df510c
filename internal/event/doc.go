// Package event decodes what started a run — the GITHUB_* environment and the
// webhook payload at GITHUB_EVENT_PATH — into a small Event. The payload is
// untrusted text (issue titles, comment bodies): it is decoded defensively and
// fuzzed, and only the fields roadmap acts on leave this package.
package event
