package gates

import (
	"errors"
	"io/fs"
	"path"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/plan"
)

// behaviour is what the plan, or one group of it, declares about behaviour.
type behaviour int

const (
	undeclared  behaviour = iota
	changes               // feat, fix: observable behaviour changes
	changesNone           // refactor, docs, tests, chore, ci, build, style
)

// kinds maps a declared kind word to what it says about behaviour.
var kinds = map[string]behaviour{
	"feat": changes, "feature": changes, "fix": changes, "behaviour": changes, "behavior": changes,
	"refactor": changesNone, "docs": changesNone, "doc": changesNone, "test": changesNone,
	"tests": changesNone, "chore": changesNone, "ci": changesNone, "build": changesNone, "style": changesNone,
}

// kindLineRe is the proposal's `Kind: <word>` line (bold and list markers allowed).
var kindLineRe = lazyRegexp(`^\s*(?:[-*+]\s+)?(?:\*\*|__)?kind(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*` + "`?" + `([A-Za-z-]+)`)

// planKind reads the proposal's declaration: a `Kind: <word>` line in
// proposal.md, or `skip_specs: true` in .openspec.yaml (OpenSpec's own
// marker for a change that modifies no spec). file and line say where it was
// declared; word is what was written.
type planKind struct {
	is   behaviour
	word string
	file string
	line int
}

func (s *state) planKind() planKind {
	if md := s.docs["proposal.md"]; md != nil {
		for i, l := range md.lines {
			if md.code[i] {
				continue
			}
			m := kindLineRe().FindStringSubmatch(strings.ToLower(l))
			if m == nil {
				continue
			}
			return planKind{is: kinds[m[1]], word: m[1], file: md.rel, line: i + 1}
		}
	}
	rel := path.Join(s.changeRel, plan.MetadataFile)
	src, err := s.readFile(rel, 64<<10)
	if err == nil {
		for i, l := range strings.Split(string(src), "\n") {
			if skipSpecsRe().MatchString(l) {
				return planKind{is: changesNone, word: "skip_specs: true", file: rel, line: i + 1}
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return planKind{}
	}
	return planKind{}
}

// implementRe is the wording of a task that writes code.
var implementRe = lazyRegexp(`(?i)\bimplement(?:s|ed|ing)?\b`)

var skipSpecsRe = lazyRegexp(`^skip_specs\s*:\s*(?:true|"true"|'true')\s*(?:#.*)?$`)

// groupTagRe is a kind tag at the end of a group title: `## 2. Rename (refactor)`.
var groupTagRe = lazyRegexp(`(?i)\((feat|feature|fix|behaviou?r|refactor|docs?|tests?|chore|ci|build|style)\)\s*$`)

// groupKind is the group's own declaration, from its title's tag.
func groupKind(g plan.Group) behaviour {
	m := groupTagRe().FindStringSubmatch(g.Title)
	if m == nil {
		return undeclared
	}
	return kinds[strings.ToLower(m[1])]
}

// groupBehaviour decides whether a group changes behaviour, and why:
// its title tag first, then a `fails` verify (a failing test means a
// behaviour is coming), then the proposal's kind, then what it touches (a
// backticked source file that is not a test) or says ("implement").
func (s *state) groupBehaviour(g plan.Group, pk planKind) (behaviour, string) {
	switch groupKind(g) {
	case changes:
		return changes, "its title is tagged as a behaviour change"
	case changesNone:
		return changesNone, "its title is tagged as no behaviour change"
	}
	for _, t := range g.Tasks {
		if t.Fails {
			return changes, "task " + t.ID + " has a `fails` verify"
		}
	}
	if pk.is == changesNone {
		return changesNone, "the proposal declares " + pk.word
	}
	for _, t := range g.Tasks {
		for _, sp := range codeSpans(taskBody(t.Text, t.Verify)) {
			if p := asPath(sp); p != "" && isCodePath(p) {
				return changes, "task " + t.ID + " changes " + p
			}
		}
		if implementRe().MatchString(taskBody(t.Text, t.Verify)) {
			return changes, "task " + t.ID + " implements code"
		}
	}
	return changesNone, "it changes no source file"
}
