package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSelectChanged: a mutation is selected when the change touched its
// file or a test file declaring a test its pattern names; all of them when
// the change touched tools/mutants; one per file when no change was
// detected, the same for the same commit.
func TestSelectChanged(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/a.go", "package a\n")
	write("a/b.go", "package a\n")
	write("a/x_test.go", "package a\nimport \"testing\"\nfunc TestX(t *testing.T) {}\nfunc helper() {}\n")
	write("a/y_test.go", "package a\nimport \"testing\"\nfunc TestY(t *testing.T) {}\nfunc TestYes(t *testing.T) {}\n")
	ms := []mutation{
		{Name: "m1", File: "a/a.go", Pkg: "./a/", Run: "TestX"},
		{Name: "m2", File: "a/a.go", Pkg: "./a/", Run: "TestY$"},
		{Name: "m3", File: "a/b.go", Pkg: "./a/", Run: "^TestYes$"},
	}
	names := func(ms []mutation) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Name)
		}
		return out
	}
	for _, tc := range []struct {
		files []string
		want  []string
	}{
		{[]string{"a/a.go"}, []string{"m1", "m2"}},
		{[]string{"a/x_test.go"}, []string{"m1"}},
		{[]string{"a/y_test.go", "README.md"}, []string{"m2", "m3"}},
		{[]string{"docs/testing.md"}, nil},
		{[]string{"tools/mutants/list.go"}, []string{"m1", "m2", "m3"}},
	} {
		c := change{base: "HEAD~1", files: map[string]bool{}}
		for _, f := range tc.files {
			c.files[f] = true
		}
		got, _, err := selectChanged(root, ms, c)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(names(got), tc.want) {
			t.Errorf("change %v selected %v, want %v", tc.files, names(got), tc.want)
		}
	}
	none := change{files: map[string]bool{}, head: "abc"}
	got, _, err := selectChanged(root, ms, none)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].File != "a/a.go" || got[1].Name != "m3" {
		t.Errorf("no change: selected %v, want one of a/a.go's and m3", names(got))
	}
	again, _, _ := selectChanged(root, ms, none)
	if !slices.Equal(names(got), names(again)) {
		t.Errorf("no change: %v then %v for the same commit", names(got), names(again))
	}
}

// TestListNamesRealTests: every mutation of the list names a file that
// exists and tests its package declares, and its text is in place, so the
// per-change selection's reading of tests and the staleness check see what
// the full run would.
func TestListNamesRealTests(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if stale := staleness(root, mutations); len(stale) > 0 {
		t.Errorf("stale mutations:\n%v", stale)
	}
	for _, m := range mutations {
		tfs, err := testFiles(root, pkgDir(m.Pkg), m.Run)
		if err != nil {
			t.Fatal(err)
		}
		if len(tfs) == 0 {
			t.Errorf("%s: no test file of %s declares a test matching %q", m.Name, m.Pkg, m.Run)
		}
	}
}
