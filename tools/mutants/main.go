// Command mutants checks that the seed criteria's tests prove their
// behaviour: it applies each mutation of its list (list.go) to a copy of
// the module, one at a time, runs the tests the mutation names, and reports
// it caught when they fail and missed when they pass. A mutation whose
// original text is not found exactly once is stale and fails the run too,
// so the list cannot rot silently when the code moves.
//
//	go run ./tools/mutants [-changed [-base REF]] [-run REGEXP] [-list] [-v]
//
// -changed plays only the mutations the change touched (changed.go): CI's
// per-change run; without it, every mutation (the nightly run). Either way
// every mutation's original text is checked to be in its file exactly once.
// It exits 0 only when every selected mutation is caught (docs/mutants.md).
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mutants", flag.ContinueOnError)
	fs.SetOutput(stderr)
	only := fs.String("run", "", "run only the mutations whose name matches this regular expression")
	verbose := fs.Bool("v", false, "print the test output of every mutation")
	timeout := fs.Duration("timeout", 5*time.Minute, "bound of one mutation's test run")
	changed := fs.Bool("changed", false, "run only the mutations whose file or named tests the change touched (all of them when it touched tools/mutants)")
	base := fs.String("base", os.Getenv("MUTANTS_BASE"), "with -changed: the commit the change is measured from (default: the merge base with origin/main, else HEAD~1)")
	list := fs.Bool("list", false, "print the selected mutations and check their text, without running them")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var sel *regexp.Regexp
	if *only != "" {
		var err error
		if sel, err = regexp.Compile(*only); err != nil {
			fmt.Fprintf(stderr, "mutants: -run: %v\n", err)
			return 2
		}
	}
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintf(stderr, "mutants: %v\n", err)
		return 2
	}
	selected := mutations
	if *changed {
		c, err := detectChange(root, *base)
		if err != nil {
			fmt.Fprintf(stderr, "mutants: %v\n", err)
			return 2
		}
		var why []string
		if selected, why, err = selectChanged(root, mutations, c); err != nil {
			fmt.Fprintf(stderr, "mutants: %v\n", err)
			return 2
		}
		if c.base != "" {
			fmt.Fprintf(stdout, "mutants: the change is the diff against %s: %d files\n", c.why, len(c.files))
		}
		fmt.Fprintf(stdout, "mutants: %d of %d mutations selected\n", len(selected), len(mutations))
		for _, w := range why {
			fmt.Fprintf(stdout, "        %s\n", w)
		}
	}
	if stale := staleness(root, mutations); len(stale) > 0 {
		for _, s := range stale {
			fmt.Fprintf(stdout, "STALE   %s\n", s)
		}
		fmt.Fprintf(stdout, "mutants: %d of %d mutations stale: update tools/mutants/list.go with the code\n", len(stale), len(mutations))
		return 1
	}
	if *list {
		for _, m := range selected {
			if sel == nil || sel.MatchString(m.Name) {
				fmt.Fprintf(stdout, "%-58s %s %s\n", m.Name, m.Pkg, m.Run)
			}
		}
		return 0
	}
	if *changed && len(selected) == 0 {
		fmt.Fprintf(stdout, "mutants: the change touched no mutation's file or tests; every mutation's text is in place (%d)\n", len(mutations))
		return 0
	}
	work, err := os.MkdirTemp("", "roadmap-mutants-")
	if err != nil {
		fmt.Fprintf(stderr, "mutants: %v\n", err)
		return 2
	}
	defer os.RemoveAll(work)
	// The mutations are applied to a copy: a run killed half way never
	// leaves a mutated file in the work tree.
	if err := copyTracked(root, work); err != nil {
		fmt.Fprintf(stderr, "mutants: copy the module: %v\n", err)
		return 2
	}
	var caught, missed, bad int
	for _, m := range selected {
		if sel != nil && !sel.MatchString(m.Name) {
			continue
		}
		start := time.Now()
		verdict, out := try(work, m, *timeout)
		fmt.Fprintf(stdout, "%-7s %-58s %s (%s)\n", verdict, m.Name, m.Run, time.Since(start).Round(time.Second))
		switch verdict {
		case "caught":
			caught++
		case "MISSED":
			missed++
		default:
			bad++
		}
		if *verbose || verdict != "caught" {
			fmt.Fprintf(stdout, "        %s: %q -> %q\n", m.File, m.Old, m.New)
			if verdict != "caught" && verdict != "MISSED" || *verbose {
				fmt.Fprintf(stdout, "%s\n", indent(out))
			}
		}
	}
	fmt.Fprintf(stdout, "mutants: %d caught, %d missed, %d stale or broken\n", caught, missed, bad)
	if missed > 0 || bad > 0 || caught == 0 {
		return 1
	}
	return 0
}

// try applies m in work, runs its tests and restores the file. The verdict
// is caught (the tests failed), MISSED (they passed), STALE (the original
// text is not in the file exactly once), BROKEN (the mutant does not
// build: not a realistic change) or NO TEST (the pattern names no test).
func try(work string, m mutation, timeout time.Duration) (string, string) {
	path := filepath.Join(work, m.File)
	orig, err := os.ReadFile(path)
	if err != nil {
		return "STALE", err.Error()
	}
	if n := strings.Count(string(orig), m.Old); n != 1 {
		return "STALE", fmt.Sprintf("the original text occurs %d times in %s, want once", n, m.File)
	}
	mutated := strings.Replace(string(orig), m.Old, m.New, 1)
	if err := os.WriteFile(path, []byte(mutated), 0o644); err != nil {
		return "BROKEN", err.Error()
	}
	defer os.WriteFile(path, orig, 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if out, err := goCmd(ctx, work, "vet", "./"+filepath.Dir(m.File)); err != nil {
		return "BROKEN", out
	}
	out, err := goCmd(ctx, work, "test", "-count=1", "-run", m.Run, m.Pkg)
	if ctx.Err() != nil {
		return "caught", "timed out: " + out // a hang is a failing test too
	}
	if err != nil {
		return "caught", out
	}
	if strings.Contains(out, "[no tests to run]") {
		return "NO TEST", out // a pattern that names no test proves nothing
	}
	return "MISSED", out
}

func goCmd(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, goBin(), args...)
	cmd.Dir = dir
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	return b.String(), err
}

func goBin() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

func moduleRoot() (string, error) {
	out, err := exec.Command(goBin(), "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("not inside a Go module")
	}
	return filepath.Dir(mod), nil
}

// copyTracked copies the files git tracks (and the untracked ones it does
// not ignore) from root to dst.
func copyTracked(root, dst string) error {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %w", err)
	}
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if rel == "" {
			continue
		}
		src := filepath.Join(root, rel)
		info, err := os.Lstat(src)
		if err != nil {
			continue // deleted in the work tree
		}
		to := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		if info.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(src)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, to); err != nil {
				return err
			}
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		if err := os.WriteFile(to, data, info.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 40 {
		lines = append(lines[:40], fmt.Sprintf("[%d more lines]", len(lines)-40))
	}
	return "        | " + strings.Join(lines, "\n        | ")
}
