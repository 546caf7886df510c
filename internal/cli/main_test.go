package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/roadmap-dev/roadmap/internal/sandbox/sandboxtest"
)

// sharedDirs are folders the package's tests share across test functions
// (the roadmap binary, made once): removed when every test has run.
var sharedDirs []string

// keyringEnv makes the test binary a launcher (see withSessionKey): its
// value is a key's description and payload, "desc=payload".
const keyringEnv = "ROADMAP_CLI_TEST_SESSION_KEY"

// developerGoCache is the Go build cache this test process was started
// with, before TestMain gave its Jobs the test runner's.
var developerGoCache string

// goEnv is `go env name`, or "" when go cannot say.
func goEnv(name string) string {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// roadmapName is argv[0]'s base name under which this test binary is the
// roadmap binary (buildRoadmap).
const roadmapName = "roadmap"

func TestMain(m *testing.M) {
	if v := os.Getenv(keyringEnv); v != "" {
		os.Exit(launchWithSessionKey(v, os.Args[1:]))
	}
	if filepath.Base(os.Args[0]) == roadmapName {
		dumpJobEnv()
		os.Exit(roadmapMain())
	}
	// The Jobs these tests run, in process and as this binary, are on a
	// hosted runner's layout, and their runner's Go build cache is what a
	// hosted runner's job has (sandboxtest.RunnerGoCache), not the
	// developer's: a user boundary links every entry of it into its own.
	developerGoCache = goEnv("GOCACHE")
	runnerDir, err := os.MkdirTemp("", "roadmap-cli-test-runner-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "the test runner's Go build cache: %v\n", err)
		os.Exit(1)
	}
	sharedDirs = append(sharedDirs, runnerDir)
	runner, err := sandboxtest.SeedRunnerGoCache(runnerDir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "the test runner's Go build cache: %v\n", err)
		os.RemoveAll(runnerDir)
		os.Exit(1)
	}
	os.Setenv("GOCACHE", runner)
	code := m.Run()
	for _, d := range sharedDirs {
		os.RemoveAll(d)
	}
	// However the package's tests ran (one test, a -run pattern, all), the
	// roadmap binary cost at most one link (TestBinaryBuiltOnce) and the
	// demo was played at most once (TestDemoPlayedOnce).
	if n := built.links.Load(); n > 1 {
		fmt.Fprintf(os.Stderr, "FAIL: the roadmap binary was linked %d times in one test process, want at most once\n", n)
		code = 1
	}
	if n := demoPlay.plays.Load(); n > 1 {
		fmt.Fprintf(os.Stderr, "FAIL: the demo was played %d times in one test process, want at most once\n", n)
		code = 1
	}
	os.Exit(code)
}

// roadmapMain is cmd/roadmap's main, statement for statement
// (TestBinaryBuiltOnce compares them), for this test binary run as roadmap:
// the tests that need roadmap as a process (a Job a signal reaches, the
// sandbox's init, the demo's Jobs, the action steps that exec it) run this
// binary under that name instead of linking cmd/roadmap.
func roadmapMain() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	environ := os.Environ()
	Protect(environ)
	code := Main(ctx, os.Args[1:], environ, os.Stdin, os.Stdout, os.Stderr)
	stop()
	return code
}

// launchWithSessionKey joins a new session keyring, adds a user key to it
// and execs argv in its place: the program starts with a key in its session
// keyring, as a runner's process may (a credential helper's cache, an
// agent's). Credentials are a thread's in Linux and exec takes the calling
// thread's, so all of it happens on one locked thread.
func launchWithSessionKey(v string, argv []string) int {
	runtime.LockOSThread()
	desc, payload, _ := strings.Cut(v, "=")
	if _, err := unix.KeyctlJoinSessionKeyring("roadmap-test-session"); err != nil {
		fmt.Fprintln(os.Stderr, "join a session keyring:", err)
		return 2
	}
	if _, err := unix.AddKey("user", desc, []byte(payload), unix.KEY_SPEC_SESSION_KEYRING); err != nil {
		fmt.Fprintln(os.Stderr, "add the key:", err)
		return 2
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, keyringEnv+"=") {
			env = append(env, kv)
		}
	}
	err = syscall.Exec(path, argv, env)
	fmt.Fprintln(os.Stderr, "exec:", err)
	return 2
}
