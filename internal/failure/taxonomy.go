package failure

// Class is a failure class of the taxonomy. Its string is what implement.failure
// holds in the issue record and what `roadmap classify --json` prints.
type Class string

// The classes of DESIGN §4, plus day_budget_exhausted and no_progress (see
// their rows in Table for why they are classes of their own).
const (
	Transient          Class = "transient"
	Indeterminate      Class = "indeterminate"
	RateLimited        Class = "rate_limited"
	Conflict           Class = "conflict"
	ChecksFailed       Class = "checks_failed"
	PlanWrong          Class = "plan_wrong"
	NeedsInput         Class = "needs_input"
	BudgetExhausted    Class = "budget_exhausted"
	DayBudgetExhausted Class = "day_budget_exhausted"
	OOM                Class = "oom"
	Killed             Class = "killed"
	Auth               Class = "auth"
	NoProgress         Class = "no_progress"
	// Busy: another live Job holds the item's lease; this one did nothing.
	Busy Class = "busy"
	// ClaimWait: a live Job of another item holds a claim on a unit this
	// item's plan changes (docs/claims.md); this one holds nothing and waits.
	ClaimWait Class = "claim_wait"
	// Blocked: an issue the item waits for (GitHub's issue dependencies,
	// or a "Blocked by #N" line in its body) is not met; the Job started
	// nothing (docs/tracker.md, "Blockers").
	Blocked Class = "blocked"
	// Unisolated: no OS boundary for model-written commands could be set
	// up, and the configuration did not say `isolation: none`.
	Unisolated Class = "unisolated"
	// ReviewBlocked: a blocking finding of the review before ready still
	// stands after its repair rounds (docs/review.md).
	ReviewBlocked Class = "review_blocked"
	// TestsWeak: a group's tests still let mutants of its changed lines
	// survive, or none could be measured, after the repair rounds
	// (docs/strength.md).
	TestsWeak Class = "tests_weak"
	// PRClosed and IssueClosed: a person closed the item's PR or its issue
	// while it was worked on; the item holds until they reopen it.
	PRClosed    Class = "pr_closed"
	IssueClosed Class = "issue_closed"
	// PRMerged: a person merged the item's PR before it was ready; the
	// item ends with the groups left named.
	PRMerged Class = "pr_merged"
	// LabelRemoved: the label that started the Job was removed before the
	// Job started; the Job did nothing.
	LabelRemoved Class = "label_removed"
	// NotHeld: a Job started by a person reopening the issue or the PR
	// found the item not held by a closing; the Job did nothing.
	NotHeld Class = "not_held"
	// Tracker: the labelled item is a tracker (native sub-issues, or a task
	// list of issue references); its sub-issues are the items, and report
	// drives them (docs/tracker.md, "Driving a tracker").
	Tracker Class = "tracker"
	Unknown Class = "unknown"
)

// Action is the one thing the product does when a class is met.
type Action string

const (
	// ActionRetry retries the idempotent operation with capped backoff; the
	// Job yields when the backoff budget is gone and a continuation retries.
	ActionRetry Action = "retry"
	// ActionReconcile reads ground truth (a GET, git ls-remote) to learn
	// whether the operation took effect, writes the mark it missed, and goes on.
	ActionReconcile Action = "reconcile"
	// ActionWait waits as GitHub documents (reset time, retry-after, at least
	// a minute); when the wait passes the Job's deadline the Job yields.
	ActionWait Action = "wait"
	// ActionRebase rebases onto the remote head and pushes again; a conflict it
	// cannot resolve goes, with its files, to the next Job.
	ActionRebase Action = "rebase"
	// ActionRepair gives the failing check log back to the agent for bounded
	// repair rounds; when they are spent the log goes to the next Job.
	ActionRepair Action = "repair"
	// ActionReturnToStage hands the item back to stage with the agent's reason
	// (label and comment): a plan amendment.
	ActionReturnToStage Action = "return_to_stage"
	// ActionAsk posts the question on the issue, sets roadmap:needs-input and
	// waits for a reply from a person with write access.
	ActionAsk Action = "ask"
	// ActionYield gives the slot back until a later time (the next day).
	ActionYield Action = "yield"
	// ActionRetryLessParallel runs the item again with less parallelism.
	ActionRetryLessParallel Action = "retry_less_parallel"
	// ActionContinue dispatches a continuation that resumes from the last mark.
	ActionContinue Action = "continue"
	// ActionLeave leaves the item to the Job that holds its lease: nothing
	// is written and nothing dispatched; that Job's ending decides.
	ActionLeave Action = "leave"
	// ActionWaitWoken waits, holding nothing, until the item it waits for
	// gives its claims back; that item's report dispatches this one again.
	ActionWaitWoken Action = "wait_woken"
	// ActionHold holds the item where a person's act left it (the PR or the
	// issue closed): no push, no ready, no spend, nothing dispatched; the
	// person's reopening starts the next Job, which resumes from the last
	// mark.
	ActionHold Action = "hold"
	// ActionSkip does nothing: the person took the request back before the
	// Job started; labelling again starts a new one.
	ActionSkip Action = "skip"
	// ActionEnd ends the item where a person's act finished it (the PR
	// merged before ready): nothing is pushed or dispatched; the groups left
	// are named, and labelling again starts them on a new PR.
	ActionEnd Action = "end"
	// ActionDrive drives a tracker's sub-issues: report starts those whose
	// blockers are met, up to tracker.max_active at once, and keeps the
	// tracker's status comment; the tracker itself is never planned.
	ActionDrive Action = "drive"
	// ActionStop stops the item: stop comment, roadmap:stopped, a failing
	// commit status, all state kept. A person decides what happens next.
	ActionStop Action = "stop"
)

// Result is the typed result a class leads to. The values are those of
// implement.result (DESIGN §2); they are repeated here because this package
// imports nothing internal.
type Result string

const (
	ResultReady    Result = "ready"
	ResultStopped  Result = "stopped"
	ResultYielded  Result = "yielded"
	ResultReturned Result = "returned"
)

// Row is one class of the taxonomy.
type Row struct {
	Class Class
	// Recognised says, for a person, how the class is recognised.
	Recognised string
	// Action is the class's one action.
	Action Action
	// Does says what the action does, for a person (docs, the stop comment).
	Does string
	// Result is the typed result the class leads to when it ends a Job.
	Result Result
	// Automatic is true when the product takes the action and the item goes on
	// without a person.
	Automatic bool
	// Stop is true when the class stops the item. Never true with Automatic.
	Stop bool
}

// table is the taxonomy. Every row is written out in full so that the table
// reads the same here, in docs/taxonomy.md (generated from it) and in a test.
var table = []Row{
	{
		Class:      Transient,
		Recognised: "5xx (a status line, or a tool's 'status code 503'), connection reset (ECONNRESET, Java's 'Connection reset') or timed out (ETIMEDOUT), a name that does not resolve for now, unexpected/early EOF, TLS, i/o or read timeout, git RPC failed / remote end hung up; in a job's log, a GET or HEAD that timed out awaiting headers (a read changed nothing)",
		Action:     ActionRetry,
		Does:       "retry the idempotent operation with capped backoff; when the backoff budget is gone the Job yields and a continuation retries",
		Result:     ResultYielded,
		Automatic:  true,
	},
	{
		Class:      Indeterminate,
		Recognised: "a timeout after the request was sent (awaiting response headers, context deadline exceeded, Node's 'Headers Timeout Error'), unless a job's log shows it was a GET or HEAD",
		Action:     ActionReconcile,
		Does:       "read ground truth (GET, git ls-remote), write the missed mark if the operation took effect, then continue; a continuation does this at its start",
		Result:     ResultYielded,
		Automatic:  true,
	},
	{
		Class:      RateLimited,
		Recognised: "403/429 with x-ratelimit-remaining: 0 or an 'API rate limit exceeded' message (primary); a secondary-limit message or retry-after (secondary); a model's 429; a registry's 'toomanyrequests'",
		Action:     ActionWait,
		Does:       "wait as GitHub documents (until reset, retry-after, else at least a minute then backoff); yield when the wait passes the Job's deadline",
		Result:     ResultYielded,
		Automatic:  true,
	},
	{
		Class:      Conflict,
		Recognised: "non-fast-forward push rejection, merge conflict, a conflict left unmerged ('you have unmerged files'), 'Update is not a fast forward', HTTP 409",
		Action:     ActionRebase,
		Does:       "rebase onto the remote head and push again; a conflict the agent cannot resolve goes with its files (implement.conflict) to the next Job",
		Result:     ResultYielded,
		Automatic:  true,
	},
	{
		Class:      ChecksFailed,
		Recognised: "the runner's 'roadmap: checks failed:' line; when nothing stronger explains the end, a test runner's, linter's, formatter's or compiler's failure (go test '--- FAIL:' / a test timeout, jest, pytest and pytest -v, cargo test, Gradle's failing tests, Ginkgo, vstest, 'path:line:col:' diagnostics, golangci-lint, eslint, ruff, flake8, prettier, black, rustfmt --check, the race detector's 'WARNING: DATA RACE'), or a test runner's 'no tests ran'; a test runner's failure report decides whatever network words its tests printed before it",
		Action:     ActionRepair,
		Does:       "bounded repair rounds with the check log; when they are spent the Job yields and the log (implement.check_log) goes to the next Job",
		Result:     ResultYielded,
		Automatic:  true,
	},
	{
		Class:      PlanWrong,
		Recognised: "the runner's typed line class=plan_wrong (the agent or the verifier shows the plan cannot work)",
		Action:     ActionReturnToStage,
		Does:       "return the item to stage with the agent's reason, by label and comment (plan amendment)",
		Result:     ResultReturned,
		Automatic:  true,
	},
	{
		Class:      NeedsInput,
		Recognised: "the runner's typed line class=needs_input (a decision only a person can make)",
		Action:     ActionAsk,
		Does:       "post the question on the issue, set roadmap:needs-input, resume when a person with write access replies",
		Result:     ResultReturned,
	},
	{
		Class:      BudgetExhausted,
		Recognised: "the runner's typed line class=budget_exhausted: the item's token, cost, time or Jobs-per-item budget is reached",
		Action:     ActionStop,
		Does:       "stop: the item's own budget is spent and only a person can raise it",
		Result:     ResultStopped,
		Stop:       true,
	},
	{
		Class:      DayBudgetExhausted,
		Recognised: "the runner's typed line class=day_budget_exhausted: the day's ledger across items is spent",
		Action:     ActionYield,
		Does:       "yield until the next day; the continuation starts when the day's budget is fresh",
		Result:     ResultYielded,
		Automatic:  true,
	},
	{
		Class:      OOM,
		Recognised: "OOM evidence in the log (oom_kill, 'Out of memory', OOMKilled, 'Killed process … total-vm', 'cannot allocate memory', a runtime's own 'out of memory' / OutOfMemoryError / OutOfMemoryException / std::bad_alloc / 'memory allocation of N bytes failed'); with exit 137 it outranks the runner's kill messages; never 137 alone",
		Action:     ActionRetryLessParallel,
		Does:       "run a continuation with less parallelism (checks and tools); a second OOM with no new mark stops as no_progress",
		Result:     ResultYielded,
		Automatic:  true,
	},
	{
		Class:      Killed,
		Recognised: "no result, and the runner's timeout, cancel, shutdown-signal or lost-communication message, a cancelled or timed_out conclusion, or exit 137/143 (the runner's, or a tool's 'Killed' / 'exit code 137' / 'exited with 137') without OOM evidence; a full disk (reason disk_full: 'No space left on device', ENOSPC, the runner's 'running out of disk space'), the machine's and not the change's",
		Action:     ActionContinue,
		Does:       "dispatch a continuation that resumes from the last mark (and reconciles marks against git at its start) on a fresh runner; a disk that fills again with no new mark stops as no_progress",
		Result:     ResultYielded,
		Automatic:  true,
	},
	{
		Class:      Auth,
		Recognised: "401, 'Bad credentials', 403 without rate-limit markers ('Resource not accessible by integration', 'Must have admin rights'), git 'Permission to … denied' / 'Authentication failed'",
		Action:     ActionStop,
		Does:       "stop: a token or a permission needs a person",
		Result:     ResultStopped,
		Stop:       true,
	},
	{
		Class:      NoProgress,
		Recognised: "the record, by report: two continuations in a row made no new mark",
		Action:     ActionStop,
		Does:       "stop with the evidence (the Jobs and the class each ended on): the automatic actions are not converging",
		Result:     ResultStopped,
		Stop:       true,
	},
	{
		Class:      Busy,
		Recognised: "the runner's typed line class=busy: another live Job holds the item's lease (refs/roadmap/lease/<issue>), so this Job made no mark, no model call and took no number",
		Action:     ActionLeave,
		Does:       "leave the item to the Job that holds the lease: report writes nothing and dispatches nothing, and that Job's own report decides what follows",
		Result:     ResultYielded,
		Automatic:  true,
	},
	{
		Class:      ClaimWait,
		Recognised: "the runner's typed line class=claim_wait: a live Job of another item holds a claim (refs/roadmap/claims/<unit>) on a unit this item's plan changes; item.waiting_for names that item",
		Action:     ActionWaitWoken,
		Does:       "wait to be woken: the Job gave back every claim it took and ran no group; when the item it waits for ends (ready, stopped, returned) and gives its claims back, that item's report dispatches this one's next Job",
		Result:     ResultYielded,
		Automatic:  true,
	},
	{
		Class:      Blocked,
		Recognised: "the runner's typed line class=blocked: at the Job's start (stage or implement), an issue the item waits for (GitHub's issue dependencies, or a \"Blocked by #N\" line in its body) is open, closed as not planned while blockers.not_planned_met is off, or refused (a pull request, an issue roadmap's token cannot read, the item itself); item.blocked_by names them",
		Action:     ActionWaitWoken,
		Does:       "wait to be woken: the Job made no model call and took no number; it put roadmap:blocked on the issue and one line naming the blockers (and each refusal's reason) in the record comment; report dispatches nothing; the item starts again when its last blocker is met (a person closes it, or the wake schedule finds it)",
		Result:     ResultYielded,
		Automatic:  true,
	},
	{
		Class:      Unisolated,
		Recognised: "implement or checks could not set up the isolation boundary (not Linux, not root, no passwordless sudo) and the configuration does not say `isolation: none`",
		Action:     ActionStop,
		Does:       "stop before any model-written command runs: a person sets the runner up (docs/isolation.md) or opts out explicitly",
		Result:     ResultStopped,
		Stop:       true,
	},
	{
		Class:      ReviewBlocked,
		Recognised: "the runner's typed line class=review_blocked: a blocking finding of the review before ready (its quote in the head, not refuted by the second call) still stands after review.rounds repair rounds",
		Action:     ActionStop,
		Does:       "stop with the findings in the PR comment and the record (implement.review): a person fixes the code, dismisses a finding with /roadmap dismiss ID, or retries; the PR stays a draft",
		Result:     ResultStopped,
		Stop:       true,
	},
	{
		Class:      TestsWeak,
		Recognised: "the runner's typed line class=tests_weak: a group's test strength is under implement.test_strength_floor, or no mutant could be measured (none ran, or every one timed out), after the repair rounds",
		Action:     ActionStop,
		Does:       "stop with the surviving mutants in the PR comment and the score in the record (implement.strength): a person adds the tests the survivors show, or lowers the floor, and retries",
		Result:     ResultStopped,
		Stop:       true,
	},
	{
		Class:      PRClosed,
		Recognised: "the runner's typed line class=pr_closed: the item's PR, read at a safe point (before a group, a push or ready; a conditional read, free while nothing changed), is closed",
		Action:     ActionHold,
		Does:       "hold at that safe point: no further push, the PR is not marked ready, no spend; the record comment on the issue says why; a person's reopening of the PR starts the next Job (the caller's `pull_request: reopened`), which resumes from the last mark",
		Result:     ResultYielded,
	},
	{
		Class:      IssueClosed,
		Recognised: "the runner's typed line class=issue_closed: the item's issue, read at the Job's start or at a safe point (a conditional read, free while nothing changed), is closed",
		Action:     ActionHold,
		Does:       "hold at that safe point: no further push or ready, and the spend stops; the record comment says why; reopening the issue starts the next Job, which resumes from the last mark",
		Result:     ResultYielded,
	},
	{
		Class:      PRMerged,
		Recognised: "the runner's typed line class=pr_merged: the item's PR, read at a safe point (before a group, a push or ready; the same conditional read as pr_closed), is merged",
		Action:     ActionEnd,
		Does:       "end the item: nothing more is pushed to the merged branch and nothing is dispatched; the record and the record comment on the issue name the groups left, which a person may start on a new PR by labelling the issue again",
		Result:     ResultReturned,
	},
	{
		Class:      LabelRemoved,
		Recognised: "the runner's typed line class=label_removed: a Job started by the implement label found the issue without it (read at its start, a read it makes anyway)",
		Action:     ActionSkip,
		Does:       "nothing: the Job writes no mark, takes no number and spends nothing, and report dispatches nothing; labelling again starts a new Job",
		Result:     ResultYielded,
	},
	{
		Class:      NotHeld,
		Recognised: "the runner's typed line class=not_held: a Job started by a person reopening the issue or the item's PR found the record's last ending other than pr_closed or issue_closed (read at its start, a read it makes anyway): a plan PR reopened before its approval, an item that ended ready, stopped or is still at work",
		Action:     ActionLeave,
		Does:       "nothing: the Job writes no mark, takes no number and spends nothing, and report writes nothing and dispatches nothing; the item goes on as its record says",
		Result:     ResultYielded,
		Automatic:  true,
	},
	{
		Class:      Tracker,
		Recognised: "the runner's typed line class=tracker: the item a Job started on (stage or implement) is a tracker: it has native sub-issues (the issue read's sub_issues_summary) or a task list of issue references in its body (read at its start, a read it makes anyway)",
		Action:     ActionDrive,
		Does:       "drive the sub-issues: the Job made no model call and took no number; report puts roadmap:tracker on the tracker, starts every open sub-issue whose blockers are met, in the tracker's order, up to tracker.max_active active at once, and keeps one status comment on the tracker; each later sub-issue starts when a person closes one (the caller's unblock job) or the wake schedule finds room",
		Result:     ResultYielded,
		Automatic:  true,
	},
	{
		Class:      Unknown,
		Recognised: "anything else: no decisive evidence, a runner panic, an invariant violation, a class name the table does not have",
		Action:     ActionStop,
		Does:       "stop and keep all state; never retry blindly",
		Result:     ResultStopped,
		Stop:       true,
	},
}

// Table returns the taxonomy, one row per class, in the order of DESIGN §4.
// The slice is a copy: callers may not change the taxonomy.
func Table() []Row {
	out := make([]Row, len(table))
	copy(out, table)
	return out
}

// Lookup returns the row of class c.
func Lookup(c Class) (Row, bool) {
	for _, r := range table {
		if r.Class == c {
			return r, true
		}
	}
	return Row{}, false
}

// Valid reports whether c is a class of the table.
func (c Class) Valid() bool {
	_, ok := Lookup(c)
	return ok
}
