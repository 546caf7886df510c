package failure

import (
	"bytes"
	"fmt"

	"github.com/roadmap-dev/roadmap/internal/text"
)

// The implement runner tells the log how it ended, so that report can read the
// class even when the Job is killed before its result reaches the record or
// the job outputs. It prints the lines below as workflow commands
// (::error:: for stopped, ::warning:: for returned, ::notice:: for yielded),
// which the runner writes into the log as ##[error]… / ##[warning]… /
// ##[notice]…; the classifier honours them only with that prefix, so a tool's
// plain output cannot pass for them.

const (
	typedLinePrefix    = "roadmap: "
	checksFailedPrefix = "roadmap: checks failed: "
)

// TypedLine is the message of the runner's typed line, for example
// "roadmap: stopped: class=budget_exhausted item budget $5.00 reached".
// detail is one line: newlines become spaces.
func TypedLine(r Result, c Class, detail string) string {
	s := fmt.Sprintf("%s%s: class=%s", typedLinePrefix, r, c)
	if d := text.OneLine(detail); d != "" {
		s += " " + d
	}
	return s
}

// ChecksFailedLine is the message the runner prints when a scoped check
// fails, for example "roadmap: checks failed: go test ./internal/x exited 1".
func ChecksFailedLine(cmd string, exitCode int) string {
	return fmt.Sprintf("%s%s exited %d", checksFailedPrefix, text.OneLine(cmd), exitCode)
}

// parseTypedLine reads "roadmap: <result>: class=<class>[ detail]" from msg,
// the text after the ##[…] prefix. ok is false for any other line.
func parseTypedLine(msg []byte) (Class, bool) {
	rest, ok := bytes.CutPrefix(msg, []byte(typedLinePrefix))
	if !ok {
		return "", false
	}
	for _, r := range []Result{ResultStopped, ResultYielded, ResultReturned} {
		after, ok := bytes.CutPrefix(rest, []byte(string(r)+": class="))
		if !ok {
			continue
		}
		if i := bytes.IndexAny(after, " \t"); i >= 0 {
			after = after[:i]
		}
		return Class(after), true
	}
	return "", false
}
