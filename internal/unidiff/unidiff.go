package unidiff

import (
	"fmt"
	"path"
	"strings"

	"github.com/sourcegraph/go-diff/diff"
)

// File is one file's part of a diff.
type File struct {
	// Old and New are the paths on each side without git's a/ and b/
	// prefixes: "" for /dev/null (an added or a deleted file), or for a
	// path that leaves the tree (absolute, or through ..).
	Old, New string
	Binary   bool // git printed "Binary files … differ": no hunks
	Hunks    []Hunk
}

// Path is the file's head path, or its base path when it was deleted.
func (f File) Path() string {
	if f.New != "" {
		return f.New
	}
	return f.Old
}

// Hunk is one "@@" section.
type Hunk struct {
	Header   string // "@@ -a,b +c,d @@ section", as printed
	NewStart int    // the new side's first line number (0 for an empty new side)
	// Lines are the hunk's lines with their op as the first byte: ' ', '+'
	// or '-'. "\ No newline at end of file" is left out.
	Lines []string
}

// Parse reads diff. A diff holds model-written text, so nothing in it makes
// Parse fail: what cannot be read ends the parse, and the files read before
// it are returned.
func Parse(text string) []File {
	r := diff.NewMultiFileDiffReader(strings.NewReader(text))
	var out []File
	for {
		fd, err := r.ReadFile()
		if err != nil || fd == nil {
			return out
		}
		f := File{Old: treePath(fd.OrigName, "a/"), New: treePath(fd.NewName, "b/")}
		for _, x := range fd.Extended {
			if strings.HasPrefix(x, "Binary files ") {
				f.Binary = true
			}
		}
		for _, h := range fd.Hunks {
			f.Hunks = append(f.Hunks, hunk(h))
		}
		out = append(out, f)
	}
}

func hunk(h *diff.Hunk) Hunk {
	header := fmt.Sprintf("@@ -%d,%d +%d,%d @@", h.OrigStartLine, h.OrigLines, h.NewStartLine, h.NewLines)
	if h.Section != "" {
		header += " " + h.Section
	}
	out := Hunk{Header: header, NewStart: int(h.NewStartLine)}
	body := strings.TrimSuffix(string(h.Body), "\n")
	if body == "" {
		return out
	}
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, `\`) {
			continue
		}
		if l == "" {
			l = " " // a context line whose blank was stripped
		}
		out.Lines = append(out.Lines, l)
	}
	return out
}

// treePath is name without prefix, or "" when it names no file in the tree.
func treePath(name, prefix string) string {
	p, ok := strings.CutPrefix(name, prefix)
	if !ok || p == "" || p == "." || p == ".." || path.Clean(p) != p || strings.HasPrefix(p, "../") || path.IsAbs(p) {
		return ""
	}
	return p
}
