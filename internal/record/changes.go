package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Changes is a set of edits to a record: keys to set and keys to delete, in order
// (a later edit of the same key wins). It is the unit of the write protocol: the
// writer applies it to the record it read, and, when the read-back shows another
// writer won the race, applies it again to the newer record. The zero value is an
// empty set, ready to use.
type Changes struct {
	edits []edit
}

type edit struct {
	key Key
	raw string
	del bool
	err error // an encoding problem, reported by Apply
}

func (c *Changes) set(k Key, raw string) { c.edits = append(c.edits, edit{key: k, raw: raw}) }

func (c *Changes) fail(k Key, err error) { c.edits = append(c.edits, edit{key: k, err: err}) }

// Delete removes keys (known or not); deleting an absent key is no change.
func (c *Changes) Delete(keys ...Key) {
	for _, k := range keys {
		c.edits = append(c.edits, edit{key: k, del: true})
	}
}

// Merge appends the edits of o, so marks that become due together go in one write.
func (c *Changes) Merge(o Changes) { c.edits = append(c.edits, o.edits...) }

// Empty reports whether c changes nothing.
func (c Changes) Empty() bool { return len(c.edits) == 0 }

// Keys returns the keys c sets or deletes, in the order first named.
func (c Changes) Keys() []Key {
	var out []Key
	seen := map[Key]bool{}
	for _, e := range c.edits {
		if !seen[e.key] {
			seen[e.key] = true
			out = append(out, e.key)
		}
	}
	return out
}

// net is the effect of c: for each key, its final value, or deleted.
func (c Changes) net() map[Key]edit {
	out := make(map[Key]edit, len(c.edits))
	for _, e := range c.edits {
		out[e.key] = e
	}
	return out
}

// Apply merges c into r. Every edit is checked before any is made, so on an error r
// is unchanged; the error names the key.
func (r *Record) Apply(c Changes) error {
	for _, e := range c.edits {
		if err := checkEdit(e); err != nil {
			return fmt.Errorf("apply record changes: %s: %w", e.key, err)
		}
	}
	for _, e := range c.edits {
		if e.del {
			delete(r.vals, e.key)
			continue
		}
		if r.vals == nil {
			r.vals = map[Key]string{}
		}
		r.vals[e.key] = e.raw
	}
	return nil
}

func checkEdit(e edit) error {
	if e.err != nil {
		return e.err
	}
	if !validKey(string(e.key)) {
		return errors.New("not a valid key")
	}
	if e.del {
		return nil
	}
	for _, problem := range []func(string) string{encodingProblem, sizeProblem, rawProblem} {
		if msg := problem(e.raw); msg != "" {
			return errors.New(msg)
		}
	}
	sp, ok := specOf(e.key)
	if !ok {
		return errors.New("this release does not know the key, so it cannot set it")
	}
	return check(sp, e.raw)
}

// Applied reports whether r already shows every edit of c: each key set holds the
// value c sets, each key deleted is absent. It is the read-back check of the write
// protocol (DESIGN §3).
func (c Changes) Applied(r *Record) bool {
	for k, e := range c.net() {
		v, ok := r.vals[k]
		if e.del && ok || !e.del && (!ok || v != e.raw) {
			return false
		}
	}
	return true
}

// SetResult sets implement.result.
func (c *Changes) SetResult(v Result) { c.set(KeyImplementResult, encodeString(string(v))) }

// SetFailure sets implement.failure to a failure class.
func (c *Changes) SetFailure(class string) { c.set(KeyImplementFailure, encodeString(class)) }

// SetStopped sets implement.stopped to the label of the step a stop happened in,
// its head when it is over MaxLine characters as written.
func (c *Changes) SetStopped(step string) {
	c.set(KeyImplementStopped, fitHead(joinLines(step), MaxLine))
}

// SetCheckLog sets implement.check_log to the tail of log that fits in
// MaxCheckLog characters as written.
func (c *Changes) SetCheckLog(log string) {
	c.set(KeyImplementCheckLog, fitTail(log, MaxCheckLog))
}

// SetConflict sets implement.conflict to the first files that fit: at most
// MaxFiles, at most MaxConflictChars as written.
func (c *Changes) SetConflict(files []string) {
	c.set(KeyImplementConflict, fitFiles(files))
}

func fitFiles(files []string) string {
	var kept []string
	size := 2 // the brackets
	for _, f := range files[:min(len(files), MaxFiles)] {
		if f == "" {
			continue
		}
		n := utf8.RuneCountInString(encodeJSON(f)) + 1 // and a comma
		if size+n > MaxConflictChars+1 {
			break
		}
		size += n
		kept = append(kept, f)
	}
	if kept == nil {
		kept = []string{}
	}
	return encodeJSON(kept)
}

// SetSpend sets implement.spend.
func (c *Changes) SetSpend(s Spend) {
	if err := s.check(); err != nil {
		c.fail(KeyImplementSpend, err)
		return
	}
	c.set(KeyImplementSpend, encodeJSON(s))
}

// SetGroup sets implement.group.
func (c *Changes) SetGroup(n int) { c.set(KeyImplementGroup, strconv.Itoa(n)) }

// SetGroupSeconds sets implement.group_seconds to the newest MaxGroupSeconds
// durations.
func (c *Changes) SetGroupSeconds(secs []int) {
	if secs == nil {
		secs = []int{}
	}
	c.set(KeyImplementGroupSeconds, encodeJSON(secs[max(0, len(secs)-MaxGroupSeconds):]))
}

// SetSHA sets implement.sha.
func (c *Changes) SetSHA(s SHA) { c.set(KeyImplementSHA, encodeString(string(s))) }

// SetWIP sets implement.wip to the WIP commit and deletes implement.kept:
// the record names one stop's unfinished work, the last, so the two never
// share the body's bound.
func (c *Changes) SetWIP(s SHA) {
	c.set(KeyImplementWIP, encodeString(string(s)))
	c.Delete(KeyImplementKept)
}

// SetKept sets implement.kept to the group commit a conflict stop kept and
// deletes implement.wip, as SetWIP deletes implement.kept.
func (c *Changes) SetKept(s SHA) {
	c.set(KeyImplementKept, encodeString(string(s)))
	c.Delete(KeyImplementWIP)
}

// SetCheckedSHA sets implement.checked_sha.
func (c *Changes) SetCheckedSHA(s SHA) { c.set(KeyImplementCheckedSHA, encodeString(string(s))) }

// SetMergedBase sets implement.merged_base.
func (c *Changes) SetMergedBase(s SHA) { c.set(KeyImplementMergedBase, encodeString(string(s))) }

// SetPublishedSHA sets implement.published_sha.
func (c *Changes) SetPublishedSHA(s SHA) { c.set(KeyImplementPublishedSHA, encodeString(string(s))) }

// SetTrace sets implement.trace to a JSON string, object or array, made one line,
// and deletes stage.trace: the record holds the last Job's trace copy only,
// so two copies never share the body's bound. Fitting it in MaxTrace
// characters (by dropping the oldest events) is the trace package's work;
// Apply refuses a longer one.
func (c *Changes) SetTrace(v json.RawMessage) { c.setTrace(KeyImplementTrace, KeyStageTrace, v) }

// SetStageTrace sets stage.trace, a stage Job's trace copy, as SetTrace
// sets implement.trace, and deletes implement.trace.
func (c *Changes) SetStageTrace(v json.RawMessage) { c.setTrace(KeyStageTrace, KeyImplementTrace, v) }

func (c *Changes) setTrace(k, other Key, v json.RawMessage) {
	s, err := compactJSON(v)
	if err != nil {
		c.fail(k, fmt.Errorf("not JSON: %w", err))
		return
	}
	c.set(k, s)
	c.Delete(other)
}

// SetAttempt sets implement.attempt.
func (c *Changes) SetAttempt(n int) { c.set(KeyImplementAttempt, strconv.Itoa(n)) }

// SetTier sets implement.tier to the ladder index n; 0 deletes the key
// (absent is tier 0).
func (c *Changes) SetTier(n int) {
	if n <= 0 {
		c.Delete(KeyImplementTier)
		return
	}
	c.set(KeyImplementTier, strconv.Itoa(n))
}

// SetSpendEstimated sets implement.spend_estimated; n <= 0 deletes it (the
// spend is exact). A count over MaxCount is cut to it.
func (c *Changes) SetSpendEstimated(n int) {
	if n <= 0 {
		c.Delete(KeyImplementSpendEstimated)
		return
	}
	c.set(KeyImplementSpendEstimated, strconv.Itoa(min(n, MaxCount)))
}

// SetJobs sets implement.jobs to the newest MaxJobs outcomes.
func (c *Changes) SetJobs(jobs []JobOutcome) { c.setJobs(KeyImplementJobs, jobs) }

// SetStageJobs sets stage.jobs to the newest MaxJobs outcomes.
func (c *Changes) SetStageJobs(jobs []JobOutcome) { c.setJobs(KeyStageJobs, jobs) }

func (c *Changes) setJobs(k Key, jobs []JobOutcome) {
	if jobs == nil {
		jobs = []JobOutcome{}
	}
	for _, j := range jobs {
		if err := j.check(); err != nil {
			c.fail(k, err)
			return
		}
	}
	c.set(k, encodeJSON(jobs[max(0, len(jobs)-MaxJobs):]))
}

// WithJob returns jobs with j's line (the line of j.Job) replaced or added,
// sorted by Job.
func WithJob(jobs []JobOutcome, j JobOutcome) []JobOutcome {
	out := make([]JobOutcome, 0, len(jobs)+1)
	for _, x := range jobs {
		if x.Job != j.Job {
			out = append(out, x)
		}
	}
	out = append(out, j)
	sort.Slice(out, func(a, b int) bool { return out[a].Job < out[b].Job })
	return out
}

// SetQuestion sets implement.question to the head of q that fits in
// MaxQuestion characters as written.
func (c *Changes) SetQuestion(q string) { c.set(KeyImplementQuestion, fitHead(q, MaxQuestion)) }

// SetAnswer sets implement.answer to the head of a that fits in MaxQuestion
// characters as written.
func (c *Changes) SetAnswer(a string) { c.set(KeyImplementAnswer, fitHead(a, MaxQuestion)) }

// SetStageState sets stage.state.
func (c *Changes) SetStageState(state string) { c.set(KeyStageState, encodeString(state)) }

// SetStagePR sets stage.pr.
func (c *Changes) SetStagePR(n int) { c.set(KeyStagePR, strconv.Itoa(n)) }

// SetStagePlan sets stage.plan. A path that is not a plan path (CheckPlanPath)
// or is longer than MaxLine is an error when applied, never cut: a cut path
// would name another directory.
func (c *Changes) SetStagePlan(path string) { c.set(KeyStagePlan, encodeString(path)) }

// fitHead writes the longest head of s (with "…" where it cut) whose written
// form has at most bound characters.
func fitHead(s string, bound int) string { return fit(s, bound, false) }

// fitTail writes the longest tail of s (after "…" where it cut) whose written
// form has at most bound characters.
func fitTail(s string, bound int) string { return fit(s, bound, true) }

func fit(s string, bound int, fromEnd bool) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if enc := encodeString(s); utf8.RuneCountInString(enc) <= bound {
		return enc
	}
	r := []rune(s)
	cut := func(k int) string {
		if fromEnd {
			return encodeString("…" + string(r[len(r)-k:]))
		}
		return encodeString(string(r[:k]) + "…")
	}
	// The written length grows with the runes kept: find the most that fit.
	lo, hi := 0, min(len(r), bound)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if utf8.RuneCountInString(cut(mid)) <= bound {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return cut(lo)
}

// joinLines joins the lines of s with " / " so a one-line key keeps all of it.
func joinLines(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	var parts []string
	for _, p := range strings.FieldsFunc(s, func(r rune) bool { return r == '\r' || r == '\n' }) {
		if p = strings.TrimSpace(p); p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " / ")
}

// SetStageRound sets stage.round.
func (c *Changes) SetStageRound(n int) { c.set(KeyStageRound, strconv.Itoa(n)) }

// SetStageFindings sets stage.findings, keeping the head of a long list.
func (c *Changes) SetStageFindings(text string) { c.set(KeyStageFindings, fitHead(text, MaxCheckLog)) }

// SetModels sets item.models to the models of the roles in have with the
// roles in set over them ("" in set keeps have's). Roles are written in the
// order of Roles, then any other in name order.
func (c *Changes) SetModels(have, set map[string]string) {
	m := map[string]string{}
	for k, v := range have {
		m[k] = v
	}
	for k, v := range set {
		if v != "" {
			m[k] = v
		}
	}
	if len(m) == 0 {
		return
	}
	var keys []string
	for _, role := range Roles {
		if _, ok := m[role]; ok {
			keys = append(keys, role)
		}
	}
	var rest []string
	for k := range m {
		if !isRole(k) {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	var pairs []string
	for _, k := range append(keys, rest...) {
		pairs = append(pairs, k+"="+strings.Join(strings.Fields(m[k]), "_"))
	}
	c.set(KeyItemModels, fitHead(joinLines(strings.Join(pairs, ", ")), MaxLine))
}

func isRole(k string) bool {
	for _, r := range Roles {
		if r == k {
			return true
		}
	}
	return false
}
