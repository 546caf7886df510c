package strength

import "github.com/roadmap-dev/roadmap/internal/unidiff"

// maxChangedLines bounds the lines ParseDiff records for one file.
const maxChangedLines = 100000

// ParseDiff reads a unified diff (`git diff BASE`) and returns, for each
// file the new side names, the new-side numbers of the lines it adds. A
// deleted file, and a path out of the tree, is left out; quoted paths and
// renames are read by internal/unidiff. The diff is of the model's work, so
// nothing in it makes the parser fail.
func ParseDiff(diff string) map[string]map[int]bool {
	out := map[string]map[int]bool{}
	for _, f := range unidiff.Parse(diff) {
		if f.New == "" || len(f.Hunks) == 0 {
			continue
		}
		cur := out[f.New]
		if cur == nil {
			cur = map[int]bool{}
			out[f.New] = cur
		}
		for _, h := range f.Hunks {
			next := h.NewStart
			if next <= 0 || next > 1<<24 {
				continue // an empty new side adds no line
			}
			for _, l := range h.Lines {
				switch l[0] {
				case '+':
					if len(cur) < maxChangedLines {
						cur[next] = true
					}
					next++
				case ' ':
					next++
				}
			}
		}
	}
	return out
}
