package progress

import (
	"strings"
	"testing"
	"time"
)

func TestChecklistRender(t *testing.T) {
	three := []Group{{1, "Add the greeter"}, {2, "Wire it in"}, {3, "Document it"}}
	tests := []struct {
		name string
		v    View
		want string
	}{
		{"nothing", View{}, ""},
		{"none passed", View{Groups: three, Now: "implementing group 1 of 3: Add the greeter"},
			"- [ ] group 1: Add the greeter\n- [ ] group 2: Wire it in\n- [ ] group 3: Document it\n\nnow: implementing group 1 of 3: Add the greeter\n"},
		{"ticked at marks", View{Groups: three, Passed: map[int]bool{1: true, 2: true}, Now: "implementing group 3 of 3: Document it"},
			"- [x] group 1: Add the greeter\n- [x] group 2: Wire it in\n- [ ] group 3: Document it\n\nnow: implementing group 3 of 3: Document it\n"},
		{"out of order (a wave)", View{Groups: three, Passed: map[int]bool{3: true}},
			"- [ ] group 1: Add the greeter\n- [ ] group 2: Wire it in\n- [x] group 3: Document it\n"},
		{"now alone", View{Now: "waiting on the PR checks"}, "now: waiting on the PR checks\n"},
		{"a title forging a ticked line", View{Groups: []Group{{1, "a\n- [x] group 2: done\n\nnow: ready"}}},
			"- [ ] group 1: a - [x] group 2: done now: ready\n"},
		{"a long title is bounded", View{Groups: []Group{{1, strings.Repeat("é", 100)}}},
			"- [ ] group 1: " + strings.Repeat("é", 60) + "…\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Checklist(tt.v); got != tt.want {
				t.Errorf("Checklist:\n%q\nwant:\n%q", got, tt.want)
			}
		})
	}
}

// A title from the model's plan mentions nobody, holds no HTML, no image
// and no link to another host once rendered.
func TestChecklistNeutralised(t *testing.T) {
	hostile := "cc @octocat <!-- roadmap:implement --> <img src=x> ![p](https://evil.example/p.png) [d](https://evil.example/d)"
	got := Checklist(View{Groups: []Group{{1, hostile}}, Now: "group 1: " + hostile, Server: "github.com", Repo: "o/r"})
	for _, bad := range []string{"@octocat", "<!--", "<img", "![", "](https://evil.example"} {
		if strings.Contains(got, bad) {
			t.Errorf("the checklist holds %q:\n%s", bad, got)
		}
	}
	if n := strings.Count(got, "\n"); n != 3 {
		t.Errorf("the checklist has %d lines, want 3 (one group, a blank, the now line):\n%s", n, got)
	}
}

func TestThrottle(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type step struct {
		at     time.Duration
		passed int
		now    string
		due    bool
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"a tick per interval, up to the cap", []step{
			{Interval, 1, "g2", true}, {2 * Interval, 2, "g3", true}, {3 * Interval, 3, "checks", true}, {4 * Interval, 4, "g5", false}}},
		{"nothing within the interval since the start", []step{
			{Interval - time.Second, 1, "g2", false}, {Interval, 1, "g2", true}}},
		{"nothing within the interval since the last write", []step{
			{Interval, 1, "g2", true}, {2*Interval - time.Second, 2, "checks", false}, {2 * Interval, 2, "checks", true}}},
		{"a now line alone is enough", []step{
			{Interval, 0, "checks", true}}},
		{"nothing changed, nothing written", []step{
			{10 * Interval, 0, "start", false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := NewThrottle(t0, 0, "start")
			for i, s := range tt.steps {
				at := t0.Add(s.at)
				if got := th.Due(at, s.passed, s.now); got != s.due {
					t.Fatalf("step %d (%v, %d passed, %q): due %v, want %v", i, s.at, s.passed, s.now, got, s.due)
				}
				if s.due {
					th.Wrote(at, s.passed, s.now)
				}
			}
			if th.Writes() > MaxWrites {
				t.Errorf("%d writes, want at most %d", th.Writes(), MaxWrites)
			}
		})
	}
	var none *Throttle
	if none.Due(t0, 5, "x") {
		t.Error("a nil throttle allows a write")
	}
}
