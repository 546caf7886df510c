package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestFileToolsUnderPathSwap is the attack of issue 25 as it was run: a
// process left behind by a tool command swaps paths between a regular file
// (or directory) and a symlink, in a tight loop, while the file tools run as
// root. The symlinks lead to a root-only file outside the workspace, to the
// runner's ~/.gitconfig, to a directory outside, and to the workspace's own
// .git/config (where a checkout keeps its token). However each race goes,
// no tool result holds what those files hold and none of them is written.
func TestFileToolsUnderPathSwap(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	const (
		rootOnly  = "ROOT-ONLY canary 4f1c"
		gitconfig = "[user]\n\tname = runner canary 9b2e\n"
		gitDir    = "[http]\n\textraheader = AUTHORIZATION: basic canary-7d3a\n"
	)
	secret := filepath.Join(home, "root-only")
	dotGitconfig := filepath.Join(home, ".gitconfig")
	writeTestFile(t, secret, rootOnly, 0o600)
	writeTestFile(t, dotGitconfig, gitconfig, 0o644)
	writeTestFile(t, filepath.Join(ws, ".git", "config"), gitDir, 0o644)

	s, err := newSession(Config{Models: []Tier{{Name: "m", Model: noModel{}}}, Sandbox: fuzzSandbox{ws}, ToolOutputCap: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()

	var stop atomic.Bool
	var wg sync.WaitGroup
	halt := func() { stop.Store(true); wg.Wait() }
	t.Cleanup(halt) // before the temporary directories go
	// swap keeps replacing name, by rename, with a fresh regular file (or
	// directory) and with a symlink to target.
	swap := func(name, target string, dir bool) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := filepath.Join(ws, name)
			tmp := filepath.Join(ws, "."+name+".swap")
			for i := 0; !stop.Load(); i++ {
				os.RemoveAll(tmp)
				switch {
				case i%2 == 1:
					if os.Symlink(target, tmp) != nil {
						continue
					}
				case dir:
					os.Mkdir(tmp, 0o755)
					os.WriteFile(filepath.Join(tmp, "f.txt"), []byte("inside\n"), 0o644)
				default:
					os.WriteFile(tmp, []byte("inside\n"), 0o644)
				}
				if os.Rename(tmp, p) != nil {
					os.RemoveAll(p) // a directory and a symlink do not replace each other
				}
			}
		}()
	}
	swap("read.txt", secret, false)
	swap("write.txt", dotGitconfig, false)
	swap("git.txt", ".git/config", false)
	swap("sub", home, true)

	calls := []struct{ name, args string }{
		{"read_file", `{"path": "read.txt"}`},
		{"read_file", `{"path": "git.txt"}`},
		{"read_file", `{"path": "sub/root-only"}`},
		{"read_file", `{"path": "sub/f.txt"}`},
		{"list_dir", `{"path": "sub"}`},
		{"write_file", `{"path": "write.txt", "content": "written by the tool\n"}`},
		{"write_file", `{"path": "git.txt", "content": "written by the tool\n"}`},
		{"write_file", `{"path": "sub/planted.txt", "content": "written by the tool\n"}`},
		{"edit_file", `{"path": "write.txt", "old": "inside", "new": "edited"}`},
		{"edit_file", `{"path": "git.txt", "old": "canary", "new": "edited"}`},
	}
	n := 2000
	if testing.Short() {
		n = 200
	}
	ok := map[string]int{}
	for i := 0; i < n; i++ {
		for _, c := range calls {
			res, err := s.dispatch(context.Background(), ToolCall{ID: "x", Name: c.name, Arguments: c.args})
			if err != nil {
				t.Fatal(err)
			}
			for _, canary := range []string{"ROOT-ONLY", "runner canary", "canary-7d3a", "root-only\n"} {
				if strings.Contains(res.content, canary) {
					t.Fatalf("%s %s returned %q: it followed a symlink out of the workspace or into .git", c.name, c.args, res.content)
				}
			}
			if res.class == ResultOK {
				ok[c.name+" "+argPath(c.args)]++
			}
		}
	}
	halt()
	for p, want := range map[string]string{secret: rootOnly, dotGitconfig: gitconfig, filepath.Join(ws, ".git", "config"): gitDir} {
		if got, err := os.ReadFile(p); err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want it untouched", p, got, err)
		}
	}
	if entries, _ := os.ReadDir(home); len(entries) != 2 {
		t.Errorf("the directory outside holds %d entries, want its 2 files only", len(entries))
	}
	// The loop raced: the tools did succeed on the regular file some of the
	// time, so the refusals are not everything the test saw.
	for _, k := range []string{"read_file read.txt", "write_file write.txt", "read_file sub/f.txt"} {
		if ok[k] == 0 {
			t.Errorf("%s never succeeded in %d tries; the test did not race", k, n)
		}
	}
	t.Logf("successful calls: %v", ok)
}

func argPath(raw string) string {
	var a struct{ Path string }
	_ = json.Unmarshal([]byte(raw), &a)
	return a.Path
}

func writeTestFile(t *testing.T, p, s string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), perm); err != nil {
		t.Fatal(err)
	}
}

// The file tools' symlink rules, without a race: a symlink inside the
// workspace is followed (a read, a list, an edit and a write reach its
// target), one out of it or into .git is refused.
func TestFileToolsSymlinks(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	writeTestFile(t, filepath.Join(ws, "README.md"), "readme\n", 0o644)
	writeTestFile(t, filepath.Join(ws, "src", "a.go"), "package a\n", 0o644)
	writeTestFile(t, filepath.Join(ws, ".git", "config"), "[core]\n", 0o644)
	writeTestFile(t, filepath.Join(outside, "x"), "outside\n", 0o644)
	for link, target := range map[string]string{
		"alias.md": "README.md",
		"docs":     "src",
		"gitcfg":   ".git/config",
		"gitdir":   ".git",
		"abs.md":   filepath.Join(ws, "README.md"),
		"out":      outside,
	} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	s, err := newSession(Config{Models: []Tier{{Name: "m", Model: noModel{}}}, Sandbox: fuzzSandbox{ws}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	for _, tt := range []struct {
		name, args  string
		class, want string
	}{
		{"read_file", `{"path": "alias.md"}`, ResultOK, "readme"},
		{"list_dir", `{"path": "docs"}`, ResultOK, "a.go"},
		{"read_file", `{"path": "docs/a.go"}`, ResultOK, "package a"},
		{"edit_file", `{"path": "alias.md", "old": "readme", "new": "edited"}`, ResultOK, "Edited alias.md"},
		{"write_file", `{"path": "docs/b.go", "content": "package a\n"}`, ResultOK, "Wrote docs/b.go"},
		{"read_file", `{"path": "gitcfg"}`, ResultRefused, ".git"},
		{"write_file", `{"path": "gitdir/hooks/pre-commit", "content": "#!/bin/sh\n"}`, ResultRefused, ".git"},
		{"read_file", `{"path": "abs.md"}`, ResultRefused, "outside the workspace"},
		{"read_file", `{"path": "out/x"}`, ResultRefused, "outside the workspace"},
		{"write_file", `{"path": "out/y", "content": "x"}`, ResultRefused, "outside the workspace"},
	} {
		res, err := s.dispatch(context.Background(), ToolCall{ID: "x", Name: tt.name, Arguments: tt.args})
		if err != nil {
			t.Fatal(err)
		}
		if res.class != tt.class || !strings.Contains(res.content, tt.want) {
			t.Errorf("%s %s = %s %q; want %s containing %q", tt.name, tt.args, res.class, res.content, tt.class, tt.want)
		}
	}
	for p, want := range map[string]string{"README.md": "edited\n", "src/b.go": "package a\n", ".git/config": "[core]\n"} {
		if got, _ := os.ReadFile(filepath.Join(ws, p)); string(got) != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	if _, err := os.Lstat(filepath.Join(outside, "y")); err == nil {
		t.Error("a file was written outside the workspace")
	}
	if _, err := os.Lstat(filepath.Join(ws, ".git", "hooks")); err == nil {
		t.Error("a hook directory was made in .git")
	}
}
