package command

import (
	"slices"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/record"
)

// Verb is what a command asks.
type Verb string

// The verbs a person gives an item.
const (
	// Stop stops the item for good (until a retry).
	Stop Verb = "stop"
	// Retry restarts a stopped item from its last mark.
	Retry Verb = "retry"
	// Dismiss closes review findings: the review never raises them again.
	Dismiss Verb = "dismiss"
)

// Command is one command a person gave on an item.
type Command struct {
	Verb Verb
	// IDs are the review findings a dismiss names.
	IDs []string
	// Via says where it came from, for the log and the comments: "a
	// `/roadmap stop` comment", "the roadmap:stop label".
	Via string
}

// prefix starts a command's line.
const prefix = "/roadmap"

// verb is one row of the commands: its word, and how the words after it
// are read (nil: they are the person's note, and any will do).
type verb struct {
	name Verb
	args func(words []string) ([]string, bool)
}

var verbs = []verb{
	{name: Stop},
	{name: Retry},
	{name: Dismiss, args: findingIDs},
}

// Parse reads the command a comment gives: its first non-blank line is
// "/roadmap <verb>", alone or followed by a space and what the verb reads.
// Any other comment gives none (it may still be an answer).
func Parse(body string) (Command, bool) {
	for line := range strings.SplitSeq(body, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 2 || f[0] != prefix {
			return Command{}, false
		}
		i := slices.IndexFunc(verbs, func(v verb) bool { return string(v.name) == f[1] })
		if i < 0 {
			return Command{}, false
		}
		c := Command{Verb: verbs[i].name, Via: "a `" + prefix + " " + f[1] + "` comment"}
		if verbs[i].args != nil {
			var ok bool
			if c.IDs, ok = verbs[i].args(f[2:]); !ok {
				return Command{}, false
			}
		}
		return c, true
	}
	return Command{}, false
}

// Label is the command of a label a person added: the stop label stops.
func Label(label, stopLabel string) (Command, bool) {
	if label == "" || label != stopLabel {
		return Command{}, false
	}
	return Command{Verb: Stop, Via: "the " + stopLabel + " label"}, true
}

// Box is the item command of a box ticked on the dashboard (its verb as
// internal/dashboard reads it): retry and stop; a box with another verb
// (wake) is no command on the item's record.
func Box(boxVerb string) (Command, bool) {
	switch v := Verb(boxVerb); v {
	case Stop, Retry:
		return Command{Verb: v, Via: "the dashboard's " + boxVerb + " box"}, true
	}
	return Command{}, false
}

// maxDismiss bounds the ids one comment dismisses.
const maxDismiss = 10

// findingIDs reads the finding ids after "dismiss": the words that have the
// form of an id, up to the first that does not (the person's note), at most
// maxDismiss, each once. A dismiss that names none is no command.
func findingIDs(words []string) ([]string, bool) {
	var ids []string
	for _, w := range words {
		w = strings.ToLower(strings.Trim(w, ",;."))
		if !record.ValidFindingID(w) || len(ids) == maxDismiss {
			break
		}
		if !slices.Contains(ids, w) {
			ids = append(ids, w)
		}
	}
	return ids, len(ids) > 0
}
