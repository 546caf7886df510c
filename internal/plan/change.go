package plan

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/nofollow"
)

// ChangesDir is where OpenSpec keeps the changes, relative to the repository root.
const ChangesDir = "openspec/changes"

// Change is an OpenSpec change as implement reads it.
type Change struct {
	ID    string // the directory name, kebab-case
	Dir   string // the directory it was read from
	Title string // the first `# ` heading of proposal.md; "" when there is none
	Tasks *Tasks

	t   *tree  // the work tree the change was loaded from
	rel string // the change's directory inside it, slash-separated
}

// changeIDRe is OpenSpec's change id rule (src/core/id.ts).
var changeIDRe = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)

// ChangeDir returns the directory of change id under the repository root.
func ChangeDir(root, id string) string {
	return filepath.Join(root, filepath.FromSlash(ChangesDir), id)
}

// ListChanges returns the ids of the changes under root/openspec/changes,
// sorted, leaving out the archive. No changes directory means none; one
// reached through a symlink is an error.
func ListChanges(root string) ([]string, error) {
	t, err := openTree(root)
	if err != nil {
		return nil, fmt.Errorf("list changes: %w", err)
	}
	defer t.close()
	entries, err := nofollow.ReadDir(t.root, ChangesDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list changes: %w", linkErr(err))
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
// Parse errors carry the tasks.md path. Files are read inside dir only,
// through no symlink (LoadChangeIn confines to the whole work tree instead).
func LoadChange(dir string) (*Change, error) {
	return LoadChangeIn(filepath.Dir(filepath.Clean(dir)), filepath.Base(filepath.Clean(dir)))
}

// LoadChangeIn reads the change at rel (e.g. openspec/changes/<id>) in the
// work tree workTree. The work tree is hostile input (the model writes it):
// every file of the change is opened inside workTree through no symlink, and
// a symlink on the way (design.md -> /proc/self/environ) is refused with a
// clear error (a *SymlinkError) instead of being followed.
func LoadChangeIn(workTree, rel string) (*Change, error) {
	dir := filepath.Join(workTree, rel)
	id := filepath.Base(filepath.Clean(dir))
	if !changeIDRe.MatchString(id) {
		return nil, fmt.Errorf("load change %s: id %q is not kebab-case", dir, id)
	}
	t, err := openTree(workTree)
	if err != nil {
		return nil, fmt.Errorf("load change %s: %w", id, err)
	}
	c := &Change{ID: id, Dir: dir, t: t, rel: filepath.ToSlash(filepath.Clean(rel))}
	path := filepath.Join(dir, "tasks.md")
	src, err := c.ReadFile("tasks.md")
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
	c.Tasks = tasks
	proposal, err := c.ReadFile("proposal.md")
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("load change %s: %w", id, err)
	default:
		c.Title = firstTitle(proposal)
	}
	return c, nil
}

// ReadFile reads a file of the change (name relative to its directory)
// inside the work tree it was loaded from, through no symlink: one on the
// way is a *SymlinkError.
func (c *Change) ReadFile(name string) ([]byte, error) {
	if c.t == nil {
		return nil, fmt.Errorf("read %s: the change was not loaded from a work tree", name)
	}
	p := path.Join(c.rel, filepath.ToSlash(name))
	data, err := c.t.readFile(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	return data, err
}

// WriteFile replaces a file of the change (the tick of tasks.md) inside the
// work tree, through no symlink, whose target it would write.
func (c *Change) WriteFile(name string, data []byte) error {
	if c.t == nil {
		return fmt.Errorf("write %s: the change was not loaded from a work tree", name)
	}
	p := path.Join(c.rel, filepath.ToSlash(name))
	if err := c.t.writeFile(p, data); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
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
