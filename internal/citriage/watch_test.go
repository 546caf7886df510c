package citriage

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/github"
)

// finding is a failed check as Read leaves it.
func finding(name string, class failure.Class, evidence string, run int64, attempt int) Finding {
	return Finding{Check: github.Check{Name: name, Kind: "check_run", State: "failure", Detail: "completed/failure", URL: "https://ci/" + name},
		Verdict: failure.Verdict{Class: class, Evidence: evidence}, Excerpt: "--- FAIL: " + name, RunID: run, Attempt: attempt}
}

// TestTriage: a check the change failed goes to the agent, one the
// infrastructure broke is re-run while its run has re-runs left, and one
// that cannot be re-run ends the watch with its class.
func TestTriage(t *testing.T) {
	type want struct {
		kind     Kind
		class    failure.Class
		reason   string // a part of the failure's reason
		task     string // a part of the repair task; "" is none
		reruns   []int64
		outcomes []string
	}
	for _, tc := range []struct {
		name     string
		reran    map[int64]int // re-runs asked before, per run
		findings []Finding
		want     want
	}{
		{
			name:     "a test failure is handed to the agent with its log",
			findings: []Finding{finding("test", failure.ChecksFailed, "--- FAIL: TestX", 11, 1)},
			want: want{kind: Failed, class: failure.ChecksFailed, reason: "PR check test failed: `--- FAIL: TestX`",
				task: "PR check \"test\" failed (completed/failure) https://ci/test\n--- FAIL: test", outcomes: []string{"handed_on"}},
		},
		{
			name:     "a transient failure of a workflow job is re-run",
			findings: []Finding{finding("lint", failure.Transient, "ECONNRESET", 12, 1)},
			want:     want{kind: Rerun, reruns: []int64{12}},
		},
		{
			name:     "a re-run already asked at this attempt is waited for, not asked again",
			reran:    map[int64]int{12: 1},
			findings: []Finding{finding("lint", failure.Transient, "ECONNRESET", 12, 1)},
			want:     want{kind: Rerun},
		},
		{
			name:     "the re-run's own failure is re-run while re-runs are left",
			reran:    map[int64]int{12: 1},
			findings: []Finding{finding("lint", failure.Transient, "ECONNRESET", 12, 2)},
			want:     want{kind: Rerun, reruns: []int64{12}},
		},
		{
			name:     "past implement.check_reruns the class ends the watch",
			findings: []Finding{finding("lint", failure.RateLimited, "API rate limit exceeded", 12, 3)},
			want: want{kind: Failed, class: failure.RateLimited, reason: "re-run 2 times already (implement.check_reruns: 2)",
				outcomes: []string{"not_rerun"}},
		},
		{
			name:     "a status broken by the infrastructure cannot be re-run",
			findings: []Finding{finding("deploy", failure.Transient, "503", 0, 0)},
			want:     want{kind: Failed, class: failure.Transient, reason: "it is not a workflow job roadmap can re-run", outcomes: []string{"not_rerun"}},
		},
		{
			name: "a change's failure beside a flaky one: the change's goes to the agent, nothing is re-run",
			findings: []Finding{finding("lint", failure.Transient, "ECONNRESET", 12, 1),
				finding("test", failure.ChecksFailed, "FAIL", 13, 1), finding("vet", failure.ChecksFailed, "", 13, 1)},
			want: want{kind: Failed, class: failure.ChecksFailed, reason: "PR check test failed", task: "PR check \"vet\" failed",
				outcomes: []string{"handed_on", "handed_on"}},
		},
		{
			name:     "several broken runs are re-run in run order, once each",
			findings: []Finding{finding("b", failure.Killed, "", 30, 1), finding("a", failure.Indeterminate, "", 20, 1), finding("a2", failure.Killed, "", 20, 1)},
			want:     want{kind: Rerun, reruns: []int64{20, 30}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := NewWatch(nil)
			for id, a := range tc.reran {
				w.reran[id] = a
			}
			v := w.Triage(tc.findings, 2)
			got := want{kind: v.Kind, class: v.Class, reason: v.Reason, task: v.Task}
			for _, f := range v.Reruns {
				got.reruns = append(got.reruns, f.RunID)
			}
			for _, d := range v.Decisions {
				got.outcomes = append(got.outcomes, d.Outcome)
			}
			if !strings.Contains(got.reason, tc.want.reason) || (tc.want.reason == "") != (got.reason == "") {
				t.Errorf("reason = %q, want it to say %q", got.reason, tc.want.reason)
			}
			if !strings.Contains(got.task, tc.want.task) || (tc.want.task == "") != (got.task == "") {
				t.Errorf("task = %q, want it to hold %q", got.task, tc.want.task)
			}
			got.reason, got.task = tc.want.reason, tc.want.task
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
			if len(w.Notes) != len(v.Decisions) {
				t.Errorf("notes = %q, want one per decision (%d)", w.Notes, len(v.Decisions))
			}
		})
	}
}

// TestTriageEvidenceMasked: a log line is hostile text: the reason, the
// note and the decision show it masked, on one line, in a code span that
// cannot be closed from inside.
func TestTriageEvidenceMasked(t *testing.T) {
	w := NewWatch(func(s string) string { return strings.ReplaceAll(s, "hunter2", "***") })
	v := w.Triage([]Finding{finding("deploy", failure.Transient, "token hunter2 `@admin`\nsecond line", 0, 0)}, 2)
	want := "`token *** '@admin' second line`"
	if !strings.Contains(v.Reason, want) {
		t.Errorf("reason = %q, want the evidence as %s", v.Reason, want)
	}
	if strings.Contains(w.Notes[0], "hunter2") || strings.Contains(w.Notes[0], "\n") {
		t.Errorf("note = %q, want it masked on one line", w.Notes[0])
	}
	if v := w.Triage([]Finding{finding("deploy", failure.Transient, "", 0, 0)}, 2); !strings.Contains(v.Reason, "(no line decided)") {
		t.Errorf("reason = %q, want (no line decided) for a check with no evidence", v.Reason)
	}
}

// TestReran: a re-run this Job started is a decision; one already under
// way is only waited for; either way the attempt is not asked again.
func TestReran(t *testing.T) {
	w := NewWatch(nil)
	f := finding("lint", failure.Transient, "ECONNRESET", 12, 1)
	if d, ok := w.Reran(f, true, 2); !ok || d.Outcome != "rerun" || !strings.Contains(d.Line, "re-ran the failed jobs of run 12 (re-run 1 of 2)") {
		t.Errorf("Reran(started) = %+v, %v; want the rerun decision", d, ok)
	}
	g := finding("build", failure.Transient, "", 13, 1)
	if _, ok := w.Reran(g, false, 2); ok {
		t.Error("Reran(already running) made a decision, want none")
	}
	if v := w.Triage([]Finding{f, g}, 2); v.Kind != Rerun || len(v.Reruns) != 0 {
		t.Errorf("after the re-runs: %+v, want Rerun with nothing to ask", v)
	}
	if len(w.Notes) != 1 {
		t.Errorf("notes = %q, want the one decision", w.Notes)
	}
}

// TestPassedAndNoCI: green only when checks reported and passed; no check
// on the head is ready only when the configuration allows it, else a person
// is asked, in words that say why nothing will ever report.
func TestPassedAndNoCI(t *testing.T) {
	head := "0123456789abcdef"
	for _, tc := range []struct {
		name     string
		in       NoCI
		kind     Kind
		ci       Kind
		class    failure.Class
		question string
		note     string
	}{
		{"ready without CI", NoCI{Head: head, PR: 7, Waited: 5 * time.Minute, ReadyWithoutCI: true}, None, None, "", "",
			"no check reported on 0123456 in 5m0s; ready without CI (implement.ready_without_ci: true)"},
		{"no CI can ever run", NoCI{Head: head, PR: 7, NoCIPath: true}, Failed, "", failure.NeedsInput, "No CI can run on PR #7", "not marked ready"},
		{"no CI reported in the grace", NoCI{Head: head, PR: 7, Waited: time.Minute}, Failed, "", failure.NeedsInput,
			"No CI reported a check on 0123456 (PR #7) within 1m0s", "not marked ready"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := NewWatch(nil)
			v := w.NoCI(tc.in)
			if v.Kind != tc.kind || w.CI != tc.ci || v.Class != tc.class || v.Task != "" {
				t.Errorf("NoCI = %+v, CI %q; want %s, CI %q, class %q, no task", v, w.CI, tc.kind, tc.ci, tc.class)
			}
			if !strings.Contains(v.Question, tc.question) || (tc.question == "") != (v.Question == "") {
				t.Errorf("question = %q, want it to say %q", v.Question, tc.question)
			}
			if len(w.Notes) != 1 || !strings.Contains(w.Notes[0], tc.note) {
				t.Errorf("notes = %q, want one saying %q", w.Notes, tc.note)
			}
		})
	}
	w := NewWatch(nil)
	if v := w.Passed(3, head); v.Kind != Passed || w.CI != Passed || len(w.Notes) != 1 || w.Notes[0] != "3 PR checks passed at 0123456" {
		t.Errorf("Passed = %+v, CI %q, notes %q", v, w.CI, w.Notes)
	}
}

// actions is a Source with one job's run, log and annotations.
type actions struct {
	run         github.JobRun
	log         string
	annotations []string
	err         error
}

func (a actions) Job(context.Context, int64) (github.JobRun, error) { return a.run, a.err }
func (a actions) JobLog(context.Context, int64) (io.ReadCloser, error) {
	if a.err != nil {
		return nil, a.err
	}
	return io.NopCloser(strings.NewReader(a.log)), nil
}
func (a actions) JobAnnotations(context.Context, int64) ([]string, error) { return a.annotations, nil }

// TestRead: what a failed check left is read where its kind keeps it, and
// a check that failed with nothing decisive is the change's.
func TestRead(t *testing.T) {
	goTest := "2026-11-29T09:01:02.3000000Z --- FAIL: TestGreet (0.00s)\n    greet_test.go:9: got \"hi\"\nFAIL\n"
	for _, tc := range []struct {
		name    string
		check   github.Check
		src     actions
		class   failure.Class
		run     int64
		attempt int
		excerpt string
	}{
		{"an Actions job's log, timestamps dropped",
			github.Check{Name: "test", Kind: "check_run", App: github.ActionsApp, ID: 5, Detail: "completed/failure"},
			actions{run: github.JobRun{RunID: 40, RunAttempt: 2}, log: goTest, annotations: []string{"greet_test.go:9 got hi"}},
			failure.ChecksFailed, 40, 2, "--- FAIL: TestGreet (0.00s)\n"},
		{"an Actions job whose log cannot be read is classified on what was",
			github.Check{Name: "test", Kind: "check_run", App: github.ActionsApp, ID: 5, Detail: "completed/failure"},
			actions{err: errors.New("HTTP 502")}, failure.ChecksFailed, 0, 0, ""},
		{"another app's output",
			github.Check{Name: "lint", Kind: "check_run", App: "golangci", Output: "npm ERR! code ECONNRESET\n", Detail: "completed/failure"},
			actions{}, failure.Transient, 0, 0, "ECONNRESET"},
		{"a status's description",
			github.Check{Name: "deploy", Kind: "status", Description: "failed", Detail: "failure"},
			actions{}, failure.ChecksFailed, 0, 0, "failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logged []string
			f := NewWatch(nil).Read(context.Background(), tc.src, tc.check, func(format string, a ...any) { logged = append(logged, format) })
			if f.Verdict.Class != tc.class || f.RunID != tc.run || f.Attempt != tc.attempt {
				t.Errorf("Read = class %s, run %d attempt %d; want %s, %d, %d", f.Verdict.Class, f.RunID, f.Attempt, tc.class, tc.run, tc.attempt)
			}
			if !strings.Contains(f.Excerpt, tc.excerpt) || strings.Contains(f.Excerpt, "2026-11-29T") {
				t.Errorf("excerpt = %q, want it to hold %q without the runner's timestamps", f.Excerpt, tc.excerpt)
			}
			if tc.src.err != nil && len(logged) != 2 {
				t.Errorf("logged %q, want the two reads that failed", logged)
			}
		})
	}
}
