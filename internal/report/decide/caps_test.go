package decide

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// line is Job job's line: "result/class@group", result or class may be
// empty ("/killed@1": no result, killed, group 1).
func line(job int, s string) record.JobOutcome {
	rc, g, _ := strings.Cut(s, "@")
	res, class, _ := strings.Cut(rc, "/")
	group, _ := strconv.Atoi(g)
	return record.JobOutcome{Job: job, RunID: int64(9000 + job), Result: record.Result(res), Failure: class, Group: group}
}

func lines(ss ...string) []record.JobOutcome {
	var out []record.JobOutcome
	for i, s := range ss {
		out = append(out, line(i+1, s))
	}
	return out
}

// TestNoProgress: the rule over the Jobs' lines, the reported Job last.
func TestNoProgress(t *testing.T) {
	for _, tc := range []struct {
		name string
		jobs []record.JobOutcome
		want string // "" for no stop, else the rule's words
	}{
		{"killed twice in a group", lines("yielded/@1", "/killed@1", "/killed@1"), "two continuations in a row made no new mark"},
		{"oom then transient without a mark", lines("yielded/@1", "/oom@1", "yielded/transient@1"), "two continuations"},
		{"the second continuation passed a group", lines("yielded/@1", "/killed@1", "/killed@2"), ""},
		{"the first continuation passed a group", lines("yielded/@1", "/killed@2", "/killed@2"), ""},
		{"a yield on purpose is not a strike", lines("yielded/@1", "yielded/@1", "/killed@1"), ""},
		{"a return is not a strike", lines("yielded/@1", "returned/plan_wrong@1", "/killed@1"), ""},
		{"ready is a mark", lines("yielded/@1", "/killed@1", "ready/@1"), ""},
		{"a second oom in a row without a mark", lines("/oom@0", "/oom@0"), "a second oom in a row with no new mark"},
		{"a second oom after a mark", lines("/oom@0", "/oom@1"), ""},
		{"the first Job is not a continuation", lines("/killed@0", "/killed@0"), ""},
		{"the Job before is missing", append(lines("yielded/@1"), line(3, "/killed@1")), ""},
	} {
		job := tc.jobs[len(tc.jobs)-1].Job
		ev, ok := NoProgress(tc.jobs, job)
		if ok != (tc.want != "") || !strings.Contains(ev, tc.want) {
			t.Errorf("%s: NoProgress = %q, %v; want %q", tc.name, ev, ok, tc.want)
		}
		if ok && (!strings.Contains(ev, "Job "+strconv.Itoa(job-1)) || !strings.Contains(ev, "Job "+strconv.Itoa(job))) {
			t.Errorf("%s: evidence %q does not name both Jobs", tc.name, ev)
		}
	}
}

// TestCaps: a continuation past the rule or the cap stops; a stage Job
// does only what a stage Job has; a person's stop holds what would start
// something; each with its reason and step.
func TestCaps(t *testing.T) {
	cont := Decision{Class: failure.Killed, Action: Continue}
	end := Ending{Killed: failure.Killed}
	for _, tc := range []struct {
		name string
		got  Decision
		want Decision
	}{
		{"a continuation within the cap", Continuation(cont, lines("yielded/@1", "/killed@1"), 2, 6, end), cont},
		{"a continuation past the cap", Continuation(cont, lines("yielded/@1", "/killed@1"), 2, 2, end),
			Decision{Class: failure.BudgetExhausted, Action: Stop, Step: "continuation",
				Reason: "the item has run 2 Jobs, the cap of Jobs per item (max jobs 2); no result, killed would need Job 3"}},
		{"no progress before the cap", Continuation(cont, lines("yielded/@1", "/killed@1", "/killed@1"), 3, 3, end).clip(),
			Decision{Class: failure.NoProgress, Action: Stop, Step: "continuation"}},
		{"a stop is not capped", Continuation(Decision{Class: failure.Auth, Action: Stop}, lines("/killed@1", "/killed@1", "/killed@1"), 3, 1, end),
			Decision{Class: failure.Auth, Action: Stop}},
		{"a stage continuation within the cap", Stage(cont, 1, 6, end), cont},
		{"a stage continuation past the cap", Stage(cont, 2, 2, end),
			Decision{Class: failure.BudgetExhausted, Action: Stop, Step: "stage continuation",
				Reason: "the item has run 2 stage Jobs, the cap of Jobs per item (max jobs 2); no result, killed would need stage Job 3"}},
		{"a stage Job has no ready", Stage(Decision{Action: Ready, Reason: "all done"}, 1, 6, end),
			Decision{Action: Stop, Reason: "all done (the class's action, ready, is not one a stage Job has)"}},
		{"a stage Job asks", Stage(Decision{Class: failure.NeedsInput, Action: Ask}, 1, 6, end), Decision{Class: failure.NeedsInput, Action: Ask}},
		{"a person's stop holds a continuation", held(cont, end),
			Decision{Class: failure.Killed, Action: None, Reason: "ann stopped the item: the Job ended no result, killed, and it is not continued (continue)"}},
		{"a person's stop leaves a stop", held(Decision{Class: failure.Auth, Action: Stop}, end), Decision{Class: failure.Auth, Action: Stop}},
		{"an answer within the cap", Answered("ann", "write", 2, 6),
			Decision{Class: failure.NeedsInput, Action: Resume, Reason: "ann (write access) answered the question"}},
		{"an answer past the cap", Answered("ann", "write", 2, 2),
			Decision{Class: failure.BudgetExhausted, Action: Stop, Step: "continuation",
				Reason: "ann answered, but the item has run 2 Jobs, the cap of Jobs per item (max jobs 2)"}},
	} {
		if diff := cmp.Diff(tc.want, tc.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// clip drops the reason (its evidence is TestNoProgress's).
func (d Decision) clip() Decision { d.Reason = ""; return d }

func held(d Decision, e Ending) Decision {
	h, _ := Held(d, "ann", e)
	return h
}

func TestStageSettled(t *testing.T) {
	for _, tc := range []struct {
		result, class string
		want          bool
	}{
		{"staged", "", true},
		{"returned", "", true},
		{"returned", "plan_wrong", true},
		{"returned", "needs_input", false},
		{"stopped", "auth", false},
		{"", "", false},
	} {
		reason, ok := StageSettled(tc.result, tc.class)
		if ok != tc.want || (reason != "") != tc.want {
			t.Errorf("StageSettled(%q, %q) = %q, %v; want %v", tc.result, tc.class, reason, ok, tc.want)
		}
	}
}
