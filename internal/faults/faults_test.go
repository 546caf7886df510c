package faults

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/github"
)

// TestFaultsRun runs the suite on one seed: no violation, every fault kind
// injected, every recovery branch reached.
func TestFaultsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("the fault suite plays about a hundred histories")
	}
	s, err := Run(context.Background(), Options{Seeds: 1, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	s.Print(&b)
	t.Log("\n" + b.String())
	if len(s.Violations) != 0 {
		t.Errorf("%d violations, want 0", len(s.Violations))
	}
	for _, k := range kinds {
		if s.ByKind[k].Injected == 0 {
			t.Errorf("fault kind %s was never injected", k)
		}
		if s.ByKind[k].Recovered == 0 {
			t.Errorf("fault kind %s never recovered", k)
		}
	}
	for _, br := range branches {
		if s.Branches[br] == 0 {
			t.Errorf("recovery branch %s was never reached", br)
		}
	}
	if s.Injected == 0 || s.Recovered > s.Injected {
		t.Errorf("injected %d, recovered %d", s.Injected, s.Recovered)
	}
	if len(s.Known) != 0 {
		t.Errorf("known defects = %v, want none", s.Known)
	}
}

// TestCheckCatchesPlantedViolations: the invariant checker is not blind. A
// crash-free history with a planted duplicate comment, a changed issue body
// and lost spend must each be caught.
func TestCheckCatchesPlantedViolations(t *testing.T) {
	base, err := play(context.Background(), filepath.Join(t.TempDir(), "base"), scenario{Name: "crash-free", Expect: expectReady})
	if err != nil {
		t.Fatal(err)
	}
	sc := scenario{Name: "planted", Kind: "crash", Branch: "reconcile", Expect: expectReady, arms: []string{"before push#1"}}
	clean := check(base.l, sc, base.st, base.st)
	for _, v := range clean.Violations {
		if !strings.Contains(v, "never injected") && !strings.Contains(v, "recovery branch") {
			t.Fatalf("the crash-free run has a violation before planting: %s", v)
		}
	}
	w := base.l.w
	pr := 0
	for n := 1; ; n++ {
		is, ok := w.fake.Issue(n)
		if !ok {
			break
		}
		if is.Pull != nil {
			pr = n
		}
	}
	if pr == 0 {
		t.Fatal("the crash-free run opened no PR")
	}
	if _, err := w.fake.AddComment(pr, github.DefaultIdentity, "<!-- roadmap:implement -->\na second implement comment"); err != nil {
		t.Fatal(err)
	}
	if err := w.fake.SetIssueBody(w.issue, github.DefaultIdentity, personBody+"roadmap wrote here\n"); err != nil {
		t.Fatal(err)
	}
	st := base.st
	st.Served.TokensIn += 1000
	got := check(base.l, sc, base.st, st)
	all := strings.Join(got.Violations, "\n")
	for _, want := range []string{"2 implement comments on PR", "the person's issue text changed", "spend lost"} {
		if !strings.Contains(all, want) {
			t.Errorf("violations lack %q:\n%s", want, all)
		}
	}
	if got.Duplicates != 1 || got.SpendLost != 1000 || got.Recovered {
		t.Errorf("duplicates %d, spend lost %d, recovered %v; want 1, 1000, false", got.Duplicates, got.SpendLost, got.Recovered)
	}
}
