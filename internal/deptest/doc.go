// Package deptest holds the test that keeps the import direction of DESIGN §5:
// the pure packages (record, event, plan, redact, failure, trace, policy) import
// nothing internal, the agent imports nothing internal but declares the
// interfaces it needs, and only the phase packages wire things together.
package deptest
