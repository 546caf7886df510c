package strength

import (
	"path"
	"strconv"
	"strings"
)

// maxChangedLines bounds the lines ParseDiff records for one file.
const maxChangedLines = 100000

// ParseDiff reads a unified diff (`git diff BASE`) and returns, for each
// file the new side names, the new-side numbers of the lines it adds. A
// deleted file is left out; a quoted path is unquoted; a malformed hunk
// header ends that file's hunks. The diff is of the model's work, so
// nothing in it makes the parser fail.
func ParseDiff(diff string) map[string]map[int]bool {
	out := map[string]map[int]bool{}
	var cur map[int]bool
	next := 0 // the new-side number of the next line, 0 outside a hunk
	for _, line := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(line, "diff --git "):
			cur, next = nil, 0
		case strings.HasPrefix(line, "+++ ") && next == 0:
			cur = nil
			if p, ok := newPath(line[4:]); ok {
				if out[p] == nil {
					out[p] = map[int]bool{}
				}
				cur = out[p]
			}
		case strings.HasPrefix(line, "@@ "):
			next = hunkStart(line)
		case next > 0 && cur != nil && strings.HasPrefix(line, "+"):
			if len(cur) < maxChangedLines {
				cur[next] = true
			}
			next++
		case next > 0 && strings.HasPrefix(line, " "):
			next++
		case next > 0 && (strings.HasPrefix(line, "-") || strings.HasPrefix(line, `\`)):
		default:
			next = 0
		}
	}
	return out
}

// newPath reads the path of a "+++ " line: "b/x.go", a quoted "\"b/x y.go\"",
// or /dev/null (no path).
func newPath(s string) (string, bool) {
	s = strings.TrimRight(s, "\t\r")
	if strings.HasPrefix(s, `"`) {
		u, err := strconv.Unquote(s)
		if err != nil {
			return "", false
		}
		s = u
	}
	p, ok := strings.CutPrefix(s, "b/")
	if !ok || p == "" || p == "." || p == ".." || path.Clean(p) != p || strings.HasPrefix(p, "../") || path.IsAbs(p) {
		return "", false
	}
	return p, true
}

// hunkStart reads "@@ -a,b +c,d @@" and returns c, or 0 when malformed. A
// hunk starting at line 0 (an empty new side) has no added lines either.
func hunkStart(line string) int {
	f := strings.Fields(line)
	if len(f) < 3 || !strings.HasPrefix(f[2], "+") {
		return 0
	}
	n, _, _ := strings.Cut(f[2][1:], ",")
	v, err := strconv.Atoi(n)
	if err != nil || v <= 0 || v > 1<<24 {
		return 0
	}
	return v
}
