package blockers

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/issueref"
)

// Ref is an issue reference; Repo "" is the item's own repository
// ("owner/name" otherwise).
type Ref struct {
	Repo   string
	Number int
}

// String is the reference as a person writes it: #12 or owner/repo#12.
func (r Ref) String() string {
	if r.Repo == "" {
		return "#" + strconv.Itoa(r.Number)
	}
	return r.Repo + "#" + strconv.Itoa(r.Number)
}

// MaxRefs bounds the blockers one body yields: a caller reads their states
// in one GraphQL query of 100 issues. A body that names more gives the first
// MaxRefs; len(FromBody(b)) == MaxRefs is how a caller knows to say so.
const MaxRefs = 100

var (
	// phraseRE is what comes before a list of blockers in a sentence.
	// "dependencies:" and "blockers:" count only where a line starts.
	phraseRE = regexp.MustCompile(`\b(?:blocked\s+(?:by|on)|depends?\s+on|dependent\s+on|after)\b|^[\s>*_+-]*(?:dependencies|blockers)[*_\s]*:`)
	// headingRE is a line that heads a list of blockers: "## Dependencies",
	// "**Blocked by:**", "Depends on:".
	headingRE  = regexp.MustCompile(`^\s{0,3}(?:#{1,6}\s+)?[*_]{0,2}\s*(?:blocked\s+(?:by|on)|blockers|dependencies|depends\s+on)\s*:?\s*[*_]{0,2}\s*:?\s*#*\s*$`)
	listItemRE = regexp.MustCompile(`^\s{0,12}(?:[-*+]|\d{1,9}[.)])\s`)
	quoteRE    = regexp.MustCompile(`^\s{0,3}>`)
	// fillerRE may stand between a phrase, or a separator, and the next
	// reference: "blocked by: the issue #4", "**Blocked by** #4".
	fillerRE = regexp.MustCompile(`^[\s:*_]*(?:(?:the|issues?)\s+)*`)
	// sepRE joins references in one list: "#1, #2 and #3", "#1 & #2".
	sepRE = regexp.MustCompile(`^\s*(?:,|&|/|\+|\band\b|\bor\b)?`)
	// negRE ends the text before a phrase that says the opposite: "not
	// blocked by", "no longer depends on", "doesn't depend on".
	negRE = regexp.MustCompile(`(?:\bnot|\bno\s+longer|\bnever|n't|n’t|\bwithout|\bunlike)(?:\s+[a-z]+){0,2}[\s*_]*$`)
	// cueRE in the sentence before "after" makes it an order, not a story:
	// "Start this issue after #3", "do it only after #3" (but not "it broke
	// after #3").
	cueRE = regexp.MustCompile(`\b(?:start|begin|do|implement|tackle|pick|merge|land|only|wait|schedule|work|should|must)\b`)
	// landsRE after the references of "after" makes it an order too:
	// "after #3 merges", "after #3 is merged".
	landsRE = regexp.MustCompile(`^\s*(?:lands|merges|closes|is\s+(?:merged|closed|done|in)|has\s+(?:landed|merged|been\s+merged))\b`)
	// sentenceEndRE ends a sentence: what came before it is not the cue's.
	sentenceEndRE = regexp.MustCompile(`[.!?;]\s`)
	commentRE     = regexp.MustCompile(`(?s)<!--.*?(?:-->|$)`)
	strikeRE      = regexp.MustCompile(`~~[^~]*~~`)
)

// lookBehind bounds how far back from a phrase the cue and the negation are
// looked for, so a long line costs linear time.
const lookBehind = 160

// FromBody returns the blockers a person wrote in an issue body, in order,
// each once (at most MaxRefs): "Blocked by #12", "blocked on #3 (must merge
// first)", "Depends on owner/repo#4, #5 and #6", "Start this issue after #3
// and after the issue #4", "Dependencies: #7", and a heading ("## Blocked
// by", "**Dependencies**", "Depends on:") followed by a list whose items'
// references all count. "after #N" counts as an order (a cue such as
// start, do, only, merge, wait before it in its sentence, or "merges" / "is
// merged" after the references), not in a story ("it broke after #N"). A
// phrase said the other way ("not blocked by #3", "no longer depends on
// #3") does not count. Nothing is read inside fenced code, inline code,
// HTML comments (an issue template's hints), struck-through text (a
// blocker a person crossed out) or quoted lines (someone else's words). A
// reference is issueref's: #N, owner/repo#N or an issue URL.
func FromBody(body string) []Ref {
	body = commentRE.ReplaceAllString(body, "")
	c := collector{seen: map[Ref]bool{}}
	var fence issueref.Fence
	inList := false // under a heading of blockers, until the list ends
	for _, line := range strings.Split(body, "\n") {
		if c.full() {
			break
		}
		line = strings.TrimRight(line, "\r")
		if fence.Skip(line) {
			continue
		}
		if quoteRE.MatchString(line) {
			inList = false
			continue
		}
		line = strikeRE.ReplaceAllStringFunc(issueref.StripCode(line), blank)
		lower := asciiLower(line)
		if headingRE.MatchString(lower) {
			inList = true
			continue
		}
		if inList {
			switch {
			case listItemRE.MatchString(line):
				for _, m := range issueref.Find(line) {
					c.add(m.Ref)
				}
				continue
			case strings.TrimSpace(line) == "":
				continue
			default:
				inList = false
			}
		}
		c.phrases(line, lower)
	}
	return c.out
}

type collector struct {
	out  []Ref
	seen map[Ref]bool
}

func (c *collector) full() bool { return len(c.out) >= MaxRefs }

func (c *collector) add(r issueref.Ref) {
	k := Ref(r.Key())
	if c.full() || c.seen[k] {
		return
	}
	c.seen[k] = true
	c.out = append(c.out, Ref(r))
}

// phrases adds the references listed after each phrase of the line.
func (c *collector) phrases(line, lower string) {
	locs := phraseRE.FindAllStringIndex(lower, -1)
	if locs == nil {
		return
	}
	refs := issueref.Find(line)
	for _, loc := range locs {
		before := lower[max(0, loc[0]-lookBehind):loc[0]]
		if negRE.MatchString(before) {
			continue
		}
		list := listAt(line, refs, loc[1])
		if len(list) == 0 {
			continue
		}
		if strings.HasPrefix(lower[loc[0]:], "after") && !order(before, window(lower, list[len(list)-1].End)) {
			continue
		}
		for _, m := range list {
			c.add(m.Ref)
		}
	}
}

// listAt is the run of references that starts at pos: each after fillers
// and a separator ("the issue", ",", "and").
func listAt(line string, refs []issueref.Match, pos int) []issueref.Match {
	var list []issueref.Match
	for {
		pos += len(fillerRE.FindString(window(line, pos)))
		i := sort.Search(len(refs), func(i int) bool { return refs[i].Start >= pos })
		if i == len(refs) || refs[i].Start != pos {
			return list
		}
		list = append(list, refs[i])
		pos = refs[i].End
		pos += len(sepRE.FindString(window(line, pos)))
	}
}

// window is the few bytes after pos that a filler or a separator may
// span: matching them on the rest of a long line costs its length each time.
func window(line string, pos int) string { return line[pos:min(len(line), pos+64)] }

// order: "after" here is an order to wait, from the words around it.
func order(before, after string) bool {
	if ends := sentenceEndRE.FindAllStringIndex(before, -1); ends != nil {
		before = before[ends[len(ends)-1][1]:]
	}
	return cueRE.MatchString(before) || landsRE.MatchString(after)
}

// blank keeps a struck span's width, so positions stay where they were.
func blank(s string) string { return strings.Repeat(" ", len(s)) }

// asciiLower lower-cases A-Z only, so every byte stays where it was (the
// phrases are ASCII; strings.ToLower may change a line's length).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
