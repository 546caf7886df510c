// Package plan reads an OpenSpec change, the contract between the stage that
// writes a plan and the implement stage that executes it. The part here is what
// implement needs: the task groups of tasks.md (`## N. Title`), their tasks
// (`- [ ] N.M text`), the verify command each task ends with (and the `fails`
// word that marks a behaviour group's failing test), and a Tick that marks a
// passed group done without touching any other byte of the file. The text is
// written by a model, so the parser is strict, names the line of every fault,
// and is fuzzed. The package is pure: it imports nothing internal.
package plan
