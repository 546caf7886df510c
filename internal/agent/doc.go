// Package agent is the tool loop both stages use: it asks a Model for the next
// step, runs the tools the model calls (read, list, search, edit, write, run,
// ask, finish) inside a workspace under a policy, checks budgets before every
// model call, and ends with a typed status.
//
// It declares the interfaces it needs (Model, a command runner, an observer for
// trace events) and imports no other internal package.
package agent
