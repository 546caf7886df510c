// Package decide is report's decision of how a Job ended, kept apart from
// what report then does about it (the labels, the dispatch, the comments,
// the record write). Given what the Job left — its typed result and class,
// or, for a Job that wrote none, the verdict its log gave — and the
// record's lines of the item's Jobs, it returns one Decision: the failure
// class, the one action that class has (ActionFor), the reason in a
// sentence, and the step a stop names. The caps bound it (the no-progress
// rule, the Jobs per item, what a stage Job may do, a person's stop).
//
// It reads no clock, no network and no GitHub: times and facts come in as
// values, so each rule is a table test of small inputs.
package decide
