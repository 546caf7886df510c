package faults

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/report"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// outcome is what the checks found in one history.
type outcome struct {
	Injected   bool
	Recovered  bool
	Violations []string
	Repeated   int   // passed groups whose agent step ran again
	SpendLost  int64 // tokens the record lacks against the model server
	Duplicates int
}

// check holds a history to the promises of docs/reliability.md. base is the
// crash-free run's final state.
func check(l *life, sc scenario, base, got State) outcome {
	var o outcome
	bad := func(format string, args ...any) { o.Violations = append(o.Violations, fmt.Sprintf(format, args...)) }
	w := l.w
	if l.hookErr != nil {
		bad("the scenario could not act: %v", l.hookErr)
	}
	if l.playErr != nil {
		bad("the history could not go on: %v", l.playErr)
	}

	// The final state.
	switch sc.Expect {
	case expectReady:
		if got.Result != base.Result || got.Group != base.Group || got.PRs != base.PRs || got.PRDraft != base.PRDraft ||
			got.PRState != base.PRState || got.Archived != base.Archived || got.Status != base.Status || got.StopLabel != base.StopLabel {
			bad("final state differs from the crash-free run: got %s, want %s", got.Brief(), base.Brief())
		}
		if !maps.Equal(got.Files, base.Files) {
			bad("the branch's tree differs from the crash-free run: got %v, want %v", got.Files, base.Files)
		}
	case expectStop:
		if got.Result != string(record.ResultStopped) || got.Failure != sc.Class {
			bad("ended %s/%s, want a stop of class %s", got.Result, got.Failure, sc.Class)
		}
		if got.PRs > 1 {
			bad("%d PRs", got.PRs)
		}
	case expectEnd:
		checkPersonEnd(l, sc, base, got, bad)
	}
	checkLimits(l, sc, got, bad)

	// Passed groups repeated.
	for _, j := range l.jobs {
		for _, g := range j.Started {
			switch {
			case g <= j.Passed:
				o.Repeated++
				bad("job %d ran group %d again after its mark (implement.group %d)", j.Attempt, g, j.Passed)
			case j.OnRemote[g]:
				o.Repeated++
				bad("job %d ran group %d again, whose commit the work branch held", j.Attempt, g)
			}
		}
	}

	if w.staging {
		o.Repeated += checkStage(l, base, got, bad)
	}

	// Duplicates: pushes, comments, PRs, dispatches.
	o.Duplicates += l.dupPushes
	if l.dupPushes > 0 {
		bad("%d push(es) of a head the remote already had", l.dupPushes)
	}
	if got.PRs > 1 {
		o.Duplicates += got.PRs - 1
		bad("%d PRs for the item", got.PRs)
	}
	records, stops := 0, 0
	for _, c := range w.fake.Comments(w.issue) {
		if c.Author != github.DefaultIdentity {
			continue
		}
		if record.HasBlock(c.Body) {
			records++
		}
		if strings.Contains(c.Body, report.MarkerStop) {
			stops++
		}
	}
	if records != 1 {
		o.Duplicates += max(records-1, 0)
		bad("%d record comments on the issue, want 1", records)
	}
	if stops > 1 {
		o.Duplicates += stops - 1
		bad("%d stop comments", stops)
	}
	for n := 1; ; n++ {
		is, ok := w.fake.Issue(n)
		if !ok {
			break
		}
		if is.Pull == nil {
			continue
		}
		marked := 0
		for _, c := range w.fake.Comments(n) {
			if strings.Contains(c.Body, "<!-- roadmap:implement -->") {
				marked++
			}
		}
		if marked > 1 {
			o.Duplicates += marked - 1
			bad("%d implement comments on PR #%d, want at most 1", marked, n)
		}
	}
	attempts := map[string]int{}
	var stageDispatches []githubfake.Dispatch
	for _, d := range w.fake.Dispatches() {
		if d.Inputs["phase"] == report.PhaseStage {
			stageDispatches = append(stageDispatches, d)
			continue
		}
		attempts[fmt.Sprint(d.Inputs["attempt"])]++
	}
	for _, a := range slices.Sorted(maps.Keys(attempts)) {
		if n := attempts[a]; n > 1 {
			o.Duplicates += n - 1
			bad("%d dispatches of Job %s", n, a)
		}
	}
	o.Duplicates += checkStageDispatches(l, stageDispatches, bad)

	// Spend lost, stage Jobs' included (report reads a killed stage Job's
	// log as it reads an implement Job's).
	// Tokens must match exactly; calls may exceed the answered ones by the
	// refusals that reached the agent (a context-length refusal is a call
	// recorded with no tokens), never fall short.
	// An answer refused unread (answer_over_limit) counts at the estimate
	// booked before its call (docs/models.md), flagged estimated: the
	// record holds at least what was served, never less.
	estimated := sc.Kind == "answer_over_limit" && got.SpendEstimated > 0 &&
		got.Spend.TokensIn >= got.Served.TokensIn && got.Spend.TokensOut >= got.Served.TokensOut
	if !estimated && (got.Spend.TokensIn != got.Served.TokensIn || got.Spend.TokensOut != got.Served.TokensOut) ||
		got.Spend.ModelCalls < got.Served.ModelCalls {
		o.SpendLost = (got.Served.TokensIn + got.Served.TokensOut) - (got.Spend.TokensIn + got.Spend.TokensOut)
		bad("spend lost: the record holds %d in/%d out/%d calls, the model server answered %d/%d/%d",
			got.Spend.TokensIn, got.Spend.TokensOut, got.Spend.ModelCalls, got.Served.TokensIn, got.Served.TokensOut, got.Served.ModelCalls)
	}

	// published_sha implies checked_sha; the person's text; others' keys.
	rec, err := w.record()
	if err != nil {
		bad("the record: %v", err)
	} else {
		// It holds for an item that ends ready: a stop or a person's act
		// mid-plan leaves its pushed groups marked and a head nothing
		// checks any more (expectStop, expectEnd).
		if _, ok := rec.PublishedSHA(); ok && sc.Expect == expectReady {
			if _, ok := rec.CheckedSHA(); !ok {
				bad("implement.published_sha without implement.checked_sha")
			}
		}
		for _, k := range l.keep {
			if !rec.Has(record.Key(k)) {
				bad("the record lost %s, written by someone else", k)
			}
		}
		// Keys written inside the Job's read→PATCH window are not promised
		// (docs/github.md, "Not guaranteed"); every other check still holds.
	}
	if is, ok := w.fake.Issue(w.issue); !ok || is.Body != w.body {
		bad("the person's issue text changed: %q, want %q", is.Body, w.body)
	}

	// One typed result per Job that ended; one report per Job.
	reported := map[int]int{}
	for _, r := range l.reps {
		if r.Killed == "" && !r.Stage {
			reported[r.Job]++
		}
	}
	for _, j := range l.jobs {
		if j.Killed == "" && !slices.Contains([]record.Result{record.ResultReady, record.ResultStopped, record.ResultYielded, record.ResultReturned}, j.Result.Result) {
			bad("job %d ended with no typed result (%q)", j.Attempt, j.Result.Result)
		}
		if reported[j.Attempt] != 1 {
			bad("job %d was reported on %d times, want 1", j.Attempt, reported[j.Attempt])
		}
	}

	// Classes with an automatic action never stop the item.
	if sc.Expect == expectReady && l.afterJob == nil {
		for _, r := range l.reps {
			if r.Killed == "" && r.Outcome.Action == report.ActionStop {
				bad("report stopped the item after job %d (%s: %s) on a fault with an automatic action", r.Job, r.Outcome.Class, r.Outcome.Reason)
			}
		}
	}

	o.Injected = injected(l, sc)
	if strings.HasPrefix(sc.Kind, "stage_") && sc.Kind != "stage_crash" && !strings.HasPrefix(sc.Kind, "stage_github_") {
		o.Injected = stageInjected(l, sc, base)
	}
	if !o.Injected {
		bad("the fault was never injected")
	}
	o.Recovered = o.Injected && len(o.Violations) == 0 && reachedBranch(l, sc)
	if o.Injected && len(o.Violations) == 0 && !o.Recovered {
		if _, ok := evidenced[sc.Branch]; ok {
			bad("the recovery branch %s was claimed without its event: no Job or report run logged or traced it", sc.Branch)
		} else {
			bad("the recovery branch %s was not reached", sc.Branch)
		}
	}
	return o
}

func (s State) Brief() string {
	return fmt.Sprintf("%s/%s group %d, %d PR(s) draft=%v %s, archived=%v, status %q, stop label %v",
		s.Result, s.Failure, s.Group, s.PRs, s.PRDraft, s.PRState, s.Archived, s.Status, s.StopLabel)
}

// injected says whether the history's fault actually happened, from the
// evidence it left (a kill, the fake's answer, the model server's count).
func injected(l *life, sc scenario) bool {
	if len(sc.arms) > 0 && len(l.c.arms) > 0 {
		return false // a kill point never reached
	}
	switch {
	case len(sc.arms) > 0:
		return true
	case strings.HasPrefix(strings.TrimPrefix(sc.Kind, "stage_"), "github_"):
		want := map[string]int{"github_5xx": 502, "github_5xx_read": 502, "github_429_retry_after": 429, "github_429": 429, "github_apply_then_fail": 502}[strings.TrimPrefix(sc.Kind, "stage_")]
		if want == 0 {
			want = 403
		}
		for _, r := range l.w.fake.Requests() {
			if r.Status == want {
				return true
			}
		}
		return false
	case sc.Kind == "model_429" || sc.Kind == "model_500":
		return l.w.replay.Stats().Errors > 0
	case sc.Kind == "model_malformed_tool_call":
		return l.w.replay.Stats().Calls > 2*l.w.groups
	case sc.Kind == "model_context_overflow":
		return l.w.fitted.Load() > 0
	case sc.Kind == "sigint_sigterm":
		return l.signalled()
	case sc.Kind == "git_push_rejected":
		return fileExists(l.w.dir + "/rejected-once")
	case sc.Kind == "list_omits_record":
		return l.omitted.Load() > 0
	case sc.Kind == "many_comments":
		return len(l.w.fake.Comments(l.w.issue)) > ManyComments
	case sc.Kind == "disk_full":
		return l.diskFilled
	case sc.Kind == "answer_over_limit":
		return l.overGroup > 0 && slices.ContainsFunc(l.w.replay.Stats().Served, func(s llm.Served) bool {
			return s.Conversation == fmt.Sprintf("group-%d", l.overGroup) && s.Turn == 0
		})
	case sc.Kind == "config_item_budget":
		// The "fault" is the configuration itself: it is in force once a
		// Job ran with it.
		return l.configure != nil && len(l.jobs) > 0
	}
	for _, h := range l.hooks {
		if h.f != nil {
			return false // its point never came
		}
	}
	return len(l.hooks) > 0 || sc.Kind == "concurrent_writers" && l.writerActed()
}

// reachedBranch checks the evidence of the recovery branch.
func reachedBranch(l *life, sc scenario) bool {
	anyKilled := false
	for _, j := range l.jobs {
		anyKilled = anyKilled || j.Killed != ""
	}
	classOf := func(c string) bool {
		for _, r := range l.reps {
			if r.Killed == "" && !r.Stage && string(r.Outcome.Class) == c && r.Outcome.Action == report.ActionContinue {
				return true
			}
		}
		return false
	}
	if strings.HasPrefix(sc.Branch, "stage_") {
		return stageReached(l, sc.Branch)
	}
	if ev, ok := evidenced[sc.Branch]; ok {
		return ev(l, sc)
	}
	switch sc.Branch {
	case "resume_from_mark", "reconcile":
		if strings.Contains(sc.Name, "dispatch") || strings.Contains(sc.Name, "status#") || strings.Contains(sc.Name, "label#") {
			return true // a report run killed and re-run
		}
		if len(sc.arms) > 0 && !anyKilled {
			// The kill hit report (a status, a comment it writes): its
			// rerun is the recovery.
			return implementReports(l) > len(l.jobs)
		}
		return true
	case "continue_killed":
		return classOf("killed")
	case "continue_oom":
		return classOf("oom")
	case "yield_on_signal":
		for _, j := range l.jobs {
			if j.Killed == "" && j.Result.Result == record.ResultYielded {
				return true
			}
		}
		return false
	case "conflict_handoff":
		return classOf("conflict")
	case "stop_auth", "stop_needs_person":
		for _, j := range l.jobs {
			if j.Result.Result == record.ResultStopped {
				return true
			}
		}
		return false
	case "stop_budget":
		for _, j := range l.jobs {
			if j.Result.Result == record.ResultStopped && j.Result.Failure == string(failure.BudgetExhausted) {
				return true
			}
		}
		return false
	case "trim_context":
		return l.w.fitted.Load() > 0 // the retried request had old output cut
	case "continue_disk_full":
		// Report continued a Job of class killed whose reason is a full
		// disk: read from a killed Job's log, or the Job's own reason.
		for _, r := range l.reps {
			if r.Killed != "" || r.Stage || r.Outcome.Class != failure.Killed || r.Outcome.Action != report.ActionContinue {
				continue
			}
			if r.Outcome.KillReason == failure.ReasonDiskFull ||
				failure.Classify(failure.Input{Log: strings.NewReader(r.Outcome.Reason)}).Reason == failure.ReasonDiskFull {
				return true
			}
		}
		return false

	}
	return true
}

// implementReports counts the report runs on implement Jobs.
func implementReports(l *life) int {
	n := 0
	for _, r := range l.reps {
		if !r.Stage {
			n++
		}
	}
	return n
}

// evidenced are the recovery branches that count only from an event the
// product writes when it takes them: a GitHub recovery line in a Job's or a
// report run's log (internal/github's LogRecoveries), or a trace event of a
// Job. A history that claims one of them with no such event is a violation
// (a branch inferred from the outcome hid that the retries could be off).
var evidenced = map[string]func(l *life, sc scenario) bool{
	"retry": func(l *life, sc scenario) bool {
		if strings.Contains(sc.Kind, "github_") {
			return l.recovered(github.RecoverRetry)
		}
		// A model's retry: the model client's retry event.
		return l.traced(func(e trace.Event) bool { return e.Type == trace.TypeRetry && !strings.HasPrefix(e.Reason, "push") })
	},
	"wait_rate_limit": func(l *life, _ scenario) bool { return l.recovered(github.RecoverRateLimit) },
	"reapply_record":  func(l *life, _ scenario) bool { return l.recovered(github.RecoverRecordReapply) },
	"agent_repair": func(l *life, _ scenario) bool {
		return l.traced(func(e trace.Event) bool {
			return e.Type == trace.TypeToolCall && e.ResultClass == agent.ResultMalformed
		})
	},
	"rebase": func(l *life, _ scenario) bool {
		return l.traced(func(e trace.Event) bool {
			return e.Type == trace.TypeRetry && strings.HasPrefix(e.Reason, "push refused (")
		})
	},
}

// recovered reports whether a Job or a report run logged a GitHub recovery
// of kind.
func (l *life) recovered(kind string) bool {
	for _, b := range l.logs {
		if strings.Contains(b.String(), github.RecoveryPrefix+kind+" ") {
			return true
		}
	}
	return false
}

// traced reports whether a Job's trace holds an event that ok accepts.
func (l *life) traced(ok func(trace.Event) bool) bool {
	for _, b := range l.traces {
		for _, line := range strings.Split(b.String(), "\n") {
			var e trace.Event
			if json.Unmarshal([]byte(line), &e) == nil && ok(e) {
				return true
			}
		}
	}
	return false
}

// checkPersonEnd holds a history in which a person closed or merged the PR,
// or closed the issue, mid-run (issue 47): the item ends with the result and
// class the taxonomy gives the act (closed: held, yielded pr_closed or
// issue_closed; merged: returned pr_merged), never ready, with nothing
// pushed, marked ready or spent after the Job noticed, and nothing
// continued.
func checkPersonEnd(l *life, sc scenario, base, got State, bad func(string, ...any)) {
	if got.Result != string(sc.End) || got.Failure != sc.Class {
		bad("ended %s/%s after a person's act (%s), want %s/%s", got.Result, got.Failure, l.acted, sc.End, sc.Class)
	}
	for _, j := range l.jobs {
		if j.Result.Result == record.ResultReady {
			bad("job %d ended ready after a person's act (%s)", j.Attempt, l.acted)
		}
	}
	if got.Group >= base.Group {
		bad("the item reached group %d of %d after a person's act (%s): work went on", got.Group, base.Group, l.acted)
	}
	for g := got.Group + 1; g <= l.w.groups; g++ {
		if _, ok := got.Files[fmt.Sprintf("greeting-%d.txt", g)]; ok {
			bad("group %d was pushed after a person's act (%s)", g, l.acted)
		}
	}
	if l.acted != ActMergePR && !got.PRDraft {
		bad("the PR was marked ready after a person's act (%s)", l.acted)
	}
	if n := l.w.replay.Stats().Calls - l.actCalls; n > 2 {
		bad("%d model calls after a person's act (%s), want at most one group's (2): the spend stops", n, l.acted)
	}
	for _, r := range l.reps {
		if r.Killed == "" && r.Outcome.Action == report.ActionContinue {
			bad("report continued the item after job %d (%s: %s) after a person's act", r.Job, r.Outcome.Class, r.Outcome.Reason)
		}
	}
}

// checkLimits holds the histories of issue 46's bounds: a 1,000-comment
// issue's item within the item's request budget, and a model answer over
// the limit refused once and never sent back to the model.
func checkLimits(l *life, sc scenario, got State, bad func(string, ...any)) {
	if l.budget {
		n := 0
		for _, r := range l.w.fake.Requests() {
			if r.Status != http.StatusNotModified && !strings.HasPrefix(r.Path, "/_logs/") {
				n++
			}
		}
		if n > ItemRequestBudget {
			bad("the item's life cost %d counted GitHub requests on an issue with %d comments, want at most %d", n, ManyComments, ItemRequestBudget)
		}
	}
	if sc.Kind == "answer_over_limit" {
		served := 0
		for _, s := range l.w.replay.Stats().Served {
			if s.Conversation == fmt.Sprintf("group-%d", l.overGroup) && s.Turn == 0 {
				served++
			}
		}
		if served > 1 {
			bad("the over-limit answer was asked for %d times, want once (never re-sent)", served)
		}
		if m := l.w.maxModelRequest.Load(); m >= llm.MaxAnswerBytes {
			bad("a model request of %d bytes: the refused answer went back to the model", m)
		}
	}
}
