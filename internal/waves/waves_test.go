package waves

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/gates"
	"github.com/roadmap-dev/roadmap/internal/plan"
)

// wavesOf plans the waves of a tasks.md in the work tree files (slash path
// to content) as the runner does: each group's units, and the group-order
// gate's dependencies read in that tree.
func wavesOf(t *testing.T, files map[string]string, tasks string) ([][]int, []Wave) {
	t.Helper()
	root := t.TempDir()
	files["openspec/changes/c/tasks.md"] = tasks
	files["openspec/changes/c/proposal.md"] = "## Why\n\nA test.\n"
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	change, err := plan.LoadChangeIn(root, "openspec/changes/c")
	if err != nil {
		t.Fatal(err)
	}
	return wavesIn(t, root, change)
}

func wavesIn(t *testing.T, root string, change *plan.Change) ([][]int, []Wave) {
	t.Helper()
	deps, err := gates.GroupDependencies(gates.Input{Root: root, Change: change})
	if err != nil {
		t.Fatal(err)
	}
	units := map[int][]string{}
	for _, g := range change.Tasks.Groups {
		units[g.Number] = Units(g)
	}
	ws := Plan(change.Tasks.Groups, units, deps)
	var nums [][]int
	for _, w := range ws {
		var n []int
		for _, g := range w.Groups {
			n = append(n, g.Number)
		}
		nums = append(nums, n)
	}
	return nums, ws
}

func TestPlanWaves(t *testing.T) {
	repo := map[string]string{"go.mod": "module x\n", "greet.go": "package greet\n", "README.md": "# x\n",
		"internal/a/a.go": "package a\n", "internal/b/b.go": "package b\n", "docs/guides/a.md": "# g\n"}
	cases := []struct {
		name  string
		tasks string
		want  [][]int
		why   string // a part of the reason the last wave starts (or its last group joins)
	}{
		{
			name: "disjoint packages run at once",
			tasks: "## 1. A\n\n- [ ] 1.1 Change `internal/a/a.go`; verify: `go test ./internal/a`\n\n" +
				"## 2. B\n\n- [ ] 2.1 Change `internal/b/b.go`; verify: `go test ./internal/b`\n",
			want: [][]int{{1, 2}},
			why:  "group 2 changes internal/b, apart from group 1",
		},
		{
			name: "one package is one unit: two files of it are sequential",
			tasks: "## 1. A\n\n- [ ] 1.1 Change `internal/a/a.go`\n\n" +
				"## 2. A's test\n\n- [ ] 2.1 Add `internal/a/a_test.go`\n",
			want: [][]int{{1}, {2}},
			why:  "groups 1 and 2 both change internal/a",
		},
		{
			name: "a directory a group names holds the file another changes",
			tasks: "## 1. Guide\n\n- [ ] 1.1 Edit `docs/guides/a.md`\n\n" +
				"## 2. Guides\n\n- [ ] 2.1 Review everything in `docs/guides`\n",
			want: [][]int{{1}, {2}},
			why:  "groups 1 and 2 both change docs/guides",
		},
		{
			name: "the gate's dependency: a group names a file an earlier group creates",
			tasks: "## 1. Create\n\n- [ ] 1.1 Create `internal/c/c.go`\n\n" +
				"## 2. Use\n\n- [ ] 2.1 Document `internal/c` in `docs/c.md`; verify: `test -f internal/c/c.go`\n",
			want: [][]int{{1}, {2}},
			why:  "the group-order gate finds group 2 naming what group 1 creates",
		},
		{
			name: "a group that names nothing runs alone",
			tasks: "## 1. A\n\n- [ ] 1.1 Change `internal/a/a.go`\n\n" +
				"## 2. Vague\n\n- [ ] 2.1 Tidy up; verify: `go test ./...`\n\n" +
				"## 3. B\n\n- [ ] 3.1 Change `internal/b/b.go`\n",
			want: [][]int{{1}, {2}, {3}},
			why:  "group 2 names no file or package",
		},
		{
			name: "waves are consecutive: a group apart from the one before joins its wave, not an earlier one",
			tasks: "## 1. A\n\n- [ ] 1.1 Change `internal/a/a.go`\n\n" +
				"## 2. A again\n\n- [ ] 2.1 Change `internal/a/a.go` more\n\n" +
				"## 3. B\n\n- [ ] 3.1 Change `internal/b/b.go`\n\n" +
				"## 4. README\n\n- [ ] 4.1 Edit `README.md`\n",
			want: [][]int{{1}, {2, 3, 4}},
			why:  "group 4 changes README.md, apart from group 2, 3",
		},
		{
			name: "the root package is its own files only, not the whole tree",
			tasks: "## 1. Root\n\n- [ ] 1.1 Change `greet.go`\n\n" +
				"## 2. A\n\n- [ ] 2.1 Change `internal/a/a.go`\n",
			want: [][]int{{1, 2}},
			why:  "group 2 changes internal/a, apart from group 1",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{}
			for k, v := range repo {
				files[k] = v
			}
			got, ws := wavesOf(t, files, tc.tasks)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("waves = %v, want %v (why: %+v)", got, tc.want, ws)
			}
			last := ws[len(ws)-1].Why
			if !strings.Contains(last[len(last)-1], tc.why) {
				t.Errorf("the last reason is %q, want it to say %q", last[len(last)-1], tc.why)
			}
		})
	}
}

// TestPlanWavesDemo reads the demo's plan as shipped (internal/demo): its
// groups 1 (Hello) and 2 (Goodbye) name no file — their tasks say "Add a
// test for Hello" and verify with `go test ./...`, which names the whole
// module, no path — so neither can be shown apart from another group, and
// group 3 (README.md) cannot be shown apart from group 2. The gate finds no
// dependency (README.md exists before the plan); the units decide: every
// group runs alone, and parallel groups save nothing on it
// (docs/parallel-groups.md). With its files named, groups 1 and 2 share the
// root package (and the gate finds group 2 naming greet_test.go, which group
// 1 adds), and group 3 runs beside group 2.
func TestPlanWavesDemo(t *testing.T) {
	root := filepath.Join("..", "demo", "testdata", "demo", "repo")
	change, err := plan.LoadChangeIn(root, "openspec/changes/add-greetings")
	if err != nil {
		t.Fatal(err)
	}
	got, ws := wavesIn(t, root, change)
	if want := [][]int{{1}, {2}, {3}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("the demo's waves = %v, want %v", got, want)
	}
	if why := ws[1].Why[0]; !strings.Contains(why, "group 2 names no file or package") {
		t.Errorf("group 2 runs alone because %q", why)
	}
	if why := ws[2].Why[0]; !strings.Contains(why, "group 2 names no file or package, so group 3 cannot be shown apart") {
		t.Errorf("group 3 runs alone because %q", why)
	}
	if u := Units(change.Tasks.Groups[2]); !reflect.DeepEqual(u, []string{"README.md"}) {
		t.Errorf("group 3's units = %v, want [README.md]", u)
	}

	// The demo's plan with its files named (the benchmark's second plan).
	tasks, err := os.ReadFile(filepath.Join("..", "demo", "testdata", "demo", "tasks-named.md"))
	if err != nil {
		t.Fatal(err)
	}
	named, ws := wavesOf(t, map[string]string{"go.mod": "module greet\n", "greet.go": "package greet\n", "README.md": "# greet\n"}, string(tasks))
	if want := [][]int{{1}, {2, 3}}; !reflect.DeepEqual(named, want) {
		t.Fatalf("the demo's plan with its files named: waves = %v, want %v", named, want)
	}
	// Group 2 names greet_test.go, which group 1 adds: the gate's reading
	// (and both change the root package).
	if why := ws[1].Why[0]; !strings.Contains(why, "the group-order gate finds group 2 naming what group 1 creates") {
		t.Errorf("group 2 starts a wave because %q", why)
	}
	if why := ws[1].Why[1]; !strings.Contains(why, "group 3 changes README.md, apart from group 2") {
		t.Errorf("group 3 joins group 2 because %q", why)
	}
}
