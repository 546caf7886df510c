package plan

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/nofollow"
)

// ArchiveDir is where OpenSpec moves finished changes, relative to the
// repository root.
const ArchiveDir = "openspec/changes/archive"

var datedRe = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}-`)

// ArchiveName is the directory a change is archived under on date:
// YYYY-MM-DD-<id>, or the id itself when it already starts with a date.
func ArchiveName(id string, date time.Time) string {
	if datedRe.MatchString(id) {
		return id
	}
	return date.Format("2006-01-02") + "-" + id
}

// Archive applies change id's delta specs to the main specs under
// openspec/specs and moves the change to openspec/changes/archive/<date>-<id>,
// writing what `openspec archive <id> --yes` of the pinned OpenSpec writes on
// the same tree, byte for byte. date is the day the archive is made (OpenSpec
// takes the local date).
//
// A capability whose last requirement the change removes is retired (its
// main spec deleted, with the folders that leaves empty) when .openspec.yaml
// sets `retire_capabilities: true`, as OpenSpec does; without the marker the
// archive is refused with OpenSpec's hint naming it.
//
// A change OpenSpec would refuse — delta errors, a delta that cannot apply
// (a MODIFIED requirement that no longer exists), a rebuilt spec that would
// not validate, an archive directory already taken — comes back as findings,
// with nothing written. The error is for what is not the plan's fault: a
// missing change, an unreadable or unwritable file, and a symlink anywhere
// under openspec/ (a *SymlinkError, with nothing written): every file is
// read, written and moved inside the work tree, through no symlink.
func Archive(root, id string, date time.Time) ([]Finding, error) {
	v, err := newValidation(root, id)
	if err != nil {
		return nil, fmt.Errorf("archive %s: %w", id, err)
	}
	defer v.t.close()
	specsDir := v.rel + "/specs"
	if v.hasDeltaSpecs(specsDir) {
		v.openspec()
		var blocking []Finding
		for _, f := range v.r.Findings {
			// Archive validates without the main specs (the merge below makes
			// the scenario-loss check itself, in its own words) and without
			// the task files.
			if f.Level == LevelError && f.Rule != "openspec/scenario-loss" {
				blocking = append(blocking, f)
			}
		}
		if len(blocking) > 0 {
			return blocking, nil
		}
		v.r.Findings = nil
	}
	name := ArchiveName(id, date)
	dest := path.Join(ArchiveDir, name)
	if _, err := v.t.stat(dest); err == nil {
		return []Finding{{Level: LevelError, Rule: "openspec/archive", File: dest, Line: 1,
			Message: fmt.Sprintf("Archive '%s' already exists.", name)}}, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("archive %s: %w", id, err)
	}

	// OpenSpec makes the archive directory before it merges anything, so a
	// refused merge leaves it behind (empty; git does not see it).
	if err := v.t.mkdirAll(ArchiveDir); err != nil {
		return nil, fmt.Errorf("archive %s: %w", id, err)
	}
	files, err := discoverSpecs(v.t, specsDir)
	if err != nil {
		return nil, fmt.Errorf("archive %s: %w", id, err)
	}
	// Every delta is merged before any rebuilt spec is validated, and every
	// spec validated before anything is written, as OpenSpec orders it: the
	// first refusal is the one it gives, and a refusal writes nothing.
	retireDeclared, retireInvalid := v.meta.flag("retire_capabilities")
	type prepared struct {
		capability string
		delta      string // the delta spec, relative to the work tree
		target     *Doc   // the main spec; nil when the delta creates it
		m          *merged
		outcome    specOutcome
	}
	var all []prepared
	for _, sf := range files {
		rel := v.rel + "/specs/" + sf.id + "/spec.md"
		src, err := v.t.readFile(sf.path)
		if err != nil {
			return nil, fmt.Errorf("archive %s: %w", id, err)
		}
		d := ParseDelta(ParseDoc(rel, src), sf.id)
		target, err := readMain(v.t, sf.id)
		if err != nil {
			return nil, fmt.Errorf("archive %s: %w", id, err)
		}
		m, err := mergeDelta(d, target, id)
		var me *mergeError
		if errors.As(err, &me) {
			return []Finding{{Level: LevelError, Rule: "openspec/archive", File: rel, Line: 1, Message: me.msg}}, nil
		}
		if err != nil {
			return nil, fmt.Errorf("archive %s: %w", id, err)
		}
		all = append(all, prepared{sf.id, rel, target, m, m.outcome(target != nil, retireDeclared)})
	}
	for _, p := range all {
		if p.outcome != outcomeWrite {
			continue // a retirement has been validated already: no requirement is its only fault
		}
		msgs := specErrors(p.m.rebuilt)
		if len(msgs) == 0 {
			continue
		}
		var out []Finding
		for _, msg := range msgs {
			out = append(out, Finding{Level: LevelError, Rule: "openspec/archive", File: p.delta, Line: 1,
				Message: fmt.Sprintf("Validation errors in rebuilt spec for %s (will not write changes): %s", p.capability, msg)})
		}
		for _, hint := range p.m.retireHints(p.capability, p.target != nil, retireDeclared, retireInvalid) {
			out = append(out, Finding{Level: LevelError, Rule: "openspec/archive", File: p.delta, Line: 1, Message: hint})
		}
		return out, nil
	}
	// Writes first, then retirements, then the move.
	for _, p := range all {
		if p.outcome != outcomeWrite || p.m.counts.Total() == 0 {
			continue // already in sync: OpenSpec leaves the file alone
		}
		content := p.m.rebuilt
		if p.target != nil {
			content = matchLineEnding(content, string(p.target.Bytes()))
		}
		target := path.Join(SpecsDir, p.capability, "spec.md")
		if err := v.t.mkdirAll(path.Dir(target)); err != nil {
			return nil, fmt.Errorf("archive %s: %w", id, err)
		}
		if err := v.t.writeFile(target, []byte(content)); err != nil {
			return nil, fmt.Errorf("archive %s: %w", id, err)
		}
	}
	for _, p := range all {
		if p.outcome != outcomeRetire {
			continue
		}
		if err := v.t.retire(path.Join(SpecsDir, p.capability, "spec.md")); err != nil {
			return nil, fmt.Errorf("archive %s: retire capability %s: %w", id, p.capability, err)
		}
	}
	if err := v.t.rename(v.rel, dest); err != nil {
		return nil, fmt.Errorf("archive %s: move the change: %w", id, err)
	}
	return nil, nil
}

// hasDeltaSpecs is archive's test for whether a change has delta specs to
// validate at all; a change without any is archived unvalidated.
func (v *validation) hasDeltaSpecs(specsDir string) bool {
	if st, err := v.t.stat(specsDir + "/spec.md"); err == nil && st.Mode().IsRegular() {
		return true
	}
	if len(findUnreadDeltas(v.t, specsDir)) > 0 {
		return true
	}
	declared, invalid := v.meta.flag("skip_specs")
	if invalid != "" {
		return true
	}
	if declared {
		return hasAnyFile(v.t, specsDir)
	}
	files, _ := discoverSpecs(v.t, specsDir)
	for _, sf := range files {
		src, err := v.t.readFile(sf.path)
		if err == nil && anyDeltaHeaderRe.Match(src) {
			return true
		}
	}
	return false
}

var anyDeltaHeaderRe = jsRegexp(`(?im)^##\s+(ADDED|MODIFIED|REMOVED|RENAMED)\s+Requirements`)

// matchLineEnding writes content (LF) with the line ending original mostly
// uses, as OpenSpec does for a spec it rewrites.
func matchLineEnding(content, original string) string {
	crlf := strings.Count(original, "\r\n")
	lf := strings.Count(original, "\n") - crlf
	if crlf == 0 && lf == 0 || crlf < lf {
		return content
	}
	return strings.ReplaceAll(strings.ReplaceAll(content, "\r\n", "\n"), "\n", "\r\n")
}

// Archived returns where OpenSpec's archive holds the change planDir names
// (openspec/changes/<id>, relative to root) once the change itself is gone:
// openspec/changes/archive/YYYY-MM-DD-<id>, the newest, slash-separated and
// relative to root. A later Job and the PR's checks read an archived plan
// there. The archive is looked up inside root through no symlink.
func Archived(root, planDir string) (string, bool) {
	t, err := openTree(root)
	if err != nil {
		return "", false
	}
	defer t.close()
	if _, err := nofollow.Lstat(t.root, planDir); !errors.Is(err, fs.ErrNotExist) {
		return "", false // the change is there (or its path is not one)
	}
	id := path.Base(filepath.ToSlash(planDir))
	if !changeIDRe.MatchString(id) {
		return "", false // not an id (and never a glob pattern)
	}
	entries, err := t.readDir(ArchiveDir)
	if err != nil {
		return "", false
	}
	newest := ""
	for _, e := range entries {
		if ok, _ := path.Match("????-??-??-"+id, e.Name()); ok && e.IsDir() && e.Name() > newest {
			newest = e.Name()
		}
	}
	if newest == "" {
		return "", false
	}
	return path.Join(ArchiveDir, newest), true
}
