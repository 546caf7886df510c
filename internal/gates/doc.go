// Package gates holds the plan gates: deterministic checks that a plan the
// stage wrote (an OpenSpec change) fits the issue it answers and the
// repository at the staging commit, before any model reviews it or any
// implement Job spends on it. Each gate is a function over (issue, plan,
// work tree) that returns plan.Findings with a file and a line, rule
// `roadmap/gate/<name>`; none needs a model.
//
// The seven gates, and why each exists (seed 002, tracker #3027):
// premise-probe (#3011), callers-and-tests (#3012), spec-delta (#3013),
// verify-form (#3015), group-order (#3017), acceptance-map (#3019) and
// failing-test-first (#3005). docs/gates.md is the user's reference: the
// grammar a plan uses for each and an example finding.
//
// Everything read here is hostile: the plan and the issue are model or
// stranger text, the work tree is what the model wrote. Files are read
// inside the work tree only (os.Root: a symlink out of it is not followed),
// every read is bounded, and a command a premise names runs only through the
// caller's Runner, which must run it inside the isolation boundary.
package gates
