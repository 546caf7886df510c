package git

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plant writes an executable script at path that leaves a mark file when it
// runs, and returns the mark's path.
func plant(t *testing.T, path string) string {
	t.Helper()
	mark := path + ".ran"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\ntouch '"+mark+"'\ncat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return mark
}

func ran(t *testing.T, mark string) bool {
	t.Helper()
	_, err := os.Stat(mark)
	return err == nil
}

// The runner's git never runs what the work tree (or a hostile .git) holds:
// each route is planted after Open, as the agent would, and the runner then
// commits, diffs and pushes as a group does.
func TestRunnerGitRunsNothingPlanted(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, dir, scripts string) string
		// refused: the runner refuses to go on rather than silently not
		// running it (a filter changes what is committed).
		refused bool
	}{
		{name: "pre-commit hook", plant: func(t *testing.T, dir, scripts string) string {
			return plant(t, filepath.Join(dir, ".git", "hooks", "pre-commit"))
		}},
		{name: "pre-push and post-commit hooks", plant: func(t *testing.T, dir, scripts string) string {
			plant(t, filepath.Join(dir, ".git", "hooks", "post-commit"))
			return plant(t, filepath.Join(dir, ".git", "hooks", "pre-push"))
		}},
		{name: "core.hooksPath into the work tree", plant: func(t *testing.T, dir, scripts string) string {
			mark := plant(t, filepath.Join(dir, "hooks", "pre-commit"))
			sh(t, testEnv(t), dir, "config", "core.hooksPath", "hooks")
			return mark
		}},
		{name: "core.fsmonitor", plant: func(t *testing.T, dir, scripts string) string {
			mark := plant(t, filepath.Join(scripts, "fsmonitor"))
			sh(t, testEnv(t), dir, "config", "core.fsmonitor", filepath.Join(scripts, "fsmonitor"))
			return mark
		}},
		{name: "core.pager", plant: func(t *testing.T, dir, scripts string) string {
			mark := plant(t, filepath.Join(scripts, "pager"))
			sh(t, testEnv(t), dir, "config", "core.pager", filepath.Join(scripts, "pager"))
			return mark
		}},
		{name: "diff.external", plant: func(t *testing.T, dir, scripts string) string {
			mark := plant(t, filepath.Join(scripts, "diff"))
			sh(t, testEnv(t), dir, "config", "diff.external", filepath.Join(scripts, "diff"))
			return mark
		}},
		{name: "clean filter", refused: true, plant: func(t *testing.T, dir, scripts string) string {
			mark := plant(t, filepath.Join(scripts, "clean"))
			sh(t, testEnv(t), dir, "config", "filter.x.clean", filepath.Join(scripts, "clean"))
			write(t, dir, ".gitattributes", "* filter=x\n")
			return mark
		}},
		{name: "include.path into the work tree", refused: true, plant: func(t *testing.T, dir, scripts string) string {
			mark := plant(t, filepath.Join(scripts, "clean"))
			write(t, dir, "evil.cfg", "[filter \"x\"]\n\tclean = "+filepath.Join(scripts, "clean")+"\n")
			write(t, dir, ".gitattributes", "* filter=x\n")
			sh(t, testEnv(t), dir, "config", "include.path", "../evil.cfg")
			return mark
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			r := w.open("a")
			scripts := t.TempDir()
			mark := tc.plant(t, r.Dir, scripts)
			write(t, r.Dir, "a.txt", "changed\n")
			_, cerr := r.CommitGroup(ctx, 1, Message{Subject: "roadmap: 1. x", Issue: 1})
			_, derr := r.Diff(ctx, "HEAD~1")
			perr := r.Push(ctx, "origin", "main")
			if ran(t, mark) {
				t.Fatalf("the planted %s ran inside the runner's git", tc.name)
			}
			if tc.refused {
				if cerr == nil || !strings.Contains(cerr.Error(), "refuses to run git") {
					t.Errorf("commit with a planted %s: err = %v, want a refusal", tc.name, cerr)
				}
				return
			}
			if err := firstErr(cerr, derr, perr); err != nil {
				t.Errorf("commit, diff and push with a planted %s: %v", tc.name, err)
			}
		})
	}
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// actions/checkout persists the token in .git/config as an extraheader
// unless told not to; the sandbox user can read .git, so Open removes it.
func TestOpenRemovesPersistedCredentials(t *testing.T) {
	w := newWorld(t)
	dir := w.clone("creds")
	sh(t, w.env, dir, "config", "--local", "http.https://github.com/.extraheader", "AUTHORIZATION: basic c2VjcmV0")
	if _, err := Open(context.Background(), dir, w.env); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(dir, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cfg), "c2VjcmV0") || strings.Contains(strings.ToLower(string(cfg)), "extraheader") {
		t.Errorf(".git/config still holds the persisted credential:\n%s", cfg)
	}
}
