// Package faults is the fault-injection suite (`roadmap faults run`): it plays
// the life of one item — implement Jobs and the report after each — against
// the project's fakes on loopback (the fake GitHub over HTTP with the real
// client, real git with a local bare remote, the replay model server), injects
// one fault per history (a kill just before or just after each durable effect,
// GitHub, git, model and process faults, people writing mid-run), and checks
// the invariants of docs/reliability.md after each history. Every history is
// played twice and must leave the same normalised trace.
package faults
