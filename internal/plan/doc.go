// Package plan reads an OpenSpec change, the contract between the stage that
// writes a plan and the implement stage that executes it.
//
// Implement's part is tasks.md: the task groups (`## N. Title`), their tasks
// (`- [ ] N.M text`), the verify command each task ends with (and the `fails`
// word that marks a behaviour group's failing test), and a Tick that marks a
// passed group done without touching any other byte of the file.
//
// The rest of the change is read in full too: the delta specs under
// specs/<capability-path>/spec.md (ParseDelta), the main specs under
// openspec/specs (ParseMainSpec) and .openspec.yaml, each with the line of
// everything found and rendered back byte for byte. Validate checks a change
// exactly as the pinned `openspec validate --strict` does, then with roadmap's
// stricter rules, each finding naming its owner; ValidateOpenSpec runs
// OpenSpec's rules alone. Archive applies a finished change to the main specs
// as `openspec archive --yes` does, retiring a capability whose last
// requirement goes when the change's retire_capabilities marker asks. Both report a plan's faults as Findings and
// keep errors for what is not the plan's fault.
//
// The text is written by a model, so the readers never fail on it, name the
// line of every fault, and are fuzzed. The package is pure: it imports
// nothing internal.
package plan
