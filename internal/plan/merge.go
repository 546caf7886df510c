package plan

import (
	"fmt"
	"slices"
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
	// What a retirement is decided on: no requirement block is left, and the
	// lines of the spec as it was that a deletion could not name (unaccounted).
	noBlocks    bool
	unaccounted []string
}

// mergeError is a delta that cannot apply. Its message is OpenSpec's own.
type mergeError struct{ msg string }

func (e *mergeError) Error() string { return e.msg }

func refuse(format string, args ...any) error { return &mergeError{fmt.Sprintf(format, args...)} }

// mergeDelta applies delta d to the main spec text target (nil when the spec
// does not exist yet), as OpenSpec's archive does (specs-apply.ts
// buildUpdatedSpec): RENAMED, then REMOVED, then MODIFIED, then ADDED; the
// original order of requirements kept, new ones appended. The checks run in
// OpenSpec's order too, so the first refusal is the one OpenSpec would give.
func mergeDelta(d *DeltaSpec, target *Doc, change string) (*merged, error) {
	spec := d.Capability
	if err := checkRenamePairs(d); err != nil {
		return nil, err
	}
	out := &merged{}
	warnOrphans(d, out)
	if err := checkDeltaSections(d); err != nil {
		return nil, err
	}
	content, err := startingText(d, target, change, out)
	if err != nil {
		return nil, err
	}
	parts, err := targetParts(spec, content)
	if err != nil {
		return nil, err
	}
	m := newSpecMerge(spec, target == nil, parts.blocks, out)
	if err := m.applyRenamed(d.Renamed); err != nil {
		return nil, err
	}
	if err := m.applyRemoved(d.Removed); err != nil {
		return nil, err
	}
	if err := m.applyModified(d.Modified); err != nil {
		return nil, err
	}
	if err := m.applyAdded(d.Added); err != nil {
		return nil, err
	}
	out.rebuilt = m.rebuild(parts)
	out.unaccounted = unaccounted(parts)
	return out, nil
}

func (m *merged) warn(format string, args ...any) {
	m.warnings = append(m.warnings, fmt.Sprintf(format, args...))
}

// checkRenamePairs refuses a FROM: or TO: line left without its partner: the
// reader could not tell which rename was meant, so nothing may apply.
func checkRenamePairs(d *DeltaSpec) error {
	if len(d.Unpaired) == 0 {
		return nil
	}
	u := d.Unpaired[0]
	missing := "FROM"
	if u.Side == "FROM" {
		missing = "TO"
	}
	return refuse("%s validation failed - RENAMED entry on line %d has no matching %s: for header \"### Requirement: %s\". Write each rename as a FROM: line followed immediately by its TO: line.", d.Capability, u.Line, missing, u.Name)
}

// warnOrphans warns of requirement blocks outside every delta section. They
// read exactly like blocks that apply but do not, and archive is the last
// point at which the author can still notice.
func warnOrphans(d *DeltaSpec, out *merged) {
	for _, o := range d.Orphans {
		where := `above the first "## " section`
		if o.InAny {
			where = fmt.Sprintf(`under "## %s"`, o.Section)
		}
		out.warn("%s - requirement \"%s\" (line %d) is %s, which is not a delta section, so it was not applied. Move it under ADDED/MODIFIED/REMOVED/RENAMED Requirements.", d.Capability, o.Name, o.Line, where)
	}
}

// checkDeltaSections refuses a delta that contradicts itself (a name twice in
// a section, or in two sections that cannot both hold) or that does nothing,
// before any of it touches the spec.
func checkDeltaSections(d *DeltaSpec) error {
	spec := d.Capability
	added, err := uniqueNames(spec, "ADDED", requirementNames(d.Added))
	if err != nil {
		return err
	}
	modified, err := uniqueNames(spec, "MODIFIED", requirementNames(d.Modified))
	if err != nil {
		return err
	}
	var removedNames []string
	for _, r := range d.Removed {
		removedNames = append(removedNames, r.Name)
	}
	removed, err := uniqueNames(spec, "REMOVED", removedNames)
	if err != nil {
		return err
	}
	if err := checkRenameUnique(d); err != nil {
		return err
	}
	if err := checkRenameOverlaps(d, added, modified); err != nil {
		return err
	}
	if err := checkSectionOverlaps(d, added, removed); err != nil {
		return err
	}
	if len(d.Added)+len(d.Modified)+len(d.Removed)+len(d.Renamed) == 0 {
		return refuse("Delta parsing found no operations for %s. Provide ADDED/MODIFIED/REMOVED/RENAMED sections in change spec.", spec)
	}
	return nil
}

func requirementNames(reqs []*Requirement) []string {
	names := make([]string, len(reqs))
	for i, r := range reqs {
		names[i] = r.Name
	}
	return names
}

// uniqueNames is the set of a section's names, refusing the first repeat:
// applying one name twice would depend on which copy came last.
func uniqueNames(spec, section string, names []string) (map[string]bool, error) {
	set := map[string]bool{}
	for _, n := range names {
		if set[n] {
			return nil, refuse("%s validation failed - duplicate requirement in %s for header \"### Requirement: %s\"", spec, section, n)
		}
		set[n] = true
	}
	return set, nil
}

// checkRenameUnique refuses two renames from, or to, the same name: the
// second would find its source gone or its target taken.
func checkRenameUnique(d *DeltaSpec) error {
	from, to := map[string]bool{}, map[string]bool{}
	for _, r := range d.Renamed {
		if from[r.From] {
			return refuse("%s validation failed - duplicate FROM in RENAMED for header \"### Requirement: %s\"", d.Capability, r.From)
		}
		if to[r.To] {
			return refuse("%s validation failed - duplicate TO in RENAMED for header \"### Requirement: %s\"", d.Capability, r.To)
		}
		from[r.From], to[r.To] = true, true
	}
	return nil
}

// checkRenameOverlaps refuses a rename that another section contradicts.
// RENAMED applies first, so MODIFIED must use the new name. A REMOVED of the
// old name is compared folded: a missing REMOVED target is a warned no-op, and
// a case or spacing variant must not slip past this check into one.
func checkRenameOverlaps(d *DeltaSpec, added, modified map[string]bool) error {
	spec := d.Capability
	for _, r := range d.Renamed {
		for _, rm := range d.Removed {
			if foldName(rm.Name) == foldName(r.From) {
				extra := ""
				if rm.Name != r.From {
					extra = fmt.Sprintf(" (REMOVED spells it \"%s\")", rm.Name)
				}
				return refuse("%s validation failed - requirement present in multiple sections (RENAMED and REMOVED) for header \"### Requirement: %s\"%s", spec, r.From, extra)
			}
		}
		if modified[r.From] {
			return refuse("%s validation failed - when a rename exists, MODIFIED must reference the NEW header \"### Requirement: %s\"", spec, r.To)
		}
		if added[r.To] {
			return refuse("%s validation failed - RENAMED TO header collides with ADDED for \"### Requirement: %s\"", spec, r.To)
		}
	}
	return nil
}

// checkSectionOverlaps refuses a name in two of ADDED, MODIFIED and REMOVED:
// the sections apply in a fixed order, so one would silently undo the other.
// It runs after checkRenameOverlaps and reports MODIFIED pairs first, so the
// refusal is the one OpenSpec gives.
func checkSectionOverlaps(d *DeltaSpec, added, removed map[string]bool) error {
	overlap := func(name, a, b string) error {
		return refuse("%s validation failed - requirement present in multiple sections (%s and %s) for header \"### Requirement: %s\"", d.Capability, a, b, name)
	}
	for _, r := range d.Modified {
		if removed[r.Name] {
			return overlap(r.Name, "MODIFIED", "REMOVED")
		}
		if added[r.Name] {
			return overlap(r.Name, "MODIFIED", "ADDED")
		}
	}
	for _, r := range d.Added {
		if removed[r.Name] {
			return overlap(r.Name, "ADDED", "REMOVED")
		}
	}
	return nil
}

// startingText is the text the delta applies to: the main spec, or for a new
// spec a skeleton that carries the delta's Purpose when it can. A delta
// Purpose only seeds a new spec; over an existing, different one it is
// ignored, and said so, since the delta file looks the same either way.
func startingText(d *DeltaSpec, target *Doc, change string, out *merged) (string, error) {
	spec := d.Capability
	deltaPurpose := purposeOf(d.Doc.Texts())
	if target != nil {
		if deltaPurpose != "" {
			if p := purposeOf(target.Texts()); p != "" && p != deltaPurpose {
				out.warn("%s - delta Purpose ignored; %s already has one. Edit %s directly to change it.", spec, spec, target.Path)
			}
		}
		return target.Normalized(), nil
	}
	return newSpecText(d, change, deltaPurpose, out)
}

// newSpecText is the skeleton of a spec the delta creates. Only ADDED can
// apply to nothing. An unreadable Purpose falls back to the placeholder rather
// than a refusal: such deltas archived cleanly before the Purpose was carried.
func newSpecText(d *DeltaSpec, change, deltaPurpose string, out *merged) (string, error) {
	spec := d.Capability
	if len(d.Modified) > 0 || len(d.Renamed) > 0 {
		return "", refuse("%s: target spec does not exist; only ADDED requirements are allowed for new specs. MODIFIED and RENAMED operations require an existing spec.", spec)
	}
	if len(d.Removed) > 0 {
		out.warn("%s - %d REMOVED requirement(s) ignored for new spec (nothing to remove).", spec, len(d.Removed))
	}
	content := specSkeleton(spec, change, deltaPurpose)
	overview := ""
	if deltaPurpose != "" {
		overview = readableOverview(content)
	}
	if deltaPurpose != "" && overview == "" {
		out.warn("%s - delta Purpose ignored (it would leave the new spec unreadable); wrote the placeholder Purpose instead.", spec)
		return specSkeleton(spec, change, ""), nil
	}
	if overview != "" && utf16Len(overview) < 50 {
		out.warn("%s - carried Purpose is under 50 characters; openspec validate --strict reports it as too brief.", spec)
	}
	return content, nil
}

// targetParts splits the starting text at its requirement blocks, refusing a
// spec whose structure the split would misread: rebuilt from a wrong split,
// the spec would lose or move text.
func targetParts(spec, content string) (reqParts, error) {
	lines := strings.Split(content, "\n")
	if issues := specStructureIssues(lines); len(issues) > 0 {
		var details []string
		for _, is := range issues {
			details = append(details, fmt.Sprintf("line %d: %s", is.Line, is.Msg))
		}
		return reqParts{}, refuse("%s: target spec is structurally invalid and cannot be updated until fixed:\n%s", spec, strings.Join(details, "\n"))
	}
	return splitRequirements(lines), nil
}

// specMerge is one merge in progress. byName and keys mirror the JavaScript
// Map OpenSpec keeps (insertion-ordered, so new requirements come out in the
// order they were added); ordered is the spec's own block order with renames
// applied in place, which the rebuilt spec keeps.
type specMerge struct {
	spec    string
	isNew   bool
	byName  map[string]*Requirement
	keys    []string
	ordered []string
	out     *merged
}

func newSpecMerge(spec string, isNew bool, blocks []*Requirement, out *merged) *specMerge {
	m := &specMerge{spec: spec, isNew: isNew, byName: map[string]*Requirement{}, out: out}
	for _, b := range blocks {
		m.set(b.Name, b)
	}
	m.ordered = requirementNames(blocks)
	return m
}

func (m *specMerge) set(k string, r *Requirement) {
	if _, ok := m.byName[k]; !ok {
		m.keys = append(m.keys, k)
	}
	m.byName[k] = r
}

func (m *specMerge) del(k string) {
	delete(m.byName, k)
	for i, x := range m.keys {
		if x == k {
			m.keys = append(m.keys[:i:i], m.keys[i+1:]...)
			break
		}
	}
}

// nearMiss is a requirement, other than except, whose name differs from key
// only in case or spacing: an exact-match miss is then almost surely a typo,
// and refusing names the header the author meant.
func (m *specMerge) nearMiss(key string, except ...string) string {
	for _, k := range m.keys {
		if !slices.Contains(except, k) && foldName(k) == foldName(key) {
			return k
		}
	}
	return ""
}

// applyRenamed renames blocks, keeping their position. Source gone and
// target present means the rename was already synced to the main spec
// (OpenSpec's early-sync pattern): a no-op, unless a case or spacing variant
// of the source is still there, which is a typo. A case-only rename is allowed.
func (m *specMerge) applyRenamed(renames []Rename) error {
	for _, r := range renames {
		if _, ok := m.byName[r.From]; !ok {
			if _, ok := m.byName[r.To]; ok {
				if k := m.nearMiss(r.From, r.To); k != "" {
					return refuse("%s RENAMED failed for header \"### Requirement: %s\" - source not found, but \"### Requirement: %s\" exists; fix the header to match it exactly", m.spec, r.From, m.byName[k].Name)
				}
				continue
			}
			return refuse("%s RENAMED failed for header \"### Requirement: %s\" - source not found", m.spec, r.From)
		}
		if _, ok := m.byName[r.To]; ok {
			return refuse("%s RENAMED failed for header \"### Requirement: %s\" - target already exists", m.spec, r.To)
		}
		if k := m.nearMiss(r.To, r.From); k != "" {
			return refuse("%s RENAMED failed for header \"### Requirement: %s\" - \"### Requirement: %s\" already exists and differs only in case or spacing; choose a distinct name", m.spec, r.To, m.byName[k].Name)
		}
		b := m.byName[r.From]
		raw := strings.Split(b.Raw, "\n")
		raw[0] = "### Requirement: " + r.To
		m.del(r.From)
		m.set(r.To, &Requirement{Name: r.To, Raw: strings.Join(raw, "\n"), Scenarios: b.Scenarios})
		if i := slices.Index(m.ordered, r.From); i >= 0 {
			m.ordered[i] = r.To
		}
		m.out.counts.Renamed++
	}
	return nil
}

// applyRemoved deletes blocks. A name already absent was synced early and is
// warned about, not refused, unless a case or spacing variant is present: a
// typo. A new spec has nothing to remove, and newSpecText has said so.
func (m *specMerge) applyRemoved(removed []Named) error {
	for _, r := range removed {
		if _, ok := m.byName[r.Name]; !ok {
			if !m.isNew {
				if k := m.nearMiss(r.Name); k != "" {
					return refuse("%s REMOVED failed for header \"### Requirement: %s\" - not found, but \"### Requirement: %s\" exists; fix the header to match it exactly", m.spec, r.Name, m.byName[k].Name)
				}
				m.out.warn("%s - REMOVED requirement \"%s\" is not in the current spec; treating it as already removed.", m.spec, r.Name)
			}
			continue
		}
		m.del(r.Name)
		m.out.counts.Removed++
	}
	return nil
}

// applyModified replaces blocks whole. It refuses a block that would drop a
// scenario the spec has, which loses a behaviour nobody chose to remove. An
// unchanged block (synced early) is not counted, so a fully synced change
// reads as already in sync.
func (m *specMerge) applyModified(modified []*Requirement) error {
	for _, r := range modified {
		cur, ok := m.byName[r.Name]
		if !ok {
			return refuse("%s MODIFIED failed for header \"### Requirement: %s\" - not found", m.spec, r.Name)
		}
		hm := requirementHeaderRe.FindStringSubmatch(strings.Split(r.Raw, "\n")[0])
		if hm == nil || normalizeName(hm[1]) != r.Name {
			return refuse("%s MODIFIED failed for header \"### Requirement: %s\" - header mismatch in content", m.spec, r.Name)
		}
		if diff := diffScenarios(cur, r); len(diff.missing) > 0 {
			return refuse("%s MODIFIED failed for header \"### Requirement: %s\" - current spec contains scenario(s) not present in the modified block: %s. %s Refresh the change spec before archiving to avoid dropping scenarios.", m.spec, r.Name, quoteList(diff.missing), diff.balance())
		}
		if normBlock(cur.Raw) != normBlock(r.Raw) {
			m.out.counts.Modified++
		}
		m.set(r.Name, r)
	}
	return nil
}

// applyAdded appends new blocks. One already there with the same text was
// synced early and is skipped; a name that differs from an existing one only
// in case or spacing is refused, as it would leave two contradicting copies.
func (m *specMerge) applyAdded(added []*Requirement) error {
	for _, a := range added {
		if ex, ok := m.byName[a.Name]; ok {
			if normBlock(ex.Raw) == normBlock(a.Raw) {
				continue
			}
			return refuse("%s ADDED failed for header \"### Requirement: %s\" - already exists", m.spec, a.Name)
		}
		if k := m.nearMiss(a.Name); k != "" {
			return refuse("%s ADDED failed for header \"### Requirement: %s\" - \"### Requirement: %s\" already exists and differs only in case or spacing; use MODIFIED with that exact header to change it, or choose a distinct name", m.spec, a.Name, m.byName[k].Name)
		}
		m.set(a.Name, a)
		m.out.counts.Added++
	}
	return nil
}

// rebuild writes the spec back: the blocks that stay in their original
// order, then the new ones, between the text that surrounded them, with
// OpenSpec's trimming so the bytes match what its archive writes.
func (m *specMerge) rebuild(parts reqParts) string {
	var kept []*Requirement
	seen := map[string]bool{}
	for _, k := range m.ordered {
		if r, ok := m.byName[k]; ok {
			kept = append(kept, r)
			seen[k] = true
		}
	}
	for _, k := range m.keys {
		if !seen[k] {
			kept = append(kept, m.byName[k])
		}
	}
	m.out.noBlocks = len(kept) == 0
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
	return jsTrimEnd(collapseBlankRuns(strings.Join(segs, "\n\n"))) + "\n"
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
