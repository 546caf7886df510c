// Package trace records what a run did as ordered, typed events — model calls,
// tool calls, check runs, retries and phase boundaries — so a person can see
// what the agent tried, which call failed and what each step cost. A Recorder
// masks every string field before it keeps an event, and writes each event as
// one JSONL line the moment it is added, so a killed Job leaves what it did in
// its artifact. From the events the package builds the bounded copy kept in the
// issue record (implement.trace, newest events kept), the summary table of the
// stop comment and step summary, the Mermaid timeline, and the spend line that
// report reads back from the log of a killed Job.
//
// The package imports no other internal package: it declares the Masker it
// needs, and callers hand it the real one.
package trace
