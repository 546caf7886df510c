package record

// Key names one line of the record. The names are fixed: other Jobs, older and newer
// releases, and people read them. docs/record.md describes each one, and
// TestRecordReaders checks that every Key has a reader in code or is kept, by a
// line of that page, as a record for a person.
type Key string

// The keys this release reads and writes. AllKeys lists them; a new constant must be
// added there too (TestRecordReaders compares the two).
const (
	// KeyImplementResult is how the last Job ended: a Result.
	KeyImplementResult Key = "implement.result"
	// KeyImplementFailure is the failure class of a stop (docs/taxonomy.md).
	KeyImplementFailure Key = "implement.failure"
	// KeyImplementStopped is the label of the step a stop happened in.
	KeyImplementStopped Key = "implement.stopped"
	// KeyImplementCheckLog is the tail of the failed check log of a stop.
	KeyImplementCheckLog Key = "implement.check_log"
	// KeyImplementConflict lists the files of an unresolved conflict.
	KeyImplementConflict Key = "implement.conflict"
	// KeyImplementSpend is the item's spend so far, summed over every Job: a Spend.
	KeyImplementSpend Key = "implement.spend"
	// KeyImplementSpendEstimated counts the model calls in implement.spend
	// that are there at their booked estimate (the request's input as
	// estimated, its max_tokens out), not as the provider counted them: calls
	// that ended with no answer, and calls a killed Job's log shows booked
	// and never settled. Absent is none: the spend is exact.
	KeyImplementSpendEstimated Key = "implement.spend_estimated"
	// KeyImplementGroup is the number of the last task group that passed.
	KeyImplementGroup Key = "implement.group"
	// KeyImplementGroupSeconds is how long each passed group took, in seconds,
	// oldest first: a Job yields before a group it cannot finish by its deadline.
	KeyImplementGroupSeconds Key = "implement.group_seconds"
	// KeyImplementSHA is the commit of the last group mark.
	KeyImplementSHA Key = "implement.sha"
	// KeyImplementWIP is the WIP commit a Job pushed when it yielded or stopped
	// in the middle of a group. A record holds it or implement.kept, the
	// last stop's unfinished work: writing either deletes the other.
	KeyImplementWIP Key = "implement.wip"
	// KeyImplementKept is the group commit a conflict stop could not
	// publish and kept in refs/roadmap/wip/<issue> instead: the next Job
	// lays it over the branch rather than run the group's agent again.
	// Deleted once the group lands, or when the commit cannot be used, and
	// by a write of implement.wip.
	KeyImplementKept Key = "implement.kept"
	// KeyImplementCheckedSHA is the head at which the scoped checks last passed.
	KeyImplementCheckedSHA Key = "implement.checked_sha"
	// KeyImplementMergedBase is the base branch's commit the scoped checks
	// last passed on merged with the head (implement.checked_sha): the PR
	// is marked ready only while the base is still there.
	KeyImplementMergedBase Key = "implement.merged_base"
	// KeyImplementPublishedSHA is the head the last push published.
	KeyImplementPublishedSHA Key = "implement.published_sha"
	// KeyImplementTier is the ladder index the item's last failing repair
	// round reached; the next Job's first step starts there. Absent is tier 0.
	KeyImplementTier Key = "implement.tier"
	// KeyImplementTrace is the bounded copy of the trace: a JSON value.
	KeyImplementTrace Key = "implement.trace"
	// KeyImplementAttempt counts the Jobs that have run for the item.
	KeyImplementAttempt Key = "implement.attempt"
	// KeyImplementJobs is the outcome of each Job: a list of JobOutcome.
	KeyImplementJobs Key = "implement.jobs"
	// KeyImplementQuestion is the question of a needs_input return.
	KeyImplementQuestion Key = "implement.question"
	// KeyImplementAnswer is a person's answer to KeyImplementQuestion.
	KeyImplementAnswer Key = "implement.answer"
	// KeyStageState is where the stage phase is for the item.
	KeyStageState Key = "stage.state"
	// KeyStagePR is the number of the draft pull request that holds the plan.
	KeyStagePR Key = "stage.pr"
	// KeyStagePlan names the plan: the OpenSpec change directory.
	KeyStagePlan Key = "stage.plan"
	// KeyStageRound is the last plan round whose plan commit is pushed and
	// whose findings are in stage.findings: a killed stage Job resumes after it.
	KeyStageRound Key = "stage.round"
	// KeyStageFindings are the findings of the last plan round (gates and
	// verifier), one per line as FILE:LINE: rule: message.
	KeyStageFindings Key = "stage.findings"
	// KeyStageJobs is the outcome of each stage Job: a list of JobOutcome
	// (its spend's model calls are the calls its last mark counted).
	KeyStageJobs Key = "stage.jobs"
	// KeyStageTrace is the bounded copy of a stage Job's trace: a JSON
	// value, as implement.trace. The record holds one trace copy, the last
	// Job's: writing either key deletes the other.
	KeyStageTrace Key = "stage.trace"
	// KeyItemStoppedBy is the login of the person (write access) who stopped the
	// item with the stop label or a "/roadmap stop" comment: no Job continues it
	// until "/roadmap retry".
	KeyItemStoppedBy Key = "item.stopped_by"
	// KeyItemWakeAt is when an item that yielded for the day's budget may start
	// again (RFC 3339, UTC): roadmap wake dispatches it once that time passed.
	KeyItemWakeAt Key = "item.wake_at"
	// KeyItemWaitingFor is the issue whose live claim on a unit this item's
	// plan changes made its Job wait (internal/claims): when that item gives
	// its claims back, report dispatches this one again.
	KeyItemWaitingFor Key = "item.waiting_for"
	// KeyItemBlockedBy is the open blockers a Job found at its start, as a
	// person writes them ("#12, acme/lib#4"): the item waits for them
	// (class blocked, docs/tracker.md "Blockers"); deleted by the first Job
	// that finds them met.
	KeyItemBlockedBy Key = "item.blocked_by"
	// KeyItemModels is the model of each role that ran on the item, as one
	// line of role=model pairs ("planner=a, verifier=b, implementer=c,
	// reviewer=d"): each Job sets the roles it ran, keeping the others.
	KeyItemModels Key = "item.models"
	// KeyImplementParallelism is the parallelism the scoped checks run with
	// (GOMAXPROCS, go test -p): set after an oom, so the continuation's checks
	// use less memory.
	KeyImplementParallelism Key = "implement.parallelism"
	// KeyImplementReview is the review before ready: the head the last
	// review read, the blocking findings standing there and the finding
	// ids never raised again (a ReviewLedger).
	KeyImplementReview Key = "implement.review"
	// KeyImplementComments is the comment ledger: what repair Jobs did
	// with the comments people left on the PR (a CommentLedger).
	KeyImplementComments Key = "implement.comments"
	// KeyImplementStrength is the test strength of each group measured: a
	// list of GroupStrength.
	KeyImplementStrength Key = "implement.strength"
)

// AllKeys returns every Key this release knows, sorted.
func AllKeys() []Key {
	return []Key{
		KeyImplementAnswer,
		KeyImplementAttempt,
		KeyImplementCheckLog,
		KeyImplementCheckedSHA,
		KeyImplementComments,
		KeyImplementConflict,
		KeyImplementFailure,
		KeyImplementGroup,
		KeyImplementGroupSeconds,
		KeyImplementJobs,
		KeyImplementKept,
		KeyImplementMergedBase,
		KeyImplementParallelism,
		KeyImplementPublishedSHA,
		KeyImplementQuestion,
		KeyImplementResult,
		KeyImplementReview,
		KeyImplementSHA,
		KeyImplementSpend,
		KeyImplementSpendEstimated,
		KeyImplementStopped,
		KeyImplementStrength,
		KeyImplementTier,
		KeyImplementTrace,
		KeyImplementWIP,
		KeyItemBlockedBy,
		KeyItemModels,
		KeyItemStoppedBy,
		KeyItemWaitingFor,
		KeyItemWakeAt,
		KeyStageFindings,
		KeyStageJobs,
		KeyStagePlan,
		KeyStagePR,
		KeyStageRound,
		KeyStageState,
		KeyStageTrace,
	}
}

// Known reports whether k is a key this release reads and types.
func (k Key) Known() bool {
	_, ok := specOf(k)
	return ok
}

// kind is the type of a key's value.
type kind int

const (
	kindResult   kind = iota + 1 // a Result word
	kindWord                     // a lowercase word: a failure class, a stage state
	kindLine                     // one line of text
	kindText                     // text that may span lines (a JSON string when it does)
	kindSHA                      // a commit SHA
	kindCount                    // an integer >= 1
	kindSpend                    // a Spend as a JSON object
	kindFiles                    // a JSON array of file paths
	kindTrace                    // a JSON string, object or array
	kindJobs                     // a JSON array of JobOutcome
	kindSeconds                  // a JSON array of integers >= 0
	kindPlan                     // a plan path: a directory under openspec/changes/
	kindReview                   // a ReviewLedger as a JSON object
	kindStrength                 // a JSON array of GroupStrength
	kindComments                 // a CommentLedger as a JSON object
)

// Bounds. Text bounds count characters (code points) of the value as it is
// written in the block, escapes included, so the bound holds for the rendered
// comment whatever the text (a '<' is six characters once JSON escapes it).
// List bounds count entries; number bounds keep every JSON number short. The
// setters in Changes cut to them; Parse refuses more. TestRecordRenderedBound
// checks that the largest record the setters can write fits in a comment with
// RecordMargin to spare.
const (
	// MaxCheckLog bounds implement.check_log; the setter keeps the tail, where
	// the failure usually is.
	MaxCheckLog = 4000
	// MaxQuestion bounds implement.question and implement.answer; the setters
	// keep the head.
	MaxQuestion = 4000
	// MaxLine bounds the one-line text keys (implement.stopped, stage.plan).
	MaxLine = 1000
	// MaxWord bounds the word keys (implement.failure, stage.state).
	MaxWord = 64
	// MaxTrace bounds implement.trace and stage.trace, counted on its JSON
	// text (DESIGN §3). A record holds only one of the two.
	MaxTrace = 8192
	// MaxFiles bounds implement.conflict; the setter keeps the first files.
	MaxFiles = 100
	// MaxJobs bounds implement.jobs; the setter keeps the newest Jobs.
	MaxJobs = 100
	// MaxGroupSeconds bounds implement.group_seconds; the setter keeps the newest.
	MaxGroupSeconds = 100
	// MaxConflictChars bounds implement.conflict as written; the setter keeps
	// the first files that fit.
	MaxConflictChars = 4000
	// MaxCount bounds every count: a Job, group or PR number, model calls,
	// requests, a group's seconds (nine digits, as a count key is written).
	MaxCount = 999_999_999
	// MaxTokens bounds a token count of a spend (about 10^12: far past any
	// budget, far from int64 overflow).
	MaxTokens int64 = 1 << 40
	// MaxUSD bounds the dollars of a spend.
	MaxUSD = 1_000_000.0
	// MaxRunID bounds a workflow run id (2^53: exact in any JSON reader).
	MaxRunID int64 = 1 << 53
	// MaxUnix bounds a time in Unix seconds (the year 3000).
	MaxUnix int64 = 32_503_680_000
	// RecordMargin is what the largest record comment leaves free under
	// MaxBodyChars, for unknown keys a newer release or a person adds.
	RecordMargin = 3000
)

type spec struct {
	kind  kind
	bound int
	// tail: the setter cuts text to its last bound characters, not its first.
	tail bool
	// what names the value in errors: "want <what>".
	what string
}

// specOf returns the type of a known key. A switch rather than a table so the
// package holds no variables.
func specOf(k Key) (spec, bool) {
	switch k {
	case KeyImplementResult:
		return spec{kind: kindResult, what: "a result (ready, stopped, yielded or returned)"}, true
	case KeyImplementFailure:
		return spec{kind: kindWord, bound: MaxWord, what: "a failure class (a lowercase word such as checks_failed)"}, true
	case KeyImplementStopped:
		return spec{kind: kindLine, bound: MaxLine, what: "a step label (one line of text)"}, true
	case KeyImplementCheckLog:
		return spec{kind: kindText, bound: MaxCheckLog, tail: true, what: "a check log (text, a JSON string when it spans lines)"}, true
	case KeyImplementConflict:
		return spec{kind: kindFiles, bound: MaxConflictChars, what: `a file list (a JSON array of paths, e.g. ["a.go"])`}, true
	case KeyImplementSpend:
		return spec{kind: kindSpend, what: `a spend ({"tokens_in":N,"tokens_out":N,"usd":X,"model_calls":N})`}, true
	case KeyImplementSpendEstimated:
		return spec{kind: kindCount, what: "a count of model calls (an integer >= 1; absent is none)"}, true
	case KeyImplementGroup:
		return spec{kind: kindCount, what: "a group number (an integer >= 1)"}, true
	case KeyImplementGroupSeconds:
		return spec{kind: kindSeconds, bound: MaxGroupSeconds, what: "group durations (a JSON array of seconds, e.g. [412,903])"}, true
	case KeyImplementSHA, KeyImplementCheckedSHA, KeyImplementMergedBase, KeyImplementPublishedSHA, KeyImplementWIP, KeyImplementKept:
		return spec{kind: kindSHA, what: "a commit SHA (7 to 64 lowercase hex digits)"}, true
	case KeyImplementTrace, KeyStageTrace:
		return spec{kind: kindTrace, bound: MaxTrace, what: "a trace (a JSON string, object or array)"}, true
	case KeyImplementAttempt:
		return spec{kind: kindCount, what: "a Job count (an integer >= 1)"}, true
	case KeyImplementTier:
		return spec{kind: kindCount, what: "a ladder index (an integer >= 1; absent is tier 0)"}, true
	case KeyImplementJobs:
		return spec{kind: kindJobs, bound: MaxJobs, what: `a Job list (a JSON array of {"job":N,"run_id":N,...})`}, true
	case KeyImplementQuestion:
		return spec{kind: kindText, bound: MaxQuestion, what: "a question (text, a JSON string when it spans lines)"}, true
	case KeyImplementAnswer:
		return spec{kind: kindText, bound: MaxQuestion, what: "an answer (text, a JSON string when it spans lines)"}, true
	case KeyStageState:
		return spec{kind: kindWord, bound: MaxWord, what: "a stage state (a lowercase word such as planned)"}, true
	case KeyStagePR:
		return spec{kind: kindCount, what: "a pull request number (an integer >= 1)"}, true
	case KeyStageRound:
		return spec{kind: kindCount, what: "a plan round (an integer >= 1)"}, true
	case KeyStageJobs:
		return spec{kind: kindJobs, bound: MaxJobs, what: `a stage Job list (a JSON array of {"job":N,"run_id":N,...})`}, true
	case KeyStageFindings:
		return spec{kind: kindText, bound: MaxCheckLog, what: "plan findings (text, a JSON string when it spans lines)"}, true
	case KeyItemStoppedBy:
		return spec{kind: kindLine, bound: MaxLine, what: "a login (one line of text)"}, true
	case KeyItemBlockedBy:
		return spec{kind: kindLine, bound: MaxLine, what: "issue references (one line, e.g. #12, acme/lib#4)"}, true
	case KeyItemModels:
		return spec{kind: kindLine, bound: MaxLine, what: "role models (one line, e.g. planner=m1, verifier=m2)"}, true
	case KeyItemWaitingFor:
		return spec{kind: kindCount, what: "an issue number (an integer >= 1)"}, true
	case KeyItemWakeAt:
		return spec{kind: kindLine, bound: MaxLine, what: "a time (RFC 3339, e.g. 2026-11-30T00:00:00Z)"}, true
	case KeyImplementParallelism:
		return spec{kind: kindCount, what: "a parallelism (an integer >= 1)"}, true
	case KeyImplementReview:
		return spec{kind: kindReview, bound: MaxReviewChars, what: `a review ledger ({"sha":"…","open":[{"id":"…","file":"…"}],"closed":[{"id":"…","why":"repaired"}]})`}, true
	case KeyImplementComments:
		return spec{kind: kindComments, bound: MaxCommentsChars, what: `a comment ledger ({"through":N,"done":[{"kind":"line","id":N,"sha":"…"}]})`}, true
	case KeyImplementStrength:
		return spec{kind: kindStrength, bound: MaxStrengthChars, what: `group strengths (a JSON array of {"group":N,"generated":N,"killed":N,...,"score":X})`}, true
	case KeyStagePlan:
		return spec{kind: kindPlan, bound: MaxLine, what: "a plan path (a directory under openspec/changes/, e.g. openspec/changes/add-backoff)"}, true
	}
	return spec{}, false
}

// validKey reports whether s can be a key: a lowercase letter, then lowercase
// letters, digits, '_', '-' and '.', at most 100 bytes, no empty dotted part.
// Unknown keys must follow it too, so a line that only looks like a key (a URL,
// a sentence with a colon) is reported rather than carried.
func validKey(s string) bool {
	if s == "" || len(s) > 100 || s[0] < 'a' || s[0] > 'z' || s[len(s)-1] == '.' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_', c == '-':
		case c == '.':
			if s[i-1] == '.' {
				return false
			}
		default:
			return false
		}
	}
	return true
}
