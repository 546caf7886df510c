package gates

import (
	"strings"

	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/text"
)

// symbolMention is a symbol a task names in a code span that nothing in the
// repository declares at the staging commit.
type symbolMention struct {
	span   string // as written: `tax.Rate()`
	name   string // the declared name it needs: Rate
	group  int
	task   string
	line   int
	create bool // the task's wording declares it
}

// declareRe is the wording of a task that declares a symbol, beyond a
// file's create wording.
var declareRe = lazyRegexp(`(?i)\b(?:declare[sd]?|declaring|define[sd]?|defining|introduce[sd]?|introducing|implement(?:s|ed|ing)?)\b`)

// codeSymbol reads a code span as a symbol a task uses or declares:
// `Name()`, `pkg.Name`, `Type.Method`, `snake_name` or a name with a capital
// letter, at least three characters. A lowercase word alone (`discount`,
// `fails`) is prose set in code, not a symbol; a path is a path. name is the
// declared name the span needs (its last element).
func codeSymbol(span string) (name string, ok bool) {
	span = strings.TrimSpace(span)
	if asPath(span) != "" {
		return "", false
	}
	call := false
	if i := strings.IndexByte(span, '('); i > 0 && strings.HasSuffix(span, ")") {
		span, call = span[:i], true
	}
	if !goSymbolRe().MatchString(span) || len(span) < 3 {
		return "", false
	}
	if !call && !strings.ContainsAny(span, "._") && strings.ToLower(span) == span {
		return "", false
	}
	name = span
	if i := strings.LastIndexByte(span, '.'); i >= 0 {
		name = span[i+1:]
	}
	return name, len(name) >= 3
}

// groupOrderBySymbols is the group-order rule read by symbols (#3017): a
// group that uses a symbol a later group declares fails as the group that
// names a file a later group creates does, though it names only its own
// file (`Call `tax.Rate()` in price.go` before the group that adds Rate).
// A symbol something declares at the staging commit is never created; one
// no task declares (with declare or create wording) is not judged.
func (s *state) groupOrderBySymbols() {
	ms, declarer := s.symbolMentions()
	reported := map[string]bool{}
	for _, m := range ms {
		d, ok := declarer[m.name]
		if !ok || d.group <= m.group || reported[m.task+"\x00"+m.name] {
			continue
		}
		reported[m.task+"\x00"+m.name] = true
		s.add(plan.LevelError, GroupOrder, s.tasksFile(), m.line,
			"group %d (task %s) uses %s, which nothing declares until group %d declares %s (task %s): move the declaring task into group %d or earlier",
			m.group, m.task, text.Safe(m.span, 100), d.group, m.name, d.task, m.group)
	}
}

// symbolMentions are the symbols the tasks name that nothing declares at
// the staging commit, and for each name the first mention that declares it
// (create or declare wording).
func (s *state) symbolMentions() ([]symbolMention, map[string]symbolMention) {
	var ix *goIndex
	var ms []symbolMention
	for _, g := range s.tasks.Groups {
		for _, t := range g.Tasks {
			body := taskBody(t.Text, t.Verify)
			words := stripSpans(body)
			create := createRe().MatchString(words) || declareRe().MatchString(words)
			for _, sp := range codeSpans(body) {
				name, ok := codeSymbol(sp)
				if !ok {
					continue
				}
				if ix == nil {
					ix = s.goSource()
				}
				if len(ix.resolve(sp)) > 0 || len(ix.decls[name]) > 0 {
					continue // declared at the staging commit
				}
				ms = append(ms, symbolMention{span: sp, name: name, group: g.Number, task: t.ID, line: t.Line, create: create})
			}
		}
	}
	declarer := map[string]symbolMention{}
	for _, m := range ms {
		if _, ok := declarer[m.name]; m.create && !ok {
			declarer[m.name] = m
		}
	}
	return ms, declarer
}
