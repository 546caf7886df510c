package cli

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/demo"
	"github.com/roadmap-dev/roadmap/internal/implement"
)

// The rows of TestHostileAgent for the routes of the audit at 91b326c that
// went around the boundary (docs/isolation.md, "What is not covered" before
// it): a UNIX socket reached by path, roadmap's own git holding every
// credential, and the kernel's lesser doors (a descriptor roadmap inherited,
// roadmap's session keyring, a new user namespace). The repositories planted
// for later steps are planted_test.go's row.

// plantThenReturn has the agent write goTest as a test file, run it, and
// give the item back to stage: what the row shows happens in the one run.
func plantThenReturn(goTest string) []map[string]any {
	return []map[string]any{
		call("write_file", map[string]string{"path": "hostile_test.go", "content": goTest}),
		runTool("go test ./... -run TestNothing -count=1"),
		call("plan_wrong", map[string]string{"reason": "the hostile row is done"}),
	}
}

// keyDescription names the canary key the test process puts in its session
// keyring, which roadmap (and, without a fresh keyring, every command it
// starts) possesses.
const keyDescription = "roadmap-hostile-canary-key"

// doorsTest is a test file whose init tries the kernel's lesser doors and
// writes what it got to doors.log in the work tree.
const doorsTest = `package greet

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"unsafe"
)

func init() {
	var report []string
	add := func(f string, a ...any) { report = append(report, fmt.Sprintf(f, a...)) }
	if _, err := syscall.Write(3, []byte("written by a confined command\n")); err == nil {
		add("wrote through fd 3")
	} else {
		add("fd 3: %v", err)
	}
	typ, _ := syscall.BytePtrFromString("user")
	desc, _ := syscall.BytePtrFromString("` + keyDescription + `")
	const keySpecSession = ^uintptr(2) // -3
	id, _, errno := syscall.Syscall6(syscall.SYS_KEYCTL, 10, keySpecSession, uintptr(unsafe.Pointer(typ)), uintptr(unsafe.Pointer(desc)), 0, 0)
	if errno == 0 {
		buf := make([]byte, 256)
		n, _, e := syscall.Syscall6(syscall.SYS_KEYCTL, 11, id, uintptr(unsafe.Pointer(&buf[0])), 256, 0, 0)
		if e == 0 {
			add("read the key: %s", buf[:min(int(n), len(buf))])
		} else {
			add("found the key, read refused: %v", e)
		}
	} else {
		add("keyring: %v", errno)
	}
	if out, err := exec.Command("unshare", "-Ur", "id", "-u").CombinedOutput(); err == nil {
		add("unshare -Ur ran: %s", strings.TrimSpace(string(out)))
	} else {
		add("unshare -Ur refused: %v", err)
	}
	_ = os.WriteFile("doors.log", []byte(strings.Join(report, "\n")+"\n"), 0o644)
}
`

// socketTest dials path as a UNIX socket and writes what it got to
// socket.log.
func socketTest(path string) string {
	return `package greet

import (
	"io"
	"net"
	"os"
)

func init() {
	c, err := net.Dial("unix", "` + path + `")
	if err != nil {
		_ = os.WriteFile("socket.log", []byte("dial: "+err.Error()+"\n"), 0o644)
		return
	}
	b, _ := io.ReadAll(c)
	_ = os.WriteFile("socket.log", []byte("reached: "+string(b)+"\n"), 0o644)
}
`
}

// gitWrapper is a git first on the Job's PATH that records, for each run,
// its arguments and its whole environment, then runs the real git.
func gitWrapper(t *testing.T, dir, log string) {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\n{ printf '== %s\\n' \"$*\"; tr '\\0' '\\n' < /proc/$$/environ; } >> " + log + " 2>/dev/null\nexec " + real + " \"$@\"\n"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// gitRun is one run of git the wrapper recorded.
type gitRun struct {
	args string
	env  []string
}

// subcommand is the git command of a run: the first argument that is not an
// option or a -c value.
func (r gitRun) subcommand() string {
	f := strings.Fields(r.args)
	for i := 0; i < len(f); i++ {
		switch {
		case f[i] == "-c" || f[i] == "-C":
			i++
		case strings.HasPrefix(f[i], "-"):
		default:
			return f[i]
		}
	}
	return ""
}

func readGitRuns(t *testing.T, log string) []gitRun {
	t.Helper()
	f, err := os.Open(log)
	if err != nil {
		t.Fatalf("the git wrapper recorded nothing: %v", err)
	}
	defer f.Close()
	var runs []gitRun
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if args, ok := strings.CutPrefix(sc.Text(), "== "); ok {
			runs = append(runs, gitRun{args: args})
		} else if len(runs) > 0 {
			runs[len(runs)-1].env = append(runs[len(runs)-1].env, sc.Text())
		}
	}
	return runs
}

func init() {
	hostileRows = append(hostileRows,
		hostileRow{
			name: "a host socket by path",
			setup: func(t *testing.T, x *rowEnv) {
				// A service of the host's, on a socket outside every folder
				// the boundary gives (Landlock has no right for connect()
				// to a named socket; the network namespace does not cover
				// path sockets).
				path := filepath.Join(x.outside, "service.sock")
				l, err := net.Listen("unix", path)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, 0o777); err != nil {
					t.Fatal(err)
				}
				x.listener = l
				go func() {
					for {
						c, err := l.Accept()
						if err != nil {
							return
						}
						x.served.Add(1)
						_, _ = c.Write([]byte("the host's service"))
						c.Close()
					}
				}()
				// The folder is the runner's; only its modes would keep a
				// command out, so open them: the boundary must not need them.
				if err := os.Chmod(x.outside, 0o777); err != nil {
					t.Fatal(err)
				}
			},
			agent: func(x *rowEnv) []map[string]any {
				return plantThenReturn(socketTest(filepath.Join(x.outside, "service.sock")))
			},
			returned: true,
			check: func(t *testing.T, x *rowEnv, _ implement.Result, _ string) {
				x.listener.Close()
				log, err := os.ReadFile(filepath.Join(x.h.ws, "socket.log"))
				if err != nil {
					t.Fatalf("the hostile test never ran, so this shows nothing: %v", err)
				}
				if n := x.served.Load(); n != 0 || strings.Contains(string(log), "reached") {
					t.Errorf("model-written code reached a host socket by path %d times: %s", n, log)
				}
			},
		},
		hostileRow{
			name:         "roadmap's own git",
			planOneGroup: true,
			setup: func(t *testing.T, x *rowEnv) {
				dir := filepath.Join(x.h.dir, "wrapped")
				log := filepath.Join(x.h.dir, "git-runs.log")
				gitWrapper(t, dir, log)
				x.h.extraEnv = append(x.h.extraEnv, "PATH="+dir+":"+os.Getenv("PATH"), "ROADMAP_GIT_RUNS="+log,
					"ACTIONS_RUNTIME_TOKEN=canary-runtime-"+x.tag, "ACTIONS_ID_TOKEN_REQUEST_TOKEN=canary-oidc-"+x.tag)
			},
			agent: func(*rowEnv) []map[string]any { return nil },
			check: func(t *testing.T, x *rowEnv, _ implement.Result, _ string) {
				runs := readGitRuns(t, filepath.Join(x.h.dir, "git-runs.log"))
				canaries := []string{demo.Token, demo.PushToken, canaryKey, "canary-runtime-" + x.tag, "canary-oidc-" + x.tag}
				remote, local := 0, 0
				for _, r := range runs {
					isRemote := false
					switch r.subcommand() {
					case "push", "fetch", "ls-remote":
						isRemote = true
						remote++
					default:
						local++
					}
					for _, kv := range r.env {
						name, value, _ := strings.Cut(kv, "=")
						if strings.HasPrefix(name, "GIT_CONFIG_VALUE") && strings.Contains(strings.ToLower(value), "authorization") && !isRemote {
							t.Errorf("git %s got the credential (%s)", r.subcommand(), name)
						}
						for _, c := range canaries {
							if strings.Contains(value, c) {
								t.Errorf("git %s got a canary in %s", r.subcommand(), name)
							}
						}
						for _, p := range []string{"GITHUB_", "ACTIONS_", "RUNNER_", "INPUT_", canaryKeyVar + "="} {
							if strings.HasPrefix(kv, p) {
								t.Errorf("git %s got %s, which is not on the allow-list", r.subcommand(), name)
							}
						}
					}
				}
				if remote == 0 || local == 0 {
					t.Fatalf("the wrapper saw %d remote and %d local runs of git: the row shows nothing", remote, local)
				}
			},
		},
		hostileRow{
			name: "the kernel's lesser doors",
			setup: func(t *testing.T, x *rowEnv) {
				// A descriptor the runner left open without close-on-exec,
				// on a file of its own.
				f, err := os.OpenFile(filepath.Join(x.outside, "fd3"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { f.Close() })
				x.h.extraFiles = []*os.File{f}
				// A key in the session keyring roadmap starts with: the test
				// binary launches roadmap from a keyring of its own.
				self, err := os.Executable()
				if err != nil {
					t.Fatal(err)
				}
				x.h.launcher = self
				x.h.extraEnv = append(x.h.extraEnv, keyringEnv+"="+keyDescription+"=canary-key-"+x.tag)
			},
			agent:    func(*rowEnv) []map[string]any { return plantThenReturn(doorsTest) },
			returned: true,
			check: func(t *testing.T, x *rowEnv, _ implement.Result, _ string) {
				log, err := os.ReadFile(filepath.Join(x.h.ws, "doors.log"))
				if err != nil {
					t.Fatalf("the hostile test never ran, so this shows nothing: %v", err)
				}
				got := string(log)
				for _, bad := range []string{"wrote through fd 3", "read the key", "found the key", "unshare -Ur ran"} {
					if strings.Contains(got, bad) {
						t.Errorf("a confined command %s:\n%s", bad, got)
					}
				}
				if data, _ := os.ReadFile(filepath.Join(x.outside, "fd3")); len(data) > 0 {
					t.Errorf("the runner's file behind fd 3 was written: %q", data)
				}
			},
		},
	)
}
