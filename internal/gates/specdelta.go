package gates

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/plan"
)

// deltaSpecs returns the delta specs of the change (specs/<capability>/spec.md
// holding at least one delta section), with the line of their first section.
func (s *state) deltaSpecs() []citation {
	specs := path.Join(s.changeRel, "specs")
	var out []citation
	_ = fs.WalkDir(s.root.FS(), specs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && p != specs {
				return fs.SkipDir
			}
			return nil
		}
		if d.Name() != "spec.md" || path.Dir(p) == specs || !d.Type().IsRegular() || len(out) >= 1000 {
			return nil
		}
		src, err := s.readFile(p, maxPlanFile)
		if err != nil {
			return nil
		}
		capability := strings.TrimPrefix(path.Dir(p), specs+"/")
		delta := plan.ParseDelta(plan.ParseDoc(p, src), capability)
		if len(delta.Present) == 0 {
			return nil
		}
		line := 1
		for i, l := range newMD(p, src).lines {
			if lv, text := heading(l); lv == 2 && strings.HasSuffix(strings.ToLower(text), "requirements") {
				line = i + 1
				break
			}
		}
		out = append(out, citation{span: capability, file: p, line: line})
		return nil
	})
	return out
}

// specDelta checks that the change's delta specs match what it declares
// (#3013): a behaviour change with no delta spec leaves the specs false
// after the archive; a delta spec on a change that declares no behaviour
// change edits requirements nothing in the change needs.
func specDelta(_ context.Context, s *state) error {
	pk := s.planKind()
	deltas := s.deltaSpecs()
	var why string
	file, line := s.tasksFile(), 1
	if pk.is == changes {
		why, file, line = "the proposal declares `Kind: "+pk.word+"`", pk.file, pk.line
	} else {
	tasks:
		for _, g := range s.tasks.Groups {
			for _, t := range g.Tasks {
				if t.Fails {
					why, line = "task "+t.ID+" has a `fails` verify (a behaviour change)", t.Line
					break tasks
				}
			}
		}
	}
	if pk.is == changesNone {
		for _, d := range deltas {
			s.add(plan.LevelError, SpecDelta, d.file, d.line, "delta spec for %s, but %s:%d declares %s (no behaviour change): drop the delta spec, or declare the change a feat or fix", d.span, pk.file, pk.line, pk.word)
		}
		if why != "" {
			s.add(plan.LevelError, SpecDelta, file, line, "%s, but %s:%d declares %s (no behaviour change): a change with a failing test changes behaviour", why, pk.file, pk.line, pk.word)
		}
		return nil
	}
	if why != "" && len(deltas) == 0 {
		s.add(plan.LevelError, SpecDelta, file, line, "%s, but the change has no delta spec: add %s/specs/<capability>/spec.md with the requirement it adds or modifies", why, s.changeRel)
	}
	// The paths decide too, not only the declaration: a change whose tasks
	// touch only documentation changes no behaviour, so a delta spec edits
	// requirements nothing in it implements.
	if docs, ok := s.docsOnly(); ok && len(deltas) > 0 && !s.hasFailsVerify() {
		declared := ""
		if pk.is == changes {
			declared = fmt.Sprintf(" (%s:%d declares %s)", pk.file, pk.line, pk.word)
		}
		for _, d := range deltas {
			s.add(plan.LevelError, SpecDelta, d.file, d.line, "delta spec for %s, but the tasks change only %s%s, no source: drop the delta spec, or plan the code that implements it", d.span, listed(docs), declared)
		}
	}
	return nil
}

// docExt are the extensions of documentation files.
var docExt = map[string]bool{".md": true, ".markdown": true, ".rst": true, ".adoc": true}

// docsOnly reports whether every path the tasks name (the plan's own
// openspec/ files aside) is documentation, and lists them; false when the
// tasks name no path, or a symbol a file of the repository declares (the
// task changes that file).
func (s *state) docsOnly() ([]string, bool) {
	var docs []string
	for _, p := range TaskPaths(s.tasks) {
		if p == "openspec" || strings.HasPrefix(p, "openspec/") {
			continue
		}
		base := path.Base(p)
		if !docExt[strings.ToLower(path.Ext(p))] && !knownDocNames[strings.TrimSuffix(base, path.Ext(base))] {
			return nil, false
		}
		docs = append(docs, p)
	}
	if len(docs) == 0 {
		return nil, false
	}
	for _, g := range s.tasks.Groups {
		for _, t := range g.Tasks {
			for _, sp := range codeSpans(taskBody(t.Text, t.Verify)) {
				if _, ok := codeSymbol(sp); ok {
					return nil, false // a symbol: code, declared or to be
				}
			}
		}
	}
	return docs, true
}

// knownDocNames are documentation files named without a doc extension.
var knownDocNames = map[string]bool{"README": true, "CHANGELOG": true, "CONTRIBUTING": true, "LICENSE": true, "NOTICE": true, "AUTHORS": true}

// hasFailsVerify reports whether a task plans a failing test.
func (s *state) hasFailsVerify() bool {
	for _, g := range s.tasks.Groups {
		for _, t := range g.Tasks {
			if t.Fails {
				return true
			}
		}
	}
	return false
}
