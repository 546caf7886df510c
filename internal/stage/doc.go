// Package stage is the head of the pipeline: from an issue to a checked plan
// in a draft PR. A planner investigates the repository with a read-only
// toolbox and writes an OpenSpec change; the plan gates and an independent
// verifier check it; findings go back to the planner in bounded rounds.
// Clean, the plan is pushed and a draft PR opens holding it; not clean, the
// item is returned to a person with the findings. Each round is durable (a
// commit with a Roadmap-Stage-Round trailer and the record's stage.round and
// stage.findings), so a killed Job resumes without paying twice.
package stage
