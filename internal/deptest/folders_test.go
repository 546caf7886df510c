package deptest

import (
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
)

// modulePackages lists the module's packages with their imports (go list),
// listed once per test binary: several tests read the same graph.
func modulePackages(t *testing.T) []pkg {
	t.Helper()
	pkgs, err := listPackages()
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

var listPackages = sync.OnceValues(func() ([]pkg, error) {
	out, err := exec.Command("go", "list", "-json", module+"/...").Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("decode go list: %v", err)
		}
		p.ImportPath = strings.TrimPrefix(p.ImportPath, module+"/")
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
})

// folder is the room a package draws in: its first two path elements
// (internal/kernel, tools/mutants, cmd/roadmap), or the first for a
// top-level package (e2e, scripts).
func folder(rel string) string {
	parts := strings.Split(rel, "/")
	if len(parts) > 1 && (parts[0] == "internal" || parts[0] == "tools" || parts[0] == "cmd") {
		return parts[0] + "/" + parts[1]
	}
	return parts[0]
}

// folderArrows is the import graph with each package drawn as its folder.
func folderArrows(pkgs []pkg) map[string][]string {
	arrows := map[string][]string{}
	for _, p := range pkgs {
		from := folder(p.ImportPath)
		if _, ok := arrows[from]; !ok {
			arrows[from] = nil
		}
		for _, imp := range p.Imports {
			rel, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			to := folder(rel)
			if to != from && !slices.Contains(arrows[from], to) {
				arrows[from] = append(arrows[from], to)
			}
		}
	}
	for _, to := range arrows {
		slices.Sort(to)
	}
	return arrows
}

// folderCycle returns a cycle in the folder graph (first folder repeated at
// its end), or nil when every arrow runs down a floor.
func folderCycle(arrows map[string][]string) []string {
	const (
		unseen = iota
		open
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(string) []string
	visit = func(f string) []string {
		state[f] = open
		path = append(path, f)
		for _, to := range arrows[f] {
			switch state[to] {
			case open:
				i := slices.Index(path, to)
				return append(slices.Clone(path[i:]), to)
			case unseen:
				if c := visit(to); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[f] = done
		return nil
	}
	froms := make([]string, 0, len(arrows))
	for f := range arrows {
		froms = append(froms, f)
	}
	slices.Sort(froms)
	for _, f := range froms {
		if state[f] == unseen {
			if c := visit(f); c != nil {
				return c
			}
		}
	}
	return nil
}

// TestNoUpwardFolderArrows: drawn with each package as its folder, the
// house has floors. A folder holding both a high room and a low one (the
// factory and the Job it builds, a verb's checks and the checks it runs)
// draws an arrow running back up; the graph of folders has no cycle.
func TestNoUpwardFolderArrows(t *testing.T) {
	arrows := folderArrows(modulePackages(t))
	if len(arrows) < 10 {
		t.Fatalf("only %d folders found; is the module path right?", len(arrows))
	}
	if c := folderCycle(arrows); c != nil {
		t.Errorf("an import runs back up at folder level: %s (a nested package belongs on its own floor: give it its own folder)", strings.Join(c, " -> "))
	}
}

func TestFolderCycleFound(t *testing.T) {
	// The layout before internal/kernel had its own folder.
	arrows := folderArrows([]pkg{
		{ImportPath: "internal/job", Imports: []string{module + "/internal/implement", module + "/internal/job/kernel"}},
		{ImportPath: "internal/job/kernel", Imports: []string{module + "/internal/record"}},
		{ImportPath: "internal/implement", Imports: []string{module + "/internal/job/kernel"}},
		{ImportPath: "internal/record"},
	})
	want := []string{"internal/implement", "internal/job", "internal/implement"}
	if c := folderCycle(arrows); !slices.Equal(c, want) {
		t.Errorf("folderCycle = %v, want %v", c, want)
	}
	arrows = folderArrows([]pkg{
		{ImportPath: "internal/job", Imports: []string{module + "/internal/implement", module + "/internal/kernel"}},
		{ImportPath: "internal/implement", Imports: []string{module + "/internal/kernel"}},
		{ImportPath: "internal/kernel"},
	})
	if c := folderCycle(arrows); c != nil {
		t.Errorf("folderCycle = %v on a house with floors", c)
	}
}
