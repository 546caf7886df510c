package github

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Recovery kinds: the branches the Client takes on its own when an answer
// is not the one it wanted. Each is reported, so a reader of the log (and
// the fault suite, docs/reliability.md) knows the branch was taken, not
// guessed from the outcome.
const (
	// RecoverRetry is a transient failure (5xx, a connection error) of an
	// idempotent request, sent again after a backoff.
	RecoverRetry = "retry"
	// RecoverRateLimit is a wait for a rate limit GitHub announced.
	RecoverRateLimit = "wait_rate_limit"
	// RecoverRecordReapply is a record write whose answer was lost or
	// did not hold the change: the record is read again and the change
	// applied to it again.
	RecoverRecordReapply = "reapply_record"
)

// Recovery is one recovery branch the Client took.
type Recovery struct {
	Kind     string
	Endpoint string // "PATCH /repos/{owner}/{repo}/issues/comments/{id}"
	Attempt  int    // the attempt that follows (2 is the first retry)
	Wait     time.Duration
	Reason   string
	// Repository is OWNER/REPO of the Client that took the branch; the
	// Client fills it in.
	Repository string
	// Request is the request as sent, "GET /repos/acme/widgets/issues/12"
	// (its path escaped and masked, no query); "" when the path is a
	// secret (a log's one-time URL) or the branch is not one request's.
	Request string
}

// RecoveryPrefix starts the log line of a Recovery. It is a plain
// "roadmap: " line, as every other line roadmap logs: no "::" that a reader
// (or a careless grep) could take for a workflow command.
const RecoveryPrefix = "roadmap: github recovery: "

// String is the Recovery's log line (without a newline). It names the
// request as sent, so the repository and the issue are in it, not the
// endpoint's template.
func (r Recovery) String() string {
	return fmt.Sprintf("%s%s %s: attempt %d after %s, wait %s", RecoveryPrefix, r.Kind, r.target(), r.Attempt, r.Reason, r.Wait)
}

// target is what the branch was taken for: the request as sent, else the
// endpoint with the repository in place of "{owner}/{repo}", else the
// endpoint and the repository.
func (r Recovery) target() string {
	switch {
	case r.Request != "":
		return r.Request
	case r.Repository == "":
		return r.Endpoint
	case strings.Contains(r.Endpoint, "{owner}/{repo}"):
		return strings.Replace(r.Endpoint, "{owner}/{repo}", r.Repository, 1)
	}
	return r.Repository + " " + r.Endpoint
}

// LogRecoveries writes each Recovery to w as one line: a Job's log or
// report's step log. The line starts with its prefix, so it can never be a
// workflow command, and an error's text in it is folded onto the line.
func LogRecoveries(w io.Writer) func(Recovery) {
	return func(r Recovery) {
		if w != nil {
			fmt.Fprintln(w, strings.Join(strings.Fields(r.String()), " "))
		}
	}
}
