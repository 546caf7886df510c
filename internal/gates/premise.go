package gates

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/text"
)

// premiseKind is what a premise claims.
type premiseKind int

const (
	premiseExists premiseKind = iota + 1
	premiseAbsent
	premiseDefined
	premiseUndefined
	premiseContains
	premiseLacks
	premiseFails
	premisePasses
)

// premise is one bullet of a plan's `## Premises` section.
type premise struct {
	kind premiseKind
	path string // the file (exists, defined, contains kinds)
	arg  string // the symbol, the text, or the command
	file string // the plan file it is stated in
	line int
	text string // the bullet as written, one-lined
}

const maxPremises = 100

// A code span's placeholder in stripSpans' output.
const spanRe = "\x00(\\d+)\x01"

// premiseForms are the premise sentences the gate reads, compiled on first
// use.
var premiseForms = sync.OnceValue(func() []premiseForm {
	return []premiseForm{
		{regexp.MustCompile(`^` + spanRe + ` (?:exists|is present)$`), premiseExists},
		{regexp.MustCompile(`^` + spanRe + ` (?:does not exist|doesn't exist|is absent|is missing)$`), premiseAbsent},
		{regexp.MustCompile(`^` + spanRe + ` is (?:defined|declared) in ` + spanRe + `$`), premiseDefined},
		{regexp.MustCompile(`^` + spanRe + ` is not (?:defined|declared) in ` + spanRe + `$`), premiseUndefined},
		{regexp.MustCompile(`^` + spanRe + ` (?:contains|mentions) ` + spanRe + `$`), premiseContains},
		{regexp.MustCompile(`^` + spanRe + ` (?:does not contain|doesn't contain|does not mention) ` + spanRe + `$`), premiseLacks},
		{regexp.MustCompile(`^` + spanRe + ` (?:fails|exits non-zero)$`), premiseFails},
		{regexp.MustCompile(`^` + spanRe + ` (?:passes|succeeds|exits 0)$`), premisePasses},
	}
})

type premiseForm struct {
	re   *regexp.Regexp
	kind premiseKind
}

var premiseFluff = lazyRegexp(`^(?:the file |file |the command |command |running )|(?: today| now| at the staging commit)$`)

// parsePremise reads one premise bullet. ok is false when it does not follow
// the grammar (docs/gates.md).
func parsePremise(text string) (premise, bool) {
	spans := codeSpans(text)
	words := strings.ToLower(strings.Join(strings.Fields(stripSpans(text)), " "))
	words = strings.TrimRight(words, ".;")
	for range 2 {
		words = premiseFluff().ReplaceAllString(words, "")
	}
	for _, f := range premiseForms() {
		m := f.re.FindStringSubmatch(words)
		if m == nil {
			continue
		}
		get := func(i int) (string, bool) {
			k, err := strconv.Atoi(m[i])
			if err != nil || k >= len(spans) || spans[k] == "" {
				return "", false
			}
			return spans[k], true
		}
		a, ok := get(1)
		if !ok {
			return premise{}, false
		}
		p := premise{kind: f.kind}
		switch f.kind {
		case premiseExists, premiseAbsent:
			p.path = cleanRel(a)
			if p.path == "" {
				return premise{}, false
			}
		case premiseDefined, premiseUndefined, premiseContains, premiseLacks:
			b, ok := get(2)
			if !ok {
				return premise{}, false
			}
			if f.kind == premiseDefined || f.kind == premiseUndefined {
				p.arg, p.path = strings.TrimSuffix(a, "()"), cleanRel(b)
				if !goSymbolRe().MatchString(p.arg) {
					return premise{}, false
				}
			} else {
				p.path, p.arg = cleanRel(a), b
			}
			if p.path == "" {
				return premise{}, false
			}
		case premiseFails, premisePasses:
			p.arg = a
		}
		return p, true
	}
	return premise{}, false
}

// goSymbolRe is a Go identifier, or Type.Method.
var goSymbolRe = lazyRegexp(`^[\pL_][\pL\pN_]*(?:\.[\pL_][\pL\pN_]*)?$`)

// premises returns the premises stated in the plan's proposal.md and
// design.md, and the bullets of their Premises sections that do not follow
// the grammar.
func (s *state) premises() (ok []premise, bad []premise, sections int) {
	for _, name := range []string{"proposal.md", "design.md"} {
		md := s.docs[name]
		if md == nil {
			continue
		}
		start, end, found := md.section("premises", "premise")
		if !found {
			continue
		}
		sections++
		for _, b := range md.bullets(start, end) {
			if len(ok)+len(bad) >= maxPremises {
				return ok, bad, sections
			}
			p, good := parsePremise(b.text)
			p.file, p.line, p.text = md.rel, b.line, text.Safe(b.text, 300)
			if good {
				ok = append(ok, p)
			} else {
				bad = append(bad, p)
			}
		}
	}
	return ok, bad, sections
}

// premiseProbe checks each premise the plan states against the work tree at
// the staging commit (#3011): a plan built on a false premise is wrong
// before any group runs.
func premiseProbe(ctx context.Context, s *state) error {
	ps, bad, _ := s.premises()
	for _, p := range bad {
		s.add(plan.LevelWarning, PremiseProbe, p.file, p.line, "premise %q does not follow the premise grammar (docs/gates.md), so it cannot be probed", p.text)
	}
	s.probeIssueClaims(append(append([]premise(nil), ps...), bad...))
	for _, p := range ps {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.probe(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

func (s *state) probe(ctx context.Context, p premise) error {
	falsePremise := func(format string, args ...any) {
		s.add(plan.LevelError, PremiseProbe, p.file, p.line, "premise %q is false at the staging commit: %s", p.text, fmt.Sprintf(format, args...))
	}
	switch p.kind {
	case premiseExists:
		if !s.statExists(p.path) {
			falsePremise("%s does not exist%s", p.path, s.elsewhere(p.path))
		}
	case premiseAbsent:
		if s.statExists(p.path) {
			falsePremise("%s exists", p.path)
		}
	case premiseDefined, premiseUndefined:
		decls, err := s.declsIn(p.path)
		if err != nil {
			falsePremise("%s", err.Error())
			return nil
		}
		has := false
		for _, d := range decls {
			if d.name == p.arg {
				has = true
				if p.kind == premiseUndefined {
					falsePremise("%s declares %s at line %d", p.path, p.arg, d.line)
				}
				break
			}
		}
		if !has && p.kind == premiseDefined {
			names := make([]string, 0, len(decls))
			for _, d := range decls {
				names = append(names, d.name)
			}
			if len(names) == 0 {
				falsePremise("%s declares nothing at top level", p.path)
			} else {
				falsePremise("%s does not declare %s; it declares %s", p.path, p.arg, listed(names))
			}
		}
	case premiseContains, premiseLacks:
		src, err := s.readFile(p.path, maxRepoFile)
		if err != nil {
			if p.kind == premiseContains {
				falsePremise("%s", readProblem(p.path, err))
			}
			if !errors.Is(err, fs.ErrNotExist) && p.kind == premiseLacks {
				falsePremise("%s", readProblem(p.path, err))
			}
			return nil
		}
		i := bytes.Index(src, []byte(p.arg))
		switch {
		case i < 0 && p.kind == premiseContains:
			falsePremise("no line of %s contains %q", p.path, p.arg)
		case i >= 0 && p.kind == premiseLacks:
			falsePremise("%s line %d contains %q", p.path, bytes.Count(src[:i], []byte("\n"))+1, p.arg)
		}
	case premiseFails, premisePasses:
		if s.in.Run == nil {
			s.add(plan.LevelInfo, PremiseProbe, p.file, p.line, "premise %q not run: no isolation boundary to run commands in", p.text)
			return nil
		}
		code, out, err := s.in.Run.RunCommand(ctx, p.arg)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			s.add(plan.LevelWarning, PremiseProbe, p.file, p.line, "premise %q could not be run: %s", p.text, text.Safe(err.Error(), 300))
			return nil
		}
		switch {
		case p.kind == premiseFails && code == 0:
			falsePremise("`%s` exits 0%s", p.arg, outputTail(out))
		case p.kind == premisePasses && code != 0:
			falsePremise("`%s` exits %d%s", p.arg, code, outputTail(out))
		}
	}
	return nil
}

// statExists reports whether rel exists in the work tree (the plan's own
// files included: a premise may name them).
func (s *state) statExists(rel string) bool {
	_, err := s.root.Stat(rel)
	return err == nil
}

// elsewhere names files with the same base name elsewhere in the repository,
// as evidence for a premise that a path exists.
func (s *state) elsewhere(rel string) string {
	s.walk()
	base := path.Base(rel)
	var found []string
	for _, f := range s.files {
		if path.Base(f) == base {
			found = append(found, f)
		}
	}
	if len(found) == 0 {
		return ""
	}
	return "; " + base + " is at " + listed(found)
}

func readProblem(rel string, err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return rel + " does not exist"
	case errors.Is(err, errTooLarge):
		return rel + " is too large to read"
	}
	return rel + " cannot be read"
}

// outputTail is the end of a command's output as evidence: one line, bounded.
func outputTail(out string) string {
	out = strings.TrimSpace(out)
	if out == "" {
		return ""
	}
	if len(out) > 400 {
		out = out[len(out)-400:]
	}
	return "; output ends: " + text.Safe(out, 400)
}
