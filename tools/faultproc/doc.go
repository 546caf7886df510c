// Package faultproc is the fault suite played from outside
// (docs/reliability.md, "The process histories"): real roadmap processes
// (implement, report, the continuations report dispatches) run as a
// workflow's steps run them, against internal/faults' item, and are
// SIGKILLed, cut off and answered late from outside. It starts and kills
// processes and proxies their traffic, so it is a tool of the proving
// floor (`roadmap-dev faults process`, `make faults-process`), never part
// of the roadmap binary users run.
package faultproc
