package git

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// NestedRepository is a commit refused because the work tree holds a git
// repository below its top (a `.git` file, directory or symlink), or the
// index a gitlink (a submodule) the commit was not asked to add. Committing
// either records a gitlink, and git consults a gitlink's repository, whose
// own config (a filter, an fsmonitor, a hook) the model wrote, on every later
// status and diff. Nothing was staged.
type NestedRepository struct {
	// Path is slash-separated, relative to the top of the work tree: the
	// nested `.git` ("sub/.git"), or the gitlink ("sub") when Gitlink.
	Path    string
	Gitlink bool
}

func (e *NestedRepository) Error() string {
	// %q: the path is the model's, and the message ends up in the record,
	// the stop comment and the log, on one line.
	if e.Gitlink {
		return fmt.Sprintf("refuse to commit: the index holds %q as a gitlink (a submodule) that the plan did not ask to add (docs/isolation.md)", e.Path)
	}
	return fmt.Sprintf("refuse to commit: %q is a git repository nested in the work tree; roadmap commits one only when the plan's group adds a submodule (docs/isolation.md)", e.Path)
}

// FailureClass is the failure class of internal/failure, by name: unknown,
// which stops the item and keeps all state. The model made the repository;
// no automatic action undoes that (a repair round has no check log to give
// back, and a continuation meets the same tree or loses the group's work),
// and a person should see an attempt to plant one. Answering by name also
// keeps the classifier from reading a class into the model-written path.
func (e *NestedRepository) FailureClass() string { return "unknown" }

// maxWalk bounds the entries the search for nested repositories visits
// outside ignored directories; a larger work tree is refused, not half
// checked.
const maxWalk = 1 << 21

var errWalkBound = fmt.Errorf("the work tree has more than %d entries outside ignored directories", maxWalk)

// indexGitlinks returns the paths the index holds as gitlinks, each once.
func (r *Repo) indexGitlinks(ctx context.Context) ([]string, error) {
	out, err := r.run(ctx, nil, "ls-files", "--stage", "-z")
	if err != nil {
		return nil, fmt.Errorf("list the index: %w", err)
	}
	var links []string
	for _, e := range strings.Split(string(out), "\x00") {
		// "<mode> <object> <stage>\t<path>"
		meta, path, ok := strings.Cut(e, "\t")
		if ok && strings.HasPrefix(meta, "160000 ") && (len(links) == 0 || links[len(links)-1] != path) {
			links = append(links, path)
		}
	}
	return links, nil
}

// addAll stages the work tree as `git add --all` would, except the gitlinks
// the index already holds (links): git asks such a gitlink's repository
// whether it is dirty while it stages, and no .gitmodules or config setting
// stops that, so they are left out of the pathspec and stay as they are.
func (r *Repo) addAll(ctx context.Context, links []string) error {
	spec := []string{"."}
	for _, p := range links {
		spec = append(spec, ":(exclude,literal)"+p)
	}
	// Pathspecs on stdin: a repository may hold many submodules.
	_, err := r.run(ctx, []byte(strings.Join(spec, "\x00")+"\x00"), "add", "--all", "--pathspec-from-file=-", "--pathspec-file-nul")
	return err
}

// refuseNested returns a *NestedRepository for the first `.git` below the
// top of the work tree. It looks outside the gitlinks of the index (links:
// a checked-out submodule's `.git` is its own) and outside ignored
// directories (`git add --all` records nothing there, and tools such as
// terraform keep clones in them). The walk is inside the work tree
// (os.Root), follows no symlink (a symlink named `.git` is found, not
// followed) and is bounded.
func (r *Repo) refuseNested(ctx context.Context, links []string) error {
	skip := map[string]bool{}
	for _, p := range links {
		skip[p] = true
	}
	ignored, err := r.run(ctx, nil, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory")
	if err != nil {
		return fmt.Errorf("look for nested repositories: list ignored directories: %w", err)
	}
	for _, p := range strings.Split(string(ignored), "\x00") {
		if dir, ok := strings.CutSuffix(p, "/"); ok {
			skip[dir] = true
		}
	}
	root, err := os.OpenRoot(r.Dir)
	if err != nil {
		return fmt.Errorf("look for nested repositories: %w", err)
	}
	defer root.Close()
	found, n := "", 0
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if n++; n > maxWalk {
			return errWalkBound
		}
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		switch {
		case p == ".":
			return nil
		case strings.EqualFold(d.Name(), ".git"): // a case-insensitive file system opens .GIT for .git
			if !strings.Contains(p, "/") { // the repository's own
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			found = p
			return fs.SkipAll
		case d.IsDir() && skip[p]:
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("look for nested repositories: %w", err)
	}
	if found != "" {
		return &NestedRepository{Path: found}
	}
	return nil
}

// refuseNewGitlink returns a *NestedRepository for the first gitlink the
// index holds that HEAD does not hold as it is: one added, retargeted or
// made from a file. It compares the index with HEAD only (--cached), so no
// gitlink's repository is consulted, and with --ignore-submodules=none, so a
// .gitmodules `ignore = all` does not hide one.
func (r *Repo) refuseNewGitlink(ctx context.Context, links []string) error {
	if len(links) == 0 {
		return nil
	}
	born, err := r.headExists(ctx)
	if err != nil {
		return err
	}
	if !born {
		return &NestedRepository{Path: links[0], Gitlink: true}
	}
	out, err := r.run(ctx, nil, "diff-index", "--cached", "--raw", "-z", "--no-renames", "--ignore-submodules=none", "HEAD", "--")
	if err != nil {
		return fmt.Errorf("compare the index's gitlinks with HEAD: %w", err)
	}
	fields := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		// ":<old mode> <new mode> <old object> <new object> <status>", then the path
		if meta := strings.Fields(fields[i]); len(meta) >= 2 && meta[1] == "160000" {
			return &NestedRepository{Path: fields[i+1], Gitlink: true}
		}
	}
	return nil
}

func (r *Repo) headExists(ctx context.Context) (bool, error) {
	_, err := r.run(ctx, nil, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("resolve HEAD: %w", err)
	}
	return true, nil
}

// stage stages every change of the work tree for a commit. Unless
// submodule, it refuses (*NestedRepository, nothing staged) a nested
// repository or a gitlink HEAD does not have; a repository that appears
// while it stages is refused too, and the index is given back as HEAD has
// it.
func (r *Repo) stage(ctx context.Context, submodule bool) error {
	links, err := r.indexGitlinks(ctx)
	if err != nil {
		return err
	}
	if !submodule {
		if err := r.refuseNested(ctx, links); err != nil {
			return err
		}
		if err := r.refuseNewGitlink(ctx, links); err != nil {
			return err
		}
	}
	if err := r.addAll(ctx, links); err != nil {
		return err
	}
	if submodule {
		return nil
	}
	after, err := r.indexGitlinks(ctx)
	if err != nil {
		return err
	}
	if err := r.refuseNewGitlink(ctx, after); err != nil {
		tree := "HEAD"
		if born, _ := r.headExists(ctx); !born {
			tree = "--empty"
		}
		if _, rerr := r.run(ctx, nil, "read-tree", tree); rerr != nil {
			return errors.Join(err, fmt.Errorf("unstage: %w", rerr))
		}
		return err
	}
	return nil
}
