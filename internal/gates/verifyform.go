package gates

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/text"
)

// DefaultVerifyForms are the verify command forms roadmap accepts when the
// configuration names none: the test runners of the common languages (Go,
// Python, JavaScript and TypeScript, Rust), Go's vet and build, make
// targets, and file checks that exit non-zero when the file or the text is
// missing. A plain entry is a command prefix, so "pytest" admits
// "pytest tests/test_api.py" but not "pytestx" or "echo pytest".
var DefaultVerifyForms = []string{
	"go test",
	"go vet",
	"go build",
	"pytest",
	"python -m pytest",
	"python3 -m pytest",
	"npm test",
	"npm run test",
	"pnpm test",
	"pnpm run test",
	"yarn test",
	"yarn run test",
	"node --test",
	"jest",
	"npx jest",
	"vitest",
	"npx vitest",
	"cargo test",
	"cargo nextest run",
	"make",
	"test -f",
	"test -e",
	"test -d",
	"test -s",
	`^grep(?:\s+-[A-Za-z]+)*\s+-[A-Za-z]*q[A-Za-z]*\s+\S`,
}

// form is one compiled entry of Config.VerifyForms.
type form struct {
	prefix string
	re     *regexp.Regexp
}

// compileForms compiles the configured set: forms, or DefaultVerifyForms
// when forms is empty, with extra after it.
func compileForms(forms, extra []string) ([]form, error) {
	if len(forms) == 0 {
		forms = DefaultVerifyForms
	}
	forms = append(forms[:len(forms):len(forms)], extra...)
	out := make([]form, 0, len(forms))
	for _, f := range forms {
		if strings.HasPrefix(f, "^") {
			re, err := regexp.Compile(f)
			if err != nil {
				return nil, fmt.Errorf("gates: verify form %q: %w", f, err)
			}
			out = append(out, form{re: re})
			continue
		}
		if f = strings.Join(strings.Fields(f), " "); f != "" {
			out = append(out, form{prefix: f})
		}
	}
	return out, nil
}

func (f form) match(cmd string) bool {
	if f.re != nil {
		return f.re.MatchString(cmd)
	}
	cmd = strings.Join(strings.Fields(cmd), " ")
	return cmd == f.prefix || strings.HasPrefix(cmd, f.prefix+" ")
}

func formNames(forms []form) string {
	var names []string
	for _, f := range forms {
		if f.re != nil {
			names = append(names, f.re.String())
		} else {
			names = append(names, f.prefix)
		}
	}
	return strings.Join(names, ", ")
}

// verifyForm checks that every group has a verify command of a configured
// form and that every test file the plan creates sits where the repository
// keeps tests for the code it tests (#3015): a verify command nobody can run
// in CI proves nothing, and a test in the wrong place does not run.
func verifyForm(_ context.Context, s *state) error {
	forms, err := compileForms(s.in.Config.VerifyForms, s.in.Config.ExtraVerifyForms)
	if err != nil {
		return err
	}
	for _, g := range s.tasks.Groups {
		good := false
		for _, t := range g.Tasks {
			if t.Verify == "" {
				continue
			}
			if op := shellSyntax(t.Verify); op != "" {
				s.add(plan.LevelError, VerifyForm, s.tasksFile(), t.Line, "task %s: verify command `%s` uses shell syntax (%s): a verify command runs without a shell, as one program and its arguments; give each command a task of its own", t.ID, text.Safe(t.Verify, 200), op)
				continue
			}
			ok := false
			for _, f := range forms {
				if f.match(t.Verify) {
					ok = true
					break
				}
			}
			if ok && len(s.in.Config.VerifyForms) == 0 {
				if lang, needs, fits := s.runnerFits(t.Verify); !fits {
					s.add(plan.LevelError, VerifyForm, s.tasksFile(), t.Line, "task %s: verify command `%s` runs %s tests, but the repository has no %s: verify with the repository's own test runner", t.ID, text.Safe(t.Verify, 200), lang, needs)
					continue
				}
			}
			if ok {
				good = true
				continue
			}
			s.add(plan.LevelError, VerifyForm, s.tasksFile(), t.Line, "task %s: verify command `%s` is not of a configured form (%s)", t.ID, text.Safe(t.Verify, 200), formNames(forms))
		}
		if !good && len(g.VerifyCommands()) == 0 {
			s.add(plan.LevelError, VerifyForm, s.tasksFile(), g.Line, "group %d has no verify command; end a task with verify: `command` of a configured form (%s)", g.Number, formNames(forms))
		}
	}
	s.testPlacement()
	return nil
}

// runners are the default forms' test runners by language, with what a
// repository holds when it is of that language: a default form of another
// language than the repository's (`npm test` in a Go module) passes no
// test, and in CI fails on a missing manifest.
var runners = []struct {
	prefixes []string
	lang     string
	needs    string // what the repository lacks, as the finding says it
	fits     func(s *state) bool
}{
	{[]string{"npm ", "pnpm ", "yarn ", "npx ", "jest", "vitest"}, "JavaScript", "package.json", func(s *state) bool { return s.present("package.json") }},
	{[]string{"pytest", "python -m pytest", "python3 -m pytest"}, "Python", "Python file", func(s *state) bool { return s.hasExt(".py") }},
	{[]string{"cargo "}, "Rust", "Cargo.toml", func(s *state) bool { return s.present("Cargo.toml") }},
	{[]string{"go "}, "Go", "go.mod or Go file", func(s *state) bool { return s.present("go.mod") || s.hasExt(".go") }},
}

// runnerFits reports whether a verify command's runner (one of the default
// forms) fits the repository; a command of no known runner fits, and so
// does any runner in a repository that holds no source file at all (a
// plan checked on its own, `roadmap plan validate` on an OpenSpec tree):
// there is no language to judge by.
func (s *state) runnerFits(cmd string) (lang, needs string, fits bool) {
	cmd = strings.Join(strings.Fields(cmd), " ")
	for _, r := range runners {
		for _, p := range r.prefixes {
			if strings.HasPrefix(cmd, p) || cmd == strings.TrimSpace(p) {
				return r.lang, r.needs, r.fits(s) || !s.hasSource()
			}
		}
	}
	return "", "", true
}

// hasSource reports whether the repository holds a source file of a
// language the gates know, or one of the runners' manifests.
func (s *state) hasSource() bool {
	s.walk()
	for _, f := range s.files {
		if codeExt[path.Ext(f)] {
			return true
		}
		switch f {
		case "package.json", "Cargo.toml", "go.mod", "pyproject.toml", "setup.py":
			return true
		}
	}
	return false
}

// hasExt reports whether the repository has a file with extension ext.
func (s *state) hasExt(ext string) bool {
	s.walk()
	for _, f := range s.files {
		if path.Ext(f) == ext {
			return true
		}
	}
	return false
}

// shellSyntax returns the first piece of cmd a shell would take as more than
// one program and its arguments (a command chained after it, a pipe, a
// substitution, a redirection, a subshell), or "". It is policy.Split's
// refusal (the rule verify commands run under; TestShellSyntaxAgreesWithSplit
// holds the two together), repeated here so that a command which only
// starts with a configured form cannot pass the gate and carry a second
// command behind it: "go test ./... && curl …" is not a go test.
func shellSyntax(cmd string) string {
	for i := 0; i < len(cmd); i++ {
		switch c := cmd[i]; c {
		case '\'':
			j := strings.IndexByte(cmd[i+1:], '\'')
			if j < 0 {
				return "an unclosed quote"
			}
			i += j + 1
		case '"':
			for i++; i < len(cmd) && cmd[i] != '"'; i++ {
				switch cmd[i] {
				case '\\':
					i++
				case '$':
					return "$"
				case '`':
					return "`"
				}
			}
			if i >= len(cmd) {
				return "an unclosed quote"
			}
		case '\\':
			i++
		case ';', '&', '|', '<', '>', '(', ')', '`', '$':
			if c == '$' && i+1 < len(cmd) && cmd[i+1] == '(' {
				return "$("
			}
			if (c == '&' || c == '|') && i+1 < len(cmd) && cmd[i+1] == c {
				return string([]byte{c, c})
			}
			return string(c)
		case '\n', '\r':
			return "a newline"
		case 0:
			return "a NUL byte"
		}
	}
	return ""
}

// testPlacement checks each new test file a task names.
func (s *state) testPlacement() {
	created := map[string]bool{} // every new path the plan names, for "beside new code"
	type cited struct {
		p    string
		line int
		id   string
	}
	var tests []cited
	for _, g := range s.tasks.Groups {
		for _, t := range g.Tasks {
			for _, sp := range codeSpans(taskBody(t.Text, t.Verify)) {
				p := asPath(sp)
				if p == "" || s.present(p) {
					continue
				}
				created[p] = true
				if isTestPath(p) {
					tests = append(tests, cited{p, t.Line, t.ID})
				}
			}
		}
	}
	s.walk()
	for _, c := range tests {
		dir := path.Dir(c.p)
		if strings.HasSuffix(c.p, "_test.go") {
			if s.hasGoCode(dir, created) {
				continue
			}
			hint := ""
			src := strings.TrimSuffix(path.Base(c.p), "_test.go") + ".go"
			for _, f := range s.files {
				if path.Base(f) == src {
					hint = "; " + src + " is in " + path.Dir(f) + ", so its test is " + path.Join(path.Dir(f), path.Base(c.p))
					break
				}
			}
			s.add(plan.LevelError, VerifyForm, s.tasksFile(), c.line, "task %s creates %s in %s, which holds no Go package: a Go test sits beside the package it tests%s", c.id, c.p, dir, hint)
			continue
		}
		dirs := s.testDirs(path.Ext(c.p))
		if len(dirs) == 0 {
			continue // no convention to follow
		}
		ok := false
		for _, d := range dirs {
			if dir == d || strings.HasPrefix(dir, d+"/") || d == "." {
				ok = true
				break
			}
		}
		if !ok {
			s.add(plan.LevelError, VerifyForm, s.tasksFile(), c.line, "task %s creates %s, but the repository keeps its %s tests in %s", c.id, c.p, path.Ext(c.p), listed(dirs))
		}
	}
}

// hasGoCode reports whether dir holds non-test Go files, at the staging
// commit or created by the plan.
func (s *state) hasGoCode(dir string, created map[string]bool) bool {
	for _, f := range s.files {
		if path.Dir(f) == dir && path.Ext(f) == ".go" && !strings.HasSuffix(f, "_test.go") {
			return true
		}
	}
	for p := range created {
		if path.Dir(p) == dir && path.Ext(p) == ".go" && !strings.HasSuffix(p, "_test.go") {
			return true
		}
	}
	return false
}

// testDirs returns the directories holding the repository's test files with
// extension ext, outermost only.
func (s *state) testDirs(ext string) []string {
	var dirs []string
	for _, f := range s.files {
		if path.Ext(f) != ext || !isTestPath(f) {
			continue
		}
		d := path.Dir(f)
		inside := false
		for _, have := range dirs {
			if d == have || strings.HasPrefix(d, have+"/") || have == "." {
				inside = true
				break
			}
		}
		if !inside {
			dirs = append(dirs, d)
		}
	}
	return dirs
}
