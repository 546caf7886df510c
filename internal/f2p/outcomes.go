package f2p

import "github.com/roadmap-dev/roadmap/internal/checks"

// ReportOutcomes are a checks.RunFailing report's commands as Judge takes
// them; the log is kept for the command that passed, the evidence. Implement
// and the PR check both run a group's `fails` commands with the check runner
// and hand the report here, so they judge it alike.
func ReportOutcomes(rep checks.Report) []Outcome {
	out := make([]Outcome, 0, len(rep.Results))
	for _, c := range rep.Results {
		o := Outcome{Command: c.Command, ExitCode: c.ExitCode, TimedOut: c.TimedOut}
		if c.Command == rep.FailedCommand {
			o.Log = rep.Log
		}
		out = append(out, o)
	}
	return out
}
