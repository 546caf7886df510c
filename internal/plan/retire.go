package plan

import (
	"fmt"
	"path"
	"strings"
)

// Retiring a capability: when a change removes the last requirement of a main
// spec and its .openspec.yaml says `retire_capabilities: true`, archive
// deletes the spec (and the folders that leaves empty) instead of writing a
// spec with no requirement, which OpenSpec's validation refuses. The pinned
// OpenSpec's archive.ts and specs-apply.ts decide it; this file follows them.

// specOutcome is what archive does with one capability's rebuilt spec.
type specOutcome int

const (
	outcomeWrite  specOutcome = iota // write it (or leave it, when nothing changed)
	outcomeRetire                    // delete the main spec
	outcomeSkip                      // nothing: the capability is already gone
)

const noRequirementsMsg = "Spec must have at least one requirement"

// retirable reports whether a rebuilt spec fails validation for the one
// reason that retiring it answers: it has no requirement left.
func retirable(rebuilt string) bool {
	errs := specErrors(rebuilt)
	for _, e := range errs {
		if e != noRequirementsMsg {
			return false
		}
	}
	return len(errs) > 0
}

// outcome decides a capability's fate as decideSpecOutcome does: only when
// the author asked, only when the validator's sole objection is the missing
// requirements, and only when the spec holds nothing a deletion would lose
// unnamed.
func (m *merged) outcome(exists, declared bool) specOutcome {
	if !declared || !m.noBlocks || len(m.unaccounted) > 0 || !retirable(m.rebuilt) {
		return outcomeWrite
	}
	if !exists {
		return outcomeSkip
	}
	if m.counts.Removed > 0 {
		return outcomeRetire
	}
	return outcomeWrite
}

// retireHints are the lines OpenSpec adds under a rebuilt spec's validation
// errors when the spec is empty because this change removed its last
// requirement: how to retire it, or what stops the retirement.
func (m *merged) retireHints(capability string, exists, declared bool, invalid string) []string {
	emptied := exists && m.counts.Removed > 0 && m.noBlocks && retirable(m.rebuilt)
	cannot := ""
	if invalid != "" {
		cannot = fmt.Sprintf(" The marker present now cannot be honored (%s).", invalid)
	}
	var out []string
	if !declared && emptied && len(m.unaccounted) == 0 {
		out = append(out, fmt.Sprintf("This change removes the last requirement '%s' has. To retire the capability and delete its spec, add `retire_capabilities: true` to the change's %s (alongside its `schema:`, which that file requires), then rerun.%s", capability, MetadataFile, cannot))
	}
	if !declared && emptied && len(m.unaccounted) > 0 {
		out = append(out, fmt.Sprintf("This change removes the last requirement '%s' has, so the rebuilt spec has none left and cannot be written. Retiring the capability is what archive does instead, and it is refused while the spec holds content the merge cannot safely account for and deleting the file would take with it: %s. Move it into `## Purpose` or a canonical requirement, or delete the spec by hand, then rerun.%s", capability, describeLines(m.unaccounted), cannot))
	}
	if declared && len(m.unaccounted) > 0 && retirable(m.rebuilt) {
		out = append(out, fmt.Sprintf("'%s' declares retire_capabilities, but the spec holds content the merge cannot safely account for and deleting the file would take with it: %s. Move it into `## Purpose` or a canonical requirement, or delete the spec by hand.", capability, describeLines(m.unaccounted)))
	}
	return out
}

// describeLines quotes the first three lines, made safe for a terminal and
// cut at 200 characters, and counts the rest.
func describeLines(lines []string) string {
	const max = 200
	var shown []string
	for i, l := range lines {
		if i == 3 {
			break
		}
		r := []rune(strings.Map(func(c rune) rune {
			if c < 0x20 || c == 0x7f {
				return '?'
			}
			return c
		}, l))
		s := string(r)
		if len(r) > max {
			s = string(r[:max]) + "\u2026"
		}
		shown = append(shown, `"`+s+`"`)
	}
	out := strings.Join(shown, ", ")
	if len(lines) > 3 {
		out += fmt.Sprintf(", and %d more line(s)", len(lines)-3)
	}
	return out
}

// retire deletes a capability's main spec and then each folder the deletion
// leaves empty, up to but not including openspec/specs.
func (t *tree) retire(target string) error {
	if err := t.remove(target); err != nil {
		return err
	}
	for dir := path.Dir(target); strings.HasPrefix(dir, SpecsDir+"/"); dir = path.Dir(dir) {
		entries, err := t.readDir(dir)
		if err != nil || len(entries) > 0 {
			return nil
		}
		if err := t.remove(dir); err != nil {
			return nil // a folder that cannot go stays, as OpenSpec leaves it
		}
	}
	return nil
}

var (
	sectionLineRe    = jsRegexp(`^ {0,3}##\s+(.+?)\s*$`)
	purposeTitleRe   = jsRegexp(`(?i)^purpose$`)
	setextLineRe     = jsRegexp(`^ {0,3}(=+|-+)\s*$`)
	htmlHeadingRe    = jsRegexp(`(?i)^ {0,3}<h[1-6]\b`)
	anyHTMLHeadRe    = jsRegexp(`(?i)^\s*<h[1-6]\b`)
	titleLineRe      = jsRegexp(`^ {0,3}#\s+.+$`)
	foreignHeadRe    = jsRegexp(`^ {0,3}#{1,3}(?:[ \t]|$)`)
	atxHeadingRe     = jsRegexp(`^ {0,3}#{1,6}(?:[ \t]|$)`)
	interruptsRe     = jsRegexp(`^ {0,3}(?:>|(?:[-*_][ \t]*){3,}$|(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)|[<|])`)
	retireListItemRe = jsRegexp(`^(\s*(?:[-*+]|\d{1,9}[.)])\s+)`)
	scenarioLineRe   = jsRegexp(`(?i)^ {0,3}####\s+Scenario:`)
	tableOrHTMLRe    = jsRegexp(`^\s*[|<]`)
	leadingSpaceRe   = jsRegexp(`^[ \t]*`)
	lineBreakNormRe  = strings.NewReplacer("\r\n", "\n", "\r", "\n")
)

// unaccounted lists the lines of a spec a retirement could not name as its
// own parts (the title, `## Purpose`, the `## Requirements` header, and each
// requirement's header, statement and scenario bullets): deleting the file
// would take them unmentioned, so their presence vetoes the retirement. It
// reads the spec as it was before the merge, whole.
func unaccounted(p reqParts) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	unaccountedBefore(strings.TrimPrefix(p.before, "\uFEFF"), add)
	for _, slice := range []string{p.preamble, p.after} {
		for _, l := range strings.Split(slice, "\n") {
			if t := jsTrim(l); t != "" {
				add(t)
			}
		}
	}
	for _, b := range p.blocks {
		unaccountedBlock(b.Raw, add)
	}
	return out
}

// unaccountedBefore reads what stands above `## Requirements`: one title and
// the Purpose section are expected, anything else is the author's.
func unaccountedBefore(before string, add func(string)) {
	lines := strings.Split(lineBreakNormRe.Replace(before), "\n")
	mask := fenceMask(lines)
	inPurpose, titled := false, false
	prev := ""
	for i, l := range lines {
		if jsTrim(l) == "" {
			prev = ""
			continue
		}
		if !mask[i] {
			if m := sectionLineRe.FindStringSubmatch(l); m != nil {
				inPurpose = purposeTitleRe.MatchString(jsTrim(m[1]))
				if !inPurpose {
					add(jsTrim(l))
				}
				prev = l
				continue
			}
			// A setext underline or an HTML heading opens a section of its own,
			// which is not Purpose however it sits.
			setext := inPurpose && jsTrim(prev) != "" && setextLineRe.MatchString(l)
			if setext || htmlHeadingRe.MatchString(l) {
				if setext {
					add(jsTrim(prev))
				} else {
					add(jsTrim(l))
				}
				inPurpose = false
				prev = l
				continue
			}
			if titleLineRe.MatchString(l) {
				if !titled && !inPurpose {
					titled = true
				} else {
					add(jsTrim(l))
					inPurpose = false
				}
				prev = l
				continue
			}
		}
		prev = l
		if !inPurpose {
			add(jsTrim(l))
		}
	}
}

// unaccountedBlock reads one requirement block: its header, the statement
// above the first scenario, and each scenario's unbroken run of bullets
// (wrapped lines included) are its own; a heading it swallowed, a note below
// the scenarios, a table or HTML are not.
func unaccountedBlock(raw string, add func(string)) {
	if h, ok := foreignTail(raw); ok {
		add(h)
	}
	lines := strings.Split(lineBreakNormRe.Replace(raw), "\n")
	mask := fenceMask(lines)
	seenScenario, inBullets, bulletsSeen := false, false, false
	itemColumn := -1 // the content column of the list item being continued; -1 for none
	paragraphOpen := false
	for i, l := range lines {
		if jsTrim(l) == "" {
			if bulletsSeen {
				inBullets = false
			}
			itemColumn, paragraphOpen = -1, false
			continue
		}
		if i == 0 {
			continue
		}
		inside := itemColumn >= 0 && column(leadingSpaceRe.FindString(l)) >= itemColumn
		within := l
		if inside {
			within = dropColumns(l, itemColumn)
		}
		lazy := paragraphOpen && inBullets && !interruptsRe.MatchString(within)
		continues := (inside || lazy) && !atxHeadingRe.MatchString(within) && !anyHTMLHeadRe.MatchString(within)
		if mask[i] {
			if !inside {
				itemColumn = -1
			}
			paragraphOpen = false
			continue
		}
		if i > 1 && setextLineRe.MatchString(within) && jsTrim(lines[i-1]) != "" {
			add(jsTrim(lines[i-1]))
			itemColumn, paragraphOpen = -1, false
			continue
		}
		if continues {
			paragraphOpen = !interruptsRe.MatchString(within)
			continue
		}
		bullet := retireListItemRe.FindStringSubmatch(l)
		itemColumn = -1
		if bullet != nil {
			itemColumn = column(bullet[1])
		}
		paragraphOpen = bullet != nil
		switch {
		case scenarioLineRe.MatchString(l):
			seenScenario, inBullets, bulletsSeen = true, true, false
		case bullet != nil && inBullets:
			bulletsSeen = true
		case bullet != nil && !seenScenario:
			// part of the requirement's statement
		case bullet != nil:
			add(jsTrim(l))
		case !seenScenario && !tableOrHTMLRe.MatchString(l):
			// the statement's prose
		default:
			add(jsTrim(l))
		}
	}
}

// foreignTail is the first `#`, `##` or `###` heading inside a requirement
// block after its own header, outside code fences.
func foreignTail(raw string) (string, bool) {
	lines := strings.Split(lineBreakNormRe.Replace(raw), "\n")
	mask := fenceMask(lines)
	for i := 1; i < len(lines); i++ {
		if !mask[i] && foreignHeadRe.MatchString(lines[i]) {
			return jsTrim(lines[i]), true
		}
	}
	return "", false
}

// column is the width of an indentation, tabs to four-column stops.
func column(prefix string) int {
	c := 0
	for _, r := range prefix {
		if r == '\t' {
			c += 4 - c%4
		} else {
			c++
		}
	}
	return c
}

// dropColumns removes up to n columns of leading spaces and tabs; a tab that
// straddles the boundary goes whole.
func dropColumns(l string, n int) string {
	c, i := 0, 0
	for i < len(l) && c < n {
		switch l[i] {
		case ' ':
			c++
		case '\t':
			c += 4 - c%4
		default:
			return l[i:]
		}
		i++
	}
	return l[i:]
}
