package plan

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzChange feeds model-written text to every reader of a change: a delta
// spec, its main spec and tasks.md. None may panic, each must render back the
// bytes it read, and every line it reports must be a line of the file. The
// merge archive runs must return a result or a refusal, never panic.
func FuzzChange(f *testing.F) {
	root := filepath.Join("..", "..", "testdata", "openspec")
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b, []byte(mainSpecSeed))
			}
		}
		return nil
	})
	f.Add([]byte("\ufeff## ADDED Requirements\r### Requirement: x ##\r\n```\n"), []byte(""))
	f.Fuzz(func(t *testing.T, delta, main []byte) {
		dd := ParseDoc("d.md", delta)
		d := ParseDelta(dd, "cap")
		if got := d.Render(); !bytes.Equal(got, delta) {
			t.Fatalf("delta render differs:\n%q\n%q", delta, got)
		}
		n := len(dd.Lines)
		for _, list := range [][]*Requirement{d.Added, d.Modified} {
			for _, r := range list {
				if r.Line < 1 || r.Line > n {
					t.Fatalf("requirement %q at line %d of %d", r.Name, r.Line, n)
				}
				for _, s := range r.Scenarios {
					if s.Line < r.Line || s.Line > n {
						t.Fatalf("scenario %q at line %d, requirement at %d", s.Name, s.Line, r.Line)
					}
				}
				_ = r.Body()
			}
		}
		md := ParseDoc("m.md", main)
		m := ParseMainSpec(md, "cap")
		if got := m.Render(); !bytes.Equal(got, main) {
			t.Fatalf("main render differs")
		}
		for _, target := range []*Doc{nil, md} {
			if res, err := mergeDelta(d, target, "change"); err == nil {
				_ = specErrors(res.rebuilt)
			}
		}
		_ = taskNumberingIssues(string(delta))
		_ = firstListItemLine(string(delta))
		_, _ = Parse(delta)
	})
}

// mainSpecSeed is a well-formed main spec for the fuzzer's second input.
const mainSpecSeed = "# cap Specification\n\n## Purpose\nA purpose long enough to pass the fifty character rule.\n\n## Requirements\n### Requirement: A\nIt SHALL.\n\n#### Scenario: s\n- **WHEN** x\n"
