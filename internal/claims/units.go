package claims

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/gates"
	"github.com/roadmap-dev/roadmap/internal/plan"
)

// maxPath bounds a path a plan names: a longer one is no path of a
// repository anyone works in, and a note holding it stays small.
const maxPath = 300

// Normalise reads a path a plan names (model-written: untrusted) as a clean
// repository-relative path with forward slashes: "" when it is absolute,
// climbs out with "..", names the root itself, is too long, or holds a
// backslash or a control character, or when an element has space at its
// edge.
func Normalise(p string) string {
	p = strings.TrimSpace(p)
	if p == "" || len(p) > maxPath || strings.HasPrefix(p, "/") || strings.ContainsRune(p, '\\') {
		return ""
	}
	for _, c := range p {
		if c < 0x20 || c == 0x7f {
			return ""
		}
	}
	p = path.Clean(p)
	if p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return ""
	}
	// An element with space at its edge ("a/.. /b" cleaned) is no path a
	// plan means, and trimming it would make a second reading differ.
	for _, e := range strings.Split(p, "/") {
		if strings.TrimSpace(e) != e {
			return ""
		}
	}
	return p
}

// UnitOf is the unit a clean path belongs to: a Go file's directory (its
// package: two files of one package break each other, say by declaring the
// same name), any other path itself. The repository root's package is ".".
func UnitOf(p string) string {
	if strings.HasSuffix(p, ".go") {
		return path.Dir(p)
	}
	return p
}

// UnitsOf maps paths to their units: normalised, the unreadable ones
// dropped, sorted, each once.
func UnitsOf(paths []string) []string {
	seen := map[string]bool{}
	for _, p := range paths {
		if n := Normalise(p); n != "" {
			seen[UnitOf(n)] = true
		}
	}
	out := make([]string, 0, len(seen))
	for u := range seen {
		out = append(out, u)
	}
	sort.Strings(out)
	return out
}

// Units are the units change will change: the paths its tasks and their
// verify commands name (read by the plan gates' rule, gates.TaskPaths), and
// the main spec each delta spec is archived into
// (openspec/specs/<capability>/spec.md). The change's own directory is its
// alone and is not claimed.
func Units(change *plan.Change) ([]string, error) {
	if change == nil || change.Tasks == nil {
		return nil, errors.New("claims: no plan to read the units from")
	}
	paths := gates.TaskPaths(change.Tasks)
	caps, err := deltaCapabilities(change.Dir)
	if err != nil {
		return nil, err
	}
	for _, c := range caps {
		paths = append(paths, "openspec/specs/"+c+"/spec.md")
	}
	return UnitsOf(paths), nil
}

// UnitsIn are Units read with the repository at root: the units of the
// files that declare the symbols the tasks name without a path
// (gates.TaskSymbolFiles: a task "make `Backoff()` cap its wait" changes the
// package that declares Backoff) are claimed too.
func UnitsIn(root string, change *plan.Change) ([]string, error) {
	units, err := Units(change)
	if err != nil {
		return nil, err
	}
	files, err := gates.TaskSymbolFiles(root, change)
	if err != nil {
		return nil, fmt.Errorf("claims: the files declaring the tasks' symbols: %w", err)
	}
	seen := map[string]bool{}
	for _, u := range append(units, UnitsOf(files)...) {
		seen[u] = true
	}
	out := make([]string, 0, len(seen))
	for u := range seen {
		out = append(out, u)
	}
	sort.Strings(out)
	return out, nil
}

// deltaCapabilities lists the change's specs/<capability>/ directories that
// hold a spec.md, read inside the change's directory (os.Root: a link out of
// it is not followed).
func deltaCapabilities(dir string) ([]string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("claims: open the change %s: %w", dir, err)
	}
	defer root.Close()
	entries, err := fs.ReadDir(root.FS(), "specs")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("claims: read the change's delta specs: %w", err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || Normalise(e.Name()) != e.Name() || len(out) >= 1000 {
			continue
		}
		if st, err := fs.Stat(root.FS(), "specs/"+e.Name()+"/spec.md"); err == nil && st.Mode().IsRegular() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}
