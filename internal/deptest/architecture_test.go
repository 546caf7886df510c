package deptest

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const architectureDoc = "../../docs/architecture.md"

// tableRow is one row of docs/architecture.md's room table: | floor | `package` | owns |.
var tableRow = regexp.MustCompile("^\\|\\s*(\\d+)\\s*\\|\\s*`([^`]+)`\\s*\\|\\s*(.*?)\\s*\\|\\s*$")

// docFloors reads the room table: each package's floor. A package named twice
// is an error, as is a row with nothing in its "owns" column.
func docFloors(doc string) (map[string]int, error) {
	floors := map[string]int{}
	for i, line := range strings.Split(doc, "\n") {
		m := tableRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		floor, _ := strconv.Atoi(m[1])
		if _, dup := floors[m[2]]; dup {
			return nil, fmt.Errorf("line %d: %s is in the table twice", i+1, m[2])
		}
		if m[3] == "" {
			return nil, fmt.Errorf("line %d: %s says nothing of what it owns", i+1, m[2])
		}
		floors[m[2]] = floor
	}
	if len(floors) == 0 {
		return nil, fmt.Errorf("no room table (| floor | `package` | owns |)")
	}
	return floors, nil
}

// houseErrors compares the doc's floors with the packages and their imports:
// every package has a row, every row a package, and no import runs up a floor.
func houseErrors(floors map[string]int, pkgs []pkg) []string {
	var errs []string
	exists := map[string]bool{}
	for _, p := range pkgs {
		exists[p.ImportPath] = true
		if _, ok := floors[p.ImportPath]; !ok {
			errs = append(errs, fmt.Sprintf("%s is not in docs/architecture.md's table: give it a floor and say what it owns", p.ImportPath))
		}
	}
	for name := range floors {
		if !exists[name] {
			errs = append(errs, fmt.Sprintf("docs/architecture.md names %s, which is no package of the module", name))
		}
	}
	for _, p := range pkgs {
		from, ok := floors[p.ImportPath]
		if !ok {
			continue
		}
		for _, imp := range p.Imports {
			rel, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			if to, ok := floors[rel]; ok && to > from {
				errs = append(errs, fmt.Sprintf("%s (floor %d) imports %s (floor %d): an import runs up a floor", p.ImportPath, from, rel, to))
			}
		}
	}
	slices.Sort(errs)
	return errs
}

// TestArchitectureDocMatchesImports: docs/architecture.md's rooms are the
// module's packages, and its floors are the import graph's.
func TestArchitectureDocMatchesImports(t *testing.T) {
	b, err := os.ReadFile(architectureDoc)
	if err != nil {
		t.Fatal(err)
	}
	floors, err := docFloors(string(b))
	if err != nil {
		t.Fatalf("docs/architecture.md: %v", err)
	}
	for _, e := range houseErrors(floors, modulePackages(t)) {
		t.Error(e)
	}
}

func TestHouseErrorsFound(t *testing.T) {
	floors, err := docFloors("| floor | package | owns |\n|---|---|---|\n| 0 | `internal/record` | the record |\n| 3 | `internal/kernel` | the Job |\n| 1 | `internal/gone` | nothing now |\n")
	if err != nil {
		t.Fatal(err)
	}
	got := houseErrors(floors, []pkg{
		{ImportPath: "internal/record", Imports: []string{module + "/internal/kernel"}},
		{ImportPath: "internal/kernel", Imports: []string{module + "/internal/record"}},
		{ImportPath: "internal/new"},
	})
	want := []string{
		"docs/architecture.md names internal/gone, which is no package of the module",
		"internal/new is not in docs/architecture.md's table: give it a floor and say what it owns",
		"internal/record (floor 0) imports internal/kernel (floor 3): an import runs up a floor",
	}
	if !slices.Equal(got, want) {
		t.Errorf("houseErrors =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := docFloors("| 0 | `a` | x |\n| 1 | `a` | y |\n"); err == nil {
		t.Error("a package named twice was accepted")
	}
	if _, err := docFloors("| 0 | `a` |  |\n"); err == nil {
		t.Error("a row that owns nothing was accepted")
	}
}
