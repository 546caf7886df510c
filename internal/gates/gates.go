package gates

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/nofollow"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/text"
)

// Issue is the issue a plan answers: only the person's text, never a token.
type Issue struct {
	Number int
	Title  string
	Body   string
}

// Runner runs one command line of the plan (a premise's command) in the
// work tree, inside the isolation boundary, with its output masked. A
// non-zero exit is an exit code, not an error; err is for a command that
// could not be run at all (refused by the policy, no boundary).
type Runner interface {
	RunCommand(ctx context.Context, command string) (exitCode int, output string, err error)
}

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(ctx context.Context, command string) (int, string, error)

// RunCommand calls f.
func (f RunnerFunc) RunCommand(ctx context.Context, command string) (int, string, error) {
	return f(ctx, command)
}

// Config tunes the gates. The zero value is the default.
type Config struct {
	// VerifyForms are the forms a verify command may take: a plain entry is
	// a command prefix ("go test" admits "go test ./x" but not "go tester");
	// an entry starting with ^ is a regular expression matched against the
	// whole command. Empty means DefaultVerifyForms.
	VerifyForms []string
	// ExtraVerifyForms are added to VerifyForms (to the default, when it
	// is empty): a repository with one more runner keeps the common ones.
	ExtraVerifyForms []string
	// MaxGroups bounds the task groups of the plan (implement.max_groups);
	// 0 is plan.DefaultMaxGroups. A plan over it gets one ERROR finding and
	// no gate runs.
	MaxGroups int
}

// Input is what the gates look at.
type Input struct {
	// Issue is the issue the plan answers; nil skips the acceptance-map gate
	// (there is no issue to map from).
	Issue *Issue
	// Root is the work tree at the staging commit, the plan included.
	Root string
	// ChangeID names the change, openspec/changes/<ChangeID>.
	ChangeID string
	// Change is the loaded change; nil loads it from Root.
	Change *plan.Change
	// Run runs a premise's command inside the isolation boundary; nil does
	// not run commands (their premises become INFO "not run" findings).
	Run    Runner
	Config Config
}

// The gate names; a finding's rule is "roadmap/gate/" + the name.
const (
	PremiseProbe     = "premise-probe"
	CallersAndTests  = "callers-and-tests"
	SpecDelta        = "spec-delta"
	VerifyForm       = "verify-form"
	GroupOrder       = "group-order"
	AcceptanceMap    = "acceptance-map"
	FailingTestFirst = "failing-test-first"
)

// RulePrefix starts the rule of every gate finding.
const RulePrefix = "roadmap/gate/"

type gateFunc func(ctx context.Context, s *state) error

var table = []struct {
	name string
	run  gateFunc
}{
	{PremiseProbe, premiseProbe},
	{CallersAndTests, callersAndTests},
	{SpecDelta, specDelta},
	{VerifyForm, verifyForm},
	{GroupOrder, groupOrder},
	{AcceptanceMap, acceptanceMap},
	{FailingTestFirst, failingTestFirst},
}

// Names returns the gate names in the order Check runs them.
func Names() []string {
	out := make([]string, len(table))
	for i, g := range table {
		out[i] = g.name
	}
	return out
}

// Check runs the named gates (every gate when names is empty) over the plan
// in.ChangeID in the work tree in.Root and returns their findings, sorted by
// file and line. A finding is the plan's fault; an error is not (the work
// tree cannot be read, an unknown gate name, a cancelled context). A change
// whose tasks.md does not parse gets one INFO finding and no gate runs:
// plan.Validate reports why (roadmap/tasks).
func Check(ctx context.Context, in Input, names ...string) ([]plan.Finding, error) {
	if len(names) == 0 {
		names = Names()
	}
	var run []gateFunc
	for _, n := range names {
		found := false
		for _, g := range table {
			if g.name == n {
				run = append(run, g.run)
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("gates: no gate named %q (have %s)", n, strings.Join(Names(), ", "))
		}
	}
	s, err := newState(in)
	if err != nil {
		return nil, err
	}
	defer s.root.Close()
	if s.tasks == nil {
		s.add(plan.LevelInfo, "tasks", s.tasksFile(), 1, "plan gates not run: tasks.md is not the plan contract (see roadmap/tasks)")
		return s.findings, nil
	}
	var pe *plan.ParseError
	if err := s.tasks.CheckGroupCount(in.Config.MaxGroups); errors.As(err, &pe) {
		s.add(plan.LevelError, "tasks", s.tasksFile(), pe.Line, "plan gates not run: %s", pe.Msg)
		return s.findings, nil
	}
	for _, g := range run {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := g(ctx, s); err != nil {
			return nil, err
		}
	}
	sort.SliceStable(s.findings, func(i, j int) bool {
		a, b := s.findings[i], s.findings[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	return s.findings, nil
}

// Bounds on what the gates read: the plan and the repository are hostile.
const (
	maxPlanFile  = 1 << 20  // one Markdown file of the plan
	maxRepoFile  = 2 << 20  // one file of the repository (larger ones are skipped)
	maxRepoFiles = 50000    // files walked in the repository
	maxRepoBytes = 64 << 20 // total bytes of Go source parsed
	maxIssueBody = 65536    // GitHub's limit on an issue body
	maxListed    = 8        // names listed in one finding's message
)

// state is one Check: the plan read once, the repository indexed lazily.
type state struct {
	in        Input
	root      *os.Root
	changeRel string // openspec/changes/<id>
	tasks     *plan.Tasks
	docs      map[string]*mdFile // "proposal.md", "design.md", "tasks.md" → file (nil when absent)
	findings  []plan.Finding

	files  []string        // every regular file of the repository, slash paths, sorted; nil until walked
	exists map[string]bool // files and their directories
	gosrc  *goIndex        // nil until built
}

// mdFile is a Markdown file of the plan, line by line.
type mdFile struct {
	rel   string // relative to the repository root
	lines []string
	code  []bool // lines inside fenced code, fences included
}

func newState(in Input) (*state, error) {
	if in.Root == "" {
		return nil, errors.New("gates: no work tree (Input.Root)")
	}
	id := in.ChangeID
	if id == "" && in.Change != nil {
		id = in.Change.ID
	}
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return nil, fmt.Errorf("gates: bad change id %q", id)
	}
	root, err := os.OpenRoot(in.Root)
	if err != nil {
		return nil, fmt.Errorf("gates: open work tree: %w", err)
	}
	s := &state{in: in, root: root, changeRel: path.Join(plan.ChangesDir, id), docs: map[string]*mdFile{}}
	if st, err := root.Stat(s.changeRel); err != nil || !st.IsDir() {
		root.Close()
		return nil, fmt.Errorf("gates: change %s: %w", id, plan.ErrNoChange)
	}
	for _, name := range []string{"proposal.md", "design.md", "tasks.md"} {
		rel := path.Join(s.changeRel, name)
		src, err := s.readFile(rel, maxPlanFile)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			root.Close()
			return nil, fmt.Errorf("gates: read %s: %w", rel, err)
		}
		s.docs[name] = newMD(rel, src)
	}
	if in.Change != nil && in.Change.Tasks != nil {
		s.tasks = in.Change.Tasks
	} else if md := s.docs["tasks.md"]; md != nil {
		if t, err := plan.Parse([]byte(strings.Join(md.lines, "\n"))); err == nil {
			s.tasks = t
		}
	}
	return s, nil
}

func (s *state) tasksFile() string { return path.Join(s.changeRel, "tasks.md") }

// add records a finding of gate name.
func (s *state) add(level plan.Level, name, file string, line int, format string, args ...any) {
	if line < 1 {
		line = 1
	}
	s.findings = append(s.findings, plan.Finding{
		Level: level, Rule: RulePrefix + name, File: file, Line: line,
		Message: text.Safe(fmt.Sprintf(format, args...), 2000), Ours: true,
	})
}

// errTooLarge is a file over a read bound.
var errTooLarge = errors.New("file too large")

// readFile reads rel (slash path) inside the work tree, at most limit bytes,
// through no symlink: os.Root alone would follow one to .git/config.
func (s *state) readFile(rel string, limit int64) ([]byte, error) {
	f, err := nofollow.OpenFile(s.root, rel, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", rel)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, errTooLarge
	}
	return data, nil
}

// walk indexes the repository's files once: .git, the plan's own directory
// tree (openspec/), vendored and hidden directories left out.
func (s *state) walk() {
	if s.files != nil {
		return
	}
	s.files = []string{}
	s.exists = map[string]bool{".": true}
	_ = fs.WalkDir(s.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if len(s.files) >= maxRepoFiles {
			return fs.SkipAll
		}
		name := d.Name()
		if d.IsDir() {
			if p != "." && (strings.HasPrefix(name, ".") || name == "vendor" || name == "node_modules" || p == "openspec") {
				return fs.SkipDir
			}
			s.exists[p] = true
			return nil
		}
		if d.Type().IsRegular() {
			s.files = append(s.files, p)
			s.exists[p] = true
		}
		return nil
	})
	sort.Strings(s.files)
}

// present reports whether rel (a file or a directory) exists at the staging
// commit, the plan's own files aside.
func (s *state) present(rel string) bool {
	rel = cleanRel(rel)
	if rel == "" {
		return false
	}
	if strings.HasPrefix(rel, "openspec/") || rel == "openspec" {
		_, err := s.root.Stat(rel)
		return err == nil
	}
	s.walk()
	return s.exists[rel]
}

// cleanRel makes a path from plan text a clean slash path relative to the
// root, or "" when it leaves the root or is absolute.
func cleanRel(p string) string {
	p = strings.TrimSpace(p)
	p = strings.TrimSuffix(p, "/...")
	if p == "..." || p == "./..." {
		return ""
	}
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, `\`) {
		return ""
	}
	p = path.Clean(p)
	if p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return ""
	}
	return p
}
