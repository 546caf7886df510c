package f2p

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
)

// goEvent is one line of `go test -json` (cmd/test2json's TestEvent).
type goEvent struct {
	Action  string
	Package string
	Test    string
}

// ParseGoTest reads the stream of `go test -json` and returns each test's
// final status, named "PACKAGE.TEST". Lines that are not events (a test's
// stray stdout, a cut line) are skipped; a line longer than MaxLine is
// skipped whole. A test that started and never ended (its binary died or
// timed out) failed. A package whose run failed with no test failing in it
// (a build failure, a panic in TestMain) is a failed group.
func ParseGoTest(r io.Reader) (*Results, error) {
	res := newResults()
	running := map[string]Test{}
	failedTests := map[string]bool{} // packages with a failing test
	failedPkgs := map[string]bool{}
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br)
		if len(line) > 0 {
			var e goEvent
			if json.Unmarshal(line, &e) == nil && e.Package != "" {
				if perr := res.goEvent(e, running, failedTests, failedPkgs); perr != nil {
					return res, perr
				}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return res, err
		}
	}
	for name, t := range running {
		t.Name, t.Status = name, Fail
		if err := res.set(t); err != nil {
			return res, err
		}
		failedTests[t.Group] = true
	}
	for pkg := range failedPkgs {
		if !failedTests[pkg] {
			res.FailedGroups[cut(pkg, MaxNameLen)] = true
		}
	}
	return res, nil
}

func (res *Results) goEvent(e goEvent, running map[string]Test, failedTests, failedPkgs map[string]bool) error {
	pkg := cut(e.Package, MaxNameLen)
	if e.Test == "" {
		if e.Action == "fail" {
			failedPkgs[pkg] = true
		}
		return nil
	}
	name := cut(pkg+"."+e.Test, MaxNameLen)
	var st Status
	switch e.Action {
	case "run":
		if _, done := res.Tests[name]; !done {
			if len(running) >= MaxTests {
				return errors.New("too many tests running at once")
			}
			running[name] = Test{Group: pkg}
		}
		return nil
	case "pass":
		st = Pass
	case "fail":
		st = Fail
		failedTests[pkg] = true
	case "skip":
		st = Skip
	default:
		return nil
	}
	delete(running, name)
	return res.set(Test{Name: name, Group: pkg, Status: st})
}

// readLine returns the next line without its newline; a line longer than
// MaxLine is consumed and returned empty.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	long := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !long {
			if len(buf)+len(chunk) > MaxLine {
				long, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if long {
			return nil, err
		}
		if n := len(buf); n > 0 && buf[n-1] == '\n' {
			buf = buf[:n-1]
		}
		return buf, err
	}
}
