package cli

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// sharedDirs are folders the package's tests share across test functions
// (the roadmap binary linked once): removed when every test has run.
var sharedDirs []string

// keyringEnv makes the test binary a launcher (see withSessionKey): its
// value is a key's description and payload, "desc=payload".
const keyringEnv = "ROADMAP_CLI_TEST_SESSION_KEY"

func TestMain(m *testing.M) {
	if v := os.Getenv(keyringEnv); v != "" {
		os.Exit(launchWithSessionKey(v, os.Args[1:]))
	}
	code := m.Run()
	for _, d := range sharedDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
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
