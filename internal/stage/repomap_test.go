package stage

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRepoMapLargeRepository: on a repository of 20,000 files, the map
// still lists at most maxListedFiles, but spends them on what the issue
// names first: the file declaring the symbol it names sorts last in walk
// order (past the bound, and past the symbol scan's byte budget), and the
// map lists it, its package's test and a caller, and the symbol index
// finds its declaration: the issue names it as zzz.Shout, as an issue
// names fmt.Fprintf, and the scan reads zzz/ first.
func TestRepoMapLargeRepository(t *testing.T) {
	start := time.Now()
	root := t.TempDir()
	const n = 20_000
	// Cheaply: the filler files are one blob (git writes one object, not
	// 20,000), in 20 folders. Together they are over the symbol scan's
	// budget (8 MiB), so a scan in walk order never reaches the last file.
	filler := []byte("package filler\n\n" + strings.Repeat("// filler\n", 44) + "func F() {}\n")
	for i := range n - 3 {
		dir := filepath.Join(root, fmt.Sprintf("p%02d", i/1000))
		if i%1000 == 0 {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		src := filler
		if i == 7_777 {
			src = []byte("package p07\n\nimport \"example.com/big/zzz\"\n\nfunc Loud() string { return zzz.Shout(\"hi\") }\n")
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d.go", i)), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "zzz"), 0o755); err != nil {
		t.Fatal(err)
	}
	for rel, src := range map[string]string{
		"go.mod":            "module example.com/big\n\ngo 1.22\n",
		"zzz/shout_test.go": "package zzz\n\nimport \"testing\"\n\nfunc TestShout(t *testing.T) { _ = Shout(\"a\") }\n",
		// zz.go sorts after its test: the declaration is the walk's last file.
		"zzz/zz.go": "package zzz\n\n// Shout says s loudly.\nfunc Shout(s string) string { return s + \"!\" }\n",
	} {
		if err := os.WriteFile(filepath.Join(root, rel), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "a large repository"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	generated := time.Since(start)

	all := repoFiles(root)
	if len(all) != n || all[len(all)-1] != "zzz/zz.go" {
		t.Fatalf("the walk lists %d files, the last %q; want %d, the last zzz/zz.go", len(all), all[len(all)-1], n)
	}
	begin := time.Now()
	if total := int64(len(filler)) * n; total <= maxSymbolScan {
		t.Fatalf("the filler is %d bytes, within the scan's budget %d: the test no longer exercises it", total, maxSymbolScan)
	}
	m := newRepoMap(root, "Shout louder\n\n`zzz.Shout` should add three marks, not one.")
	took := time.Since(begin)
	t.Logf("generated and committed %d files in %v; the map took %v", n, generated, took)
	if len(m.files) > maxListedFiles {
		t.Errorf("the map lists %d files, over its bound %d", len(m.files), maxListedFiles)
	}
	for _, f := range []string{"zzz/zz.go", "zzz/shout_test.go", "p07/f07777.go"} {
		if !slices.Contains(m.files, f) {
			t.Errorf("the map does not list %s", f)
		}
		// And within the part of the list the prompt shows.
		if !strings.Contains(m.parts[0].Text, f+"\n") {
			t.Errorf("the prompt's list of files does not show %s", f)
		}
	}
	if m.index == nil || !strings.Contains(m.index.Text, "Shout: zzz/zz.go:4 (func)") {
		t.Errorf("the symbol index does not find Shout's declaration:\n%v", m.index)
	}
	// The rest of the bound still goes to the walk's first files.
	if len(m.files) != maxListedFiles || !slices.Contains(m.files, all[0]) {
		t.Errorf("the map lists %d files, with the walk's first %v; want the bound, filled in walk order", len(m.files), slices.Contains(m.files, all[0]))
	}
	// The map's speed is BenchmarkRepoParts's to measure, not a bound
	// here: the log above says what this run took.
}
