package record

import (
	"encoding/json"
	"strings"
	"time"
)

// get decodes a known key into out. Every known key was checked when it entered
// the record (Parse, Apply), so a decoding error cannot happen; it reads as absent.
func (r *Record) get(k Key, out any) bool {
	raw, ok := r.vals[k]
	if !ok {
		return false
	}
	sp, _ := specOf(k)
	return decode(sp, raw, out) == nil
}

func (r *Record) str(k Key) (string, bool) {
	var s string
	ok := r.get(k, &s)
	return s, ok
}

func (r *Record) count(k Key) (int, bool) {
	var n int
	ok := r.get(k, &n)
	return n, ok
}

func (r *Record) sha(k Key) (SHA, bool) {
	var s SHA
	ok := r.get(k, &s)
	return s, ok
}

// Result returns implement.result.
func (r *Record) Result() (Result, bool) {
	var v Result
	ok := r.get(KeyImplementResult, &v)
	return v, ok
}

// Failure returns implement.failure, a failure class.
func (r *Record) Failure() (string, bool) { return r.str(KeyImplementFailure) }

// Stopped returns implement.stopped, the label of the step a stop happened in.
func (r *Record) Stopped() (string, bool) { return r.str(KeyImplementStopped) }

// CheckLog returns implement.check_log.
func (r *Record) CheckLog() (string, bool) { return r.str(KeyImplementCheckLog) }

// Conflict returns implement.conflict, the files of an unresolved conflict.
func (r *Record) Conflict() ([]string, bool) {
	var v []string
	ok := r.get(KeyImplementConflict, &v)
	return v, ok
}

// Spend returns implement.spend, the item's spend summed over its Jobs.
func (r *Record) Spend() (Spend, bool) {
	var v Spend
	ok := r.get(KeyImplementSpend, &v)
	return v, ok
}

// Group returns implement.group, the last task group that passed.
func (r *Record) Group() (int, bool) { return r.count(KeyImplementGroup) }

// GroupSeconds returns implement.group_seconds: how long each passed group took,
// in seconds, oldest first.
func (r *Record) GroupSeconds() ([]int, bool) {
	var v []int
	ok := r.get(KeyImplementGroupSeconds, &v)
	return v, ok
}

// SHA returns implement.sha, the commit of the last group mark.
func (r *Record) SHA() (SHA, bool) { return r.sha(KeyImplementSHA) }

// WIP returns implement.wip, the WIP commit of a Job that ended mid-group.
func (r *Record) WIP() (SHA, bool) { return r.sha(KeyImplementWIP) }

// Kept returns implement.kept, the group commit a conflict stop kept.
func (r *Record) Kept() (SHA, bool) { return r.sha(KeyImplementKept) }

// CheckedSHA returns implement.checked_sha.
func (r *Record) CheckedSHA() (SHA, bool) { return r.sha(KeyImplementCheckedSHA) }

// MergedBase returns implement.merged_base.
func (r *Record) MergedBase() (SHA, bool) { return r.sha(KeyImplementMergedBase) }

// PublishedSHA returns implement.published_sha.
func (r *Record) PublishedSHA() (SHA, bool) { return r.sha(KeyImplementPublishedSHA) }

// Trace returns implement.trace as one-line JSON.
func (r *Record) Trace() (json.RawMessage, bool) {
	var v json.RawMessage
	ok := r.get(KeyImplementTrace, &v)
	return v, ok
}

// StageTrace returns stage.trace, a stage Job's trace copy, as one-line JSON.
func (r *Record) StageTrace() (json.RawMessage, bool) {
	var v json.RawMessage
	ok := r.get(KeyStageTrace, &v)
	return v, ok
}

// LastTrace returns the trace copy of the last Job that wrote its last
// mark, stage's or implement's, and the key it is under. A Job deletes the
// other key when it writes its own, so a record holds one; a record a
// person gave both reads implement.trace, as a release before stage.trace
// did.
func (r *Record) LastTrace() (json.RawMessage, Key, bool) {
	if v, ok := r.Trace(); ok {
		return v, KeyImplementTrace, true
	}
	var v json.RawMessage
	if r.get(KeyStageTrace, &v) {
		return v, KeyStageTrace, true
	}
	return nil, "", false
}

// Attempt returns implement.attempt, the number of Jobs run for the item.
func (r *Record) Attempt() (int, bool) { return r.count(KeyImplementAttempt) }

// Tier returns implement.tier, the ladder index the item's last failing
// round reached (0 when absent).
func (r *Record) Tier() int {
	n, _ := r.count(KeyImplementTier)
	return n
}

// SpendEstimated returns implement.spend_estimated: how many of the calls
// in implement.spend are there at their booked estimate (0 when absent).
func (r *Record) SpendEstimated() int {
	n, _ := r.count(KeyImplementSpendEstimated)
	return n
}

// Jobs returns implement.jobs, oldest first.
func (r *Record) Jobs() ([]JobOutcome, bool) {
	var v []JobOutcome
	ok := r.get(KeyImplementJobs, &v)
	return v, ok
}

// Question returns implement.question.
func (r *Record) Question() (string, bool) { return r.str(KeyImplementQuestion) }

// Answer returns implement.answer.
func (r *Record) Answer() (string, bool) { return r.str(KeyImplementAnswer) }

// StageState returns stage.state.
func (r *Record) StageState() (string, bool) { return r.str(KeyStageState) }

// StagePR returns stage.pr.
func (r *Record) StagePR() (int, bool) { return r.count(KeyStagePR) }

// StageRound returns stage.round.
func (r *Record) StageRound() (int, bool) { return r.count(KeyStageRound) }

// StageFindings returns stage.findings.
func (r *Record) StageFindings() (string, bool) { return r.str(KeyStageFindings) }

// StageJobs returns stage.jobs, oldest first.
func (r *Record) StageJobs() ([]JobOutcome, bool) {
	var v []JobOutcome
	ok := r.get(KeyStageJobs, &v)
	return v, ok
}

// StagePlan returns stage.plan.
func (r *Record) StagePlan() (string, bool) { return r.str(KeyStagePlan) }

// JSON returns a key's value as JSON, for tools that print the record: numbers for
// counts, objects and arrays as written, text as a JSON string. An unknown key's
// value is read as written: JSON when it is valid JSON, else the text of its scalar.
func (r *Record) JSON(k Key) (json.RawMessage, bool) {
	raw, ok := r.vals[k]
	if !ok {
		return nil, false
	}
	if sp, known := specOf(k); known {
		switch sp.kind {
		case kindCount, kindSpend, kindFiles, kindJobs, kindTrace, kindSeconds, kindReview, kindStrength, kindComments:
			return json.RawMessage(raw), true
		}
		s, _ := r.str(k)
		return json.RawMessage(encodeJSON(s)), true
	}
	if raw == "" {
		return json.RawMessage("null"), true
	}
	if strings.ContainsRune(`"{[`, rune(raw[0])) && json.Valid([]byte(raw)) {
		return json.RawMessage(raw), true
	}
	if s, err := decodeScalar(raw); err == nil {
		return json.RawMessage(encodeJSON(s)), true
	}
	return json.RawMessage(encodeJSON(raw)), true
}

// StoppedBy returns item.stopped_by: the person who stopped the item.
func (r *Record) StoppedBy() (string, bool) { return r.str(KeyItemStoppedBy) }

// BlockedBy returns item.blocked_by: the open blockers the item waits for
// ("#12, acme/lib#4").
func (r *Record) BlockedBy() (string, bool) { return r.str(KeyItemBlockedBy) }

// WaitingFor returns item.waiting_for: the issue whose claim this item waits for.
func (r *Record) WaitingFor() (int, bool) { return r.count(KeyItemWaitingFor) }

// WakeAt returns item.wake_at; a value that is not an RFC 3339 time reads as
// absent (the wake then takes the item as due: a wait that cannot be read
// must not keep it waiting forever).
func (r *Record) WakeAt() (time.Time, bool) {
	s, ok := r.str(KeyItemWakeAt)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// Parallelism returns implement.parallelism (0 when absent: the checks run
// with the machine's own).
func (r *Record) Parallelism() int {
	n, _ := r.count(KeyImplementParallelism)
	return n
}

// Review returns implement.review.
func (r *Record) Review() (ReviewLedger, bool) {
	var v ReviewLedger
	ok := r.get(KeyImplementReview, &v)
	return v, ok
}

// Comments returns implement.comments, the comment ledger.
func (r *Record) Comments() (CommentLedger, bool) {
	var v CommentLedger
	ok := r.get(KeyImplementComments, &v)
	return v, ok
}

// Strength returns implement.strength, one entry per group measured.
func (r *Record) Strength() ([]GroupStrength, bool) {
	var v []GroupStrength
	ok := r.get(KeyImplementStrength, &v)
	return v, ok
}

// Roles are the roles item.models names, in the order it lists them.
var Roles = []string{"planner", "verifier", "implementer", "reviewer"}

// Models returns item.models as a map from role to model name; an entry
// that does not read as role=model is left out.
func (r *Record) Models() map[string]string {
	raw, ok := r.str(KeyItemModels)
	if !ok {
		return nil
	}
	return ParseModels(raw)
}

// ParseModels reads an item.models line.
func ParseModels(raw string) map[string]string {
	out := map[string]string{}
	for _, pair := range strings.Split(raw, ",") {
		role, model, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if ok && role != "" && model != "" {
			out[role] = model
		}
	}
	return out
}
