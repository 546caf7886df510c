package plan

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
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
// A change OpenSpec would refuse — delta errors, a delta that cannot apply
// (a MODIFIED requirement that no longer exists), a rebuilt spec that would
// not validate, an archive directory already taken — comes back as findings,
// with nothing written. The error is for what is not the plan's fault: a
// missing change, an unreadable or unwritable file.
func Archive(root, id string, date time.Time) ([]Finding, error) {
	v, err := newValidation(root, id)
	if err != nil {
		return nil, fmt.Errorf("archive: %w", err)
	}
	specsDir := filepath.Join(v.dir, "specs")
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
	dest := filepath.Join(root, filepath.FromSlash(ArchiveDir), name)
	if _, err := os.Lstat(dest); err == nil {
		return []Finding{{Level: LevelError, Rule: "openspec/archive", File: path.Join(ArchiveDir, name), Line: 1,
			Message: fmt.Sprintf("Archive '%s' already exists.", name)}}, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("archive %s: %w", id, err)
	}

	// OpenSpec makes the archive directory before it merges anything, so a
	// refused merge leaves it behind (empty; git does not see it).
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return nil, fmt.Errorf("archive %s: %w", id, err)
	}
	files, err := discoverSpecs(specsDir)
	if err != nil {
		return nil, fmt.Errorf("archive %s: %w", id, err)
	}
	type write struct {
		target  string
		content string
	}
	var writes []write
	for _, sf := range files {
		rel := v.rel + "/specs/" + sf.id + "/spec.md"
		src, err := os.ReadFile(sf.path)
		if err != nil {
			return nil, fmt.Errorf("archive %s: %w", id, err)
		}
		d := ParseDelta(ParseDoc(rel, src), sf.id)
		target, err := readMain(root, sf.id)
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
		if msgs := specErrors(m.rebuilt); len(msgs) > 0 {
			var out []Finding
			for _, msg := range msgs {
				out = append(out, Finding{Level: LevelError, Rule: "openspec/archive", File: rel, Line: 1,
					Message: fmt.Sprintf("Validation errors in rebuilt spec for %s (will not write changes): %s", sf.id, msg)})
			}
			return out, nil
		}
		if m.counts.Total() == 0 {
			continue // already in sync: OpenSpec leaves the file alone
		}
		content := m.rebuilt
		if target != nil {
			content = matchLineEnding(content, string(target.Bytes()))
		}
		writes = append(writes, write{filepath.Join(root, filepath.FromSlash(path.Join(SpecsDir, sf.id, "spec.md"))), content})
	}
	for _, w := range writes {
		if err := os.MkdirAll(filepath.Dir(w.target), 0o755); err != nil {
			return nil, fmt.Errorf("archive %s: %w", id, err)
		}
		if err := os.WriteFile(w.target, []byte(w.content), 0o644); err != nil {
			return nil, fmt.Errorf("archive %s: %w", id, err)
		}
	}
	if err := os.Rename(v.dir, dest); err != nil {
		return nil, fmt.Errorf("archive %s: move the change: %w", id, err)
	}
	return nil, nil
}

// hasDeltaSpecs is archive's test for whether a change has delta specs to
// validate at all; a change without any is archived unvalidated.
func (v *validation) hasDeltaSpecs(specsDir string) bool {
	if st, err := os.Stat(filepath.Join(specsDir, "spec.md")); err == nil && st.Mode().IsRegular() {
		return true
	}
	if len(findUnreadDeltas(specsDir)) > 0 {
		return true
	}
	declared, invalid := v.meta.flag("skip_specs")
	if invalid != "" {
		return true
	}
	if declared {
		return hasAnyFile(specsDir)
	}
	files, _ := discoverSpecs(specsDir)
	for _, sf := range files {
		src, err := os.ReadFile(sf.path)
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
// there.
func Archived(root, planDir string) (string, bool) {
	if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(planDir))); err == nil {
		return "", false
	}
	id := path.Base(filepath.ToSlash(planDir))
	if !changeIDRe.MatchString(id) {
		return "", false // not an id (and never a glob pattern)
	}
	matches, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(ArchiveDir), "????-??-??-"+id))
	if len(matches) == 0 {
		return "", false
	}
	sort.Strings(matches)
	rel, err := filepath.Rel(root, matches[len(matches)-1])
	if err != nil {
		return "", false
	}
	return filepath.ToSlash(rel), true
}
