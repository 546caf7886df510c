// Package demo runs the whole life of an item locally, against the project's
// own fakes: a fake GitHub on loopback, a sample repository with a ready plan
// and a local bare remote, and recorded model exchanges served over the
// OpenAI-compatible API. It runs an implement Job as a separate process,
// kills it with SIGKILL in its second group, lets report classify the kill
// and dispatch a continuation, and runs that continuation to ready.
//
// The sample repository and the hand-written model exchanges are embedded
// (testdata/demo), so `roadmap demo` needs nothing but the binary, git and Go.
package demo
