package sandboxtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// pytestFound caches PytestPath's answer by the PATH it started from: each
// look runs python3 once or twice, and the strength tests ask many times.
var pytestFound sync.Map // PATH → pytestAnswer

type pytestAnswer struct {
	path string
	ok   bool
}

// PytestPath is the PATH under which python3 runs pytest, for the tests
// that play a Python project: the machine's own, or, when its python3 has
// no pytest (a pyenv interpreter ahead of the system's), the system's
// /usr/bin put first, where Debian's python3-pytest installs it. ok is
// false, and the path the machine's, when neither has pytest.
func PytestPath() (path string, ok bool) {
	path = os.Getenv("PATH")
	if a, hit := pytestFound.Load(path); hit {
		return a.(pytestAnswer).path, a.(pytestAnswer).ok
	}
	p, ok := findPytest(path)
	pytestFound.Store(path, pytestAnswer{p, ok})
	return p, ok
}

// findPytest is PytestPath's look, uncached.
func findPytest(path string) (string, bool) {
	for _, dir := range []string{"", "/usr/bin"} {
		p := path
		if dir != "" {
			p = dir + string(os.PathListSeparator) + path
		}
		cmd := exec.Command("python3", "-m", "pytest", "--version")
		cmd.Env = append(os.Environ(), "PATH="+p)
		if dir != "" {
			cmd.Path = filepath.Join(dir, "python3")
		}
		if cmd.Run() == nil {
			return p, true
		}
	}
	return path, false
}

// PytestPATH is PytestPath's PATH, or a skip of the test naming what needs
// pytest (.ci/run installs it, so CI does not skip).
func PytestPATH(t testing.TB, what string) string {
	t.Helper()
	p, ok := PytestPath()
	if !ok {
		t.Skipf("python3 -m pytest --version fails with the PATH's python3 and with /usr/bin/python3: %s needs pytest (Debian: apt-get install python3-pytest)", what)
	}
	return p
}
