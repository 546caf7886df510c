package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Repo is a throwaway git repository act runs in: a snapshot of a source
// tree committed on main, with a bare repository as its origin. act reads
// GITHUB_SHA and GITHUB_REF from it; a run that pushes pushes to Remote.
type Repo struct {
	Dir    string // working tree act runs in
	Remote string // bare repository, the "origin" remote
	Name   string // owner/name the runs report as GITHUB_REPOSITORY
	SHA    string // the commit main points at
}

// PrepareRepo snapshots src into dir/work and dir/origin.git. The snapshot
// holds what a commit of src would hold now: tracked files and untracked
// files that are not ignored, as they are on disk. So a fresh clone and a
// work in progress are tested the same way, and ignored build output
// (bin/, .tools/) never reaches the run.
func PrepareRepo(ctx context.Context, src, dir, name string) (*Repo, error) {
	files, err := snapshotFiles(ctx, src)
	if err != nil {
		return nil, err
	}
	r := &Repo{
		Dir:    filepath.Join(dir, "work"),
		Remote: filepath.Join(dir, "origin.git"),
		Name:   name,
	}
	for _, f := range files {
		if err := copyEntry(filepath.Join(src, f), filepath.Join(r.Dir, f)); err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", f, err)
		}
	}
	steps := [][]string{
		{"-C", r.Dir, "init", "--quiet", "--initial-branch=main"},
		{"-C", r.Dir, "add", "--all"},
		{"-C", r.Dir, "commit", "--quiet", "--no-verify", "--message", "e2e snapshot"},
		{"init", "--quiet", "--bare", "--initial-branch=main", r.Remote},
		{"-C", r.Dir, "remote", "add", "origin", r.Remote},
		{"-C", r.Dir, "push", "--quiet", "origin", "main"},
	}
	for _, args := range steps {
		if _, err := git(ctx, args...); err != nil {
			return nil, fmt.Errorf("prepare repository %s: %w", r.Dir, err)
		}
	}
	sha, err := git(ctx, "-C", r.Dir, "rev-parse", "HEAD")
	if err != nil {
		return nil, fmt.Errorf("prepare repository %s: %w", r.Dir, err)
	}
	r.SHA = strings.TrimSpace(sha)
	return r, nil
}

// snapshotFiles lists the paths, relative to src, a commit of src would hold.
func snapshotFiles(ctx context.Context, src string) ([]string, error) {
	out, err := git(ctx, "-C", src, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		return nil, fmt.Errorf("list files of %s: %w", src, err)
	}
	var files []string
	for _, f := range strings.Split(out, "\x00") {
		if f == "" {
			continue
		}
		// Deleted but not yet committed: a commit would not hold it either.
		if _, err := os.Lstat(filepath.Join(src, f)); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		files = append(files, f)
	}
	return files, nil
}

// copyEntry copies one regular file (keeping its mode) or symbolic link.
func copyEntry(from, to string) error {
	info, err := os.Lstat(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(from)
		if err != nil {
			return err
		}
		return os.Symlink(target, to)
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("not a regular file (%s)", info.Mode())
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// git runs git isolated from the user's and the system's configuration, with
// a fixed identity, so the snapshot commits the same way on every machine.
func git(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=roadmap e2e",
		"GIT_AUTHOR_EMAIL=e2e@roadmap.invalid",
		"GIT_COMMITTER_NAME=roadmap e2e",
		"GIT_COMMITTER_EMAIL=e2e@roadmap.invalid",
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
