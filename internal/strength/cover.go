package strength

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Limits on a cover profile, which code the model wrote produces.
const (
	maxProfileBytes  = 64 << 20
	maxProfileLine   = 4096
	maxProfileBlocks = 1 << 20
)

// Coverage is the lines a cover profile says ran, by the file name the
// profile uses (an import path and a file name: "example.com/calc/calc.go").
type Coverage map[string]map[int]bool

// Covered reports whether line of file ran.
func (c Coverage) Covered(file string, line int) bool { return c[file][line] }

// ParseCoverProfile reads a Go cover profile ("mode: set" and lines of
// "file:L1.C1,L2.C2 statements count") and returns the lines of the blocks
// whose count is above zero. It reads at most 64 MiB and 2^20 blocks;
// malformed lines are skipped (a line longer than 4096 bytes too), so
// nothing in the profile can make it fail but a missing mode line or a
// read error: the profile is written by code nobody here controls.
func ParseCoverProfile(r io.Reader) (Coverage, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, maxProfileBytes), maxProfileLine)
	cov := Coverage{}
	sawMode, blocks := false, 0
	for blocks < maxProfileBlocks {
		line, err := readBoundedLine(br)
		if len(line) > 0 {
			switch {
			case !sawMode:
				if !strings.HasPrefix(line, "mode: ") {
					return nil, fmt.Errorf("cover profile: the first line is %q, not a mode line", cut(line, 60))
				}
				sawMode = true
			case strings.HasPrefix(line, "mode: "):
				// go test writes one mode line per merged profile.
			default:
				if addBlock(cov, line) {
					blocks++
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("cover profile: %w", err)
		}
	}
	if !sawMode {
		return nil, fmt.Errorf("cover profile: empty")
	}
	return cov, nil
}

// readBoundedLine returns the next line without its newline; a line longer
// than the reader's buffer is consumed and returned empty.
func readBoundedLine(br *bufio.Reader) (string, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		for err == bufio.ErrBufferFull {
			_, err = br.ReadSlice('\n')
		}
		return "", err
	}
	return strings.TrimRight(string(line), "\r\n"), err
}

// addBlock adds one block line to cov, reporting whether it was well formed.
func addBlock(cov Coverage, line string) bool {
	colon := strings.LastIndexByte(line, ':')
	if colon <= 0 {
		return false
	}
	file, rest := line[:colon], line[colon+1:]
	f := strings.Fields(rest)
	if len(f) != 3 {
		return false
	}
	span, count := f[0], f[2]
	if _, err := strconv.ParseUint(f[1], 10, 32); err != nil {
		return false
	}
	n, err := strconv.ParseUint(count, 10, 64)
	if err != nil {
		return false
	}
	startLine, endLine, ok := parseSpan(span)
	if !ok {
		return false
	}
	if n == 0 {
		return true
	}
	if cov[file] == nil {
		cov[file] = map[int]bool{}
	}
	for l := startLine; l <= endLine; l++ {
		cov[file][l] = true
	}
	return true
}

// maxBlockLines bounds the lines one block may claim, so a forged profile
// cannot make the parser mark a billion lines.
const maxBlockLines = 10000

// parseSpan reads "L1.C1,L2.C2".
func parseSpan(s string) (start, end int, ok bool) {
	a, b, found := strings.Cut(s, ",")
	if !found {
		return 0, 0, false
	}
	start, ok1 := lineOf(a)
	end, ok2 := lineOf(b)
	if !ok1 || !ok2 || end < start || end-start > maxBlockLines {
		return 0, 0, false
	}
	return start, end, true
}

func lineOf(s string) (int, bool) {
	l, c, found := strings.Cut(s, ".")
	if !found {
		return 0, false
	}
	line, err := strconv.Atoi(l)
	if err != nil || line <= 0 || line > 1<<24 {
		return 0, false
	}
	if _, err := strconv.ParseUint(c, 10, 32); err != nil {
		return 0, false
	}
	return line, true
}

// cut shortens s to n bytes for a message.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
