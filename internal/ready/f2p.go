package ready

// Fail-to-pass states of a group, as the trace event's Outcome and the PR
// comment say them.
const (
	F2PHeld       = "held"        // every `fails` command failed before the group and passes after
	F2PFailed     = "failed"      // one passed before the group: its test does not test the change
	F2PNotChecked = "not checked" // the before tree could not be had
)

// F2P is one group's fail-to-pass in this Job.
type F2P struct {
	Status string
	Detail string // the evidence or the reason, one line
}

// SetF2P keeps group n's fail-to-pass and says whether it lets the group
// pass: only a `fails` command that passed before the group fails it; a
// before tree that could not be had is recorded and fails nothing.
func (s *State) SetF2P(n int, f F2P) bool {
	if s.f2p == nil {
		s.f2p = map[int]F2P{}
	}
	s.f2p[n] = f
	return f.Status != F2PFailed
}
