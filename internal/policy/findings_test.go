package policy

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The regression tests of issue 11's audit: each finding about the shell
// policy has a test named for it. The policy is a table of what commands are
// sensible, not the security boundary (docs/isolation.md); these tests keep
// the table from being talked around by spelling.

// refused asserts that the default table refuses argv with a *Refusal of the
// given row whose rule starts with rulePrefix.
func refused(t *testing.T, p *Policy, argv []string, row, rulePrefix string) {
	t.Helper()
	err := p.Check(argv)
	var r *Refusal
	if !errors.As(err, &r) {
		t.Errorf("Check(%q) = %v, want a refusal by row %q", argv, err, row)
		return
	}
	if r.Row != row || !strings.HasPrefix(r.Rule, rulePrefix) {
		t.Errorf("Check(%q) refused by row %q rule %q, want row %q rule %s…", argv, r.Row, r.Rule, row, rulePrefix)
	}
	if r.Reason == "" {
		t.Errorf("Check(%q): refusal has no reason for the model", argv)
	}
}

func allowed(t *testing.T, p *Policy, argv []string) {
	t.Helper()
	if err := p.Check(argv); err != nil {
		t.Errorf("Check(%q) = %v, want allowed", argv, err)
	}
}

func TestPolicyRefusesBundledPagerFlag(t *testing.T) {
	p := Default()
	for _, argv := range [][]string{
		{"git", "grep", "-iO", "-e", "x"},
		{"git", "grep", "-iOvim", "-e", "x"},
		{"git", "grep", "-nIO", "x"},
		{"git", "grep", "-e", "x", "-iO"},
	} {
		refused(t, p, argv, "git", `deny "-O*"`)
	}
	// -e takes the rest of its bundle as the pattern: "-eO" searches for "O".
	allowed(t, p, []string{"git", "grep", "-eO"})
	allowed(t, p, []string{"git", "grep", "-ie", "O"})
	allowed(t, p, []string{"git", "grep", "-n", "-I", "--untracked", "--no-color", "-e", "-O"})
}

func TestPolicyRefusesAbbreviatedOpenFilesInPager(t *testing.T) {
	p := Default()
	for _, argv := range [][]string{
		{"git", "grep", "--open=vim", "-e", "x"},
		{"git", "grep", "--open", "-e", "x"},
		{"git", "grep", "--open-files", "-e", "x"},
		{"git", "grep", "--open-files-in-pager=vim", "-e", "x"},
	} {
		refused(t, p, argv, "git", `deny "--open-files-in-pager*"`)
	}
}

func TestPolicyRefusesAbbreviatedLongOptions(t *testing.T) {
	p := Default()
	for _, tt := range []struct {
		argv      []string
		row, rule string
	}{
		{[]string{"git", "diff", "--ext"}, "git", `deny "--ext-diff"`},
		{[]string{"git", "log", "-p", "--ext-d"}, "git", `deny "--ext-diff"`},
		{[]string{"git", "--git=/tmp/x", "status"}, "git", `deny "--git-dir*"`},
		{[]string{"git", "--work=/tmp", "status"}, "git", `deny "--work-tree*"`},
		{[]string{"make", "--dir=/tmp"}, "make", `deny "--directory*"`},
		{[]string{"make", "--direc", "/tmp"}, "make", `deny "--directory*"`},
		{[]string{"sort", "--out=x", "a.txt"}, "sort", `deny "--output*"`},
		{[]string{"sort", "--outp", "x", "a.txt"}, "sort", `deny "--output*"`},
	} {
		refused(t, p, tt.argv, tt.row, tt.rule)
	}
	// A long option that merely shares a beginning is not an abbreviation.
	allowed(t, p, []string{"git", "diff", "--exit-code"})
	allowed(t, p, []string{"make", "--dry-run"})
}

func TestPolicyRefusesGluedSortOutput(t *testing.T) {
	p := Default()
	for _, argv := range [][]string{
		{"sort", "-uo.git/config", "a.txt"},
		{"sort", "-o.git/config", "a.txt"},
		{"sort", "-uo", ".git/config", "a.txt"},
		{"sort", "-ro", "b.txt", "a.txt"},
	} {
		refused(t, p, argv, "sort", `deny "-o*"`)
	}
	allowed(t, p, []string{"sort", "-u", "-k2,2", "a.txt"})

	// Through Run, against a real file: .git/config is not touched.
	ws := workspace(t)
	before, err := os.ReadFile(filepath.Join(ws, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH")}
	_, err = p.Run(context.Background(), noJail(t, ws), ws, []string{"sort", "-uo.git/config", "a.txt"}, env)
	var r *Refusal
	if !errors.As(err, &r) {
		t.Fatalf("Run(sort -uo.git/config a.txt) = %v, want a refusal", err)
	}
	after, err := os.ReadFile(filepath.Join(ws, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Errorf(".git/config changed to %q", after)
	}
}

// A value glued to a short option of a getopt program is a path the program
// opens; it is checked like a separate one: no "..", nothing in .git, nothing
// outside the workspace.
func TestPolicyRefusesGluedPathValues(t *testing.T) {
	p := Default()
	for _, tt := range []struct {
		argv []string
		row  string
	}{
		{[]string{"grep", "-f.git/config", "a.txt"}, "grep"},
		{[]string{"grep", "-nf.git/config", "a.txt"}, "grep"},
		{[]string{"grep", "-f../secret", "a.txt"}, "grep"},
		{[]string{"grep", "-f/etc/passwd", "a.txt"}, "grep"},
		{[]string{"sort", "-T.git", "a.txt"}, "sort"},
		{[]string{"sort", "-T/tmp", "a.txt"}, "sort"},
		{[]string{"make", "-f../Makefile"}, "make"},
		{[]string{"make", "-I.GIT/hooks"}, "make"},
		{[]string{"git", "diff", "-O.git/config"}, "git"},
		{[]string{"diff", "-u", "-Na.txt/../../x", "a.txt"}, "diff"},
	} {
		refused(t, p, tt.argv, tt.row, "")
	}
	for _, argv := range [][]string{
		{"grep", "-e/api", "a.txt"},
		{"grep", "-ne", "../x", "a.txt"}, // a pattern, not a path
		{"git", "log", "-S/api"},
		{"git", "grep", "-e.git"},
		{"head", "-n5", "a.txt"},
		{"tail", "-n+3", "a.txt"},
		{"sort", "-t/", "-k2", "a.txt"},
	} {
		allowed(t, p, argv)
	}
}

func TestPolicyRefusesGoTestDoubleDashExec(t *testing.T) {
	p := Default()
	for _, argv := range [][]string{
		{"go", "test", "--exec=sh", "./..."},
		{"go", "test", "--exec", "sh", "./..."},
		{"go", "test", "-exec=sh", "./..."},
		{"go", "test", "./...", "--exec", "sh"},
		{"go", "run", "--exec=sh", "."},
	} {
		refused(t, p, argv, "go", `deny "-exec*"`)
	}
	// A flag that merely starts the same is another flag in Go's syntax.
	allowed(t, p, []string{"go", "test", "-run", "TestExec", "./..."})
}

func TestPolicyRefusesGoToolexec(t *testing.T) {
	p := Default()
	for _, argv := range [][]string{
		{"go", "build", "--toolexec=sh", "./..."},
		{"go", "test", "--toolexec", "sh", "./..."},
		{"go", "vet", "-toolexec", "sh", "./..."},
	} {
		refused(t, p, argv, "go", `deny "-toolexec*"`)
	}
	for _, argv := range [][]string{
		{"go", "vet", "-vettool=sh", "./..."},
		{"go", "vet", "--vettool", "sh", "./..."},
	} {
		refused(t, p, argv, "go", `deny "-vettool*"`)
	}
	refused(t, p, []string{"go", "--C=/tmp", "test"}, "go", `deny "-C"`)
	refused(t, p, []string{"go", "env", "--w", "GOFLAGS=-toolexec=sh"}, "go", `deny "env -w*"`)
}

func TestPolicyRefusesApplyUnsafePaths(t *testing.T) {
	p := Default()
	for _, argv := range [][]string{
		{"git", "apply", "--unsafe-paths", "p.diff"},
		{"git", "apply", "--unsafe", "p.diff"},
		{"git", "apply", "--uns", "p.diff"},
	} {
		refused(t, p, argv, "git", `deny "--unsafe-paths"`)
	}
	allowed(t, p, []string{"git", "apply", "--index", "p.diff"})
}

// Without --unsafe-paths, git apply itself refuses a patch that writes into
// .git, above the work tree, or through a symlink; the table relies on that
// rather than reading patches. This test holds git to it through Run.
func TestPolicyApplyCannotPlantHook(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ws := t.TempDir()
	gitIn := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	gitIn("init", "-q", ".")
	if err := os.Symlink(".git", filepath.Join(ws, "inner")); err != nil {
		t.Fatal(err)
	}
	hook := "@@ -0,0 +1 @@\n+echo planted\n"
	patches := map[string]string{
		"dotgit.diff": "diff --git a/.git/hooks/pre-commit b/.git/hooks/pre-commit\nnew file mode 100755\n--- /dev/null\n+++ b/.git/hooks/pre-commit\n" + hook,
		"upper.diff":  "diff --git a/.GIT/hooks/pre-commit b/.GIT/hooks/pre-commit\nnew file mode 100755\n--- /dev/null\n+++ b/.GIT/hooks/pre-commit\n" + hook,
		"dotdot.diff": "--- /dev/null\n+++ b/../" + filepath.Base(ws) + "/.git/hooks/pre-commit\n" + hook,
		"link.diff":   "--- /dev/null\n+++ b/inner/hooks/pre-commit\n" + hook,
		"newlink.diff": "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+.git\n\\ No newline at end of file\n" +
			"diff --git a/l/hooks/pre-commit b/l/hooks/pre-commit\nnew file mode 100755\n--- /dev/null\n+++ b/l/hooks/pre-commit\n" + hook,
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
	for name, body := range patches {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := Default().Run(context.Background(), noJail(t, ws), ws, []string{"git", "apply", name}, env)
		if err != nil {
			t.Fatalf("git apply %s: %v", name, err)
		}
		if res.ExitCode == 0 {
			t.Errorf("git apply %s succeeded:\n%s", name, res.Output)
		}
		if _, err := os.Stat(filepath.Join(ws, ".git", "hooks", "pre-commit")); err == nil {
			t.Fatalf("git apply %s planted .git/hooks/pre-commit", name)
		}
	}
}

func TestPolicyRefusesGrepDereferenceRecursive(t *testing.T) {
	p := Default()
	for _, argv := range [][]string{
		{"grep", "-R", "x", "."},
		{"grep", "-nR", "--exclude-dir=.git", "x", "."},
		{"grep", "-rR", "x"},
		{"grep", "--dereference-recursive", "x", "."},
		{"grep", "--dereference", "x", "."},
	} {
		refused(t, p, argv, "grep", "deny")
	}
}

// grep -r from the workspace root reads .git/config, where actions/checkout
// may keep the token as an extraheader. Recursion is sensible only with
// --exclude-dir=.git (or git grep, which reads tracked files only).
func TestPolicyRefusesGrepRecursiveIntoGit(t *testing.T) {
	p := Default()
	for _, argv := range [][]string{
		{"grep", "-r", "extraheader", "."},
		{"grep", "-rn", "extraheader"},
		{"grep", "--recursive", "extraheader", "."},
		{"grep", "--recur", "extraheader", "."},
		{"grep", "-d", "recurse", "extraheader", "."},
		{"grep", "--directories=recurse", "extraheader", "."},
		{"grep", "-r", "--exclude-dir=.github", "extraheader", "."},
		{"diff", "-r", ".", "sub"},
		{"diff", "-ru", ".", "sub"},
	} {
		refused(t, p, argv, argv[0], "deny")
	}
	allowed(t, p, []string{"grep", "-rn", "--exclude-dir=.git", "extraheader", "."})
	allowed(t, p, []string{"diff", "-ru", "--exclude=.git", ".", "sub"})

	// Through Run: the allowed form does not print the header.
	ws := workspace(t)
	if err := os.WriteFile(filepath.Join(ws, ".git", "config"), []byte("[http]\n\textraheader = AUTHORIZATION: basic c2VjcmV0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH")}
	res, err := p.Run(context.Background(), noJail(t, ws), ws, []string{"grep", "-rn", "--exclude-dir=.git", "extraheader", "."}, env)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Output, "c2VjcmV0") {
		t.Errorf("grep -r --exclude-dir=.git printed .git/config: %q", res.Output)
	}
}

// Other routes the audit's spelling found: programs that read the names of
// the files to open from a file, and sort's helper program.
func TestPolicyRefusesFileListsAndHelperPrograms(t *testing.T) {
	p := Default()
	refused(t, p, []string{"sort", "--files0-from=list"}, "sort", `deny "--files0-from*"`)
	refused(t, p, []string{"wc", "--files0=list"}, "wc", `deny "--files0-from*"`)
	refused(t, p, []string{"sort", "--compress-program=sh", "a.txt"}, "sort", `deny "--compress-program*"`)
}

// FuzzCheck: Check never panics on a command Split accepts, and a refusal
// does not depend on spelling: in a Go row -flag and --flag get the same
// verdict, and in a GNU row bundling two short options (-i -O into -iO) never
// turns a refusal into an allowed command.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		"git grep -i -O -e x", "git grep --open=vim x", "sort -u -o .git/config a",
		"go test --exec=sh ./...", "go build -toolexec sh", "grep -r -n x .",
		"grep -r --exclude-dir=.git x", "git apply --unsafe p", "make --dir=/ x",
		"find . -exec x", "env -i x", "git -c a=b status", "diff -r -u . x",
	} {
		f.Add(s)
	}
	p := Default()
	verdict := func(argv []string) string {
		err := p.Check(argv)
		var r *Refusal
		if errors.As(err, &r) {
			return r.Rule
		}
		if err != nil {
			return err.Error()
		}
		return ""
	}
	f.Fuzz(func(t *testing.T, in string) {
		argv, err := Split(in)
		if err != nil {
			return
		}
		got := verdict(argv)
		row := p.Row(argv[0])
		if row == nil || !row.Allow {
			return
		}
		switch row.Options {
		case SyntaxGo:
			other := append([]string{argv[0]}, argv[1:]...)
			for i, a := range other[1:] {
				if a == "--" {
					break
				}
				if strings.HasPrefix(a, "--") && len(a) > 2 {
					other[i+1] = a[1:]
				} else if strings.HasPrefix(a, "-") && len(a) > 1 && a[1] != '-' {
					other[i+1] = "-" + a
				}
			}
			if again := verdict(other); (again == "") != (got == "") {
				t.Fatalf("Check(%q) = %q but Check(%q) = %q", argv, got, other, again)
			}
		case SyntaxGNU:
			if got == "" {
				return
			}
			for i := 1; i+1 < len(argv); i++ {
				a, b := argv[i], argv[i+1]
				if a == "--" {
					break
				}
				if !isShortFlag(a) || !isShortFlag(b) || row.isValue(a) || row.isValue(b) {
					continue
				}
				merged := append(append(append([]string{}, argv[:i]...), a+b[1:]), argv[i+2:]...)
				if verdict(merged) == "" {
					t.Fatalf("Check(%q) refused (%s) but Check(%q) allows it", argv, got, merged)
				}
			}
		}
	})
}

// isShortFlag reports whether w is one short option letter: "-O".
func isShortFlag(w string) bool {
	return len(w) == 2 && w[0] == '-' && (w[1] >= 'a' && w[1] <= 'z' || w[1] >= 'A' && w[1] <= 'Z')
}

// A value glued to a short option goes through the same symlink check as a
// positional path: sort -Tlink/x with link -> / would reach out of the tree.
func TestPolicyRefusesGluedValueThroughSymlink(t *testing.T) {
	ws := workspace(t)
	if err := os.Symlink(t.TempDir(), filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH")}
	_, err := Default().Run(context.Background(), noJail(t, ws), ws, []string{"sort", "-Tlink/x", "a.txt"}, env)
	var r *Refusal
	if !errors.As(err, &r) || r.Rule != "path" {
		t.Fatalf("Run(sort -Tlink/x) = %v, want a path refusal", err)
	}
}
