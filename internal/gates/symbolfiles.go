package gates

import (
	"fmt"
	"os"
	"sort"

	"github.com/roadmap-dev/roadmap/internal/plan"
)

// TaskSymbolFiles are the files of the work tree at root that declare the
// symbols the change's tasks name in code spans without naming a path
// (`Backoff()`, `Client.Retry`, `retry.Backoff`): the files a task will
// change though it names none of them. The symbols are resolved by the
// gates' own source index (Go by go/parser; Python, JavaScript/TypeScript
// and Rust by package symbols), read under the gates' bounds; test files
// and testdata declare nothing here. Sorted, each once.
func TaskSymbolFiles(root string, change *plan.Change) ([]string, error) {
	if change == nil || change.Tasks == nil {
		return nil, nil
	}
	// The tasks are the loaded change's: it may be archived already, away
	// from openspec/changes/<id>, so the plan is not read from the tree.
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("gates: open work tree: %w", err)
	}
	defer r.Close()
	s := &state{root: r, tasks: change.Tasks}
	ix := s.goSource()
	seen := map[string]bool{}
	for _, g := range s.tasks.Groups {
		for _, tk := range g.Tasks {
			for _, sp := range codeSpans(taskBody(tk.Text, tk.Verify)) {
				if asPath(sp) != "" {
					continue // a path: TaskPaths has it
				}
				for _, d := range ix.resolve(sp) {
					seen[d.file] = true
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for f := range seen {
		out = append(out, f)
	}
	sort.Strings(out)
	return out, nil
}
