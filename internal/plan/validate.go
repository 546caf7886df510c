package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// Level is a finding's severity, OpenSpec's three.
type Level string

// The levels. `openspec validate --strict` fails a change on any ERROR or
// WARNING; INFO never fails it.
const (
	LevelError   Level = "ERROR"
	LevelWarning Level = "WARNING"
	LevelInfo    Level = "INFO"
)

// Finding is one thing validation found in a plan. Findings are answers, not
// failures: a validation that could not run returns an error instead.
type Finding struct {
	Level   Level  `json:"level"`
	Rule    string `json:"rule"` // "openspec/…" for OpenSpec's rules, "roadmap/…" for ours
	File    string `json:"file"` // slash-separated, relative to the repository root
	Line    int    `json:"line"` // 1-based; 1 when the finding concerns a whole file
	Message string `json:"message"`
	// Ours marks roadmap's stricter checks, which `openspec validate` does not make.
	Ours bool `json:"ours"`

	// How `openspec validate --json` reports an OpenSpec finding: its path
	// (relative to the change's specs/ for delta files, to the change for
	// tasks.md, or "file" for the change as a whole) and whether it gives a line.
	OpenSpecPath string `json:"-"`
	OpenSpecLine bool   `json:"-"`
}

// The two owners of a rule.
const (
	OwnerOpenSpec = "openspec"
	OwnerRoadmap  = "roadmap"
)

// Owner is whose rule the finding is: "openspec" for a rule of the pinned
// `openspec validate --strict` (or archive), "roadmap" for roadmap's own.
func (f Finding) Owner() string {
	if f.Ours {
		return OwnerRoadmap
	}
	return OwnerOpenSpec
}

// MarshalJSON adds the owner to the finding's JSON, so a reader of --json
// need not know which rule prefixes are whose.
func (f Finding) MarshalJSON() ([]byte, error) {
	type plain Finding
	return json.Marshal(struct {
		plain
		Owner string `json:"owner"`
	}{plain(f), f.Owner()})
}

// String is the finding as `roadmap plan validate` prints it.
func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", f.File, f.Line, f.Rule, f.Message)
}

// Fails reports whether the finding fails a strict validation.
func (f Finding) Fails() bool { return f.Level == LevelError || f.Level == LevelWarning }

// Report is the validation of one change.
type Report struct {
	Change   string    `json:"change"`
	Dir      string    `json:"dir"` // the change directory, relative to the repository root
	Findings []Finding `json:"findings"`
}

// OpenSpecValid is the verdict `openspec validate --strict` gives: no ERROR
// and no WARNING among OpenSpec's own findings.
func (r *Report) OpenSpecValid() bool {
	for _, f := range r.Findings {
		if !f.Ours && f.Fails() {
			return false
		}
	}
	return true
}

// Clean reports whether the change passes every check, ours included.
func (r *Report) Clean() bool {
	for _, f := range r.Findings {
		if f.Fails() {
			return false
		}
	}
	return true
}

// ErrNoChange is returned for a change directory that does not exist.
var ErrNoChange = errors.New("no such change")

// Validate checks change id under the repository root: first every rule of
// `openspec validate <id> --strict` (the pinned OpenSpec version's
// Validator.validateChangeDeltaSpecs, with the main specs and the task files),
// then roadmap's own stricter rules. It returns an error only when the change
// cannot be read at all.
func Validate(root, id string) (*Report, error) {
	v, err := newValidation(root, id)
	if err != nil {
		return nil, fmt.Errorf("validate %s: %w", id, err)
	}
	defer v.t.close()
	v.openspec()
	v.roadmapChecks()
	sortFindings(v.r.Findings)
	return v.r, nil
}

// ValidateOpenSpec checks change id under the repository root with OpenSpec's
// rules only: what the pinned `openspec validate <id> --strict` checks, and
// nothing of roadmap's. Its report is Clean exactly when the OpenSpec CLI
// accepts the change.
func ValidateOpenSpec(root, id string) (*Report, error) {
	v, err := newValidation(root, id)
	if err != nil {
		return nil, fmt.Errorf("validate %s: %w", id, err)
	}
	defer v.t.close()
	v.openspec()
	sortFindings(v.r.Findings)
	return v.r, nil
}

func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
}

type validation struct {
	id        string
	t         *tree  // the work tree
	rel       string // change directory relative to root, slash-separated
	r         *Report
	deltas    []*DeltaSpec
	deltaRead map[string]bool
	meta      metadata
}

// newValidation opens the work tree root for change id; the caller closes
// v.t. A symlink anywhere under openspec/ is an error.
func newValidation(root, id string) (*validation, error) {
	t, err := openTree(root)
	if err != nil {
		return nil, err
	}
	v, err := validationIn(t, id)
	if err != nil {
		t.close()
		return nil, err
	}
	return v, nil
}

func validationIn(t *tree, id string) (*validation, error) {
	rel := path.Join(ChangesDir, id)
	if err := t.refuseSymlinks("openspec"); err != nil {
		return nil, err
	}
	st, err := t.stat(rel)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !st.IsDir()) {
		return nil, ErrNoChange
	}
	if err != nil {
		return nil, err
	}
	v := &validation{id: id, t: t, rel: rel, r: &Report{Change: id, Dir: rel}, deltaRead: map[string]bool{}}
	if v.meta, err = readMetadata(t, rel); err != nil {
		return nil, err
	}
	return v, nil
}

// add records an OpenSpec finding. osPath is the path OpenSpec reports; file
// and line are where roadmap points.
func (v *validation) add(level Level, rule, osPath string, osLine bool, file string, line int, format string, args ...any) {
	if line < 1 {
		line = 1
	}
	v.r.Findings = append(v.r.Findings, Finding{
		Level: level, Rule: "openspec/" + rule, File: file, Line: line,
		Message: fmt.Sprintf(format, args...), OpenSpecPath: osPath, OpenSpecLine: osLine,
	})
}

// addOurs records a roadmap finding.
func (v *validation) addOurs(level Level, rule, file string, line int, format string, args ...any) {
	if line < 1 {
		line = 1
	}
	v.r.Findings = append(v.r.Findings, Finding{
		Level: level, Rule: "roadmap/" + rule, File: file, Line: line,
		Message: fmt.Sprintf(format, args...), Ours: true,
	})
}

// specFile is one delta spec found under a change's specs/.
type specFile struct {
	id   string // capability path
	path string // relative to the work tree, slash-separated
}

// discoverSpecs finds spec.md at any depth under specsDir (relative to the
// work tree), not at its root, skipping dot-names, sorted by capability
// (spec-discovery.ts).
func discoverSpecs(t *tree, specsDir string) ([]specFile, error) {
	var out []specFile
	var walk func(dir string, segs []string) error
	walk = func(dir string, segs []string) error {
		entries, err := t.readDir(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
				return nil
			}
			return err
		}
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") {
				continue
			}
			p := path.Join(dir, name)
			if e.IsDir() {
				if err := walk(p, append(segs[:len(segs):len(segs)], name)); err != nil {
					return err
				}
				continue
			}
			if name != "spec.md" || len(segs) == 0 {
				continue
			}
			if st, err := t.stat(p); err == nil && st.Mode().IsRegular() {
				out = append(out, specFile{id: strings.Join(segs, "/"), path: p})
			}
		}
		return nil
	}
	if err := walk(specsDir, nil); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out, nil
}

func isNotDir(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "not a directory")
}

// unreadDelta is a .md file under specs/ other than spec.md that holds delta
// sections: archive would never read it.
type unreadDelta struct{ path, expected string }

func findUnreadDeltas(t *tree, specsDir string) []unreadDelta {
	var out []unreadDelta
	var walk func(dir string, segs []string)
	walk = func(dir string, segs []string) {
		entries, err := t.readDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") {
				continue
			}
			p := path.Join(dir, name)
			if e.IsDir() {
				walk(p, append(segs[:len(segs):len(segs)], name))
				continue
			}
			if name == "spec.md" || !strings.HasSuffix(strings.ToLower(name), ".md") {
				continue
			}
			st, err := t.stat(p)
			if err != nil || !st.Mode().IsRegular() {
				continue
			}
			src, err := t.readFile(p)
			if err != nil {
				continue
			}
			if len(ParseDelta(ParseDoc("", src), "").Present) == 0 {
				continue
			}
			capability := strings.Join(segs, "/")
			if len(segs) == 0 {
				capability = name[:len(name)-3]
			}
			out = append(out, unreadDelta{path: strings.Join(append(segs[:len(segs):len(segs)], name), "/"), expected: capability + "/spec.md"})
		}
	}
	walk(specsDir, nil)
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

func hasAnyFile(t *tree, dir string) bool {
	entries, err := t.readDir(dir)
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if e.Type().IsRegular() || e.Type()&fs.ModeSymlink != 0 {
			return true
		}
		if e.IsDir() && hasAnyFile(t, path.Join(dir, e.Name())) {
			return true
		}
	}
	return false
}

// readMain reads the main spec of a capability; nil when it does not exist.
func readMain(t *tree, capability string) (*Doc, error) {
	rel := path.Join(SpecsDir, capability, "spec.md")
	src, err := t.readFile(rel)
	if errors.Is(err, fs.ErrNotExist) || (err != nil && isNotDir(err)) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseDoc(rel, src), nil
}

const (
	noDeltasMsg = `Change must have at least one delta. No deltas found. Ensure your change has a specs/ directory with capability folders (e.g. specs/http-server/spec.md) containing .md files that use delta headers (## ADDED/MODIFIED/REMOVED/RENAMED Requirements) and that each requirement includes at least one "#### Scenario:" block. If this change intentionally modifies no specs (pure refactor, tooling, docs), set "skip_specs: true" in the change's .openspec.yaml instead. Tip: run "openspec change show <change-id> --json --deltas-only" to inspect parsed deltas.`
	rootSpecMsg = `Delta spec found at specs/spec.md. Delta specs must live under a capability path (e.g. specs/<capability-path>/spec.md) — a file at the specs/ root is ignored when the change is applied or archived.`
)

// openspec runs OpenSpec's rules, in OpenSpec's order.
func (v *validation) openspec() {
	specsRel := v.rel + "/specs"
	total := 0
	rootSpec := false
	if st, err := v.t.stat(specsRel + "/spec.md"); err == nil && st.Mode().IsRegular() {
		rootSpec = true
		v.add(LevelError, "root-delta-spec", "spec.md", false, specsRel+"/spec.md", 1, "%s", rootSpecMsg)
	}
	var missingHeader []string
	type empty struct {
		path     string
		sections []string
	}
	var emptySections []empty
	files, _ := discoverSpecs(v.t, specsRel)
	for _, sf := range files {
		src, err := v.t.readFile(sf.path)
		if err != nil {
			continue
		}
		entry := sf.id + "/spec.md"
		file := specsRel + "/" + entry
		d := ParseDelta(ParseDoc(file, src), sf.id)
		v.deltas = append(v.deltas, d)
		for _, s := range d.Skipped {
			if namelessRe.MatchString(s.Header) {
				v.add(LevelInfo, "requirement-header", entry, true, file, s.Line, "Header \"### %s\" in %s is missing a requirement name and is ignored by validation. Add a name, e.g. \"### Requirement: <name>\".", s.Header, s.Section)
			} else {
				v.add(LevelInfo, "requirement-header", entry, true, file, s.Line, "Header \"### %s\" in %s is not a \"### Requirement:\" header and is ignored by validation. Use \"### Requirement: %s\" if it should be validated as a requirement.", s.Header, s.Section, s.Header)
			}
		}
		for _, u := range d.Unpaired {
			missing := "FROM"
			if u.Side == "FROM" {
				missing = "TO"
			}
			v.add(LevelError, "rename-pair", entry, true, file, u.Line, "RENAMED %s: \"%s\" has no matching %s: line. Write each rename as a FROM: line followed immediately by its TO: line.", u.Side, u.Name, missing)
		}
		for _, o := range d.Orphans {
			where := `above the first "## " section`
			if o.InAny {
				where = fmt.Sprintf(`under "## %s"`, o.Section)
			}
			v.add(LevelWarning, "orphan-requirement", entry, true, file, o.Line, "Requirement \"%s\" is %s, which is not a delta section, so it is ignored. Move it under \"## ADDED Requirements\", \"## MODIFIED Requirements\", \"## REMOVED Requirements\", or \"## RENAMED Requirements\".", o.Name, where)
		}
		var names []string
		for _, op := range []Op{OpAdded, OpModified, OpRemoved, OpRenamed} {
			if d.Present[op] {
				names = append(names, "## "+string(op)+" Requirements")
			}
		}
		if len(d.Added)+len(d.Modified)+len(d.Removed)+len(d.Renamed) == 0 {
			if len(names) > 0 {
				emptySections = append(emptySections, empty{entry, names})
			} else {
				missingHeader = append(missingHeader, entry)
			}
		}
		addedN, modifiedN, removedN := newOrderedSet(), newOrderedSet(), newOrderedSet()
		fromN, toN := newOrderedSet(), newOrderedSet()
		for _, pair := range []struct {
			op   Op
			reqs []*Requirement
			set  *orderedSet
		}{{OpAdded, d.Added, addedN}, {OpModified, d.Modified, modifiedN}} {
			for _, r := range pair.reqs {
				total++
				if !pair.set.add(r.Name) {
					v.add(LevelError, "duplicate-requirement", entry, false, file, r.Line, "Duplicate requirement in %s: \"%s\"", pair.op, r.Name)
				}
				prefix := fmt.Sprintf("%s \"%s\"", pair.op, r.Name)
				switch body := r.Body(); {
				case body == "" && shallMustRe.MatchString(r.Name):
					v.add(LevelError, "requirement-text", entry, false, file, r.Line, "%s", shallMessage(prefix, r.Name, false))
				case body == "":
					v.add(LevelError, "requirement-text", entry, false, file, r.Line, "%s is missing requirement text", prefix)
				case !shallMustRe.MatchString(body):
					v.add(LevelWarning, "shall-must", entry, false, file, r.Line, "%s", shallMessage(prefix, r.Name, true))
				}
				if full, empties := countScenarios(r); full < 1 {
					hint := ""
					if empties > 0 {
						hint = ` (a scenario header with no body under it does not count; add its steps, e.g. "- **WHEN** ..." and "- **THEN** ...")`
					}
					v.add(LevelError, "scenario-required", entry, false, file, r.Line, "%s must include at least one scenario%s", prefix, hint)
				}
			}
			if pair.op == OpModified && len(d.Modified) > 0 {
				v.scenarioLoss(d, entry, file)
			}
		}
		for _, r := range d.Removed {
			total++
			if !removedN.add(r.Name) {
				v.add(LevelError, "duplicate-requirement", entry, false, file, r.Line, "Duplicate requirement in REMOVED: \"%s\"", r.Name)
			}
		}
		for _, r := range d.Renamed {
			total++
			if !fromN.add(r.From) {
				v.add(LevelError, "duplicate-rename", entry, false, file, r.FromLine, "Duplicate FROM in RENAMED: \"%s\"", r.From)
			}
			if !toN.add(r.To) {
				v.add(LevelError, "duplicate-rename", entry, false, file, r.ToLine, "Duplicate TO in RENAMED: \"%s\"", r.To)
			}
		}
		lineOf := func(reqs []*Requirement, name string) int {
			for _, r := range reqs {
				if r.Name == name {
					return r.Line
				}
			}
			return 1
		}
		for _, n := range modifiedN.order {
			if removedN.has(n) {
				v.add(LevelError, "section-conflict", entry, false, file, lineOf(d.Modified, n), "Requirement present in both MODIFIED and REMOVED: \"%s\"", n)
			}
			if addedN.has(n) {
				v.add(LevelError, "section-conflict", entry, false, file, lineOf(d.Modified, n), "Requirement present in both MODIFIED and ADDED: \"%s\"", n)
			}
		}
		for _, n := range addedN.order {
			if removedN.has(n) {
				v.add(LevelError, "section-conflict", entry, false, file, lineOf(d.Added, n), "Requirement present in both ADDED and REMOVED: \"%s\"", n)
			}
		}
		for _, r := range d.Renamed {
			if modifiedN.has(r.From) {
				v.add(LevelError, "section-conflict", entry, false, file, r.FromLine, "MODIFIED references old name from RENAMED. Use new header for \"%s\"", r.To)
			}
			if addedN.has(r.To) {
				v.add(LevelError, "section-conflict", entry, false, file, r.ToLine, "RENAMED TO collides with ADDED for \"%s\"", r.To)
			}
			for _, rm := range removedN.order {
				if foldName(rm) == foldName(r.From) {
					extra := ""
					if rm != r.From {
						extra = fmt.Sprintf(" (REMOVED spells it \"%s\")", rm)
					}
					v.add(LevelError, "section-conflict", entry, false, file, r.FromLine, "Requirement present in both RENAMED and REMOVED: \"%s\"%s", r.From, extra)
					break
				}
			}
		}
	}

	// Archive's merge, dry: what it would refuse, as INFO, for the deltas
	// not already reported as wrong.
	reported := map[string]bool{}
	for _, f := range v.r.Findings {
		if f.Level == LevelError {
			reported[f.OpenSpecPath] = true
		}
	}
	for _, p := range missingHeader {
		reported[p] = true
	}
	for _, e := range emptySections {
		reported[e.path] = true
	}
	for _, d := range v.deltas {
		entry := d.Capability + "/spec.md"
		if reported[entry] {
			continue
		}
		target, err := readMain(v.t, d.Capability)
		if err != nil {
			continue
		}
		if _, err := mergeDelta(d, target, v.id); err != nil {
			var me *mergeError
			if errors.As(err, &me) {
				v.add(LevelInfo, "archive-blocker", entry, false, d.Doc.Path, 1, "Archive would refuse this delta: %s", me.msg)
			}
		}
	}

	unread := findUnreadDeltas(v.t, specsRel)
	for _, u := range unread {
		v.add(LevelError, "unread-delta-file", u.path, false, specsRel+"/"+u.path, 1, "Delta spec found at specs/%s. Delta specs must be a spec.md inside a capability folder — this file is ignored when the change is applied or archived. Move its requirements into specs/%s.", u.path, u.expected)
	}
	for _, e := range emptySections {
		v.add(LevelError, "empty-delta-sections", e.path, false, specsRel+"/"+e.path, 1, "Delta sections %s were found, but no requirement entries parsed. Ensure each section includes at least one \"### Requirement:\" block (REMOVED may use bullet list syntax).", sectionList(e.sections))
	}
	for _, p := range missingHeader {
		v.add(LevelError, "no-delta-sections", p, false, specsRel+"/"+p, 1, "No delta sections found. Add headers such as \"## ADDED Requirements\" or move non-delta notes outside specs/.")
	}
	declared, invalid := v.meta.flag("skip_specs")
	metaRel := v.rel + "/" + MetadataFile
	if invalid != "" {
		v.add(LevelError, "metadata", MetadataFile, false, metaRel, 1, "skip_specs is set but .openspec.yaml is not valid change metadata, so the marker is not honored. Fix the metadata (%s)", invalid)
	}
	filesUnder := declared && hasAnyFile(v.t, specsRel)
	if filesUnder {
		v.add(LevelError, "skip-specs", "file", false, metaRel, 1, "skip_specs is set in .openspec.yaml but spec files exist under specs/. Remove skip_specs or delete the delta spec files")
	}
	if total == 0 && !rootSpec && len(unread) == 0 {
		if declared && !filesUnder {
			v.add(LevelInfo, "skip-specs", "file", false, metaRel, 1, "skip_specs is set in .openspec.yaml: change declares no spec-level behavior changes, zero deltas accepted")
		} else if !declared {
			v.add(LevelError, "no-deltas", "file", false, v.rel, 1, "%s", noDeltasMsg)
		}
	}
	v.taskFiles()
}

// taskFiles runs OpenSpec's task-file checks on tasks.md.
func (v *validation) taskFiles() {
	// A .openspec.yaml OpenSpec cannot read, or one naming another schema,
	// turns both checks off there.
	if v.meta.present && (v.meta.err != "" || v.meta.schema != "spec-driven") {
		return
	}
	src, err := v.t.readFile(v.rel + "/tasks.md")
	if err != nil {
		return
	}
	content := string(src)
	file := v.rel + "/tasks.md"
	if !hasTaskLine(content) {
		if n := firstListItemLine(content); n > 0 {
			v.add(LevelWarning, "task-checkboxes", "tasks.md", true, file, n, "%s", noCheckboxMsg)
		}
	}
	for _, is := range taskNumberingIssues(content) {
		v.add(LevelWarning, "task-numbering", "tasks.md", true, file, is.line, "%s", is.msg)
	}
}

// scenarioLoss reports MODIFIED blocks that drop a scenario the main spec has.
func (v *validation) scenarioLoss(d *DeltaSpec, entry, file string) {
	target, err := readMain(v.t, d.Capability)
	if err != nil || target == nil {
		return
	}
	current := map[string]*Requirement{}
	for _, b := range splitRequirements(target.Texts()).blocks {
		current[b.Name] = b
	}
	renamedFrom := map[string]string{}
	away := map[string]bool{}
	for _, r := range d.Renamed {
		renamedFrom[r.To] = r.From
		away[r.From] = true
	}
	for _, m := range d.Modified {
		if away[m.Name] {
			continue
		}
		var cur *Requirement
		seen := map[string]bool{}
		for key, ok := m.Name, true; ok && !seen[key]; key, ok = renamedFrom[key] {
			if b := current[key]; b != nil {
				cur = b
				break
			}
			seen[key] = true
		}
		if cur == nil {
			continue
		}
		diff := diffScenarios(cur, m)
		if len(diff.missing) == 0 {
			continue
		}
		v.add(LevelError, "scenario-loss", entry, false, file, m.Line, "MODIFIED \"%s\" omits scenario(s) the current spec still has: %s. %s Copy the omitted scenarios into the MODIFIED block (a MODIFIED requirement replaces the whole block, so archive refuses to drop them).", m.Name, quoteList(diff.missing), diff.balance())
	}
}

func shallMessage(prefix, name string, guidance bool) string {
	verb := "must"
	if guidance {
		verb = "should"
	}
	base := prefix + " " + verb + " contain SHALL or MUST"
	suffix := ""
	if guidance {
		suffix = " (RFC 2119 best practice for English specs)"
	}
	if shallMustRe.MatchString(name) {
		return base + ` in the requirement body, not only in the header. Move the SHALL/MUST statement to the line immediately after the "### Requirement: ..." header.` + suffix
	}
	return base + suffix
}

func sectionList(s []string) string {
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

type orderedSet struct {
	order []string
	in    map[string]bool
}

func newOrderedSet() *orderedSet { return &orderedSet{in: map[string]bool{}} }

// add reports false when s was already there.
func (o *orderedSet) add(s string) bool {
	if o.in[s] {
		return false
	}
	o.in[s] = true
	o.order = append(o.order, s)
	return true
}

func (o *orderedSet) has(s string) bool { return o.in[s] }
