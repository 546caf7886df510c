package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
)

// Mode is the configuration's `isolation` value.
type Mode string

const (
	// ModeAuto is the default: the user boundary where it can be set up,
	// otherwise no model-written commands at all (fail closed).
	ModeAuto Mode = "auto"
	// ModeUser requires the user boundary; the same as auto today, kept so a
	// configuration can say it means it.
	ModeUser Mode = "user"
	// ModeNone runs model-written commands as roadmap's own user. Only an
	// explicit configuration chooses it, and every summary says so.
	ModeNone Mode = "none"
)

// ParseMode reads a configuration value; "" is auto.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.TrimSpace(s)); m {
	case "":
		return ModeAuto, nil
	case ModeAuto, ModeUser, ModeNone:
		return m, nil
	default:
		return "", fmt.Errorf("isolation %q: want auto, user or none", s)
	}
}

// DefaultUser is the name the boundary's user goes by (in USER, in the
// logs), with its uid after it: each boundary has a uid of its own.
const DefaultUser = "roadmap-sandbox"

// Network is the configuration's `sandbox.network` value: what a command
// inside the boundary may reach.
type Network string

const (
	// NetworkLoopback gives each command a network namespace of its own with
	// only loopback: a test may listen on 127.0.0.1 and connect to itself,
	// nothing leaves the machine. The default.
	NetworkLoopback Network = "loopback"
	// NetworkNone gives it no interface at all, and on Landlock ABI 4 and
	// later no TCP bind or connect either.
	NetworkNone Network = "none"
)

// ParseNetwork reads a configuration value; "" is loopback.
func ParseNetwork(s string) (Network, error) {
	switch n := Network(strings.TrimSpace(s)); n {
	case "":
		return NetworkLoopback, nil
	case NetworkLoopback, NetworkNone:
		return n, nil
	default:
		return "", fmt.Errorf("sandbox.network %q: want loopback or none (anything wider is the runner's firewall: docs/isolation.md)", s)
	}
}

// NotIsolatedWarning is the sentence every summary and PR comment carries when
// the configuration turned the boundary off.
const NotIsolatedWarning = "This run was NOT isolated: `isolation: none` is configured, so code the model wrote ran as roadmap's own user, next to its credentials (docs/isolation.md)."

// Options says where the boundary is and what it protects.
type Options struct {
	Mode Mode
	// Workspace is the work tree the processes run in and may write (but
	// not its .git).
	Workspace string
	// Environ is the runner's environment. The processes' environment is
	// built from it by an allow-list (Env).
	Environ []string
	// Private are the runner's files and folders: RUNNER_TEMP, the workflow
	// command files, the runner's HOME. Landlock keeps every command out of
	// everything it was not given; Private only keeps a PATH entry that
	// holds one of these (HOME itself on PATH) from being given.
	Private []string
	// User is the name the boundary's user goes by (DefaultUser-<uid> when
	// empty); its uid is the boundary's own.
	User string
	// Network is what commands may reach (NetworkLoopback when empty).
	Network Network
	// GoCache is the runner's Go build cache. The sandbox's own cache is
	// seeded from it with hard links, so a test does not rebuild the standard
	// library; the sandbox cannot change the runner's entries (they stay the
	// runner's files) and its own go away with it.
	GoCache string
	// UnixSockets are the absolute paths of UNIX sockets commands may
	// connect to (a database a test suite needs). Empty, the default, the
	// system-call filter refuses every socket(AF_UNIX, …): neither Landlock
	// (up to ABI 7) nor the network namespace keeps a command from a named
	// socket outside its folders. The filter cannot see a path, so any entry
	// lifts the refusal for every UNIX socket, not the named ones alone.
	// socketpair() is always allowed.
	UnixSockets []string
	// Probe overrides the platform checks (tests of the fail-closed path).
	Probe *Probe
}

// Probe is what the boundary needs from the machine.
type Probe struct {
	OS   string // runtime.GOOS
	Euid int
}

// Unavailable is the error Open returns when no boundary can be set up and
// the configuration did not say `isolation: none`.
type Unavailable struct {
	Reason string
}

func (e *Unavailable) Error() string {
	return "no isolation boundary for model-written commands: " + e.Reason +
		"; roadmap refuses to run them (run as root or with passwordless sudo on Linux, or set `isolation: none` to run them unisolated; docs/isolation.md)"
}

// Boundary is an open isolation boundary. Its zero value is not usable; Open
// returns one.
type Boundary struct {
	mode     Mode
	isolated bool
	user     string
	uid, gid int
	ws       string
	home     string
	env      []string
	undo     []func() error
	owner    [2]int // the work tree's owner before, restored by Close
	network  Network
	abi      int      // the kernel's Landlock ABI
	rw, ro   []string // what Landlock lets commands write, and read
	planted  []string // repositories Close removed below the work tree's top
	// unixSockets lifts the filter's UNIX socket refusal (Options).
	unixSockets []string
	// keepUID holds the uid's lease past Close: some of its processes
	// would not die, and no later boundary may share the uid with them.
	keepUID bool
	// closed is set by Close: a command confined after it fails to start.
	closed atomic.Bool
}

// Open sets the boundary up: in user mode, it makes sure the sandbox user
// exists, hands it the work tree (not .git), closes the private paths, opens
// a way through the workspace's ancestors and makes the sandbox's HOME.
// Close undoes what it changed outside the sandbox's HOME and removes that.
func Open(ctx context.Context, o Options) (*Boundary, error) {
	ws, err := filepath.Abs(o.Workspace)
	if err == nil {
		ws, err = filepath.EvalSymlinks(ws)
	}
	if err != nil {
		return nil, fmt.Errorf("isolation: workspace %s: %w", o.Workspace, err)
	}
	for _, p := range o.UnixSockets {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("isolation: UNIX socket %q: want an absolute path", p)
		}
	}
	b := &Boundary{mode: o.Mode, ws: ws, user: o.User, network: o.Network,
		unixSockets: append([]string(nil), o.UnixSockets...)}
	if b.network == "" {
		b.network = NetworkLoopback
	}
	if b.mode == "" {
		b.mode = ModeAuto
	}
	if b.mode == ModeNone {
		home, err := os.MkdirTemp("", "roadmap-tool-home-")
		if err != nil {
			return nil, fmt.Errorf("isolation: tool HOME: %w", err)
		}
		b.home = home
		b.undo = append(b.undo, func() error { return removeHome(home) })
		if err := os.Mkdir(filepath.Join(home, "tmp"), 0o700); err != nil {
			return nil, fmt.Errorf("isolation: tool TMPDIR: %w", err)
		}
		// Same user, same build cache: isolation is off anyway.
		b.env = allowEnv(o.Environ, b.home, ws, "", GoDirs(o.Environ)["GOCACHE"])
		return b, nil
	}
	probe := platform()
	if o.Probe != nil {
		probe = *o.Probe
	}
	if probe.OS != "linux" {
		return nil, &Unavailable{Reason: fmt.Sprintf("the user boundary needs Linux, and this is %s", probe.OS)}
	}
	if probe.Euid != 0 {
		return nil, &Unavailable{Reason: fmt.Sprintf("roadmap runs as uid %d, not root (the implement and checks actions run it under passwordless sudo where the runner has it)", probe.Euid)}
	}
	if err := b.openUser(ctx, o); err != nil {
		_ = b.Close()
		return nil, err
	}
	return b, nil
}

// Isolated reports whether processes run behind the user boundary.
func (b *Boundary) Isolated() bool { return b.isolated }

// Mode is the mode the boundary was opened in.
func (b *Boundary) Mode() Mode { return b.mode }

// Workspace is the real path of the work tree.
func (b *Boundary) Workspace() string { return b.ws }

// Home is the HOME of the processes.
func (b *Boundary) Home() string { return b.home }

// Env is the environment processes get: an allow-list of the runner's
// environment (PATH, locale, the toolchains' own settings) with HOME, TMPDIR
// and the caches pointed into the sandbox's HOME.
func (b *Boundary) Env() []string { return append([]string(nil), b.env...) }

// Describe says, for a log line or a summary, how processes run.
func (b *Boundary) Describe() string {
	if !b.isolated {
		return "not isolated: model-written commands run as roadmap's own user (isolation: none)"
	}
	unixSockets := "no UNIX sockets"
	if len(b.unixSockets) > 0 {
		unixSockets = "UNIX sockets allowed for " + strings.Join(b.unixSockets, ", ") + " (the filter cannot tell one path from another: any)"
	}
	return fmt.Sprintf("isolated: model-written commands run as uid %d (this boundary's own), in their own PID, mount and network namespaces (network: %s), under Landlock ABI %d (write: the work tree but not .git, and the sandbox's HOME) and a system-call filter (%s, no user namespaces, no keyring); nothing they start outlives the command", b.uid, b.network, b.abi, unixSockets)
}

// Missing names what the kernel's Landlock lacks of what the boundary would
// use, for the summary: the namespaces still hold, and each line says what
// stands in. Empty when nothing is missing (or not isolated).
func (b *Boundary) Missing() []string {
	if !b.isolated {
		return nil
	}
	var out []string
	if b.abi < 4 && b.network == NetworkNone {
		out = append(out, fmt.Sprintf("Landlock network rules (ABI 4; this kernel has %d): the network namespace alone keeps `network: none`", b.abi))
	}
	if b.abi < 6 {
		out = append(out, fmt.Sprintf("Landlock scoping of signals and abstract sockets (ABI 6; this kernel has %d): the PID and network namespaces stand in", b.abi))
	}
	return out
}

// UID is the uid commands run as (0 when not isolated).
func (b *Boundary) UID() int { return b.uid }

// Confine prepares cmd to run inside the boundary: its own process group
// (killed whole), killed if roadmap dies, the sandbox user's credentials and
// the allow-listed environment when cmd.Env is nil.
func (b *Boundary) Confine(cmd *exec.Cmd) {
	if b.isolated && b.closed.Load() && cmd.Err == nil {
		cmd.Err = errors.New("isolation: the boundary is closed: its uid and work tree are no longer the sandbox's")
	}
	confine(cmd, b)
	if cmd.Env == nil {
		cmd.Env = b.Env()
	}
}

// Close ends every process the boundary started (its uid's, and the
// namespace inits running its commands), then restores what Open changed
// (the work tree's owner, the modes of the private paths and of the
// workspace's ancestors) and removes the sandbox's HOME. Files the sandbox
// made in the work tree become the runner's. A command still running in
// another goroutine is killed (its Wait returns); one confined after Close
// fails to start.
func (b *Boundary) Close() error {
	var errs []error
	if b.isolated {
		b.closed.Store(true)
		// First: a descriptor opened inside must not write the tree after
		// it is handed back.
		if err := endProcesses(b.uid); err != nil {
			errs = append(errs, err)
			b.keepUID = true
		}
	}
	for i := len(b.undo) - 1; i >= 0; i-- {
		if err := b.undo[i](); err != nil {
			errs = append(errs, err)
		}
	}
	b.undo = nil
	return errors.Join(errs...)
}

// Planted are the repositories (.git entries below the work tree's top,
// slash paths relative to it) that Close found the boundary's commands had
// made, and removed. Their names are the model's: print them quoted.
func (b *Boundary) Planted() []string { return append([]string(nil), b.planted...) }

// allowed are the variables processes inherit from the runner by name. Every
// other variable is dropped, whatever it is called: new credentials get no
// way in by a name nobody thought of (`api_key_env: LLM`).
var allowed = map[string]bool{
	"PATH": true, "LANG": true, "LANGUAGE": true, "TZ": true, "TERM": true, "CI": true,
	"GOROOT": true, "GOSUMDB": true, "GONOSUMDB": true, "GONOPROXY": true,
	"GOPRIVATE": true, "GOFLAGS": true, "GOOS": true, "GOARCH": true,
	"GOAMD64": true, "GOARM64": true, "CGO_ENABLED": true, "GOEXPERIMENT": true,
	"CC": true, "CXX": true, "JAVA_HOME": true, "NODE_ENV": true,
	"RUNNER_OS": true, "RUNNER_ARCH": true,
}

// allowEnv builds the processes' environment from environ by allow-list.
// Values that carry userinfo in a URL are dropped too. home becomes HOME, with
// TMPDIR and the build cache under it; the module cache stays the runner's
// (read-only to the sandbox: go never changes it without -modcacherw) and go
// downloads nothing (GOPROXY=off, GOTOOLCHAIN=local); git is told the work
// tree is safe (it belongs to another user) and never to prompt.
func allowEnv(environ []string, home, ws, user, gocache string) []string {
	var env []string
	modcache := GoDirs(environ)["GOMODCACHE"]
	if modcache == "" {
		modcache = filepath.Join(home, "go", "pkg", "mod")
	}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !(allowed[name] || strings.HasPrefix(name, "LC_")) || hasUserinfo(value) {
			continue
		}
		if name == "PATH" {
			value = toolPath(value, ws)
		}
		env = append(env, name+"="+value)
	}
	tmp := filepath.Join(home, "tmp")
	env = append(env,
		"HOME="+home,
		"TMPDIR="+tmp,
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"GOPATH="+filepath.Join(home, "go"),
		"GOCACHE="+gocache,
		"GOMODCACHE="+modcache,
		"GOPROXY=off",
		"GOTOOLCHAIN=local",
		"npm_config_cache="+filepath.Join(home, ".npm"),
		"GIT_TERMINAL_PROMPT=0",
		"GCM_INTERACTIVE=never",
		"GIT_CONFIG_NOSYSTEM=1",
		// Configuration files a command plants in the sandbox's HOME would
		// apply to every later command (a go env file's -toolexec makes
		// `go test` report what it likes): none is read.
		"GOENV=off",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"PYTHONNOUSERSITE=1",
		"npm_config_userconfig=/dev/null",
		"GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=safe.directory",
		"GIT_CONFIG_VALUE_0="+ws,
	)
	if user != "" {
		env = append(env, "USER="+user, "LOGNAME="+user)
	}
	return env
}

// toolPath keeps the absolute PATH entries outside the work tree: a program
// the model wrote must not be found by name.
func toolPath(path, ws string) string {
	var keep []string
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) || within(ws, filepath.Clean(dir)) {
			continue
		}
		if real, err := filepath.EvalSymlinks(dir); err == nil && within(ws, real) {
			continue
		}
		keep = append(keep, dir)
	}
	return strings.Join(keep, string(filepath.ListSeparator))
}

func hasUserinfo(v string) bool {
	i := strings.Index(v, "://")
	if i < 0 {
		return false
	}
	rest := v[i+3:]
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		rest = rest[:j]
	}
	return strings.Contains(rest, "@")
}

// within reports whether path is root or inside it.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// GoDirs computes where the go command keeps its caches under environ, as
// `go env` would on Linux and macOS: GOPATH, GOMODCACHE and GOCACHE.
func GoDirs(environ []string) map[string]string {
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	home := env["HOME"]
	out := map[string]string{}
	gopath := env["GOPATH"]
	if gopath == "" && home != "" {
		gopath = filepath.Join(home, "go")
	}
	if gopath != "" {
		out["GOPATH"] = gopath
	}
	modcache := env["GOMODCACHE"]
	if modcache == "" && gopath != "" {
		modcache = filepath.Join(filepath.SplitList(gopath)[0], "pkg", "mod")
	}
	if modcache != "" {
		out["GOMODCACHE"] = modcache
	}
	cache := env["GOCACHE"]
	if cache == "" {
		switch {
		case env["XDG_CACHE_HOME"] != "":
			cache = filepath.Join(env["XDG_CACHE_HOME"], "go-build")
		case home != "" && runtime.GOOS == "darwin":
			cache = filepath.Join(home, "Library", "Caches", "go-build")
		case home != "":
			cache = filepath.Join(home, ".cache", "go-build")
		}
	}
	if cache != "" {
		out["GOCACHE"] = cache
	}
	return out
}

// removeHome removes a tool HOME. The go command may still be writing its
// telemetry there for a moment after a test exits, so a failure is retried
// briefly.
func removeHome(home string) error {
	var err error
	for i := 0; i < 20; i++ {
		if err = os.RemoveAll(home); err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("remove tool HOME %s: %w", home, err)
}
