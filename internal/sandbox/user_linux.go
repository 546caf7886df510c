//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

func platform() Probe { return Probe{OS: "linux", Euid: os.Geteuid()} }

// fallbackID is the uid and gid used when the machine has no useradd: a
// number no distribution hands out to people or services.
const fallbackID = 64571

func confine(cmd *exec.Cmd, b *Boundary) {
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if b.isolated {
		attr.Credential = &syscall.Credential{Uid: uint32(b.uid), Gid: uint32(b.gid), Groups: []uint32{}}
	}
	cmd.SysProcAttr = attr
	cmd.Cancel = func() error {
		if cmd.Process != nil && cmd.Process.Pid > 0 {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		return nil
	}
}

func (b *Boundary) openUser(ctx context.Context, o Options) error {
	uid, gid, err := ensureUser(ctx, b.user)
	if err != nil {
		return &Unavailable{Reason: err.Error()}
	}
	if uid == 0 || gid == 0 {
		return &Unavailable{Reason: fmt.Sprintf("the sandbox user %s is root", b.user)}
	}
	b.uid, b.gid, b.isolated = uid, gid, true

	// Close the runner's own paths first, then open the way to the work
	// tree: a private folder above the work tree keeps o+x only.
	keep := []string{b.ws}
	if mc := GoDirs(o.Environ)["GOMODCACHE"]; mc != "" {
		keep = append(keep, mc)
	}
	for _, p := range o.Private {
		if p == "" || shared(p) {
			continue
		}
		if err := b.chmodOthers(p, 0); err != nil {
			return fmt.Errorf("isolation: close %s: %w", p, err)
		}
		if err := b.closeBeside(p, keep); err != nil {
			return fmt.Errorf("isolation: close %s: %w", p, err)
		}
	}
	for _, k := range keep[1:] {
		b.openWay(k)
	}
	for dir := filepath.Dir(b.ws); ; dir = filepath.Dir(dir) {
		// Only ever add the right to pass through: a shared folder such as
		// /tmp keeps every right it had.
		if err := b.chmodOthers(dir, b.othersBits(dir)|0o001); err != nil {
			return fmt.Errorf("isolation: open a way through %s: %w", dir, err)
		}
		if dir == filepath.Dir(dir) {
			break
		}
	}
	if err := b.handOver(); err != nil {
		return err
	}

	home, err := os.MkdirTemp("", "roadmap-sandbox-home-")
	if err != nil {
		return fmt.Errorf("isolation: sandbox HOME: %w", err)
	}
	b.home = home
	b.undo = append(b.undo, func() error { return removeHome(home) })
	for _, d := range []string{"tmp", ".cache", ".config", "go"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o700); err != nil {
			return fmt.Errorf("isolation: sandbox HOME: %w", err)
		}
	}
	if err := chownTree(home, uid, gid, nil); err != nil {
		return fmt.Errorf("isolation: sandbox HOME: %w", err)
	}
	// After the chown: the links share the runner's files, which must stay
	// the runner's (a chown through a link would hand the sandbox the
	// runner's own cache to poison).
	if o.GoCache != "" {
		seedCache(o.GoCache, filepath.Join(home, ".cache", "go-build"), uid, gid)
	}
	b.env = allowEnv(o.Environ, home, b.ws, b.user, filepath.Join(home, ".cache", "go-build"))
	return nil
}

// closeBeside closes, for a private folder p above a path in keep (the work
// tree under the runner's HOME, say), every entry beside the way down to it:
// the sandbox may pass through p to the work tree, so nothing else in p may
// be reachable by a name it can guess (~/.config/gh/hosts.yml, ~/.npmrc).
// The Go module cache is kept reachable, read-only, for builds.
func (b *Boundary) closeBeside(p string, keep []string) error {
	onWay := map[string]bool{}
	below := false
	for _, k := range keep {
		if k == p || !within(p, k) {
			continue
		}
		below = true
		for d := k; d != p && d != filepath.Dir(d); d = filepath.Dir(d) {
			onWay[d] = true
		}
	}
	if !below {
		return nil
	}
	return filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an entry the runner itself cannot read stays as it is
		}
		if path == p {
			return nil
		}
		if onWay[path] {
			if slices.Contains(keep, path) {
				return filepath.SkipDir // the work tree or the cache itself
			}
			return nil // a folder on the way: look inside it
		}
		if d.Type()&fs.ModeSymlink == 0 {
			if err := b.chmodOthers(path, 0); err != nil {
				return err
			}
		}
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
}

// openWay lets others pass through every folder above path.
func (b *Boundary) openWay(path string) {
	for dir := filepath.Dir(path); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		_ = b.chmodOthers(dir, b.othersBits(dir)|0o001)
	}
}

// shared reports whether closing p would close what every user needs: the
// root, the temp folder or the toolchains under /usr and /opt (a HOME of "/"
// in a container, say). Such a "private" path is left alone.
func shared(p string) bool {
	p = filepath.Clean(p)
	for _, need := range []string{os.TempDir(), "/usr", "/opt", "/bin", "/lib", "/etc"} {
		if within(p, filepath.Clean(need)) {
			return true
		}
	}
	return false
}

// othersBits returns the "others" permission bits of path (0 when it
// cannot be read).
func (b *Boundary) othersBits(path string) os.FileMode {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Mode().Perm() & 0o007
}

// chmodOthers sets the "others" bits of path to bits, keeping the rest. A
// path that does not exist is skipped. The change is not undone by Close:
// boundaries of several Jobs on one machine share these folders, and one
// closing must not take the way through from another still running. What
// stays is harmless: a private path stays closed to others, an ancestor of a
// work tree keeps the right to pass through (not to list).
func (b *Boundary) chmodOthers(path string, bits os.FileMode) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	old := fi.Mode() & (fs.ModePerm | fs.ModeSticky | fs.ModeSetgid | fs.ModeSetuid)
	mode := old&^0o007 | bits
	if mode == old {
		return nil
	}
	return os.Chmod(path, mode)
}

// handOver gives the work tree to the sandbox user: every file and folder
// but .git becomes its own, .git stays the runner's and loses any write bit
// for others, and the top folder stays the runner's with the sticky bit, so
// the sandbox can add files there but never rename or replace .git.
func (b *Boundary) handOver() error {
	fi, err := os.Lstat(b.ws)
	if err != nil {
		return fmt.Errorf("isolation: %w", err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	b.owner = [2]int{int(st.Uid), int(st.Gid)}
	top := fi.Mode() & (fs.ModePerm | fs.ModeSticky)
	gitDir := filepath.Join(b.ws, ".git")
	skip := func(p string) bool { return p == gitDir }

	if err := lockGitDir(gitDir, b.uid, b.owner); err != nil {
		return fmt.Errorf("isolation: protect %s: %w", gitDir, err)
	}
	b.undo = append(b.undo, func() error {
		// Whatever the sandbox made becomes the runner's again, so later
		// steps of the job (and roadmap's own git) own their work tree.
		err := chownTree(b.ws, b.owner[0], b.owner[1], skip)
		// Under sudo, roadmap's own git wrote .git as root: the job's user
		// gets it back too, for the steps after this one.
		gitErr := chownTree(gitDir, b.owner[0], b.owner[1], nil)
		if errors.Is(gitErr, fs.ErrNotExist) {
			gitErr = nil
		}
		return errors.Join(err, gitErr,
			os.Lchown(b.ws, b.owner[0], b.owner[1]), os.Chmod(b.ws, top))
	})
	if err := chownTree(b.ws, b.uid, b.gid, skip); err != nil {
		return fmt.Errorf("isolation: hand the work tree to %s: %w", b.user, err)
	}
	if err := os.Lchown(b.ws, b.owner[0], b.owner[1]); err != nil {
		return fmt.Errorf("isolation: %w", err)
	}
	return os.Chmod(b.ws, 0o777|fs.ModeSticky)
}

// lockGitDir makes .git the runner's: nothing in it owned by the sandbox
// user, nothing writable by others.
func lockGitDir(gitDir string, sandboxUID int, owner [2]int) error {
	return filepath.WalkDir(gitDir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == sandboxUID {
			if err := os.Lchown(p, owner[0], owner[1]); err != nil {
				return err
			}
		}
		if d.Type()&fs.ModeSymlink == 0 && fi.Mode().Perm()&0o022 != 0 {
			return os.Chmod(p, fi.Mode()&^0o022)
		}
		return nil
	})
}

// chownTree changes the owner of root's entries (not following symlinks),
// root itself included, skipping the subtrees skip names.
func chownTree(root string, uid, gid int, skip func(string) bool) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if skip != nil && skip(p) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		return os.Lchown(p, uid, gid)
	})
}

// seedCache links the runner's Go build cache into dst. The links share the
// runner's files, which stay the runner's and read-only to the sandbox; what
// the sandbox adds is its own and goes with its HOME. Any failure (another
// file system, an unreadable cache) leaves a cold cache, which is slower but
// correct.
func seedCache(src, dst string, uid, gid int) {
	if err := os.MkdirAll(dst, 0o700); err != nil || os.Lchown(dst, uid, gid) != nil {
		return
	}
	_ = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			// The folders are the sandbox's (it adds entries); the files
			// in them stay the runner's.
			if err := os.MkdirAll(target, 0o700); err != nil {
				return err
			}
			return os.Lchown(target, uid, gid)
		case d.Type().IsRegular() && d.Name() != "README" && !strings.HasPrefix(d.Name(), "trim"):
			if err := os.Link(p, target); err != nil && !errors.Is(err, fs.ErrExist) {
				return filepath.SkipAll
			}
		}
		return nil
	})
}

// ensureUser returns the sandbox user's uid and gid, creating the user (and
// a group of its own) when the machine lacks it. Without useradd the
// boundary uses a fixed number that no account has.
func ensureUser(ctx context.Context, name string) (int, int, error) {
	if u, err := user.Lookup(name); err == nil {
		return ids(u)
	}
	if path, err := exec.LookPath("useradd"); err == nil {
		out, err := exec.CommandContext(ctx, path, "--system", "--user-group", "--no-create-home",
			"--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name).CombinedOutput()
		// Exit 9: another Job made it first.
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 9) {
			return 0, 0, fmt.Errorf("create the sandbox user %s: %v: %s", name, err, strings.TrimSpace(string(out)))
		}
		u, err := user.Lookup(name)
		if err != nil {
			return 0, 0, fmt.Errorf("look up the sandbox user %s after creating it: %w", name, err)
		}
		return ids(u)
	}
	if _, err := user.LookupId(strconv.Itoa(fallbackID)); err == nil {
		return 0, 0, fmt.Errorf("no useradd to create %s, and uid %d belongs to an account", name, fallbackID)
	}
	return fallbackID, fallbackID, nil
}

func ids(u *user.User) (int, int, error) {
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, fmt.Errorf("sandbox user %s: %w", u.Username, err)
	}
	return uid, gid, nil
}
