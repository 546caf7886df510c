package plan

import (
	"fmt"
	"strings"
)

// Counts is how many operations of each kind a merge applied.
type Counts struct{ Added, Modified, Removed, Renamed int }

// Total is the number of operations applied.
func (c Counts) Total() int { return c.Added + c.Modified + c.Removed + c.Renamed }

// merged is the result of applying one delta spec to its main spec.
type merged struct {
	rebuilt  string // LF endings
	counts   Counts
	warnings []string
	blocks   int // requirement blocks left
}

// mergeError is a delta that cannot apply. Its message is OpenSpec's own.
type mergeError struct{ msg string }

func (e *mergeError) Error() string { return e.msg }

func refuse(format string, args ...any) error { return &mergeError{fmt.Sprintf(format, args...)} }

// mergeDelta applies delta d to the main spec text target (nil when the spec
// does not exist yet), as OpenSpec's archive does (specs-apply.ts
// buildUpdatedSpec): RENAMED, then REMOVED, then MODIFIED, then ADDED; the
// original order of requirements kept, new ones appended.
func mergeDelta(d *DeltaSpec, target *Doc, change string) (*merged, error) {
	spec := d.Capability
	out := &merged{}
	warn := func(format string, args ...any) { out.warnings = append(out.warnings, fmt.Sprintf(format, args...)) }

	if len(d.Unpaired) > 0 {
		u := d.Unpaired[0]
		missing := "FROM"
		if u.Side == "FROM" {
			missing = "TO"
		}
		return nil, refuse("%s validation failed - RENAMED entry on line %d has no matching %s: for header \"### Requirement: %s\". Write each rename as a FROM: line followed immediately by its TO: line.", spec, u.Line, missing, u.Name)
	}
	for _, o := range d.Orphans {
		where := `above the first "## " section`
		if o.InAny {
			where = fmt.Sprintf(`under "## %s"`, o.Section)
		}
		warn("%s - requirement \"%s\" (line %d) is %s, which is not a delta section, so it was not applied. Move it under ADDED/MODIFIED/REMOVED/RENAMED Requirements.", spec, o.Name, o.Line, where)
	}
	added, modified, removed := map[string]bool{}, map[string]bool{}, map[string]bool{}
	var modifiedOrder, addedOrder []string
	for _, r := range d.Added {
		if added[r.Name] {
			return nil, refuse("%s validation failed - duplicate requirement in ADDED for header \"### Requirement: %s\"", spec, r.Name)
		}
		added[r.Name] = true
		addedOrder = append(addedOrder, r.Name)
	}
	for _, r := range d.Modified {
		if modified[r.Name] {
			return nil, refuse("%s validation failed - duplicate requirement in MODIFIED for header \"### Requirement: %s\"", spec, r.Name)
		}
		modified[r.Name] = true
		modifiedOrder = append(modifiedOrder, r.Name)
	}
	var removedOrder []string
	for _, r := range d.Removed {
		if removed[r.Name] {
			return nil, refuse("%s validation failed - duplicate requirement in REMOVED for header \"### Requirement: %s\"", spec, r.Name)
		}
		removed[r.Name] = true
		removedOrder = append(removedOrder, r.Name)
	}
	from, to := map[string]bool{}, map[string]bool{}
	for _, r := range d.Renamed {
		if from[r.From] {
			return nil, refuse("%s validation failed - duplicate FROM in RENAMED for header \"### Requirement: %s\"", spec, r.From)
		}
		if to[r.To] {
			return nil, refuse("%s validation failed - duplicate TO in RENAMED for header \"### Requirement: %s\"", spec, r.To)
		}
		from[r.From], to[r.To] = true, true
	}
	type conflict struct{ name, a, b string }
	var conflicts []conflict
	for _, n := range modifiedOrder {
		if removed[n] {
			conflicts = append(conflicts, conflict{n, "MODIFIED", "REMOVED"})
		}
		if added[n] {
			conflicts = append(conflicts, conflict{n, "MODIFIED", "ADDED"})
		}
	}
	for _, n := range addedOrder {
		if removed[n] {
			conflicts = append(conflicts, conflict{n, "ADDED", "REMOVED"})
		}
	}
	for _, r := range d.Renamed {
		for _, rm := range removedOrder {
			if foldName(rm) == foldName(r.From) {
				extra := ""
				if rm != r.From {
					extra = fmt.Sprintf(" (REMOVED spells it \"%s\")", rm)
				}
				return nil, refuse("%s validation failed - requirement present in multiple sections (RENAMED and REMOVED) for header \"### Requirement: %s\"%s", spec, r.From, extra)
			}
		}
		if modified[r.From] {
			return nil, refuse("%s validation failed - when a rename exists, MODIFIED must reference the NEW header \"### Requirement: %s\"", spec, r.To)
		}
		if added[r.To] {
			return nil, refuse("%s validation failed - RENAMED TO header collides with ADDED for \"### Requirement: %s\"", spec, r.To)
		}
	}
	if len(conflicts) > 0 {
		c := conflicts[0]
		return nil, refuse("%s validation failed - requirement present in multiple sections (%s and %s) for header \"### Requirement: %s\"", spec, c.a, c.b, c.name)
	}
	if len(d.Added)+len(d.Modified)+len(d.Removed)+len(d.Renamed) == 0 {
		return nil, refuse("Delta parsing found no operations for %s. Provide ADDED/MODIFIED/REMOVED/RENAMED sections in change spec.", spec)
	}

	deltaPurpose := purposeOf(d.Doc.Texts())
	var content string
	isNew := target == nil
	if !isNew {
		content = target.Normalized()
		if deltaPurpose != "" {
			if p := purposeOf(target.Texts()); p != "" && p != deltaPurpose {
				warn("%s - delta Purpose ignored; %s already has one. Edit %s directly to change it.", spec, spec, target.Path)
			}
		}
	} else {
		if len(d.Modified) > 0 || len(d.Renamed) > 0 {
			return nil, refuse("%s: target spec does not exist; only ADDED requirements are allowed for new specs. MODIFIED and RENAMED operations require an existing spec.", spec)
		}
		if len(d.Removed) > 0 {
			warn("%s - %d REMOVED requirement(s) ignored for new spec (nothing to remove).", spec, len(d.Removed))
		}
		content = specSkeleton(spec, change, deltaPurpose)
		overview := ""
		if deltaPurpose != "" {
			overview = readableOverview(content)
		}
		if deltaPurpose != "" && overview == "" {
			content = specSkeleton(spec, change, "")
			warn("%s - delta Purpose ignored (it would leave the new spec unreadable); wrote the placeholder Purpose instead.", spec)
		} else if overview != "" && utf16Len(overview) < 50 {
			warn("%s - carried Purpose is under 50 characters; openspec validate --strict reports it as too brief.", spec)
		}
	}
	lines := strings.Split(content, "\n")
	if issues := specStructureIssues(lines); len(issues) > 0 {
		var details []string
		for _, is := range issues {
			details = append(details, fmt.Sprintf("line %d: %s", is.Line, is.Msg))
		}
		return nil, refuse("%s: target spec is structurally invalid and cannot be updated until fixed:\n%s", spec, strings.Join(details, "\n"))
	}
	parts := splitRequirements(lines)

	// An insertion-ordered map, as the JavaScript Map it mirrors.
	byName := map[string]*Requirement{}
	var keys []string
	set := func(k string, r *Requirement) {
		if _, ok := byName[k]; !ok {
			keys = append(keys, k)
		}
		byName[k] = r
	}
	del := func(k string) {
		delete(byName, k)
		for i, x := range keys {
			if x == k {
				keys = append(keys[:i:i], keys[i+1:]...)
				break
			}
		}
	}
	nearMiss := func(key string, except func(string) bool) string {
		for _, k := range keys {
			if !except(k) && foldName(k) == foldName(key) {
				return k
			}
		}
		return ""
	}
	none := func(string) bool { return false }
	for _, b := range parts.blocks {
		set(b.Name, b)
	}
	ordered := make([]string, len(parts.blocks))
	for i, b := range parts.blocks {
		ordered[i] = b.Name
	}

	for _, r := range d.Renamed {
		if _, ok := byName[r.From]; !ok {
			if _, ok := byName[r.To]; ok {
				if k := nearMiss(r.From, func(k string) bool { return k == r.To }); k != "" {
					return nil, refuse("%s RENAMED failed for header \"### Requirement: %s\" - source not found, but \"### Requirement: %s\" exists; fix the header to match it exactly", spec, r.From, byName[k].Name)
				}
				continue
			}
			return nil, refuse("%s RENAMED failed for header \"### Requirement: %s\" - source not found", spec, r.From)
		}
		if _, ok := byName[r.To]; ok {
			return nil, refuse("%s RENAMED failed for header \"### Requirement: %s\" - target already exists", spec, r.To)
		}
		if k := nearMiss(r.To, func(k string) bool { return k == r.From }); k != "" {
			return nil, refuse("%s RENAMED failed for header \"### Requirement: %s\" - \"### Requirement: %s\" already exists and differs only in case or spacing; choose a distinct name", spec, r.To, byName[k].Name)
		}
		b := byName[r.From]
		raw := strings.Split(b.Raw, "\n")
		raw[0] = "### Requirement: " + r.To
		del(r.From)
		set(r.To, &Requirement{Name: r.To, Raw: strings.Join(raw, "\n"), Scenarios: b.Scenarios})
		for i, k := range ordered {
			if k == r.From {
				ordered[i] = r.To
				break
			}
		}
		out.counts.Renamed++
	}
	for _, r := range d.Removed {
		if _, ok := byName[r.Name]; !ok {
			if !isNew {
				if k := nearMiss(r.Name, none); k != "" {
					return nil, refuse("%s REMOVED failed for header \"### Requirement: %s\" - not found, but \"### Requirement: %s\" exists; fix the header to match it exactly", spec, r.Name, byName[k].Name)
				}
				warn("%s - REMOVED requirement \"%s\" is not in the current spec; treating it as already removed.", spec, r.Name)
			}
			continue
		}
		del(r.Name)
		out.counts.Removed++
	}
	for _, m := range d.Modified {
		cur, ok := byName[m.Name]
		if !ok {
			return nil, refuse("%s MODIFIED failed for header \"### Requirement: %s\" - not found", spec, m.Name)
		}
		hm := requirementHeaderRe.FindStringSubmatch(strings.Split(m.Raw, "\n")[0])
		if hm == nil || normalizeName(hm[1]) != m.Name {
			return nil, refuse("%s MODIFIED failed for header \"### Requirement: %s\" - header mismatch in content", spec, m.Name)
		}
		if diff := diffScenarios(cur, m); len(diff.missing) > 0 {
			return nil, refuse("%s MODIFIED failed for header \"### Requirement: %s\" - current spec contains scenario(s) not present in the modified block: %s. %s Refresh the change spec before archiving to avoid dropping scenarios.", spec, m.Name, quoteList(diff.missing), diff.balance())
		}
		if normBlock(cur.Raw) != normBlock(m.Raw) {
			out.counts.Modified++
		}
		set(m.Name, m)
	}
	for _, a := range d.Added {
		if ex, ok := byName[a.Name]; ok {
			if normBlock(ex.Raw) == normBlock(a.Raw) {
				continue
			}
			return nil, refuse("%s ADDED failed for header \"### Requirement: %s\" - already exists", spec, a.Name)
		}
		if k := nearMiss(a.Name, none); k != "" {
			return nil, refuse("%s ADDED failed for header \"### Requirement: %s\" - \"### Requirement: %s\" already exists and differs only in case or spacing; use MODIFIED with that exact header to change it, or choose a distinct name", spec, a.Name, byName[k].Name)
		}
		set(a.Name, a)
		out.counts.Added++
	}

	var kept []*Requirement
	seen := map[string]bool{}
	for _, k := range ordered {
		if r, ok := byName[k]; ok {
			kept = append(kept, r)
			seen[k] = true
		}
	}
	for _, k := range keys {
		if !seen[k] {
			kept = append(kept, byName[k])
		}
	}
	out.blocks = len(kept)
	var body []string
	if jsTrim(parts.preamble) != "" {
		body = append(body, jsTrimEnd(parts.preamble))
	}
	for _, r := range kept {
		body = append(body, r.Raw)
	}
	reqBody := jsTrimEnd(strings.Join(body, "\n\n"))
	var segs []string
	for _, s := range []string{jsTrimEnd(parts.before), parts.headerLine, reqBody, jsTrim(parts.after)} {
		if s != "" {
			segs = append(segs, s)
		}
	}
	out.rebuilt = jsTrimEnd(collapseBlankRuns(strings.Join(segs, "\n\n"))) + "\n"
	return out, nil
}

func normBlock(raw string) string {
	return jsTrim(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(raw))
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("\"%s\"", n)
	}
	return strings.Join(q, ", ")
}

// scenarioDiff compares the scenario names of a current block and the
// MODIFIED block that replaces it, counting duplicates (diffScenarioNames).
type scenarioDiff struct {
	missing, added    []string
	current, incoming int
}

func diffScenarios(cur, in *Requirement) scenarioDiff {
	names := func(r *Requirement) []string {
		var out []string
		for _, s := range r.Scenarios {
			out = append(out, s.Name)
		}
		return out
	}
	unmatched := func(a, against []string) []string {
		left := map[string]int{}
		for _, n := range against {
			left[n]++
		}
		var out []string
		for _, n := range a {
			if left[n] > 0 {
				left[n]--
			} else {
				out = append(out, n)
			}
		}
		return out
	}
	c, i := names(cur), names(in)
	return scenarioDiff{missing: unmatched(c, i), added: unmatched(i, c), current: len(c), incoming: len(i)}
}

// balance is describeScenarioBalance: the sentence that follows a scenario loss.
func (d scenarioDiff) balance() string {
	count := func(n int) string {
		if n == 1 {
			return "1 scenario"
		}
		return fmt.Sprintf("%d scenarios", n)
	}
	scale := fmt.Sprintf("The modified block has %s; the current spec has %s.", count(d.incoming), count(d.current))
	if len(d.added) == 0 {
		return scale + " It adds none."
	}
	listed := d.added
	if len(listed) > 3 {
		listed = listed[:3]
	}
	names := quoteList(listed)
	if rest := len(d.added) - 3; rest > 0 {
		names = fmt.Sprintf("%s and %d more", names, rest)
	}
	return fmt.Sprintf("%s It adds %s not in the current spec: %s.", scale, count(len(d.added)), names)
}

// utf16Len is a string's length as JavaScript counts it.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
