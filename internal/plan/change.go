package plan

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// ChangesDir is where OpenSpec keeps the changes, relative to the repository root.
const ChangesDir = "openspec/changes"

// Change is an OpenSpec change as implement reads it.
type Change struct {
	ID    string // the directory name, kebab-case
	Dir   string // the directory it was read from
	Title string // the first `# ` heading of proposal.md; "" when there is none
	Tasks *Tasks
}

// changeIDRe is OpenSpec's change id rule (src/core/id.ts).
var changeIDRe = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)

// ChangeDir returns the directory of change id under the repository root.
func ChangeDir(root, id string) string {
	return filepath.Join(root, filepath.FromSlash(ChangesDir), id)
}

// ListChanges returns the ids of the changes under root/openspec/changes,
// sorted, leaving out the archive. No changes directory means none.
func ListChanges(root string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(ChangesDir)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list changes: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != "archive" {
			ids = append(ids, e.Name())
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// LoadChange reads the change in dir (openspec/changes/<id>): its tasks.md,
// which must exist and parse, and the title of proposal.md if there is one.
// Parse errors carry the tasks.md path.
func LoadChange(dir string) (*Change, error) {
	id := filepath.Base(filepath.Clean(dir))
	if !changeIDRe.MatchString(id) {
		return nil, fmt.Errorf("load change %s: id %q is not kebab-case", dir, id)
	}
	path := filepath.Join(dir, "tasks.md")
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load change %s: %w", id, err)
	}
	tasks, err := Parse(src)
	if err != nil {
		var list ErrorList
		if errors.As(err, &list) {
			for _, e := range list {
				e.File = path
			}
		}
		return nil, fmt.Errorf("load change %s: %w", id, err)
	}
	c := &Change{ID: id, Dir: dir, Tasks: tasks}
	proposal, err := os.ReadFile(filepath.Join(dir, "proposal.md"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("load change %s: %w", id, err)
	default:
		c.Title = firstTitle(proposal)
	}
	return c, nil
}

// firstTitle returns the text of the first level-one heading outside fenced
// code.
func firstTitle(src []byte) string {
	var fence byte
	var fenceLen int
	for _, line := range strings.Split(string(src), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if fence != 0 {
			if closesFence(line, fence, fenceLen) {
				fence = 0
			}
			continue
		}
		if m := fenceRe.FindStringSubmatch(line); m != nil && (m[1][0] == '~' || !strings.Contains(m[2], "`")) {
			fence, fenceLen = m[1][0], len(m[1])
			continue
		}
		if m := headingRe.FindStringSubmatch(line); m != nil && len(m[1]) == 1 {
			return strings.TrimSpace(closingRe.ReplaceAllString(m[2], ""))
		}
	}
	return ""
}
