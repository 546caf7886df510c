// Package citriage is the CI part of an implement Job's watch: what it
// learned of CI at the head (passed, none), the notes it leaves for the PR
// comment, and the triage of a failing PR check. A failed check is read (an
// Actions job's log and annotations, another app's output, a status's
// description), classified, and decided on: re-run its workflow run when the
// infrastructure broke it (bounded per run by the run's attempt), else hand
// the failing part of its log on as the repair task. The decisions are pure
// functions of what was read and of Watch, the state the loop holds; the
// loop does the effects (the re-run, the ready mark) and maps a Failed
// verdict to its ending.
package citriage
