package gates

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/text"
)

// criterion is one acceptance criterion of an issue.
type criterion struct {
	n    int // 1-based, in the issue's order
	text string
}

const (
	maxCriteria     = 100
	maxCriterionLen = 500
)

// acceptanceHeadRe is the heading of the criteria: a Markdown heading, a bold
// line or a plain line that says "Acceptance" or "Acceptance criteria".
var acceptanceHeadRe = lazyRegexp(`(?i)^\s{0,3}(?:#{1,6}\s+)?(?:\*\*|__)?\s*acceptance(?:\s+criteria)?\s*:?\s*(?:\*\*|__)?\s*:?\s*$`)

// parseCriteria reads the acceptance criteria of an issue body: the bullets
// and checkboxes (-, *, +, •, 1.) under its first Acceptance heading, each
// with its indented continuation lines. The list ends at the next heading,
// or at an unindented line that is not a bullet once a bullet was read.
// Bounded: the body is cut at GitHub's 65,536 characters, at most 100
// criteria are read, each cut at 500 bytes.
func parseCriteria(body string) []criterion {
	if len(body) > maxIssueBody {
		body = body[:maxIssueBody]
	}
	md := newMD("", []byte(body))
	var out []criterion
	in := false
	for i, l := range md.lines {
		if md.code[i] {
			continue
		}
		if !in {
			in = acceptanceHeadRe().MatchString(l)
			continue
		}
		if lv, _ := heading(l); lv > 0 {
			break
		}
		if strings.TrimSpace(l) == "" {
			continue
		}
		if b := bulletRe().FindStringSubmatch(l); b != nil && len(b[1]) < 2 {
			if len(out) == maxCriteria {
				break
			}
			out = append(out, criterion{n: len(out) + 1, text: b[2]})
			continue
		}
		indented := strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "\t")
		switch {
		case len(out) > 0 && indented:
			out[len(out)-1].text += " " + strings.TrimSpace(l)
		case len(out) > 0:
			return trimCriteria(out)
		}
	}
	return trimCriteria(out)
}

func trimCriteria(cs []criterion) []criterion {
	for i := range cs {
		cs[i].text = text.Safe(cs[i].text, maxCriterionLen)
	}
	return cs
}

// stopwords are words too common to tie a criterion to a group, built on
// first use (package init runs on every roadmap invocation).
var stopwords = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be been by can could do does each
		every for from has have how if in into is it its may must no not of on or our shall
		should so than that the their them then there these they this those to was were what
		when where which while who will with would you your all any also only same such new
		when then given user users issue plan change changes test tests work works`) {
		m[w] = true
	}
	return m
})

// significant returns the significant words of text: lower case, split at
// anything not a letter or digit and at camelCase humps, at least three
// characters, not a stopword, lightly stemmed (a trailing s, es, ed, ing).
func significant(text string) map[string]bool {
	out := map[string]bool{}
	stop := stopwords()
	var word []rune
	flush := func() {
		w := strings.ToLower(string(word))
		word = word[:0]
		if len([]rune(w)) < 3 || stop[w] {
			return
		}
		w = stem(w)
		if !stop[w] {
			out[w] = true
		}
	}
	prev := rune(0)
	for _, r := range text {
		switch {
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			word = append(word, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			word = append(word, r)
		default:
			flush()
		}
		prev = r
	}
	flush()
	return out
}

func stem(w string) string {
	for _, suf := range []string{"ing", "ed", "es", "s"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 4 {
			return strings.TrimSuffix(w, suf)
		}
	}
	return w
}

// acRefRe is an explicit reference to criterion N: AC1, AC 1, AC-1, AC#1.
var acRefRe = lazyRegexp(`(?i)\bAC[ \-#]?(\d{1,3})\b`)

// groupText is all a group says: its title, its tasks and their verify commands.
func groupText(g plan.Group) string {
	parts := []string{g.Title}
	for _, t := range g.Tasks {
		parts = append(parts, t.Text)
	}
	return strings.Join(parts, "\n")
}

// mapsTo reports whether criterion c maps to a group with text gt: the
// group refers to it explicitly (AC<n>), or they share at least two
// significant words (the one, when the criterion has only one).
func mapsTo(c criterion, gt string) bool {
	for _, m := range acRefRe().FindAllStringSubmatch(gt, -1) {
		if n, err := strconv.Atoi(m[1]); err == nil && n == c.n {
			return true
		}
	}
	want := significant(c.text)
	if len(want) == 0 {
		return false
	}
	have := significant(gt)
	shared := 0
	for w := range want {
		if have[w] {
			shared++
		}
	}
	return shared >= min(2, len(want))
}

// acceptanceMap checks that every acceptance criterion of the issue maps to
// a task group (#3019): a criterion no group meets is a PR that closes the
// issue without doing what it asked.
func acceptanceMap(_ context.Context, s *state) error {
	if s.in.Issue == nil {
		return nil
	}
	cs := parseCriteria(s.in.Issue.Body)
	if len(cs) == 0 {
		s.add(plan.LevelInfo, AcceptanceMap, s.tasksFile(), 1, "%s has no acceptance criteria (no bullets under an Acceptance heading); nothing to map", s.issueRef())
		return nil
	}
	for _, m := range wordMatch(cs, s.tasks) {
		if len(m.Groups) == 0 {
			s.add(plan.LevelError, AcceptanceMap, s.tasksFile(), 1, "acceptance criterion %d of %s maps to no task group: %q; plan a group that meets it and name it (AC%d)", m.N, s.issueRef(), m.Text, m.N)
		}
	}
	return nil
}

// CriterionMatch is one acceptance criterion of an issue and the groups the
// word match maps it to: the first pass of the acceptance map, which the
// stage verifier's judgement then confirms or overrules (#3019).
type CriterionMatch struct {
	N      int    // 1-based, in the issue's order
	Text   string // one line, at most 500 bytes
	Groups []int  // the numbers of the groups it maps to, in the plan's order; none when unmapped
}

// MatchCriteria is the word match of the acceptance-map gate: each
// criterion of the issue body (parseCriteria) with the groups of t that
// refer to it or share its words (mapsTo). A nil t maps nothing.
func MatchCriteria(body string, t *plan.Tasks) []CriterionMatch {
	return wordMatch(parseCriteria(body), t)
}

func wordMatch(cs []criterion, t *plan.Tasks) []CriterionMatch {
	var groups []plan.Group
	if t != nil {
		groups = t.Groups
	}
	texts := make([]string, len(groups))
	for i, g := range groups {
		texts[i] = groupText(g)
	}
	out := make([]CriterionMatch, len(cs))
	for i, c := range cs {
		out[i] = CriterionMatch{N: c.n, Text: c.text}
		for j, gt := range texts {
			if mapsTo(c, gt) {
				out[i].Groups = append(out[i].Groups, groups[j].Number)
			}
		}
	}
	return out
}

// issueRef names the issue in a message: "issue #14", or "the issue" when
// its number is not known (plan validate --issue FILE).
func (s *state) issueRef() string {
	if s.in.Issue.Number > 0 {
		return "issue #" + strconv.Itoa(s.in.Issue.Number)
	}
	return "the issue"
}

// AcceptanceCriteria returns the acceptance criteria of an issue body as the
// acceptance gate reads them (parseCriteria): the review before ready reads
// the diff against them.
func AcceptanceCriteria(body string) []string {
	cs := parseCriteria(body)
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.text
	}
	return out
}
