// Package waves plans which of a plan's groups an implement Job may run
// side by side (implement.parallel_groups, docs/parallel-groups.md): a wave
// is a run of consecutive groups whose units (the packages and paths their
// tasks name) are disjoint and none of which depends on an earlier one by
// the group-order gate. It is pure: the caller reads the plan and the
// gate's dependencies, and runs the waves.
package waves
