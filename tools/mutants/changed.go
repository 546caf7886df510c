package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// The per-change selection (-changed, docs/mutants.md). "The change" is the
// diff between a base commit and the work tree, uncommitted and untracked
// files included:
//
//   - -base REF (or $MUTANTS_BASE) when it names a commit;
//   - else the merge base of HEAD and origin/main, when origin/main exists and
//     HEAD is not on it (a pull request, a topic branch);
//   - else HEAD~1 (a push to main: the commit pushed, a merge's first parent);
//   - else nothing (a shallow clone of one commit, a tarball): no change is
//     detected.
//
// A mutation is selected when the change touched its file, or a _test.go
// file of its package that declares a test its -run pattern names. Every
// mutation is selected when the change touched tools/mutants (the list or
// the tool). With no change detected, one mutation of each file is played,
// chosen by the commit, so a clean clone at a tag still proves each file's
// tests on a mutant. Whatever is selected, every mutation's original text
// is checked to occur exactly once (stale entries fail the run).

// change is what -changed found.
type change struct {
	base  string          // the commit compared with; "" when none
	why   string          // how base was chosen, or why there is none
	files map[string]bool // paths relative to the module root, slash-separated
	head  string          // HEAD's commit, the sample's key; "" outside git
}

func git(root string, args ...string) (string, error) {
	out, err := exec.Command("git", append([]string{"-C", root}, args...)...).Output()
	return strings.TrimSpace(string(out)), err
}

func isCommit(root, ref string) bool {
	_, err := git(root, "rev-parse", "--verify", "-q", ref+"^{commit}")
	return err == nil
}

// detectChange finds the base and the files changed since it.
func detectChange(root, base string) (change, error) {
	c := change{files: map[string]bool{}}
	c.head, _ = git(root, "rev-parse", "HEAD")
	switch {
	case base != "" && isCommit(root, base):
		c.base, c.why = base, "the base given ("+base+")"
	case isCommit(root, "origin/main"):
		mb, err := git(root, "merge-base", "HEAD", "origin/main")
		if err == nil && mb != c.head {
			c.base, c.why = mb, "the merge base with origin/main"
			break
		}
		fallthrough
	default:
		if isCommit(root, "HEAD~1") {
			c.base, c.why = "HEAD~1", "HEAD~1 (HEAD is on the default branch, or there is no origin/main)"
		} else {
			c.why = "no origin/main to diff against and no parent commit"
			if base != "" {
				c.why = base + " is no commit here, " + c.why
			}
		}
	}
	var lists []string
	if c.base != "" {
		out, err := git(root, "diff", "--name-only", "--no-renames", c.base)
		if err != nil {
			return c, fmt.Errorf("git diff %s: %w", c.base, err)
		}
		lists = append(lists, out)
	} else if out, err := git(root, "diff", "--name-only", "--no-renames", "HEAD"); err == nil {
		lists = append(lists, out) // uncommitted changes in a clone of one commit
	}
	out, err := git(root, "ls-files", "--others", "--exclude-standard")
	if err != nil {
		return c, fmt.Errorf("git ls-files: %w", err)
	}
	lists = append(lists, out)
	for _, l := range lists {
		for _, f := range strings.Split(l, "\n") {
			if f != "" {
				c.files[f] = true
			}
		}
	}
	return c, nil
}

// testFiles are the _test.go files of the package directory dir (relative
// to root) that declare a top-level test function matched by run.
func testFiles(root, dir, run string) ([]string, error) {
	re, err := regexp.Compile(run)
	if err != nil {
		return nil, err
	}
	paths, err := filepath.Glob(filepath.Join(root, dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	var out []string
	fset := token.NewFileSet()
	for _, p := range paths {
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			if name, ok := testName(d); ok && re.MatchString(name) {
				rel, _ := filepath.Rel(root, p)
				out = append(out, filepath.ToSlash(rel))
				break
			}
		}
	}
	return out, nil
}

// pkgDir is the directory of a mutation's package ("./internal/x/").
func pkgDir(pkg string) string {
	return strings.TrimSuffix(strings.TrimPrefix(pkg, "./"), "/")
}

// selectChanged returns the mutations the change selects, and why each.
func selectChanged(root string, ms []mutation, c change) ([]mutation, []string, error) {
	var toolTouched []string
	for f := range c.files {
		if strings.HasPrefix(f, "tools/mutants/") {
			toolTouched = append(toolTouched, f)
		}
	}
	if len(toolTouched) > 0 {
		slices.Sort(toolTouched)
		return ms, []string{"every mutation: the change touched " + strings.Join(toolTouched, ", ")}, nil
	}
	if len(c.files) == 0 {
		return sampleByFile(ms, c.head), []string{"no change detected (" + c.why + "): one mutation of each file, chosen by the commit"}, nil
	}
	var out []mutation
	var why []string
	for _, m := range ms {
		if c.files[m.File] {
			out = append(out, m)
			why = append(why, m.Name+": "+m.File+" changed")
			continue
		}
		tfs, err := testFiles(root, pkgDir(m.Pkg), m.Run)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", m.Name, err)
		}
		for _, tf := range tfs {
			if c.files[tf] {
				out = append(out, m)
				why = append(why, m.Name+": "+tf+" (its tests) changed")
				break
			}
		}
	}
	return out, why, nil
}

// sampleByFile takes one mutation of each file, the one key chooses.
func sampleByFile(ms []mutation, key string) []mutation {
	byFile := map[string][]int{}
	var order []string
	for i, m := range ms {
		if _, ok := byFile[m.File]; !ok {
			order = append(order, m.File)
		}
		byFile[m.File] = append(byFile[m.File], i)
	}
	var out []mutation
	for _, f := range order {
		is := byFile[f]
		h := fnv.New64a()
		h.Write([]byte(key + "\x00" + f))
		out = append(out, ms[is[h.Sum64()%uint64(len(is))]])
	}
	return out
}

// staleness checks that every mutation's original text occurs exactly once
// in its file: a cheap look at the whole list, on every change.
func staleness(root string, ms []mutation) []string {
	var bad []string
	for _, m := range ms {
		b, err := os.ReadFile(filepath.Join(root, m.File))
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", m.Name, err))
			continue
		}
		if n := strings.Count(string(b), m.Old); n != 1 {
			bad = append(bad, fmt.Sprintf("%s: the original text occurs %d times in %s, want once", m.Name, n, m.File))
		}
	}
	return bad
}

// testName is the name of a top-level test function (func TestX(t
// *testing.T)) declared by d.
func testName(d ast.Decl) (string, bool) {
	fd, ok := d.(*ast.FuncDecl)
	if !ok || fd.Recv != nil || !strings.HasPrefix(fd.Name.Name, "Test") {
		return "", false
	}
	if rest := strings.TrimPrefix(fd.Name.Name, "Test"); rest != "" && unicode.IsLower([]rune(rest)[0]) {
		return "", false
	}
	if fd.Type.Params == nil || len(fd.Type.Params.List) != 1 {
		return "", false
	}
	return fd.Name.Name, true
}
