package faults

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/github"
)

// TestFaultsRun runs the per-change cover of seed 1 (docs/testing.md): one
// history of every fault kind and every recovery branch, chosen by the key
// scripts/unit.sh passes (ROADMAP_FAULT_KEY, the commit), and two more
// played twice. No violation, every fault kind injected, every recovery
// branch reached. The whole seeds are played by faults-sweep.yml.
func TestFaultsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("the fault suite's cover plays about forty histories")
	}
	s, err := Run(context.Background(), Options{Seeds: 1, Cover: true, Key: os.Getenv("ROADMAP_FAULT_KEY"), Extra: 2, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	s.Print(&b)
	t.Log("\n" + b.String())
	if len(s.Violations) != 0 {
		t.Errorf("%d violations, want 0", len(s.Violations))
	}
	for _, k := range append(slices.Clone(kinds), stageKinds...) {
		if s.ByKind[k].Injected == 0 {
			t.Errorf("fault kind %s was never injected", k)
		}
		if s.ByKind[k].Recovered == 0 {
			t.Errorf("fault kind %s never recovered", k)
		}
	}
	for _, br := range append(slices.Clone(branches), stageBranches...) {
		if s.Branches[br] == 0 {
			t.Errorf("recovery branch %s was never reached", br)
		}
	}
	if s.Injected == 0 || s.Recovered > s.Injected {
		t.Errorf("injected %d, recovered %d", s.Injected, s.Recovered)
	}
	// Every history, stage ones included: report reads a killed Job's log.
	if s.SpendLost != 0 || s.Duplicates != 0 || s.WorkRepeated != 0 {
		t.Errorf("spend lost %d tokens, duplicates %d, work repeated %d; want 0 of each", s.SpendLost, s.Duplicates, s.WorkRepeated)
	}
	if len(s.Known) != 0 {
		t.Errorf("known defects = %v, want none", s.Known)
	}
}

// TestCheckCatchesPlantedViolations: the invariant checker is not blind. A
// crash-free history with a planted duplicate comment, a changed issue body
// and lost spend must each be caught.
func TestCheckCatchesPlantedViolations(t *testing.T) {
	base, err := play(context.Background(), filepath.Join(t.TempDir(), "base"), scenario{Name: "crash-free", Expect: expectReady}, false)
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
	if err := w.fake.SetIssueBody(w.issue, github.DefaultIdentity, PersonBody+"roadmap wrote here\n"); err != nil {
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

// TestCheckCatchesPlantedStageViolations: the stage invariants are not
// blind. A crash-free history from no plan with a second stage comment on
// its PR, a changed plan and a round planned again after its push must each
// be caught.
func TestCheckCatchesPlantedStageViolations(t *testing.T) {
	base, err := play(context.Background(), filepath.Join(t.TempDir(), "base"), scenario{Name: "crash-free", Expect: expectReady, Stage: true}, false)
	if err != nil {
		t.Fatal(err)
	}
	sc := scenario{Name: "planted", Kind: "stage_crash", Branch: "stage_replan", Expect: expectReady, Stage: true, arms: []string{"before push#1"}}
	for _, v := range check(base.l, sc, base.st, base.st).Violations {
		if !strings.Contains(v, "never injected") && !strings.Contains(v, "recovery branch") {
			t.Fatalf("the crash-free run from no plan has a violation before planting: %s", v)
		}
	}
	w := base.l.w
	pr := base.st.Staged
	if pr == nil || pr.PRs != 1 || pr.Comment != 1 {
		t.Fatalf("the crash-free stage left %+v, want one PR with one stage comment", pr)
	}
	n := 0
	for i := 1; ; i++ {
		is, ok := w.fake.Issue(i)
		if !ok {
			break
		}
		if is.Pull != nil {
			n = i
		}
	}
	if _, err := w.fake.AddComment(n, github.DefaultIdentity, stageMarker+"\na second stage comment"); err != nil {
		t.Fatal(err)
	}
	staged, err := base.l.stagedNow()
	if err != nil {
		t.Fatal(err)
	}
	staged.Plan[PlanDir+"/tasks.md"] = "0000000000000000000000000000000000000000"
	got := base.st
	got.Staged = &staged
	base.l.stages[0].Pushed, base.l.stages[0].Planned = 1, []int{1, 2}
	out := check(base.l, sc, base.st, got)
	all := strings.Join(out.Violations, "\n")
	for _, want := range []string{"2 stage comments on the PR", "the plan on the branch differs", "planned round 1 again"} {
		if !strings.Contains(all, want) {
			t.Errorf("violations lack %q:\n%s", want, all)
		}
	}
	if out.Repeated != 1 || out.Recovered {
		t.Errorf("repeated %d, recovered %v; want 1, false", out.Repeated, out.Recovered)
	}
}

// TestSuiteUsesShippedWiring: the suite's Jobs are built by job.Open from a
// configuration, as the binary's are, so a break in that wiring is a
// violation of `roadmap faults run`. The history with an item budget in the
// configuration must stop on budget_exhausted; were the budget not passed
// from the configuration to the runner, the item would end ready instead.
func TestSuiteUsesShippedWiring(t *testing.T) {
	var sc *scenario
	for _, s := range scenarios(1, []string{"push#1"}, []Request{{Method: "PATCH", Path: "/x", Call: 1}}, func(Request) bool { return false }) {
		if s.Kind == "config_item_budget" {
			sc = &s
		}
	}
	if sc == nil {
		t.Fatal("the suite has no history for the configuration's item budget")
	}
	p, err := play(context.Background(), filepath.Join(t.TempDir(), "budget"), *sc, false)
	if err != nil {
		t.Fatal(err)
	}
	out := check(p.l, *sc, p.st, p.st)
	if len(out.Violations) > 0 {
		t.Errorf("roadmap faults run would report violations for %q:\n%s\ntrace:\n%s", sc.Name, strings.Join(out.Violations, "\n"), p.trace())
	}
	if !out.Recovered {
		t.Errorf("the history did not reach %s", sc.Branch)
	}
}

// TestFaultsFirstSeed: a run from seed 3 plays seed 3's histories and no
// other, so .ci/run can play the seeds TestFaultsRun does not.
func TestFaultsFirstSeed(t *testing.T) {
	var progress strings.Builder
	s, err := Run(context.Background(), Options{Seeds: 1, FirstSeed: 3, Only: "push rejected by a hook", Dir: t.TempDir(), Progress: &progress,
		Cover: true, Key: "TestFaultsFirstSeed"}) // one history: the test is about which seed plays
	if err != nil {
		t.Fatal(err)
	}
	if s.FirstSeed != 3 || s.Histories == 0 || len(s.Violations) != 0 {
		t.Fatalf("summary: first seed %d, %d histories, violations %v; want seed 3, some histories, none", s.FirstSeed, s.Histories, s.Violations)
	}
	lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
	for _, l := range lines {
		if !strings.HasPrefix(l, "seed 3 ") {
			t.Errorf("progress %q: a seed other than 3 was played", l)
		}
	}
	if len(lines) != s.Histories {
		t.Errorf("%d progress lines for %d histories", len(lines), s.Histories)
	}
}
