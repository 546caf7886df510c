package gates

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/plan"
)

// DefaultVerifyForms are the verify command forms of a Go repository: its
// test, vet and build commands, make targets, and file checks that exit
// non-zero when the file or the text is missing.
var DefaultVerifyForms = []string{
	"go test",
	"go vet",
	"go build",
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

func compileForms(forms []string) ([]form, error) {
	if len(forms) == 0 {
		forms = DefaultVerifyForms
	}
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
	forms, err := compileForms(s.in.Config.VerifyForms)
	if err != nil {
		return err
	}
	for _, g := range s.tasks.Groups {
		good := false
		for _, t := range g.Tasks {
			if t.Verify == "" {
				continue
			}
			ok := false
			for _, f := range forms {
				if f.match(t.Verify) {
					ok = true
					break
				}
			}
			if ok {
				good = true
				continue
			}
			s.add(plan.LevelError, VerifyForm, s.tasksFile(), t.Line, "task %s: verify command `%s` is not of a configured form (%s)", t.ID, oneLine(t.Verify, 200), formNames(forms))
		}
		if !good && len(g.VerifyCommands()) == 0 {
			s.add(plan.LevelError, VerifyForm, s.tasksFile(), g.Line, "group %d has no verify command; end a task with verify: `command` of a configured form (%s)", g.Number, formNames(forms))
		}
	}
	s.testPlacement()
	return nil
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
