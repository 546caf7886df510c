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
}

// RecoveryPrefix starts the log line of a Recovery.
const RecoveryPrefix = "roadmap::github-recovery "

// String is the Recovery's log line (without a newline).
func (r Recovery) String() string {
	return fmt.Sprintf("%s%s %s attempt %d after %s, wait %s", RecoveryPrefix, r.Kind, r.Endpoint, r.Attempt, r.Reason, r.Wait)
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
