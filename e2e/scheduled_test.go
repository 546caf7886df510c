package e2e

// scheduled are the scenarios that run only in the nightly e2e sweep
// (.github/workflows/e2e-sweep.yml, `make e2e E2E_ALL=1`), the longest of
// the set, each with the tests that stand for it on every change
// (docs/testing.md). Each of those is run by `make test` or is a scenario
// `make e2e` runs on every change; tools/cilayout's TestNothingDroppedFromCI
// fails on an entry without one, or on one that names a test that does not
// run on every change. A scenario listed here skips under `make e2e` unless
// ROADMAP_E2E_ALL=1, saying what stands for it.
var scheduled = map[string][]string{
	// Three runs at once, then the wake's run (about 200 s). The trio world's
	// claims (A and B disjoint, C overlapping A) and each group's fail-to-pass
	// are held by TestTrioWorld; the wait on another item's claim and the wake
	// by its report, through the runner and report, by
	// TestClaimOverlapWaitsAndWakes; disjoint claims taken together by
	// TestClaimsDisjointRunTogether.
	"TestE2ETwoItemsAtOnce": {
		"internal/demo.TestTrioWorld",
		"internal/implement.TestClaimOverlapWaitsAndWakes",
		"internal/claims.TestClaimsDisjointRunTogether",
	},
	// A whole Python item through act (about 100 s warm, many minutes on a
	// cold build cache). TestPythonItem plays the same item with the real
	// binary: stage's pytest verify commands, the gates, implement's checks
	// with python3 -m pytest behind the boundary, a kill and its continuation,
	// and roadmap ci fail-to-pass on pytest's JUnit XML. What only the
	// sweep sees: the reusable workflow's setup input running a composite
	// setup action under act.
	"TestE2EPythonRepository": {
		"internal/demo.TestPythonItem",
	},
	// A SIGKILL inside group 2 under act (about 100 s: 1 s of model latency a
	// call). TestDemo kills the real binary's Job 1 while a call is on the
	// wire and report classes it killed, keeps its booked spend and
	// continues it; TestActSmoke proves act hands a killed step's outputs
	// on, and TestE2EYieldAndContinue that report's continuation runs under
	// act.
	"TestE2EKilled": {
		"internal/demo.TestDemo",
		"e2e.TestActSmoke",
		"e2e.TestE2EYieldAndContinue",
	},
	// Four runs (about 100 s): Job 1 asks (needs_input), a reader's reply
	// is ignored, a maintainer's answer resumes the item to ready.
	// TestNeedsInput holds report's question, label and resume on a
	// maintainer's reply; TestCommentCommandsWritersOnly that a reader's
	// comment does nothing; TestAnswerReachesTheFirstStepOnce that the
	// answer reaches the next Job's first step once; TestE2EStopByPerson
	// runs a person's comment through the caller's answer job under act.
	"TestE2EAnswerResumes": {
		"internal/report.TestNeedsInput",
		"internal/report.TestCommentCommandsWritersOnly",
		"internal/implement.TestAnswerReachesTheFirstStepOnce",
		"e2e.TestE2EStopByPerson",
	},
	// Six runs: a stop label, the continuations it meets, then /roadmap
	// retry. TestE2EStopByPerson runs the same stop, its race with a
	// continuation and a comment's run under act; report's retry from a
	// person with write access (and none from others) is held by
	// TestCommentCommandsWritersOnly.
	"TestE2ERetryByPerson": {
		"e2e.TestE2EStopByPerson",
		"internal/report.TestCommentCommandsWritersOnly",
	},
	// Issue 48's two scenarios (TestE2EBlockedThenUnblocked, about 90 CPU
	// s; TestE2ETrackerDrivesThree, about 165) run on every change; these
	// four (about 260 CPU s together) went to the schedule to pay for them,
	// each with what holds its behaviour on every change.
	//
	// No push token, no dispatchable CI (about 70 CPU s): TestNoCIRun holds
	// the Job's draft and question when no check can come, TestTriggerRules
	// that GitHub starts no run for GITHUB_TOKEN's pushes.
	"TestE2ENoCIPathSaysWhatToDo": {
		"internal/implement.TestNoCIRun",
		"internal/githubfake.TestTriggerRules",
	},
	// The day-budget wake (about 60 CPU s): TestWake holds report's wake of
	// the due items, TestTriggerRules the schedule firing the default
	// branch's workflow, and TestE2EBlockedThenUnblocked the wake action
	// under act dispatching an item that then runs to ready.
	"TestE2EWakeAfterDayBudget": {
		"internal/report.TestWake",
		"internal/githubfake.TestTriggerRules",
		"e2e.TestE2EBlockedThenUnblocked",
	},
	// CI started by an App token's push (about 50 CPU s): TestTriggerRules
	// holds which pushes start CI, TestLifeThroughTheWatch the Job's watch
	// of the head's checks to green, and every per-change scenario's played
	// CI the watch under act.
	"TestE2ECIWithPushToken": {
		"internal/githubfake.TestTriggerRules",
		"internal/implement.TestLifeThroughTheWatch",
		"e2e.TestE2EPlanApprovedStartsImplement",
	},
	// plan_wrong back to stage and on (about 80 CPU s): TestAgentReturnsTheItem
	// holds the Job's return, TestReportTypedResult report's dispatch of
	// stage, TestPlanAmendmentKeepsPassedGroups the amendment on the same PR,
	// and TestE2EPlanApprovedStartsImplement an approval starting implement
	// under act.
	"TestE2EReturnToStage": {
		"internal/implement.TestAgentReturnsTheItem",
		"internal/report.TestReportTypedResult",
		"internal/stage.TestPlanAmendmentKeepsPassedGroups",
		"e2e.TestE2EPlanApprovedStartsImplement",
	},
	// Issue 50's TestE2EDashboardTick (a person's tick on the dashboard
	// carried out under act) runs on every change; this one (about 65 s
	// wall, 60 CPU s) went to the schedule to pay for it, being the
	// scenario whose behaviour the unit tests hold most of. A person's
	// close of the PR between two Jobs: TestPersonClosesPR in
	// internal/implement plays the Job that finds the PR closed at its
	// first safe point (held pr_closed, nothing pushed, never ready), the
	// one in internal/next holds the decision at every state of the PR,
	// TestActionFor that report dispatches nothing for pr_closed, and
	// TestFaultsRun injects the person_closes_pr kind on every change;
	// TestE2EYieldAndContinue plays under act the continuation this
	// scenario's run 2 is.
	"TestE2EPersonClosesPR": {
		"internal/implement.TestPersonClosesPR",
		"internal/next.TestPersonClosesPR",
		"internal/report/decide.TestActionFor",
		"internal/faults.TestFaultsRun",
		"e2e.TestE2EYieldAndContinue",
	},
	// .ci/run stood at its 1500 s budget in the last run (make test 478 s,
	// the e2e phase 1022 s); this one (77.8 s wall there) went to the
	// schedule to win back more than 60 s of the e2e phase, being the
	// per-change scenario whose behaviour the unit tests hold most nearly
	// whole. A person's "changes requested" review of the ready PR, with
	// two line comments: TestReviewChangesRequestedRepaired plays the
	// repair Job it starts (one Job; a commit for each line comment and a
	// reply in its thread naming the commit; the review's body answered
	// with nothing changed; the comment ledger written; the new head
	// reviewed and the PR ready there). TestCallerPeopleTriggers holds the caller's approved job
	// running on changes requested on the ready PR and never on the draft,
	// in the example caller and the one roadmap init writes;
	// TestFeedbackTrigger that such a review, decoded from the webhook
	// payload, makes the Job a repair. TestE2EPlanApprovedStartsImplement
	// runs a person's review through GitHub's start of the caller on
	// pull_request_review, its approved job and implement under act. What
	// only the sweep sees: act's payload of a changes-requested review
	// carried through the approved job and the reusable workflow into a
	// repair Job in the runner, on demotest.NewReviewWorld's recording, and
	// report's roadmap/implement status on the repaired head.
	"TestE2EReviewRound": {
		"internal/implement.TestReviewChangesRequestedRepaired",
		"internal/adopt.TestCallerPeopleTriggers",
		"internal/cli.TestFeedbackTrigger",
		"e2e.TestE2EPlanApprovedStartsImplement",
	},
}
