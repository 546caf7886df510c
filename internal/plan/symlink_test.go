package plan

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const greetDelta = `## ADDED Requirements

### Requirement: Greeting
The system SHALL greet whoever asks.

#### Scenario: Hello
- **WHEN** someone asks
- **THEN** it greets them
`

const greetMain = `# greet Specification

## Purpose
Greeting.

## Requirements

### Requirement: Farewell
The system SHALL say goodbye.

#### Scenario: Bye
- **WHEN** someone leaves
- **THEN** it says goodbye
`

// listing is every entry under dir, not following symlinks: a file's
// content, "/" for a directory, "-> target" for a symlink.
func listing(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			out[rel] = "-> " + target
			return err
		case d.IsDir():
			out[rel] = "/"
		default:
			b, err := os.ReadFile(p)
			out[rel] = string(b)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestArchiveRefusesSymlink is the archive attack of issue 25: a symlink
// the model made (an allowed git apply can make one) under openspec/ led
// the archive, run as root, to read and write outside the work tree, or to
// move the change there. Each is refused with a *SymlinkError, an error and
// not a finding, and nothing in the work tree or outside it changes.
func TestArchiveRefusesSymlink(t *testing.T) {
	date := time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		// plant makes the symlink, given the work tree and a directory
		// outside it.
		plant func(t *testing.T, ws, outside string)
	}{
		{"none", func(*testing.T, string, string) {}},
		{"specs/<cap> to a directory outside", func(t *testing.T, ws, outside string) {
			mustSymlink(t, outside, filepath.Join(ws, "openspec/specs/greet"))
		}},
		{"specs/<cap>/spec.md to a file outside", func(t *testing.T, ws, outside string) {
			mustWrite(t, filepath.Join(outside, "spec.md"), greetMain)
			mustSymlink(t, filepath.Join(outside, "spec.md"), filepath.Join(ws, "openspec/specs/greet/spec.md"))
		}},
		{"specs/<cap>/spec.md to a missing file outside", func(t *testing.T, ws, outside string) {
			mustSymlink(t, filepath.Join(outside, "planted"), filepath.Join(ws, "openspec/specs/greet/spec.md"))
		}},
		{"specs/<cap>/spec.md to a file of the tree", func(t *testing.T, ws, outside string) {
			mustWrite(t, filepath.Join(ws, ".git/config"), "[core]\n")
			mustSymlink(t, "../../../.git/config", filepath.Join(ws, "openspec/specs/greet/spec.md"))
		}},
		{"openspec/specs to a directory outside", func(t *testing.T, ws, outside string) {
			os.Remove(filepath.Join(ws, "openspec/specs"))
			mustSymlink(t, outside, filepath.Join(ws, "openspec/specs"))
		}},
		{"the change's delta spec to a file outside", func(t *testing.T, ws, outside string) {
			p := filepath.Join(ws, "openspec/changes/add-greeting/specs/greet/spec.md")
			os.Remove(p)
			mustWrite(t, filepath.Join(outside, "delta.md"), greetDelta)
			mustSymlink(t, filepath.Join(outside, "delta.md"), p)
		}},
		{"the archive to a directory outside", func(t *testing.T, ws, outside string) {
			mustSymlink(t, outside, filepath.Join(ws, "openspec/changes/archive"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, outside := t.TempDir(), t.TempDir()
			mustWrite(t, filepath.Join(ws, "openspec/changes/add-greeting/proposal.md"), "# Add greeting\n")
			mustWrite(t, filepath.Join(ws, "openspec/changes/add-greeting/specs/greet/spec.md"), greetDelta)
			if err := os.MkdirAll(filepath.Join(ws, "openspec/specs"), 0o755); err != nil {
				t.Fatal(err)
			}
			tt.plant(t, ws, outside)
			beforeWS, beforeOut := listing(t, ws), listing(t, outside)

			findings, err := Archive(ws, "add-greeting", date)
			if tt.name == "none" {
				// The control: without a symlink the change archives, so
				// the refusals below are for the symlink alone.
				if err != nil || len(findings) > 0 {
					t.Fatalf("Archive = %v, %v; want it archived", findings, err)
				}
				if got := listing(t, ws)["openspec/specs/greet/spec.md"]; got == "" {
					t.Fatal("the archive wrote no main spec")
				}
				return
			}
			var se *SymlinkError
			if !errors.As(err, &se) || len(findings) > 0 {
				t.Errorf("Archive = %v, %v; want a *SymlinkError and no findings", findings, err)
			}
			if diff := cmp.Diff(beforeOut, listing(t, outside)); diff != "" {
				t.Errorf("outside the work tree changed (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(beforeWS, listing(t, ws)); diff != "" {
				t.Errorf("the work tree changed (-before +after):\n%s", diff)
			}
			// Validate refuses the same tree, for the same reason.
			if _, err := Validate(ws, "add-greeting"); !errors.As(err, &se) {
				t.Errorf("Validate: %v, want a *SymlinkError", err)
			}
		})
	}
}

// A symlink swapped in after Archive's check is refused when it is met:
// the writes go through no symlink (nofollow), so the check is not what
// keeps them in.
func TestArchiveWriteThroughNoSymlink(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	tr, err := openTree(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.close()
	mustSymlink(t, outside, filepath.Join(ws, "openspec"))
	var se *SymlinkError
	if err := tr.mkdirAll("openspec/specs/greet"); !errors.As(err, &se) {
		t.Errorf("mkdirAll through openspec -> outside: %v, want a *SymlinkError", err)
	}
	if err := tr.writeFile("openspec/spec.md", []byte("x")); !errors.As(err, &se) {
		t.Errorf("writeFile through openspec -> outside: %v, want a *SymlinkError", err)
	}
	if err := tr.rename("a", "openspec/a"); !errors.As(err, &se) {
		t.Errorf("rename into openspec -> outside: %v, want a *SymlinkError", err)
	}
	if got := listing(t, outside); len(got) != 1 {
		t.Errorf("outside holds %v, want nothing", got)
	}
}

func mustWrite(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
