package plan

import (
	"regexp"
	"sort"
	"strings"
)

// Op is a delta section's operation.
type Op string

// The four delta operations, in the order OpenSpec applies them at archive:
// RENAMED, REMOVED, MODIFIED, ADDED.
const (
	OpAdded    Op = "ADDED"
	OpModified Op = "MODIFIED"
	OpRemoved  Op = "REMOVED"
	OpRenamed  Op = "RENAMED"
)

// DeltaSpec is one delta spec of a change, specs/<capability-path>/spec.md,
// parsed the way OpenSpec's delta reader parses it
// (src/core/parsers/requirement-blocks.ts), with the line of everything it
// found. Its parts cover the file: the preamble, then every `## ` section in
// order; Render writes them back byte for byte.
type DeltaSpec struct {
	Doc        *Doc
	Capability string // the directory path under specs/, e.g. "identity/user-auth"

	Preamble Span           // the lines before the first `## ` header
	Sections []DeltaSection // every `## ` section, delta or not, in file order

	Added    []*Requirement
	Modified []*Requirement
	Removed  []Named
	Renamed  []Rename

	// What the reader skipped, each a finding of validate.
	Unpaired []UnpairedRename // FROM/TO lines that never formed a pair
	Orphans  []Orphan         // `### Requirement:` blocks outside every delta section
	Skipped  []SkippedHeader  // other `###` headers inside ADDED or MODIFIED

	Present map[Op]bool // which delta sections the file has, entries or not
}

// Span is a range of a Doc's lines, 0-based, end exclusive.
type Span struct{ Start, End int }

// DeltaSection is one `## ` section of a delta spec.
type DeltaSection struct {
	Title  string // trimmed, as written
	Op     Op     // "" for a section that is not a delta section (e.g. Purpose)
	Header int    // 0-based line of the `## ` header
	Body   Span   // the lines after the header, up to the next `## ` header
	// Requirements are the `### Requirement:` blocks of an ADDED or MODIFIED
	// section, in order.
	Requirements []*Requirement
}

// Requirement is one `### Requirement: Name` block: its header and every line
// up to the next requirement header or `## ` header.
type Requirement struct {
	Name      string // normalised: trimmed, a closing `#` run dropped
	Line      int    // 1-based line of the header
	Span      Span   // the block's lines in its Doc, trailing blank lines included
	Raw       string // the block as OpenSpec holds it: LF-joined, end-trimmed
	Scenarios []Scenario
}

// Scenario is one level-4 header of a requirement block and its body.
type Scenario struct {
	Name  string // the header text without `####`, a closing `#` run or a `Scenario:` prefix
	Line  int    // 1-based
	Empty bool   // no text under the header before the next header of level 1–4
	// Labelled is true when the header says `Scenario:`. OpenSpec counts any
	// `#### ` header as a scenario; roadmap asks for the label.
	Labelled bool
}

// Named is a requirement name and the line it was written on.
type Named struct {
	Name string
	Line int
}

// Rename is one FROM/TO pair of a RENAMED section.
type Rename struct {
	From, To         string
	FromLine, ToLine int
}

// UnpairedRename is a FROM: or TO: line that never formed a pair.
type UnpairedRename struct {
	Side string // "FROM" or "TO"
	Name string
	Line int
}

// Orphan is a `### Requirement:` header outside every delta section.
type Orphan struct {
	Name    string
	Section string // the `## ` section it sits under; "" above the first one
	Line    int
	InAny   bool // false when it sits above the first `## ` header
}

// SkippedHeader is a `###` header inside ADDED or MODIFIED that is not a
// requirement header; OpenSpec skips it (and what follows it stays in the
// block above).
type SkippedHeader struct {
	Header  string // the text after `### `
	Section string // the section title as first written, e.g. "ADDED Requirements"
	Line    int
}

var (
	sectionHeaderRe     = jsRegexp(`^(##)\s+(.+)$`)
	requirementHeaderRe = jsRegexp(`(?i)^###\s*Requirement:\s*(.+)\s*$`)
	h3Re                = jsRegexp(`^###\s+(.+?)\s*$`)
	topLevelHeaderRe    = jsRegexp(`^##\s+`)
	closingRunRe        = regexp.MustCompile(`[ \t]+#+[ \t]*$`)
	removedBulletRe     = jsRegexp("(?i)^\\s*[-*+]\\s*`?###\\s*Requirement:\\s*(.+?)`?\\s*$")
	// OpenSpec's FROM/TO patterns carry no `i` flag: FROM, TO and
	// "Requirement" are all case-sensitive there, unlike in the header pattern.
	renameFromRe     = jsRegexp("^\\s*[-*+]?\\s*FROM:\\s*`?###\\s*Requirement:\\s*(.+?)`?\\s*$")
	renameToRe       = jsRegexp("^\\s*[-*+]?\\s*TO:\\s*`?###\\s*Requirement:\\s*(.+?)`?\\s*$")
	namelessRe       = regexp.MustCompile(`(?i)^requirement:?$`)
	scenarioHeaderRe = jsRegexp(`^####\s+`)
	scenarioEndRe    = jsRegexp(`^#{1,4}\s`)
	anyHeaderRe      = jsRegexp(`^#{1,6}\s`)
	metadataLineRe   = regexp.MustCompile(`^\*\*[^*]+\*\*:`)
	scenarioPrefixRe = jsRegexp(`(?i)^Scenario:\s*`)
	shallMustRe      = regexp.MustCompile(`\b(SHALL|MUST)\b`)
)

// normalizeName is OpenSpec's normalizeRequirementName: a closing `#` run
// (after a space or tab) is not part of the name, and the name is trimmed.
// Names then match case-sensitively.
func normalizeName(name string) string {
	return jsTrim(closingRunRe.ReplaceAllString(name, ""))
}

// foldName is OpenSpec's foldRequirementName, used only to spot near misses.
func foldName(name string) string {
	return strings.Join(strings.FieldsFunc(jsLower(normalizeName(name)), isJSSpace), " ")
}

var deltaTitles = map[string]Op{
	"added requirements":    OpAdded,
	"modified requirements": OpModified,
	"removed requirements":  OpRemoved,
	"renamed requirements":  OpRenamed,
}

// ParseDelta reads a delta spec. It never fails: what OpenSpec's reader would
// skip is recorded in Unpaired, Orphans and Skipped, and validation reports it.
func ParseDelta(doc *Doc, capability string) *DeltaSpec {
	lines := doc.Texts()
	mask := fenceMask(lines)
	d := &DeltaSpec{Doc: doc, Capability: capability, Present: map[Op]bool{}}

	var headers []int
	for i, l := range lines {
		if !mask[i] && sectionHeaderRe.MatchString(l) {
			headers = append(headers, i)
		}
	}
	d.Preamble = Span{0, len(lines)}
	if len(headers) > 0 {
		d.Preamble.End = headers[0]
	}
	firstTitle := map[Op]string{}
	for k, h := range headers {
		end := len(lines)
		if k+1 < len(headers) {
			end = headers[k+1]
		}
		title := jsTrim(sectionHeaderRe.FindStringSubmatch(lines[h])[2])
		op := deltaTitles[jsLower(title)]
		d.Sections = append(d.Sections, DeltaSection{Title: title, Op: op, Header: h, Body: Span{h + 1, end}})
		if op != "" {
			d.Present[op] = true
			if _, ok := firstTitle[op]; !ok {
				firstTitle[op] = title
			}
		}
	}
	for k := range d.Sections {
		s := &d.Sections[k]
		switch s.Op {
		case OpAdded, OpModified:
			s.Requirements = d.parseBlocks(lines, mask, s.Body, firstTitle[s.Op], true)
			if s.Op == OpAdded {
				d.Added = append(d.Added, s.Requirements...)
			} else {
				d.Modified = append(d.Modified, s.Requirements...)
			}
		case OpRemoved:
			for i := s.Body.Start; i < s.Body.End; i++ {
				if mask[i] {
					continue
				}
				if m := requirementHeaderRe.FindStringSubmatch(lines[i]); m != nil {
					d.Removed = append(d.Removed, Named{normalizeName(m[1]), i + 1})
				} else if m := removedBulletRe.FindStringSubmatch(lines[i]); m != nil {
					d.Removed = append(d.Removed, Named{normalizeName(m[1]), i + 1})
				}
			}
		case OpRenamed:
			d.parseRenames(lines, mask, s.Body)
		}
	}
	sort.SliceStable(d.Unpaired, func(i, j int) bool { return d.Unpaired[i].Line < d.Unpaired[j].Line })
	sort.SliceStable(d.Skipped, func(i, j int) bool { return d.Skipped[i].Line < d.Skipped[j].Line })

	section, inSection := "", false
	for i, l := range lines {
		if mask[i] {
			continue
		}
		if m := sectionHeaderRe.FindStringSubmatch(l); m != nil {
			section, inSection = jsTrim(m[2]), true
			continue
		}
		if inSection && deltaTitles[jsLower(section)] != "" {
			continue
		}
		if m := requirementHeaderRe.FindStringSubmatch(l); m != nil {
			d.Orphans = append(d.Orphans, Orphan{Name: normalizeName(m[1]), Section: section, Line: i + 1, InAny: inSection})
		}
	}
	return d
}

// parseBlocks reads the requirement blocks of one section body. With record
// set, stray `###` headers go to d.Skipped under the section's title.
func (d *DeltaSpec) parseBlocks(lines []string, mask []bool, body Span, title string, record bool) []*Requirement {
	isReq := func(i int) bool { return !mask[i] && requirementHeaderRe.MatchString(lines[i]) }
	isTop := func(i int) bool { return !mask[i] && topLevelHeaderRe.MatchString(lines[i]) }
	skip := func(i int) {
		if !record || mask[i] {
			return
		}
		if m := h3Re.FindStringSubmatch(lines[i]); m != nil && !requirementHeaderRe.MatchString(lines[i]) {
			d.Skipped = append(d.Skipped, SkippedHeader{Header: jsTrim(m[1]), Section: title, Line: i + 1})
		}
	}
	var out []*Requirement
	i := body.Start
	for i < body.End {
		for i < body.End && !isReq(i) {
			skip(i)
			i++
		}
		if i >= body.End {
			break
		}
		start := i
		m := requirementHeaderRe.FindStringSubmatch(lines[i])
		i++
		for i < body.End && !isReq(i) && !isTop(i) {
			skip(i)
			i++
		}
		out = append(out, newRequirement(lines, normalizeName(m[1]), start, i))
	}
	return out
}

// newRequirement builds the block of lines[start:end], whose first line is
// its header.
func newRequirement(lines []string, name string, start, end int) *Requirement {
	raw := jsTrimEnd(strings.Join(lines[start:end], "\n"))
	return &Requirement{Name: name, Line: start + 1, Span: Span{start, end}, Raw: raw, Scenarios: scenariosOf(raw, start+1)}
}

func (d *DeltaSpec) parseRenames(lines []string, mask []bool, body Span) {
	var pending *Named
	for i := body.Start; i < body.End; i++ {
		if mask[i] {
			continue
		}
		if m := renameFromRe.FindStringSubmatch(lines[i]); m != nil {
			if pending != nil {
				d.Unpaired = append(d.Unpaired, UnpairedRename{"FROM", pending.Name, pending.Line})
			}
			pending = &Named{normalizeName(m[1]), i + 1}
		} else if m := renameToRe.FindStringSubmatch(lines[i]); m != nil {
			to := normalizeName(m[1])
			if pending == nil {
				d.Unpaired = append(d.Unpaired, UnpairedRename{"TO", to, i + 1})
				continue
			}
			d.Renamed = append(d.Renamed, Rename{From: pending.Name, To: to, FromLine: pending.Line, ToLine: i + 1})
			pending = nil
		}
	}
	if pending != nil {
		d.Unpaired = append(d.Unpaired, UnpairedRename{"FROM", pending.Name, pending.Line})
	}
}

// Render writes the delta spec back: the preamble, then each section.
func (d *DeltaSpec) Render() []byte {
	var b strings.Builder
	if d.Doc.BOM {
		b.WriteString(bom)
	}
	write := func(s Span) {
		for _, l := range d.Doc.Lines[s.Start:s.End] {
			b.WriteString(l.Text)
			b.WriteString(l.EOL)
		}
	}
	write(d.Preamble)
	for _, s := range d.Sections {
		write(Span{s.Header, s.Header + 1})
		write(s.Body)
	}
	return []byte(b.String())
}

// Body is the requirement text OpenSpec reads from a block (requirement-text.ts
// extractRequirementBody): the non-blank, non-fenced lines after the header up
// to the first header, trimmed; `**Key**: value` lines count only when nothing
// else is there.
func (r *Requirement) Body() string { return requirementBody(strings.Split(r.Raw, "\n")[1:]) }

func requirementBody(body []string) string {
	mask := fenceMask(body)
	var captured, meta []string
	for i, l := range body {
		if mask[i] {
			continue
		}
		if anyHeaderRe.MatchString(l) {
			break
		}
		t := jsTrim(l)
		if t == "" {
			continue
		}
		if metadataLineRe.MatchString(t) {
			meta = append(meta, t)
			continue
		}
		captured = append(captured, t)
	}
	if len(captured) > 0 {
		return strings.Join(captured, "\n")
	}
	return strings.Join(meta, "\n")
}

// scenariosOf reads the level-4 headers of a block (raw, its header line
// first) and whether each has a body. line is the 1-based line of raw's
// first line.
func scenariosOf(raw string, line int) []Scenario {
	lines := strings.Split(raw, "\n")
	mask := fenceMask(lines)
	var out []Scenario
	for i := 0; i < len(lines); i++ {
		if mask[i] || !scenarioHeaderRe.MatchString(lines[i]) {
			continue
		}
		name := scenarioHeaderRe.ReplaceAllString(lines[i], "")
		name = closingRunRe.ReplaceAllString(name, "")
		labelled := scenarioPrefixRe.MatchString(name)
		name = jsTrim(scenarioPrefixRe.ReplaceAllString(name, ""))
		// The body, for emptiness, runs to the next header of level 1–4
		// (requirement-text.ts readScenarioBodies); the header line itself is
		// not part of it.
		end := i + 1
		for end < len(lines) && (mask[end] || !scenarioEndRe.MatchString(lines[end])) {
			end++
		}
		empty := jsTrim(strings.Join(lines[i+1:end], "\n")) == ""
		out = append(out, Scenario{Name: name, Line: line + i, Empty: empty, Labelled: labelled})
	}
	return out
}

// countScenarios is how many of a block's scenarios OpenSpec counts: those
// with a body.
func countScenarios(r *Requirement) (full, empty int) {
	// The requirement's header line is index 0 of Raw and never a `####`, so
	// scenariosOf over Raw reads the same bodies as OpenSpec's reader over the
	// lines after it — except that OpenSpec's fence mask starts after the
	// header; a header line is never a fence, so the masks agree.
	for _, s := range r.Scenarios {
		if s.Empty {
			empty++
		} else {
			full++
		}
	}
	return full, empty
}
