package stage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/instructions"
	"github.com/roadmap-dev/roadmap/internal/nofollow"
	"github.com/roadmap-dev/roadmap/internal/plan"
)

const plannerSystem = `You are a careful software engineer planning a change to a git repository, the workspace, through tools only. You do not change the code: you investigate it read-only and write a plan.

- Paths are relative to the workspace root. .git is off limits.
- Investigate before you plan: read_file, list_dir, search, git_log, git_blame, go_doc, and run_test to see a test fail today.
- Write the plan with write_plan_file, as an OpenSpec change: proposal.md, tasks.md, specs/<capability>/spec.md for each behaviour that changes, design.md when it helps.
- Call finish(summary) when the plan is written; ask(question) only for a decision a person must make.
- Every reply must call at least one tool.`

const planFormat = `The plan's format:

proposal.md:
  # <title>
  Kind: <feat | fix | refactor | docs | test | chore>
  ## Why
  <the problem, one paragraph>
  ## What Changes
  - <each change>
  ## Premises
  - ` + "`path/to/file.go`" + ` exists
  - ` + "`Name`" + ` is defined in ` + "`path/to/file.go`" + `
  - ` + "`path/to/file.go`" + ` contains ` + "`text`" + `  (or: does not exist, is not defined in, does not contain)
  - ` + "`go test ./pkg -run TestName`" + ` fails  (or: passes)
  One bullet per fact the plan relies on, each checked against the repository before any group runs. When the issue names a file or a symbol that is not there, say so here (` + "`X`" + ` does not exist) and plan for what is.

tasks.md (the contract implement executes, group by group):
  ## 1. <group title>
  - [ ] 1.1 Add a failing test for <behaviour>; verify: ` + "`go test ./pkg -run TestName`" + ` fails
  - [ ] 1.2 <implement it>; verify: ` + "`go test ./pkg -run TestName`" + `
  A group that changes behaviour starts with a failing test (verify ... fails); every task ends with "verify:" and one command in backticks; a later group may use what an earlier group creates (a file or a function), never the reverse. Write the files and symbols a task changes in backticks. When you change a symbol, the callers and tests the index lists must keep working: name them in a task. Tag a group that changes no behaviour with its kind: "## 2. Rename (refactor)". Name the acceptance criteria a group meets in its title: "## 1. Discounts (AC1, AC2)".

specs/<capability>/spec.md (a delta spec, for each behaviour that changes; none when only documentation changes):
  ## ADDED Requirements
  ### Requirement: <name>
  The system SHALL <behaviour>.
  #### Scenario: <name>
  - **WHEN** <condition>
  - **THEN** <outcome>
  (MODIFIED, REMOVED and RENAMED Requirements name requirements of openspec/specs/ exactly.)`

const verifierSystem = `You are an independent reviewer. Another engineer wrote a plan (an OpenSpec change) for a GitHub issue. Your job is to refute it: find where it is wrong against the issue and the code. You only read: read_file, list_dir, search, git_log, git_blame, go_doc.

Object only with evidence: a file or symbol the plan relies on that does not exist, a behaviour it assumes that the code does not have, an acceptance criterion of the issue no group delivers, a verify command that cannot pass or cannot fail, a group that needs what a later group creates.

Map each acceptance criterion of the issue to the task group that meets it, by what the group does, not by the words it shares with the criterion: a group that computes a receipt does not email one. A criterion no group meets is group 0, with the reason.

End with verdict(objections, acceptance): objections one per line as FILE:LINE: what is wrong, with the evidence, or none when the plan holds; acceptance the JSON array [{"criterion": N, "group": G or 0, "reason": "..."}], one object per criterion. Every reply must call at least one tool.`

// agentConfig is the step configuration both of stage's model steps share.
func (r *runner) agentConfig(tiers []agent.Tier) agent.Config {
	return r.j.AgentConfig(tiers)
}

func (r *runner) plannerConfig() agent.Config {
	cfg := r.agentConfig(r.o.Planner)
	cfg.Tools = agent.PlannerTools()
	cfg.System = plannerSystem
	cfg.PlanDir = r.dir
	return cfg
}

// plannerStep is the planner's task: write the plan, revise it against the
// last round's findings, or amend it with implement's evidence.
func (r *runner) plannerStep(ctx context.Context) agent.Step {
	var task strings.Builder
	switch {
	case r.amend && !failing(r.findings):
		fmt.Fprintf(&task, "Amend the plan for issue #%d in %s/: implement returned it at group %d because the plan cannot work there. "+
			"Keep groups 1 to %d of tasks.md exactly as they are (they passed and are committed); rewrite group %d onward, and the proposal and specs where they change. "+
			"Investigate the evidence first, then write the amended files with write_plan_file and call finish.",
			r.o.Issue, r.dir, r.amendFrom, r.amendFrom-1, r.amendFrom)
	case r.round > 1 || len(r.findings) > 0:
		fmt.Fprintf(&task, "Revise the plan for issue #%d in %s/ (round %d): the plan gates and the reviewer found the problems below. "+
			"Fix each one in the plan's files with write_plan_file, investigating where you need to, then call finish.", r.o.Issue, r.dir, r.round)
		if r.amend {
			fmt.Fprintf(&task, " This round amends the plan implement returned at group %d: keep groups 1 to %d exactly as they are.", r.amendFrom, r.amendFrom-1)
		}
	default:
		fmt.Fprintf(&task, "Write the plan for issue #%d as an OpenSpec change in %s/ (write_plan_file paths are relative to it). "+
			"Investigate the repository first; then write proposal.md, tasks.md and the delta specs, and call finish.", r.o.Issue, r.dir)
	}
	task.WriteString("\n\n" + planFormat)
	parts := []agent.ContextPart{{Name: "The issue", Text: issueText(r.j.Issue.Title, r.j.Issue.Body), Priority: 100}}
	if r.amend && r.evidence != "" {
		parts = append(parts, agent.ContextPart{Name: fmt.Sprintf("Why implement returned the plan at group %d", r.amendFrom), Text: r.evidence, Priority: 95})
	}
	if r.answer != "" {
		// The planner asked; a person with write access answered (report
		// checked the access before recording it).
		parts = append(parts, agent.ContextPart{Name: "Your question and a person's answer",
			Text: "Question: " + r.question + "\n\nAnswer: " + r.answer, Priority: 98})
		r.answerUsed = true
	}
	if failing(r.findings) {
		parts = append(parts, agent.ContextPart{Name: "Findings of the last round", Text: findingsText(r.findings), Priority: 90})
	}
	if r.round > 1 || r.amend {
		parts = append(parts, r.planParts(80)...)
	}
	parts = append(parts, r.instructionParts(ctx, 85)...)
	parts = append(parts, r.repoMap().parts...)
	return agent.Step{Task: task.String(), Context: parts}
}

// verifierStep is the verifier's task: the issue, the plan, what the gates
// noted of it (notes: the verifier runs only on a plan no gate failed, so
// these are INFO, such as a premise they could not run) and where the
// symbols the issue names are declared.
func (r *runner) verifierStep(ctx context.Context, notes []plan.Finding) agent.Step {
	task := fmt.Sprintf("Review the plan for issue #%d in %s/ against the issue and the code, and try to refute it. Call verdict with your objections, or none.", r.o.Issue, r.dir)
	parts := []agent.ContextPart{{Name: "The issue", Text: issueText(r.j.Issue.Title, r.j.Issue.Body), Priority: 100}}
	if cs, _ := r.criteria(); len(cs) > 0 {
		task += " With it, give the acceptance map: for each acceptance criterion below, the group that meets it and why, or group 0 and why no group does. Judge what each group does, not the words it shares with the criterion."
		parts = append(parts, agent.ContextPart{Name: "The issue's acceptance criteria, with the word match's first guess at the group that meets each",
			Text: criteriaText(cs), Priority: 95})
	}
	parts = append(parts, r.planParts(90)...)
	if len(notes) > 0 {
		parts = append(parts, agent.ContextPart{Name: "What the plan gates noted (not failures)", Text: findingsText(notes), Priority: 70})
	}
	parts = append(parts, r.instructionParts(ctx, 65)...)
	parts = append(parts, r.repoMap().symbolParts(60)...)
	return agent.Step{Task: task, Context: parts}
}

// instructionParts are the repository's instructions (AGENTS.md and the
// like, read from the base commit) for the files the issue is about, at
// priority: none when the base holds none.
func (r *runner) instructionParts(ctx context.Context, priority int) []agent.ContextPart {
	text := r.instr.Text(ctx, r.repoMap().focus)
	if text == "" {
		return nil
	}
	return []agent.ContextPart{{Name: instructions.Title, Text: text, Priority: priority}}
}

// planParts are the plan's files as written, read inside the work tree.
func (r *runner) planParts(priority int) []agent.ContextPart {
	c, err := plan.LoadChangeIn(r.o.Repo.Dir, r.dir)
	if err != nil {
		return []agent.ContextPart{{Name: "The plan", Text: "[not read: " + err.Error() + "]", Priority: priority}}
	}
	var parts []agent.ContextPart
	names := []string{"tasks.md", "proposal.md", "design.md"}
	// The names are listed inside the work tree (a symlinked specs/ does not
	// list a directory outside); c.ReadFile refuses a symlink among them.
	if rt, err := os.OpenRoot(r.o.Repo.Dir); err == nil {
		specs, _ := fs.Glob(rt.FS(), path.Join(filepath.ToSlash(r.dir), "specs", "*", "spec.md"))
		rt.Close()
		for _, s := range specs {
			names = append(names, strings.TrimPrefix(s, filepath.ToSlash(r.dir)+"/"))
		}
	}
	for i, name := range names {
		data, err := c.ReadFile(name)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				parts = append(parts, agent.ContextPart{Name: r.dir + "/" + name, Text: "[not read: " + err.Error() + "]", Priority: priority - i})
			}
			continue
		}
		parts = append(parts, agent.ContextPart{Name: r.dir + "/" + name, Text: capBytes(string(data), 6000), Priority: priority - i})
	}
	return parts
}

func issueText(title, body string) string {
	return "# " + title + "\n\n" + capBytes(body, 8000)
}

// maxListedFiles bounds the map's list of files (mapFiles spends it on what
// the issue names first); maxWalkedFiles bounds the walk itself, which only
// lists names, so a large repository's last files can still be found.
const (
	maxListedFiles = 2000
	maxWalkedFiles = 200_000
)

// repoMap is the repository as the prompts show it: the planner's parts
// (repoParts) and the symbol index alone, for the verifier. The tree outside
// the plan is the staging commit all Job long (whatever else a command
// changes is discarded), so a Job reads it once, on its first prompt.
type repoMap struct {
	// files is the map's list of files (mapFiles).
	files []string
	parts []agent.ContextPart
	index *agent.ContextPart // nil when the issue names no symbol
	// focus are the files most relevant to the issue: where a nested
	// AGENTS.md applies.
	focus []string
}

// repoMap is the Job's map of the repository, read on first use.
func (r *runner) repoMap() *repoMap {
	if r.repo == nil {
		r.repo = newRepoMap(r.o.Repo.Dir, r.j.Issue.Title+" "+r.j.Issue.Body)
	}
	return r.repo
}

// newRepoMap reads root for issue. The planner's parts are its files;
// where the symbols the issue names are declared (namedSymbols); then the
// files most relevant to the issue, most first: a file whose path the issue
// names, then the files that declare its symbols, then those that use them,
// then those whose names share its words. The prompt's packing drops the
// lowest priorities to fit the window.
func newRepoMap(root, issue string) *repoMap {
	files := repoFiles(root)
	read := func(rel string, max int64) (string, error) { return readInside(root, rel, max) }
	if rt, err := os.OpenRoot(root); err == nil {
		defer rt.Close()
		read = func(rel string, max int64) (string, error) { return readIn(rt, rel, max) }
	}
	symbols := namedSymbols(issue)
	scan := scanSymbols(scanOrder(files, issue, symbols), symbols, read)
	listed := mapFiles(files, issue, scan)
	m := &repoMap{files: listed, parts: []agent.ContextPart{{Name: "The repository's files", Text: capBytes(strings.Join(listed, "\n"), 4000), Priority: 50}}}
	if len(symbols) > 0 {
		index := scan.part(symbols, 45)
		m.index = &index
		m.parts = append(m.parts, index)
	}
	m.focus = relevantFiles(files, issue, scan, 3)
	for i, f := range m.focus {
		data, err := read(f, 16<<10)
		if err != nil {
			continue
		}
		m.parts = append(m.parts, agent.ContextPart{Name: f, Text: capBytes(data, 3000), Priority: 40 - i})
	}
	return m
}

// repoParts are the planner's parts of the repository for issue.
func repoParts(root, issue string) []agent.ContextPart { return newRepoMap(root, issue).parts }

// symbolParts is the symbol index alone, at priority, for the verifier:
// none when the issue names no symbol.
func (m *repoMap) symbolParts(priority int) []agent.ContextPart {
	if m.index == nil {
		return nil
	}
	p := *m.index
	p.Priority = priority
	return []agent.ContextPart{p}
}

// mapFiles are the files the map lists, at most maxListedFiles of files,
// spent on what the issue names first: the paths it names (whole, then by
// base name), the packages (folders) declaring the symbols it names, the
// files that use those symbols (callers and tests), the tests of the named
// paths' packages, then the rest in walk order. A large repository's files
// past the bound in walk order are listed when the issue points at them.
func mapFiles(files []string, issue string, scan symbolScan) []string {
	out := make([]string, 0, min(len(files), maxListedFiles))
	seen := map[string]bool{}
	add := func(f string) {
		if len(out) < maxListedFiles && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	named, byBase, packages, users := []string{}, []string{}, map[string]bool{}, []string{}
	for _, f := range files {
		switch base := path.Base(f); {
		case namesPath(issue, f):
			named = append(named, f)
		case base != f && strings.Contains(base, ".") && namesPath(issue, base):
			byBase = append(byBase, f)
		}
		if scan.declares[f] > 0 {
			packages[path.Dir(f)] = true
		}
		if scan.refers[f] > 0 {
			users = append(users, f)
		}
	}
	pointed := append(named, byBase...)
	for _, f := range pointed {
		add(f)
	}
	// Declaring files first, then the rest of their packages (their tests
	// among them), then the users.
	for _, f := range files {
		if scan.declares[f] > 0 {
			add(f)
		}
	}
	for _, f := range files {
		if packages[path.Dir(f)] {
			add(f)
		}
	}
	for _, f := range users {
		add(f)
	}
	for _, n := range pointed {
		for _, f := range files {
			if path.Dir(f) == path.Dir(n) && isTestFile(f) {
				add(f)
			}
		}
	}
	for _, f := range files {
		add(f)
	}
	return out
}

// scanOrder is the order the symbol scan reads files in: its byte budget
// (maxSymbolScan) runs out in a large repository, so first the paths the
// issue names, then the packages it qualifies a symbol with (fmt/ for
// fmt.Fprintf), then the rest in walk order.
func scanOrder(files []string, issue string, symbols []string) []string {
	quals := map[string]bool{}
	for _, sym := range symbols {
		for from := 0; ; {
			i := strings.Index(issue[from:], "."+sym)
			if i < 0 {
				break
			}
			i += from
			j := i
			for j > 0 && identPart(issue[j-1]) {
				j--
			}
			if j < i {
				quals[issue[j:i]] = true
			}
			from = i + 1
		}
	}
	if len(quals) == 0 {
		return files
	}
	var first, rest []string
	for _, f := range files {
		if namesPath(issue, f) || quals[path.Base(path.Dir(f))] {
			first = append(first, f)
		} else {
			rest = append(rest, f)
		}
	}
	return append(first, rest...)
}

// repoFiles are the work tree's regular files, repository-relative and
// sorted, at most maxWalkedFiles, without hidden folders (but .github),
// node_modules, vendor and archive folders; symlinks are not followed, and the walk stays inside the
// work tree even if a directory is swapped for a symlink during it.
func repoFiles(root string) []string {
	rt, err := os.OpenRoot(root)
	if err != nil {
		return nil
	}
	defer rt.Close()
	var files []string
	_ = fs.WalkDir(rt.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		name := d.Name()
		// Hidden directories are tools' (.venv, .tox, .idea) or roadmap's own checkout in the
		// reusable workflow's jobs (.roadmap-run): not the project's code. .github is kept.
		if d.IsDir() && p != "." && (strings.HasPrefix(name, ".") && name != ".github" || name == "node_modules" || name == "vendor" || name == "archive") {
			return filepath.SkipDir
		}
		if len(files) == maxWalkedFiles {
			return filepath.SkipAll
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	return files
}

// relevantFiles are at most n of files, most relevant to the issue first
// (repoParts says in what order); a file with nothing in common with the
// issue is never one, and neither is a plan file.
func relevantFiles(files []string, issue string, scan symbolScan, n int) []string {
	words := wordSet(issue)
	type scored struct {
		path  string
		score int
	}
	var ranked []scored
	for _, f := range files {
		if strings.HasPrefix(f, "openspec/") {
			continue
		}
		score := 100*scan.declares[f] + 10*scan.refers[f]
		switch base := path.Base(f); {
		case namesPath(issue, f):
			score += 1000
		case base != f && strings.Contains(base, ".") && namesPath(issue, base):
			score += 500 // by its name alone, which another file may share
		}
		for w := range wordSet(f) {
			if words[w] {
				score++
			}
		}
		if score > 0 {
			ranked = append(ranked, scored{f, score})
		}
	}
	sort.SliceStable(ranked, func(i, j int) bool { return ranked[i].score > ranked[j].score })
	var out []string
	for _, s := range ranked[:min(n, len(ranked))] {
		out = append(out, s.path)
	}
	return out
}

// namesPath: the issue names the file by its path, as a whole (not as a
// part of a longer path or name: "greet.go" is not named by "xgreet.go").
// A name shorter than four bytes is never taken as named.
func namesPath(issue, file string) bool {
	if len(file) < 4 {
		return false
	}
	for from := 0; ; {
		i := strings.Index(issue[from:], file)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(file)
		before := i == 0 || !pathByte(issue[i-1])
		after := end == len(issue) || !pathByte(issue[end]) || issue[end] == '.' && (end+1 == len(issue) || !pathByte(issue[end+1]))
		if before && after {
			return true
		}
		from = i + 1
	}
}

func pathByte(c byte) bool { return identPart(c) || c == '/' || c == '.' || c == '-' }

// readInside reads a regular file of the work tree through no symlink (one
// swapped in since the walk listed it could lead to .git/config, which
// os.Root alone would follow), at most max bytes.
func readInside(root, rel string, max int64) (string, error) {
	rt, err := os.OpenRoot(root)
	if err != nil {
		return "", err
	}
	defer rt.Close()
	return readIn(rt, rel, max)
}

// readIn is readInside on a root already open: the symbol scan of a large
// repository opens it once, not once a file.
func readIn(rt *os.Root, rel string, max int64) (string, error) {
	f, err := nofollow.OpenFile(rt, rel, os.O_RDONLY, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", rel)
	}
	data, err := io.ReadAll(io.LimitReader(f, max))
	return string(data), err
}

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) >= 4 && !stopWords[w] {
			m[w] = true
		}
	}
	return m
}

var stopWords = map[string]bool{"that": true, "with": true, "this": true, "from": true, "have": true, "when": true, "should": true, "each": true, "into": true, "what": true}

func capBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "\n[... cut ...]"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
