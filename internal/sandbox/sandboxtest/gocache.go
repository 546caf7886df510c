package sandboxtest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
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
// Each caller gets a cache of its own, seeded from the warmed one
// (WarmRunnerGoCache) by a hard link per entry, and removed with the test:
// what its worlds build (their projects, under a temporary path, new
// entries every run) stays there. When the tests wrote into the shared
// cache it grew by about 14,000 entries a run, to seven times what a
// runner restores, and every boundary after paid for the links.
func RunnerGoCache(t testing.TB) string {
	t.Helper()
	dir, err := SeedRunnerGoCache(t.TempDir())
	if err != nil {
		t.Fatalf("the test runner's Go build cache: %v", err)
	}
	return dir
}

// SeedRunnerGoCache is RunnerGoCache for a TestMain, which has no T: a
// runner's cache of its own under parent (parent/gocache), which the caller
// removes.
func SeedRunnerGoCache(parent string) (string, error) {
	src, err := WarmRunnerGoCache()
	if err != nil {
		return "", err
	}
	dst := filepath.Join(parent, "gocache")
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular() && !strings.HasPrefix(d.Name(), "roadmap-warm-"):
			return os.Link(p, target)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("seed a runner's Go build cache from %s: %v", src, err)
	}
	return dst, nil
}

// WarmRunnerGoCache is the warmed cache every RunnerGoCache is seeded
// from, warmed once per test process (and at most once a day: WarmGoCache).
// Nothing but WarmGoCache writes into it.
var WarmRunnerGoCache = sync.OnceValues(func() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	// "runner-gocache-2": the first of these folders took the tests' own
	// builds on every run; a new name starts it clean.
	dir := filepath.Join(base, "roadmap-test", "runner-gocache-2-"+GoVersionTag())
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
//
// A warm cache is stamped, and warming it again within a day does nothing:
// the five go commands cost each test process that asks several seconds of
// CPU to learn what it knew. After a day (Go trims entries unused for five)
// the commands run again and fill what was trimmed.
func WarmGoCache(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	stamp := filepath.Join(dir, "roadmap-warm-"+warmKey())
	if fi, err := os.Stat(stamp); err == nil && time.Since(fi.ModTime()) < 24*time.Hour {
		return nil
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
	for _, line := range warmCommands {
		args := strings.Fields(line)
		cmd := exec.Command("go", args...)
		cmd.Dir = mod
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	// The stamp is written, not touched: a failed write only costs a warm.
	_ = os.WriteFile(stamp, nil, 0o644)
	return nil
}

// warmKey names what a warm built: the project's sources and the commands.
func warmKey() string {
	h := sha256.Sum256([]byte(warmSource + "\x00" + warmTest + "\x00" + strings.Join(warmCommands, "\x00")))
	return hex.EncodeToString(h[:8])
}

// warmCommands are the go commands a warm runs, one line each.
var warmCommands = []string{"test -count=1 ./...", "test -count=1 -cover ./...", "vet ./...", "build ./..."}

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
