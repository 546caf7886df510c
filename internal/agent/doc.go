// Package agent is the tool loop both stages use: it asks a Model for the next
// step, runs the tools the model calls (read, list, search, edit, write, run,
// ask, finish, plan_wrong) inside a workspace under a policy, checks budgets
// before every model call, and ends with a typed status. RunWithRepair adds
// bounded repair rounds: a failing check log goes back to the model, and a
// repeated failure starts a fresh conversation on the next tier of the model
// ladder.
//
// It declares the interfaces it needs (Model, Sandbox, Observer, Clock) and
// imports no other internal package but the leaf internal/nofollow, through
// which the file tools open every file (workspace.go: an os.Root per step,
// no symlink followed out of the workspace or into .git, even one swapped in
// mid-call); internal/policy provides the Sandbox and internal/llm the
// Models.
package agent
