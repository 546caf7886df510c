package plan

import (
	"fmt"
	"strings"
)

// SpecsDir is where OpenSpec keeps the main specs, relative to the repository root.
const SpecsDir = "openspec/specs"

// MainSpec is a main spec, openspec/specs/<capability-path>/spec.md: the
// requirement blocks of its `## Requirements` section as OpenSpec's archive
// reads them (requirement-blocks.ts extractRequirementsSection), with lines.
type MainSpec struct {
	Doc          *Doc
	Capability   string
	Requirements []*Requirement
}

// ParseMainSpec reads a main spec. Like ParseDelta it never fails; a spec
// OpenSpec would refuse is reported by validation and archive.
func ParseMainSpec(doc *Doc, capability string) *MainSpec {
	parts := splitRequirements(doc.Texts())
	return &MainSpec{Doc: doc, Capability: capability, Requirements: parts.blocks}
}

// Render writes the main spec back, byte for byte.
func (m *MainSpec) Render() []byte { return m.Doc.Bytes() }

// Requirement returns the block named name (case-sensitive, as OpenSpec
// matches), or nil.
func (m *MainSpec) Requirement(name string) *Requirement {
	for _, r := range m.Requirements {
		if r.Name == name {
			return r
		}
	}
	return nil
}

var (
	requirementsHeaderRe = jsRegexp(`(?i)^##\s+Requirements\s*$`)
	purposeHeaderRe      = jsRegexp(`(?i)^##\s+Purpose\s*$`)
	deltaHeaderRe        = jsRegexp(`(?i)^##\s+(ADDED|MODIFIED|REMOVED|RENAMED)\s+Requirements\s*$`)
	strictReqHeaderRe    = jsRegexp(`(?i)^###\s+Requirement:\s*(.+)\s*$`)
	mdHeaderRe           = jsRegexp(`^(#{1,6})\s+(.+)$`)
	mdHeaderStartRe      = jsRegexp(`^(#{1,6})\s+`)
)

// reqParts is a spec split around its `## Requirements` section, as
// extractRequirementsSection splits it.
type reqParts struct {
	found      bool
	before     string
	headerLine string
	preamble   string
	blocks     []*Requirement
	after      string
}

func splitRequirements(lines []string) reqParts {
	mask := fenceMask(lines)
	idx := -1
	for i, l := range lines {
		if !mask[i] && requirementsHeaderRe.MatchString(l) {
			idx = i
			break
		}
	}
	if idx < 0 {
		before := jsTrimEnd(strings.Join(lines, "\n"))
		if before != "" {
			before += "\n\n"
		}
		return reqParts{before: before, headerLine: "## Requirements", after: "\n"}
	}
	end := len(lines)
	for i := idx + 1; i < len(lines); i++ {
		if !mask[i] && topLevelHeaderRe.MatchString(lines[i]) {
			end = i
			break
		}
	}
	isReq := func(i int) bool { return !mask[i] && requirementHeaderRe.MatchString(lines[i]) }
	isTop := func(i int) bool { return !mask[i] && topLevelHeaderRe.MatchString(lines[i]) }
	p := reqParts{found: true, headerLine: lines[idx]}
	cur := idx + 1
	var pre []string
	for cur < end && !isReq(cur) {
		pre = append(pre, lines[cur])
		cur++
	}
	for cur < end {
		if !isReq(cur) {
			cur++
			continue
		}
		start := cur
		m := requirementHeaderRe.FindStringSubmatch(lines[cur])
		cur++
		for cur < end && !isReq(cur) && !isTop(cur) {
			cur++
		}
		p.blocks = append(p.blocks, newRequirement(lines, normalizeName(m[1]), start, cur))
	}
	before := strings.Join(lines[:idx], "\n")
	if jsTrimEnd(before) != "" {
		before += "\n"
	}
	p.before = before
	p.preamble = jsTrimEnd(strings.Join(pre, "\n"))
	after := strings.Join(lines[end:], "\n")
	if !strings.HasPrefix(after, "\n") {
		after = "\n" + after
	}
	p.after = after
	return p
}

// structureIssue is one of the faults that make OpenSpec refuse to update a
// main spec (spec-structure.ts).
type structureIssue struct {
	Line int
	Msg  string
}

func specStructureIssues(lines []string) []structureIssue {
	mask := fenceMask(lines)
	stripped := make([]string, len(lines))
	for i, l := range lines {
		if !mask[i] {
			stripped[i] = l
		}
	}
	hdr := -1
	for i, l := range stripped {
		if requirementsHeaderRe.MatchString(l) {
			hdr = i
			break
		}
	}
	end := len(stripped)
	if hdr >= 0 {
		for i := hdr + 1; i < len(stripped); i++ {
			if topLevelHeaderRe.MatchString(stripped[i]) {
				end = i
				break
			}
		}
	}
	var out []structureIssue
	seen := map[string]int{}
	for i, l := range stripped {
		t := jsTrim(l)
		if t == "" {
			continue
		}
		if deltaHeaderRe.MatchString(l) {
			out = append(out, structureIssue{i + 1, fmt.Sprintf("Main spec contains delta header \"%s\". Delta headers are only valid inside openspec/changes/<name>/specs/<capability-path>/spec.md and truncate the parsed ## Requirements section.", t)})
			continue
		}
		m := strictReqHeaderRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if hdr < 0 || i <= hdr || i >= end {
			out = append(out, structureIssue{i + 1, fmt.Sprintf("Requirement header \"%s\" appears outside the main ## Requirements section. Main specs only parse requirements inside that section, so this requirement is currently invisible to validate, list, and archive.", t)})
			continue
		}
		name := normalizeName(m[1])
		if prev, ok := seen[name]; ok {
			out = append(out, structureIssue{i + 1, fmt.Sprintf("Requirement header \"%s\" duplicates the requirement declared on line %d. Requirement names must be unique so spec updates cannot discard one block while updating another.", t, prev)})
		} else {
			seen[name] = i + 1
		}
	}
	return out
}

// mdSection is one header of MarkdownParser.parseSections and what it holds.
type mdSection struct {
	level    int
	title    string
	content  string
	children []*mdSection
}

func mdSections(lines []string) []*mdSection {
	mask := fenceMask(lines)
	var top, stack []*mdSection
	for i, l := range lines {
		if mask[i] {
			continue
		}
		m := mdHeaderRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		level := len(m[1])
		var content []string
		for j := i + 1; j < len(lines); j++ {
			if !mask[j] {
				if h := mdHeaderStartRe.FindStringSubmatch(lines[j]); h != nil && len(h[1]) <= level {
					break
				}
			}
			content = append(content, lines[j])
		}
		s := &mdSection{level: level, title: jsTrim(m[2]), content: jsTrim(strings.Join(content, "\n"))}
		for len(stack) > 0 && stack[len(stack)-1].level >= level {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			top = append(top, s)
		} else {
			p := stack[len(stack)-1]
			p.children = append(p.children, s)
		}
		stack = append(stack, s)
	}
	return top
}

func findMDSection(secs []*mdSection, title string) *mdSection {
	for _, s := range secs {
		if jsLower(s.title) == jsLower(title) {
			return s
		}
		if c := findMDSection(s.children, title); c != nil {
			return c
		}
	}
	return nil
}

// specErrors are the ERROR-level findings of OpenSpec's main-spec validation
// (Validator.validateSpecContent), which archive runs on every rebuilt spec
// before it writes anything. Warnings do not block archive and are left out.
func specErrors(content string) []string {
	lines := strings.Split(content, "\n")
	secs := mdSections(lines)
	purpose := findMDSection(secs, "Purpose")
	if purpose == nil || purpose.content == "" {
		return []string{"Spec must have a Purpose section"}
	}
	reqs := findMDSection(secs, "Requirements")
	if reqs == nil {
		return []string{"Spec must have a Requirements section"}
	}
	var out []string
	if len(reqs.children) == 0 {
		out = append(out, "Spec must have at least one requirement")
	}
	for _, r := range reqs.children {
		if requirementBody(strings.Split(r.content, "\n")) == "" && r.title == "" {
			out = append(out, "Requirement text cannot be empty")
		}
		n := 0
		for _, s := range r.children {
			if jsTrim(s.content) != "" {
				n++
			}
		}
		if n == 0 {
			out = append(out, "Requirement must have at least one scenario")
		}
	}
	for _, is := range specStructureIssues(lines) {
		out = append(out, is.Msg)
	}
	for _, b := range splitRequirements(lines).blocks {
		if b.Body() == "" {
			out = append(out, fmt.Sprintf("Requirement \"%s\" must contain SHALL or MUST", b.Name))
		}
	}
	return out
}

// maskHTMLComments blanks `<!-- … -->` spans (an unclosed one runs to the
// end), keeping line breaks so line numbers stay.
func maskHTMLComments(s string) string {
	blank := func(t string) string {
		return strings.Map(func(r rune) rune {
			if r == '\n' {
				return r
			}
			return ' '
		}, t)
	}
	var b strings.Builder
	for {
		open := strings.Index(s, "<!--")
		if open < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:open])
		rest := s[open+4:]
		closeAt := -1
		for i := 0; i < len(rest); i++ {
			if strings.HasPrefix(rest[i:], "-->") {
				closeAt = open + 4 + i + 3
				break
			}
			if strings.HasPrefix(rest[i:], "--!>") {
				closeAt = open + 4 + i + 4
				break
			}
		}
		if closeAt < 0 {
			b.WriteString(blank(s[open:]))
			return b.String()
		}
		b.WriteString(blank(s[open:closeAt]))
		s = s[closeAt:]
	}
}

// purposeOf is the body of a `## Purpose` section, as archive carries it into
// a new main spec (specs-apply.ts extractPurposeSection); "" when absent or
// only code and comments.
func purposeOf(lines []string) string {
	masked := strings.Split(maskHTMLComments(strings.Join(lines, "\n")), "\n")
	mask := fenceMask(masked)
	start := -1
	for i, l := range masked {
		if !mask[i] && purposeHeaderRe.MatchString(l) {
			start = i
			break
		}
	}
	if start < 0 {
		return ""
	}
	end := len(masked)
	for i := start + 1; i < len(masked); i++ {
		if !mask[i] && topLevelHeaderRe.MatchString(masked[i]) {
			end = i
			break
		}
	}
	var prose []string
	for i := start + 1; i < end; i++ {
		if !mask[i] {
			prose = append(prose, masked[i])
		}
	}
	if jsTrim(strings.Join(prose, "\n")) == "" {
		return ""
	}
	return jsTrim(strings.Join(lines[start+1:end], "\n"))
}

const (
	purposePlaceholderPrefix = "TBD - created by archiving change "
	purposePlaceholderSuffix = ". Update Purpose after archive."
)

// specSkeleton is the main spec archive creates for a new capability.
func specSkeleton(capability, change, purpose string) string {
	body := jsTrim(purpose)
	if body == "" {
		body = purposePlaceholderPrefix + change + purposePlaceholderSuffix
	}
	return "# " + capability + " Specification\n\n## Purpose\n" + body + "\n\n## Requirements\n"
}

// readableOverview is the Purpose a new spec would carry, or "" when carrying
// the delta's would leave a spec OpenSpec's readers cannot handle.
func readableOverview(skeleton string) string {
	if strings.Contains(skeleton, "<!--") {
		return ""
	}
	lines := strings.Split(skeleton, "\n")
	if len(specStructureIssues(lines)) > 0 {
		return ""
	}
	secs := mdSections(lines)
	p := findMDSection(secs, "Purpose")
	if p == nil || p.content == "" || findMDSection(secs, "Requirements") == nil {
		return ""
	}
	return jsTrim(p.content)
}

// collapseBlankRuns keeps one empty line of each run outside fenced code.
func collapseBlankRuns(content string) string {
	lines := strings.Split(content, "\n")
	mask := fenceMask(lines)
	kept := lines[:0:0]
	run := 0
	for i, l := range lines {
		if mask[i] {
			run = 0
			kept = append(kept, l)
			continue
		}
		if l == "" {
			run++
			if run > 1 {
				continue
			}
			kept = append(kept, l)
			continue
		}
		run = 0
		kept = append(kept, l)
	}
	return strings.Join(kept, "\n")
}
