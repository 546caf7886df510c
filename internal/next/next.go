package next

import (
	"fmt"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// Kind is what a step tells the Job to do.
type Kind string

const (
	// Yield: give the slot back; nothing is done (Ending says why).
	Yield Kind = "yield"
	// Stop: the item stops on Ending's class.
	Stop Kind = "stop"
	// Return: the item goes back to stage or a person on Ending's class.
	Return Kind = "return"
	// Nothing: stage's plan is staged already; the Job writes nothing.
	Nothing Kind = "nothing"
	// Go: the Job goes on to check out the branch and read what it holds;
	// the phase's second decision follows.
	Go Kind = "go"
	// Staged: the rounds on the branch leave a clean plan; stage opens its
	// draft PR without another round.
	Staged Kind = "staged"
	// Rounds: stage runs rounds First to Last.
	Rounds Kind = "rounds"
	// Groups: implement runs the groups in Todo, then the head's checks.
	Groups Kind = "groups"
	// AtHead: every group has passed; implement goes to the head's checks.
	AtHead Kind = "at head"
)

// Ending is how a step ends the Job, when it does: the result and class the
// last mark writes, the step label of implement.stopped and the reason a
// person reads.
type Ending struct {
	Result record.Result
	Class  failure.Class
	Step   string
	Reason string
}

// The values of stage.state.
const (
	StatePlanning = "planning"
	StateStaged   = "staged"
	StateReturned = "returned"
	StateStopped  = "stopped"
)

// held is the decision both phases take first. A Job that starts on an item
// a person stopped (a continuation dispatched before the stop) does
// nothing; one whose runner cannot isolate its processes stops. start and
// isolation are the step labels implement.stopped gives them.
func held(by, unisolated, start, isolation string) (Kind, Ending, bool) {
	if by != "" {
		return Yield, Ending{Result: record.ResultYielded, Step: start,
			Reason: fmt.Sprintf("the item is stopped by %s; nothing is done until /roadmap retry", by)}, true
	}
	if unisolated != "" {
		return Stop, Ending{Result: record.ResultStopped, Class: failure.Unisolated, Step: isolation, Reason: unisolated}, true
	}
	return "", Ending{}, false
}
