//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

func platform() Probe { return Probe{OS: "linux", Euid: os.Geteuid()} }

func confine(cmd *exec.Cmd, b *Boundary) {
	if b.isolated {
		b.confineKernel(cmd)
		return
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if cmd.Cancel == nil {
		return // not made with CommandContext: nothing cancels it
	}
	cmd.Cancel = func() error {
		if cmd.Process != nil && cmd.Process.Pid > 0 {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		return nil
	}
}

func (b *Boundary) openUser(ctx context.Context, o Options) error {
	k := probeKernel()
	if k.err != nil {
		return &Unavailable{Reason: k.err.Error()}
	}
	b.abi = k.abi
	lease, err := takeUID()
	if err != nil {
		return &Unavailable{Reason: err.Error()}
	}
	b.undo = append(b.undo, func() error {
		if b.keepUID {
			return nil // held until roadmap exits (Close)
		}
		return lease.release()
	})
	b.uid, b.gid, b.isolated = lease.uid, lease.uid, true
	if b.user == "" {
		b.user = fmt.Sprintf("%s-%d", DefaultUser, b.uid)
	}

	// The runner's files need no closing: Landlock lets the commands read
	// only the folders below, whoever owns the rest. The work tree's
	// ancestors only gain the right to pass through (never lose one: a
	// second boundary in the same Job must not take the first's way).
	for dir := filepath.Dir(b.ws); ; dir = filepath.Dir(dir) {
		if err := addOthersX(dir); err != nil {
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
	if err := chownTree(home, b.uid, b.gid); err != nil {
		return fmt.Errorf("isolation: sandbox HOME: %w", err)
	}
	// After the chown: the links share the runner's files, which must stay
	// the runner's (a chown through a link would hand the sandbox the
	// runner's own cache to poison).
	if o.GoCache != "" {
		seedCache(o.GoCache, filepath.Join(home, ".cache", "go-build"), b.uid, b.gid)
	}
	b.env = allowEnv(o.Environ, home, b.ws, b.user, filepath.Join(home, ".cache", "go-build"))
	b.rw = []string{b.ws, home}
	b.ro = readable(o.Environ, o.Private)
	for _, mc := range []string{GoDirs(o.Environ)["GOMODCACHE"]} {
		if mc != "" {
			b.ro = append(b.ro, mc)
			for dir := filepath.Dir(mc); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
				_ = addOthersX(dir)
			}
		}
	}
	return nil
}

// systemDirs are read (and executed from) by every command: the programs,
// libraries and configuration of the machine, the toolchains under /opt, and
// the namespace's own /proc.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/proc", "/sys/fs/cgroup", "/dev/pts"}

// readable are the folders a command may read: the system's, each absolute
// PATH entry (not one that holds a private path: HOME itself on PATH) and
// the Go toolchain that PATH's go belongs to.
func readable(environ, private []string) []string {
	dirs := append([]string(nil), systemDirs...)
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	holdsPrivate := func(dir string) bool {
		for _, p := range private {
			if p != "" && within(dir, filepath.Clean(p)) {
				return true
			}
		}
		return false
	}
	for _, dir := range filepath.SplitList(env["PATH"]) {
		if dir == "" || !filepath.IsAbs(dir) || holdsPrivate(filepath.Clean(dir)) {
			continue
		}
		dirs = append(dirs, filepath.Clean(dir))
		// A go on PATH: its GOROOT (the folder above bin with a src/runtime).
		if real, err := filepath.EvalSymlinks(filepath.Join(dir, "go")); err == nil {
			root := filepath.Dir(filepath.Dir(real))
			if fi, err := os.Stat(filepath.Join(root, "src", "runtime")); err == nil && fi.IsDir() && !holdsPrivate(root) {
				dirs = append(dirs, root)
			}
		}
	}
	if g := env["GOROOT"]; g != "" && filepath.IsAbs(g) && !holdsPrivate(filepath.Clean(g)) {
		dirs = append(dirs, filepath.Clean(g))
	}
	return dirs
}

// addOthersX lets others pass through dir, keeping every other bit: a
// shared folder such as /tmp keeps the rights it had. It is not undone by
// Close: boundaries of several Jobs share these folders, and the right to
// pass through (not to list) is harmless.
func addOthersX(dir string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	old := fi.Mode() & (fs.ModePerm | fs.ModeSticky | fs.ModeSetgid | fs.ModeSetuid)
	if old&0o001 != 0 {
		return nil
	}
	return os.Chmod(dir, old|0o001)
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
	// .git and roadmap's own folder stay the runner's: the sandbox may
	// neither change the repository roadmap's git and the job's later steps
	// use, nor the actions and scripts those steps run.
	// So do the repositories below the top that were there before (a
	// checked-out submodule's .git): the sandbox may replace one (Close
	// then removes the replacement) but not change it in place.
	skip := []string{".git", RunDir}
	before, err := nestedGits(b.ws)
	if err != nil {
		return fmt.Errorf("isolation: %w", err)
	}
	for p := range before {
		skip = append(skip, p)
	}
	for _, own := range skip {
		if err := lockGitDir(filepath.Join(b.ws, filepath.FromSlash(own)), b.uid, b.owner); err != nil {
			return fmt.Errorf("isolation: protect %s: %w", filepath.Join(b.ws, own), err)
		}
	}
	b.undo = append(b.undo, func() error {
		// Whatever the sandbox made becomes the runner's again, so later
		// steps of the job (and roadmap's own git) own their work tree.
		err := chownTree(b.ws, b.owner[0], b.owner[1], skip...)
		// Under sudo, roadmap's own git wrote .git as root: the job's user
		// gets it back too, for the steps after this one.
		gitErr := chownGit(gitDir, b.owner[0], b.owner[1])
		if errors.Is(gitErr, fs.ErrNotExist) {
			gitErr = nil
		}
		return errors.Join(err, gitErr,
			os.Lchown(b.ws, b.owner[0], b.owner[1]), os.Chmod(b.ws, top))
	})
	// Runs before the hand-back above (undo runs last first), once Close has
	// ended the boundary's processes: no repository the sandbox made below
	// the top survives the boundary, whoever would ask it later.
	b.undo = append(b.undo, func() error {
		removed, err := removePlanted(b.ws, before)
		b.planted = append(b.planted, removed...)
		if err != nil {
			return fmt.Errorf("isolation: %w", err)
		}
		return nil
	})
	if err := chownTree(b.ws, b.uid, b.gid, skip...); err != nil {
		return fmt.Errorf("isolation: hand the work tree to %s: %w", b.user, err)
	}
	if err := os.Lchown(b.ws, b.owner[0], b.owner[1]); err != nil {
		return fmt.Errorf("isolation: %w", err)
	}
	return os.Chmod(b.ws, 0o777|fs.ModeSticky)
}

// lockGitDir makes .git (or RunDir) the runner's: nothing in it owned by
// the sandbox user, nothing writable by others. The walk is inside an os.Root on .git,
// so no entry swapped for a symlink takes it elsewhere; a .git that is
// itself a symlink is refused.
func lockGitDir(gitDir string, sandboxUID int, owner [2]int) error {
	fi, err := os.Lstat(gitDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symlink", gitDir)
	case !fi.IsDir():
		// A linked worktree's .git file names its git folder.
		return lockEntry(nil, gitDir, fi, sandboxUID, owner)
	}
	r, err := os.OpenRoot(gitDir)
	if err != nil {
		return err
	}
	defer r.Close()
	return fs.WalkDir(r.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := r.Lstat(p)
		if err != nil {
			return err
		}
		return lockEntry(r, p, fi, sandboxUID, owner)
	})
}

// lockEntry gives one entry of .git (inside r, or by path when r is nil)
// back to the runner and takes others' write bits away.
func lockEntry(r *os.Root, p string, fi fs.FileInfo, sandboxUID int, owner [2]int) error {
	lchown, chmod := os.Lchown, os.Chmod
	if r != nil {
		lchown, chmod = r.Lchown, r.Chmod
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == sandboxUID {
		if err := lchown(p, owner[0], owner[1]); err != nil {
			return err
		}
	}
	if fi.Mode()&fs.ModeSymlink == 0 && fi.Mode().Perm()&0o022 != 0 {
		return chmod(p, fi.Mode()&^0o022)
	}
	return nil
}

// chownTree changes the owner of root's entries (never following a
// symlink), root itself included, skipping the entries whose slash paths
// relative to root are in skip, and what is below them. The walk is relative to an os.Root: a folder swapped for a symlink
// mid-walk cannot lead it out of root, whatever the sandbox left.
func chownTree(root string, uid, gid int, skip ...string) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	return fs.WalkDir(r.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != "." && slices.Contains(skip, p) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		return r.Lchown(p, uid, gid)
	})
}

// chownGit gives .git (a folder, or a linked worktree's file) to uid.
func chownGit(gitDir string, uid, gid int) error {
	fi, err := os.Lstat(gitDir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return os.Lchown(gitDir, uid, gid)
	}
	return chownTree(gitDir, uid, gid)
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
