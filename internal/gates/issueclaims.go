package gates

import (
	"path"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/text"
)

// maxIssueClaims bounds the claims read from one issue.
const maxIssueClaims = 50

// issueClaim is a file or a symbol the issue speaks of as there.
type issueClaim struct {
	span string // as written
	path string // a path claim; "" for a symbol
	name string // a symbol claim's declared name
	line int    // the issue body's line
}

// issueClaims reads what the issue says exists: each path and each symbol
// (codeSymbol) set in code on a line of its body, outside fenced code and
// not on a line that asks for it to be made (create, declare or request
// wording: "add `internal/tax/tax.go`", "callers need `Hello`"). The body
// is the untrusted author's: it is read bounded. A qualified symbol is a claim only when its qualifier names
// a package of the repository (`http.Client` is the standard library's).
func (s *state) issueClaims() []issueClaim {
	body := s.in.Issue.Body
	if len(body) > maxIssueBody {
		body = body[:maxIssueBody]
	}
	md := newMD("issue", []byte(body))
	var out []issueClaim
	seen := map[string]bool{}
	var ix *goIndex
	for i, l := range md.lines {
		if md.code[i] || len(out) >= maxIssueClaims {
			continue
		}
		words := stripSpans(l)
		if createRe().MatchString(words) || declareRe().MatchString(words) || requestRe().MatchString(words) {
			continue
		}
		for _, sp := range codeSpans(l) {
			if seen[sp] || len(out) >= maxIssueClaims {
				continue
			}
			if p := asPath(sp); p != "" && !strings.HasPrefix(p, "openspec/") {
				seen[sp] = true
				out = append(out, issueClaim{span: sp, path: p, line: i + 1})
				continue
			}
			name, ok := codeSymbol(sp)
			if !ok {
				continue
			}
			if ix == nil {
				ix = s.goSource()
			}
			if q, _, dotted := strings.Cut(strings.TrimSuffix(sp, "()"), "."); dotted && !ix.hasPackage(q) && len(ix.decls[q]) == 0 {
				continue // another module's: nothing here to probe
			}
			seen[sp] = true
			out = append(out, issueClaim{span: sp, name: name, line: i + 1})
		}
	}
	return out
}

// requestRe is the wording of a line that asks for something or says it is
// absent ("callers need `Hello`", "there is no `Retry`"): what it names is
// wanted, not claimed to be there.
var requestRe = lazyRegexp(`(?i)\b(?:need(?:s|ed)?|want(?:s|ed)?|should|shall|must|would like|wish|missing|lack(?:s|ing)?|no|without|support|provide|expose|please|could|todo)\b`)

// hasPackage reports whether the repository has a package (or a module
// file, for another language) by the name q.
func (ix *goIndex) hasPackage(q string) bool {
	for _, f := range ix.files {
		if f.pkg == q || path.Base(f.dir) == q {
			return true
		}
	}
	for _, f := range ix.other {
		if strings.TrimSuffix(path.Base(f.rel), path.Ext(f.rel)) == q {
			return true
		}
	}
	return false
}

// probeIssueClaims checks what the issue says exists against the work tree
// at the staging commit (#3011): the issue's author is not the repository,
// and a plan built on a file or a function that is not there is wrong
// before any group runs. A false claim fails the plan unless one of its
// premises names the same file or symbol: the plan saw it and planned for
// what is there.
func (s *state) probeIssueClaims(premises []premise) {
	if s.in.Issue == nil {
		return
	}
	acknowledged := func(c issueClaim) (premise, bool) {
		for _, p := range premises {
			for _, sp := range codeSpans(p.text) {
				if name, ok := codeSymbol(sp); (c.path != "" && cleanRel(sp) == c.path) || (c.name != "" && ok && name == c.name) {
					return p, true
				}
			}
		}
		return premise{}, false
	}
	var ix *goIndex
	for _, c := range s.issueClaims() {
		var what string
		switch {
		case c.path != "":
			// Stat, not the walk's index: an issue may well name a
			// file of a hidden folder (.github/workflows/ci.yml).
			if s.statExists(c.path) {
				continue
			}
			what = c.path + " does not exist" + s.elsewhere(c.path)
		default:
			if ix == nil {
				ix = s.goSource()
			}
			if len(ix.resolve(c.span)) > 0 || len(ix.decls[c.name]) > 0 {
				continue
			}
			what = "nothing in the repository declares " + c.name
		}
		if p, ok := acknowledged(c); ok {
			s.add(plan.LevelInfo, PremiseProbe, p.file, p.line, "%s (line %d) names %s, which is not there (%s); the plan's premise %q says so", s.issueRef(), c.line, text.Safe(c.span, 100), what, p.text)
			continue
		}
		file, line := s.premiseAnchor()
		s.add(plan.LevelError, PremiseProbe, file, line,
			"%s (line %d) names %s as if it were there, but at the staging commit %s: state it under ## Premises (for example `%s` does not exist) and plan for what is there, or ask the issue's author",
			s.issueRef(), c.line, text.Safe(c.span, 100), what, text.Safe(c.span, 100))
	}
}

// premiseAnchor is where a finding about the plan's premises points: the
// Premises section of proposal.md, else its first line.
func (s *state) premiseAnchor() (string, int) {
	md := s.docs["proposal.md"]
	if md == nil {
		return s.tasksFile(), 1
	}
	if start, _, ok := md.section("premises", "premise"); ok {
		return md.rel, start
	}
	return md.rel, 1
}
