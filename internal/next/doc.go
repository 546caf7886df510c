// Package next decides what a Job does next, given the item's record and
// what git and GitHub show: one pure function per decision of a phase
// (StageStart and StageRounds for stage, ImplementStart and
// ImplementGroups for implement). The phase reads the record, the branch
// and the remote into a plain view, calls the function, and only carries
// out the step it returns: a yield, a stop, a return, nothing to do, or
// the rounds or groups to run.
//
// The split is Temporal's: the decision is deterministic and kept apart
// from the effects, so it is tested in a table, one row per history
// (next_test.go), and the fault suite's whole histories check the effects
// (what the Jobs wrote, pushed and commented), not the decisions again.
//
// The package imports no client of GitHub, git or a model, no file system,
// network or clock: only the record's and the taxonomy's words
// (TestImportDirection holds it).
package next
