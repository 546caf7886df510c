package sandboxtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// RunnerGoCache is the Go build cache of the test worlds' runner: what a
// hosted runner's job has after setup-go restores its cache, the entries
// its project's builds and tests use (the standard library's packages the
// worlds' Go projects import, for go test, go vet and -cover), and nothing
// else.
//
// A user boundary seeds its own cache from the runner's with one hard link
// per entry (sandbox.Options.GoCache), so what a boundary costs to open
// grows with the runner's cache. A developer's cache (tens of thousands of
// entries, gigabytes, every module ever built) made each boundary in a test
// cost seconds, most of the hostile rows' and the strength tests' time, and
// measured nothing a user's runner does. A boundary's `go test` that needs
// an entry this cache lacks builds it, as on a runner: slower, not wrong.
//
// The cache lives beside the user's own (os.UserCacheDir), one per Go
// version, and is warmed once per test process; Go's cache is safe for
// processes that share it.
func RunnerGoCache(t testing.TB) string {
	t.Helper()
	dir, err := WarmRunnerGoCache()
	if err != nil {
		t.Fatalf("the test runner's Go build cache: %v", err)
	}
	return dir
}

// WarmRunnerGoCache is RunnerGoCache for a TestMain, which has no T: it
// returns the cache's folder, warmed, or why it could not.
var WarmRunnerGoCache = sync.OnceValues(func() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "roadmap-test", "runner-gocache-"+GoVersionTag())
	if err := WarmGoCache(dir); err != nil {
		return "", err
	}
	return dir, nil
})

// GoVersionTag is the running Go's version as a file name's part
// (runtime.Version with spaces and slashes as dashes): a runner's cache is
// one Go version's.
func GoVersionTag() string {
	return strings.NewReplacer(" ", "-", "/", "-").Replace(runtime.Version())
}

// WarmGoCache warms the Go build cache at dir (made if missing) with what
// RunnerGoCache holds: the standard library's packages the worlds' Go
// projects import, built for go test, go test -cover, go vet and go build.
// The e2e suite's runner cache (e2e.RunnerGoCache) starts from it too.
func WarmGoCache(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	mod, err := os.MkdirTemp("", "roadmap-runner-gocache-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(mod)
	files := map[string]string{
		"go.mod":         "module example.com/warm\n\ngo 1.21\n",
		"warm.go":        warmSource,
		"warm_test.go":   warmTest,
		"cmd/x/main.go":  "package main\n\nimport \"example.com/warm\"\n\nfunc main() { warm.Use() }\n",
		"other/other.go": "package other\n\n// Two is two.\nfunc Two() int { return 2 }\n",
	}
	for name, body := range files {
		p := filepath.Join(mod, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	env := append(os.Environ(), "GOCACHE="+dir, "GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local", "GOPROXY=off")
	for _, args := range [][]string{
		{"test", "-count=1", "./..."},
		{"test", "-count=1", "-cover", "./..."},
		{"vet", "./..."},
		{"build", "./..."},
	} {
		cmd := exec.Command("go", args...)
		cmd.Dir = mod
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

// warmSource imports what the worlds' Go projects and the hostile rows'
// planted tests import.
const warmSource = `package warm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

var (
	_ = bufio.NewReader
	_ = bytes.NewReader
	_ = json.Marshal
	_ = errors.New
	_ = io.EOF
	_ = net.Dial
	_ = http.Get
	_ = exec.Command
	_ = filepath.Join
	_ = sort.Strings
	_ = strconv.Itoa
	_ = strings.Cut
	_ sync.Mutex
	_ = time.Now
)

// Use prints something.
func Use() { fmt.Fprintln(os.Stdout, "warm") }
`

const warmTest = `package warm

import "testing"

func TestUse(t *testing.T) { Use() }
`
