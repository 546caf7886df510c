package strength

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/checks"
)

// How a mutant reaches the verify commands without the tests seeing it.
//
// A mutant written into the work tree is there for the tests to read: a
// test that asserts nothing but hashes its package's source, and fails when
// it differs, kills every mutant. So a mutant never enters the tree for a
// `go test` command. It lives in a hideout, a folder at the top of the tree
// (".roadmap-strength-<random>", which ./... skips), and reaches go through
// -overlay. Go reads an overlay file while it builds, and the test binary it
// then starts runs as the same uid, in the same Landlock domain: while the
// overlay exists, the test can find it (the go command's own command line,
// in the namespace's /proc, names it). So the test binary must never run
// while the overlay exists, and a `go test` command runs in two steps:
//
//  1. build: `go test -overlay=… -count=1 ARGS` with -exec set to a wrapper
//     that keeps each test binary go built (in the hideout's bin/, by the
//     package's folder) and runs nothing. Go builds and vets with the
//     mutant; no code the model wrote runs.
//  2. roadmap removes the mutant and the overlay file; only the original
//     source is left on disk.
//  3. run: `go test -count=1 ARGS` with -exec set to a wrapper that copies
//     the binary kept for the package over the one go just built from the
//     original source and runs it, with the GOFLAGS the commands had. go
//     test still runs each binary where it built it, in its package's
//     folder, with its own flags, and prints and exits as it always does.
//
// -count=1 keeps go from answering step 3 from its test cache (the binary it
// builds there is the same for every mutant). The other ways considered: to
// build with `go test -c` and run the binary directly means translating go
// test's flags to the binary's and running it in its package's folder,
// which the shell policy's runner cannot do (a bare program name, in the
// workspace root); to keep the overlay where the boundary's uid cannot read
// it cannot work, since go reads it as that uid.
//
// -exec is refused by the shell policy's table, which is the agent's: this
// -exec is roadmap's own, so it goes in GOFLAGS through the runner's
// environment (RunEnv, as the parallelism after an oom does), never on a
// command line the model wrote. The wrapper finds the hideout by walking up
// from the package's folder to the folder with the hideout's name, so no
// path is in the environment (a path can look like a token to the
// environment's scrubber). A fresh hideout, with a fresh random name, is made
// for every command run, so code that ran in an earlier one cannot have
// planted a folder of that name on the way up.
//
// `go build` and `go vet` get -overlay alone: no code the model wrote runs in
// them. Every other command (make, a script, go run, a go command that sets
// -overlay, -exec, -toolexec or -c itself) has no overlay to use: the mutant
// is written into the tree for that command, as before, and the original
// bytes written back after it. Such a command can see the mutant.
const hideoutPrefix = ".roadmap-strength-"

// reach is how a verify command is shown a mutant.
type reach int

const (
	inPlace  reach = iota // written into the work tree for the command
	overlaid              // go build, go vet: -overlay, nothing of the model's runs
	hidden                // go test: built with -overlay, run with it gone
)

// reachOf says how argv is shown a mutant.
func reachOf(argv []string) reach {
	if len(argv) < 2 || argv[0] != "go" {
		return inPlace
	}
	for _, a := range argv[2:] {
		if a == "-args" || a == "--args" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "overlay", "exec", "toolexec", "c":
			return inPlace
		}
	}
	switch argv[1] {
	case "test":
		return hidden
	case "build", "vet":
		return overlaid
	}
	return inPlace
}

// withFlags is argv with flags added right after its subcommand.
func withFlags(argv []string, flags ...string) []string {
	out := append([]string{argv[0], argv[1]}, flags...)
	return append(out, argv[2:]...)
}

// hideout is one command run's folder at the top of the tree: the mutant,
// the overlay naming it and, for go test, the -exec wrapper and the test
// binaries it keeps.
type hideout struct {
	root *os.Root
	name string // ".roadmap-strength-<16 hex digits>"
}

// The hideout's files.
const (
	hideMutant  = "mutant.go"
	hideOverlay = "overlay.json"
	hideExec    = "exec.sh"
	hideBin     = "bin"
	// hideMissing is made in bin/ by the run step when go ran a package
	// whose binary the build step did not keep.
	hideMissing = "missing"
	// maxHideEntries bounds the walk of bin/, which the tests can write.
	maxHideEntries = 10000
)

// newHideout makes a hideout holding data as the mutant of file (a slash
// path from the top) and an overlay for it; withExec adds the wrapper and
// bin/. Every file is roadmap's, readable by the boundary's uid and not
// writable by it; bin/ is writable by all, sticky, like /tmp.
func newHideout(root *os.Root, file string, data []byte, withExec bool, goflags string) (_ *hideout, err error) {
	h, err := makeHideout(root)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, h.remove())
		}
	}()
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {file: h.path(hideMutant)}})
	if err != nil {
		return nil, fmt.Errorf("test strength: %w", err)
	}
	files := []struct {
		name string
		data []byte
	}{{hideMutant, data}, {hideOverlay, overlay}}
	if withExec {
		files = append(files, struct {
			name string
			data []byte
		}{hideExec, []byte(h.script(goflags))})
	}
	for _, f := range files {
		if err := h.create(f.name, f.data); err != nil {
			return nil, err
		}
	}
	if withExec {
		bin := h.path(hideBin)
		if err := root.Mkdir(bin, 0o755); err != nil {
			return nil, fmt.Errorf("test strength: %w", err)
		}
		if err := root.Chmod(bin, 0o777|fs.ModeSticky); err != nil {
			return nil, fmt.Errorf("test strength: %w", err)
		}
	}
	return h, nil
}

// makeHideout makes an empty hideout with a fresh random name, roadmap's,
// readable by the boundary's uid and not writable by it.
func makeHideout(root *os.Root) (*hideout, error) {
	var h *hideout
	var b [8]byte
	for tries := 0; ; tries++ {
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("test strength: a hideout's name: %w", err)
		}
		name := hideoutPrefix + hex.EncodeToString(b[:])
		err := root.Mkdir(name, 0o755)
		if err == nil {
			h = &hideout{root: root, name: name}
			break
		}
		if !errors.Is(err, fs.ErrExist) || tries == 5 {
			return nil, fmt.Errorf("test strength: make a hideout for a mutant: %w", err)
		}
	}
	if err := root.Chmod(h.name, 0o755); err != nil {
		return nil, errors.Join(fmt.Errorf("test strength: %w", err), h.remove())
	}
	return h, nil
}

// path is a hideout file's slash path from the top.
func (h *hideout) path(name string) string { return path.Join(h.name, name) }

func (h *hideout) create(name string, data []byte) error {
	f, err := h.root.OpenFile(h.path(name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("test strength: %w", err)
	}
	_, werr := f.Write(data)
	if err := f.Chmod(0o644); werr == nil {
		werr = err
	}
	if err := f.Close(); werr == nil {
		werr = err
	}
	if werr != nil {
		return fmt.Errorf("test strength: write %s: %w", h.path(name), werr)
	}
	return nil
}

// overlayFlag is go's -overlay for the hideout, relative to the top (where
// every command runs).
func (h *hideout) overlayFlag() string { return "-overlay=" + h.path(hideOverlay) }

// unveil removes the mutant and the overlay: from here on only the original
// source is on disk.
func (h *hideout) unveil() error {
	var errs []error
	for _, name := range []string{hideMutant, hideOverlay} {
		if err := h.root.Remove(h.path(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("test strength: remove %s: %w", h.path(name), err))
		}
	}
	return errors.Join(errs...)
}

// remove removes the hideout and whatever the tests left in it.
func (h *hideout) remove() error {
	if err := h.root.RemoveAll(h.name); err != nil {
		return fmt.Errorf("test strength: remove %s: %w", h.name, err)
	}
	return nil
}

// script is the wrapper's body. The line -exec runs (goflags) finds the
// hideout's folder d and sources it, with $1 the step (stash, run), $2 the
// test binary go built and the rest its flags. The run step copies the kept
// binary over the one go built and runs it there, with the GOFLAGS the
// commands had (goflags, "" unset), so neither its path nor its
// environment names the hideout.
func (h *hideout) script(goflags string) string {
	env := "unset GOFLAGS"
	if goflags != "" {
		env = "GOFLAGS='" + strings.ReplaceAll(goflags, "'", `'\''`) + "'; export GOFLAGS"
	}
	return `# go test's -exec for one mutant of roadmap's test strength (internal/strength).
# stash: keep the test binary go built with the mutant, run nothing.
# run: run the kept binary instead of the one go built from the source on disk.
h="$d/` + h.name + `"
s="$h/` + hideBin + `$PWD"
case "$1" in
stash)
	mkdir -p "$s" && cp "$2" "$s/test"
	;;
run)
	if [ ! -f "$s/test" ]; then
		: >"$h/` + hideBin + `/` + hideMissing + `"
		echo "roadmap test strength: no test binary was built with the mutant for $PWD" >&2
		exit 125
	fi
	mv "$s/test" "$s/ran" && cp "$s/ran" "$2" || exit 125
	b="$2"
	shift 2
	` + env + `
	exec "$b" "$@"
	;;
*)
	exit 125
	;;
esac
`
}

// goflags is GOFLAGS for a step: base (the GOFLAGS the commands already
// get) and -exec running the wrapper with the step's name. The -exec value
// holds no path: /bin/sh walks up from the package's folder to the
// hideout. It is quoted twice (GOFLAGS's fields, then -exec's words); the
// script needs no quote, its expansions are safe with IFS empty and
// globbing off.
func (h *hideout) goflags(base, step string) string {
	find := "IFS=;set -f;d=$PWD;while [ ! -f $d/" + h.name + "/" + hideExec + " ];do [ -z $d ]&&exit 125;d=${d%/*};done;. $d/" + h.name + "/" + hideExec
	flag := `'-exec=/bin/sh -c "` + find + `" roadmap-strength ` + step + `'`
	return strings.TrimSpace(base + " " + flag)
}

// kept counts, in bin/, the binaries the build step kept that no run step
// ran, and says whether a run step found none for its package.
func (h *hideout) kept() (waiting int, missing bool, err error) {
	n := 0
	err = fs.WalkDir(h.root.FS(), h.path(hideBin), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if n++; n > maxHideEntries {
			return fmt.Errorf("more than %d entries", maxHideEntries)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		switch d.Name() {
		case "test":
			waiting++
		case hideMissing:
			missing = true
		}
		return nil
	})
	if err != nil {
		return 0, false, fmt.Errorf("test strength: read %s: %w", h.path(hideBin), err)
	}
	return waiting, missing, nil
}

// envRunner is a Runner that can add variables to a command's environment
// (checks' policy and sandbox runners, and LessParallel over them).
type envRunner interface {
	RunEnv(ctx context.Context, dir string, argv, extra []string) (checks.Result, error)
}

// baseGOFLAGS is the GOFLAGS the commands get (`go env GOFLAGS` behind the
// boundary, asked once), which a step's GOFLAGS keeps.
func (r *run) baseGOFLAGS(ctx context.Context) (string, error) {
	if r.goflags != nil {
		return *r.goflags, nil
	}
	res, err := r.o.Runner.Run(ctx, r.dir, []string{"go", "env", "GOFLAGS"})
	if err != nil {
		return "", fmt.Errorf("test strength: go env GOFLAGS: %w", err)
	}
	out := strings.TrimSpace(res.Output)
	if res.ExitCode != 0 || res.TimedOut || strings.Contains(out, "\n") {
		return "", fmt.Errorf("test strength: go env GOFLAGS: exit %d: %s", res.ExitCode, r.mask(tailOf(out, 300)))
	}
	r.goflags = &out
	return out, nil
}

// runHidden runs a go test command on a mutant of file (data) in the two
// steps above. The result is the run step's, or the build step's when that
// failed or ran out of time; an error means the steps did not work as they
// must (the wrapper did not run, a binary was not kept), not that the
// mutant was killed.
func (r *run) runHidden(ctx context.Context, argv []string, file string, data []byte) (res checks.Result, err error) {
	er, ok := r.o.Runner.(envRunner)
	if !ok {
		return checks.Result{}, fmt.Errorf("test strength: the runner %T cannot set GOFLAGS, which keeps a mutant out of the tests' sight", r.o.Runner)
	}
	base, err := r.baseGOFLAGS(ctx)
	if err != nil {
		return checks.Result{}, err
	}
	h, err := newHideout(r.root, file, data, true, base)
	if err != nil {
		return checks.Result{}, err
	}
	defer func() { err = errors.Join(err, h.remove()) }()

	res, err = er.RunEnv(ctx, r.dir, withFlags(argv, h.overlayFlag(), "-count=1"), []string{"GOFLAGS=" + h.goflags(base, "stash")})
	if err != nil || res.TimedOut || ctx.Err() != nil || res.ExitCode != 0 && buildFailed(res.Output) {
		return res, err
	}
	if err := h.unveil(); err != nil {
		return checks.Result{}, err
	}
	kept, _, err := h.kept()
	if err != nil {
		return checks.Result{}, err
	}
	if res.ExitCode != 0 || kept == 0 {
		return checks.Result{}, fmt.Errorf("test strength: go test did not build the mutant's tests apart from running them (exit %d, %d test binaries kept): %s",
			res.ExitCode, kept, r.mask(tailOf(res.Output, 600)))
	}

	res, err = er.RunEnv(ctx, r.dir, withFlags(argv, "-count=1"), []string{"GOFLAGS=" + h.goflags(base, "run")})
	if err != nil || res.TimedOut || ctx.Err() != nil {
		return res, err
	}
	waiting, missing, err := h.kept()
	if err != nil {
		return checks.Result{}, err
	}
	if waiting > 0 || missing {
		return checks.Result{}, fmt.Errorf("test strength: go test did not run the test binaries built with the mutant (%d not run, one missing: %v): %s",
			waiting, missing, r.mask(tailOf(res.Output, 600)))
	}
	return res, nil
}
