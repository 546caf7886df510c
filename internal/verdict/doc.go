// Package verdict is the word a concern of an implement Job (the CI triage,
// the checks before ready) gives the loop when it fails: its class, the
// evidence in a sentence, and the repair task the agent gets. The concerns
// decide; the loop maps a Failure to how it ends, in one place
// (implement's endingOf), so no concern writes the loop's ending itself.
package verdict
