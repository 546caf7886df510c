// Package job builds what a Job runs with and runs it. Open assembles, from
// the configuration and the environment, the masker, the GitHub client, the
// day gate, roadmap's own git, the shell policy, the isolation boundary and
// the tools inside it, the check runner, the trace and the model ladder; a
// Kit runs one stage or implement Job on them. The CLI verbs, the fault
// suite, the evals and the demo (through the binary) build a Job only
// through Open, so every suite exercises the wiring the binary ships. Its
// parts (the HTTP transport, the clock, the models, git's hook, the
// platform probe, the trace's writer) can be replaced the way gh's
// cmdutil.Factory lets a test replace its fields.
//
// The Job itself, shared by both phases, is internal/kernel.
package job
