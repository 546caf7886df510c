package strength

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"sort"
	"strings"
	"unicode/utf8"
)

// Limits on node's coverage files, which code the model wrote can write.
const (
	maxV8Files  = 1000
	maxV8Ranges = 1 << 20
)

// v8Doc is the part of a NODE_V8_COVERAGE file read here: for each script
// node ran, its URL and the ranges of each function with the times they
// ran. Offsets count UTF-16 units of the source V8 compiled.
type v8Doc struct {
	Result []struct {
		URL       string `json:"url"`
		Functions []struct {
			Ranges []v8Range `json:"ranges"`
		} `json:"functions"`
	} `json:"result"`
}

type v8Range struct {
	Start int `json:"startOffset"`
	End   int `json:"endOffset"`
	Count int `json:"count"`
}

// readV8Coverage reads every coverage file node wrote into dir (a slash
// path from the top) and returns which of the want lines of the files srcs
// holds ran in any process. hook is the hook's slash path from the top: the
// URL a process gives it says where the top was in that process (the
// boundary may show the tree at another path). A file that is not JSON of
// the shape above is skipped, as is a process that did not load the hook.
func readV8Coverage(root *os.Root, dir, hook string, srcs map[string][]byte, want map[string]map[int]bool) (Coverage, error) {
	cov := Coverage{}
	entries, err := fs.ReadDir(root.FS(), dir)
	if errors.Is(err, fs.ErrNotExist) {
		return cov, nil
	}
	if err != nil {
		return nil, fmt.Errorf("test strength: node's coverage: %w", err)
	}
	for i, e := range entries {
		if i == maxV8Files {
			break
		}
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		f, err := root.Open(path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("test strength: node's coverage: %w", err)
		}
		data, err := io.ReadAll(io.LimitReader(f, maxProfileBytes+1))
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("test strength: node's coverage: %w", err)
		}
		if len(data) > maxProfileBytes {
			continue
		}
		mergeCoverage(cov, parseV8Coverage(data, hook, srcs, want))
	}
	return cov, nil
}

func mergeCoverage(into, from Coverage) {
	for file, lines := range from {
		if into[file] == nil {
			into[file] = map[int]bool{}
		}
		for l := range lines {
			into[file][l] = true
		}
	}
}

// parseV8Coverage reads one process's coverage file. A line of a file is
// covered when the innermost range over its first character that is not
// space ran at least once.
func parseV8Coverage(data []byte, hook string, srcs map[string][]byte, want map[string]map[int]bool) Coverage {
	var doc v8Doc
	if json.Unmarshal(data, &doc) != nil {
		return nil
	}
	top := ""
	for _, s := range doc.Result {
		if p := scriptPath(s.URL); strings.HasSuffix(p, "/"+hook) {
			top = strings.TrimSuffix(p, "/"+hook)
			break
		}
	}
	if top == "" {
		return nil
	}
	cov := Coverage{}
	budget := maxV8Ranges
	for _, s := range doc.Result {
		rel, ok := strings.CutPrefix(scriptPath(s.URL), top+"/")
		src, known := srcs[rel]
		if !ok || !known || len(want[rel]) == 0 {
			continue
		}
		var ranges []v8Range
		for _, fn := range s.Functions {
			if len(fn.Ranges) > budget {
				return cov
			}
			budget -= len(fn.Ranges)
			ranges = append(ranges, fn.Ranges...)
		}
		if lines := coveredLines(src, want[rel], ranges); len(lines) > 0 {
			mergeCoverage(cov, Coverage{rel: lines})
		}
	}
	return cov
}

// scriptPath is the file path of a script's URL (file:///a/b.js or
// /a/b.js), "" for any other.
func scriptPath(u string) string {
	if strings.HasPrefix(u, "/") {
		return path.Clean(u)
	}
	p, err := url.Parse(u)
	if err != nil || p.Scheme != "file" || p.Path == "" {
		return ""
	}
	return path.Clean(p.Path)
}

// coveredLines returns the lines of want that ran, by the ranges: the
// innermost range holding a line's first character that is not space
// decides. V8's ranges nest; sorted by start, then by end from the last,
// a range comes after every range that holds it, so a stack of the open
// ranges has the innermost on top.
func coveredLines(src []byte, want map[int]bool, ranges []v8Range) map[int]bool {
	type at struct{ line, off int }
	var points []at
	line, off, first := 1, 0, true
	b := src
	if len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
		b = b[3:] // node strips the BOM before V8 sees the source
	}
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		b = b[n:]
		switch {
		case r == '\n':
			line, first = line+1, true
		case first && r != ' ' && r != '\t' && r != '\r' && r != '\f' && r != '\v':
			first = false
			if want[line] {
				points = append(points, at{line, off})
			}
		}
		if r >= 0x10000 {
			off += 2
		} else {
			off++
		}
	}
	sorted := make([]v8Range, 0, len(ranges))
	for _, rg := range ranges {
		if rg.Start >= 0 && rg.End > rg.Start {
			sorted = append(sorted, rg)
		}
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].Start != sorted[j].Start {
			return sorted[i].Start < sorted[j].Start
		}
		return sorted[i].End > sorted[j].End
	})
	out := map[int]bool{}
	var open []v8Range
	next := 0
	for _, p := range points {
		for next < len(sorted) && sorted[next].Start <= p.off {
			open = append(open, sorted[next])
			next++
		}
		for len(open) > 0 && open[len(open)-1].End <= p.off {
			open = open[:len(open)-1]
		}
		if len(open) > 0 && open[len(open)-1].Count > 0 {
			out[p.line] = true
		}
	}
	return out
}
