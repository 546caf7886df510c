package demo_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/claims"
	"github.com/roadmap-dev/roadmap/internal/demo/demotest"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// TestTrioWorld: the trio world files three staged items in one
// repository; A's and B's claims are disjoint and C's overlaps A's on the
// package hello alone; and each item's recorded group holds what the
// implement runner wants of it: the group's test fails on main (the
// fail-to-pass rule of its "fails" task) and passes with the group's code,
// and go vet (the checks) passes.
func TestTrioWorld(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go on PATH")
	}
	dir := t.TempDir()
	w, err := demotest.NewTrioWorld(t.Context(), dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	items := demotest.Trio(w)
	if len(items) != 3 || items[0].Issue != w.Issue {
		t.Fatalf("trio = %+v, want three items, the first the world's issue #%d", items, w.Issue)
	}
	branches := map[string]bool{}
	units := map[string][]string{}
	for _, ti := range items {
		var rec *record.Record
		for _, c := range w.Fake.Comments(ti.Issue) {
			if c.Author == github.DefaultIdentity && record.HasBlock(c.Body) {
				if rec, err = record.Parse(c.Body); err != nil {
					t.Fatal(err)
				}
			}
		}
		if rec == nil {
			t.Fatalf("#%d has no record comment", ti.Issue)
		}
		if p, _ := rec.StagePlan(); p != "openspec/changes/"+ti.Change {
			t.Errorf("#%d's record names the plan %q, want openspec/changes/%s", ti.Issue, p, ti.Change)
		}
		if !slices.Contains(w.Fake.Labels(ti.Issue), "roadmap:implement") {
			t.Errorf("#%d is not labelled roadmap:implement: %v", ti.Issue, w.Fake.Labels(ti.Issue))
		}
		branches[ti.Branch] = true
		ch, err := plan.LoadChange(filepath.Join(w.Seed, "openspec", "changes", ti.Change))
		if err != nil {
			t.Fatal(err)
		}
		if units[ti.Change], err = claims.Units(ch); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(units[ti.Change], ti.Package) {
			t.Errorf("%s claims %v, not its package %s", ti.Change, units[ti.Change], ti.Package)
		}
	}
	t.Logf("units: %v", units)
	if len(branches) != 3 {
		t.Errorf("work branches %v, want three", branches)
	}
	overlap := func(a, b []string) []string {
		var out []string
		for _, u := range a {
			if slices.Contains(b, u) {
				out = append(out, u)
			}
		}
		return out
	}
	if o := overlap(units["add-hello"], units["add-bye"]); len(o) != 0 {
		t.Errorf("A's and B's claims overlap on %v: %v and %v", o, units["add-hello"], units["add-bye"])
	}
	if o := overlap(units["add-hello"], units["add-shout"]); !slices.Equal(o, []string{"hello"}) {
		t.Errorf("A's and C's claims overlap on %v, want the package hello alone: %v and %v", o, units["add-hello"], units["add-shout"])
	}

	// Each recorded group on a clone of main: the test file alone fails,
	// the test and the code pass, and go vet passes.
	convs, err := llm.LoadFixtures(filepath.Join(dir, "fixtures"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range items {
		i := slices.IndexFunc(convs, func(c *llm.Conversation) bool {
			return strings.Contains(`Implement task group 1 of the plan "`+ti.Change+`": x`, c.Match)
		})
		if i < 0 {
			t.Fatalf("no recorded conversation matches %s's group", ti.Change)
		}
		for _, c := range convs {
			if c != convs[i] && strings.Contains(`Implement task group 1 of the plan "`+ti.Change+`": x`, c.Match) {
				t.Errorf("%s's group matches %s and %s: the match strings must be distinct", ti.Change, convs[i].Name, c.Name)
			}
		}
		var writes [][2]string
		for _, turn := range convs[i].Turns {
			for _, tc := range turn.Response.ToolCalls {
				if tc.Name != "write_file" {
					continue
				}
				var a struct{ Path, Content string }
				if err := json.Unmarshal([]byte(tc.Arguments), &a); err != nil {
					t.Fatal(err)
				}
				writes = append(writes, [2]string{a.Path, a.Content})
			}
		}
		if len(writes) != 2 || !strings.HasSuffix(writes[0][0], "_test.go") {
			t.Fatalf("%s's group writes %d files, want its test first and then its code", ti.Change, len(writes))
		}
		ws, err := w.Workspace("check-" + ti.Change)
		if err != nil {
			t.Fatal(err)
		}
		goTest := func() error {
			cmd := exec.Command("go", "test", "./"+ti.Package+"/...", "-run", "Test"+strings.TrimPrefix(ti.Title, "Add "))
			cmd.Dir = ws
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Logf("%s: go test: %v\n%s", ti.Change, err, out)
			}
			return err
		}
		write := func(f [2]string) {
			if err := os.WriteFile(filepath.Join(ws, filepath.FromSlash(f[0])), []byte(f[1]), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write(writes[0])
		if goTest() == nil {
			t.Errorf("%s: the group's test passes before its code: its fails task could not fail", ti.Change)
		}
		write(writes[1])
		if err := goTest(); err != nil {
			t.Errorf("%s: the group's test fails with its code: %v", ti.Change, err)
		}
		vet := exec.Command("go", "vet", "./...")
		vet.Dir = ws
		if out, err := vet.CombinedOutput(); err != nil {
			t.Errorf("%s: go vet: %v\n%s", ti.Change, err, out)
		}
	}
}
