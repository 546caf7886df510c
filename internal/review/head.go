package review

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/nofollow"
)

// maxHeadFile bounds the head file read to check a quote.
const maxHeadFile = 4 << 20

// head reads files of the reviewed work tree, confined to it: a path that
// leaves the tree or passes through a symlink is refused (internal/nofollow).
type head struct {
	root  *os.Root
	cache map[string][]string
}

func openHead(dir string) (*head, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open the work tree: %w", err)
	}
	return &head{root: root, cache: map[string][]string{}}, nil
}

func (h *head) close() { _ = h.root.Close() }

// lines reads file's lines, through no symlink, bounded, each with its
// whitespace normalised (what locate compares).
func (h *head) lines(file string) ([]string, error) {
	if ls, ok := h.cache[file]; ok {
		return ls, nil
	}
	f, err := nofollow.OpenFile(h.root, file, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", file)
	}
	if fi.Size() > maxHeadFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", file, maxHeadFile)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxHeadFile+1))
	if err != nil {
		return nil, err
	}
	ls := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	for i := range ls {
		ls[i] = normalise(ls[i])
	}
	h.cache[file] = ls
	return ls, nil
}

// locate finds the quote in ls (a file's normalised lines) and returns the
// lines it is on, nearest to the lines the finding gave; ok is false when
// the quote is not in the file. Whitespace is normalised on both sides, blank lines around the
// quote are ignored, and a one-line quote may be part of a line. A quote of
// several lines must be consecutive lines of the file, its first line the
// end of a line and its last the start of one.
func locate(ls []string, quote string, near int) (start, end int, ok bool) {
	var qs []string
	for _, q := range strings.Split(quote, "\n") {
		qs = append(qs, normalise(q))
	}
	for len(qs) > 0 && qs[0] == "" {
		qs = qs[1:]
	}
	for len(qs) > 0 && qs[len(qs)-1] == "" {
		qs = qs[:len(qs)-1]
	}
	if len(qs) == 0 || len(qs) > len(ls) {
		return 0, 0, false
	}
	best := -1
	for i := 0; i+len(qs) <= len(ls); i++ {
		if !matchAt(ls, i, qs) {
			continue
		}
		if best < 0 || abs(i+1-near) < abs(best+1-near) {
			best = i
		}
	}
	if best < 0 {
		return 0, 0, false
	}
	return best + 1, best + len(qs), true
}

// matchAt reports whether qs matches the file lines from i on, line for
// line: the quote is verbatim.
func matchAt(ls []string, i int, qs []string) bool {
	if len(qs) == 1 {
		return strings.Contains(ls[i], qs[0])
	}
	for k, q := range qs {
		l := ls[i+k]
		switch {
		case k == 0 && !strings.HasSuffix(l, q):
			return false
		case k == len(qs)-1 && !strings.HasPrefix(l, q):
			return false
		case k > 0 && k < len(qs)-1 && l != q:
			return false
		}
	}
	return true
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
