package kernel

import (
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/blockers"
)

// TestBlockedSaysWhy: what a blocked Job writes names every blocker that
// holds the item, in item.blocked_by and the reason, and says each
// refusal's sentence (a pull request, an unreadable issue, the item
// itself) and a blocker closed as not planned while that does not count as
// met; with blockers.not_planned_met it is not named.
func TestBlockedSaysWhy(t *testing.T) {
	item := blockers.Ref{Repo: "acme/widgets", Number: 9}
	states := []blockers.State{
		{Ref: blockers.Ref{Repo: "acme/widgets", Number: 12}, Readable: true, Open: true},
		{Ref: blockers.Ref{Repo: "acme/lib", Number: 4}, Readable: true, Open: true},
		{Ref: blockers.Ref{Number: 5}, Readable: true, StateReason: "not_planned"},
		{Ref: blockers.Ref{Number: 7}, Readable: true, PullRequest: true},
		{Ref: blockers.Ref{Repo: "other/secret", Number: 1}},
		{Ref: blockers.Ref{Number: 9}, Readable: true},
		{Ref: blockers.Ref{Number: 3}, Readable: true, StateReason: "completed"},
	}
	b := blockedBy(blockers.Decide(item, states, blockers.Options{}), blockers.Options{})
	if want := "#12, acme/lib#4, #5, #7, other/secret#1, #9"; b.Refs != want {
		t.Errorf("item.blocked_by %q, want %q", b.Refs, want)
	}
	if !strings.HasPrefix(b.Reason, "waiting for #12, acme/lib#4, #5, #7, other/secret#1, #9: ") {
		t.Errorf("reason %q", b.Reason)
	}
	for _, s := range []string{"#5 was closed as not planned", "#7 is a pull request, not an issue", "other/secret#1 could not be read", "#9 is this issue itself"} {
		if !strings.Contains(b.why, s) {
			t.Errorf("the record comment's line lacks %q:\n%s", s, b.why)
		}
	}
	if strings.Contains(b.why, "#12") || strings.Contains(b.detail, "#3") {
		t.Errorf("an open blocker needs no sentence and a met one is not named: why %q, detail %q", b.why, b.detail)
	}

	met := blockers.Options{NotPlannedMet: true}
	b = blockedBy(blockers.Decide(item, states[:3], met), met)
	if b.Refs != "#12, acme/lib#4" || b.why != "" {
		t.Errorf("with not_planned_met: item.blocked_by %q, why %q; want the open ones and no sentence", b.Refs, b.why)
	}
}
