package git

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// WorkTreeTree writes the work tree as a commit would stage it (the ignore
// rules applied, untracked files included, the gitlinks of HEAD left as they
// are) into a tree object and returns its id, leaving the index and HEAD as
// they are. A group's checks run before its commit: this is the tree the
// commit would hold, for a Worktree.Overlay of what the group has written so
// far.
func (r *Repo) WorkTreeTree(ctx context.Context) (string, error) {
	tmp, err := os.MkdirTemp("", "roadmap-index-")
	if err != nil {
		return "", fmt.Errorf("snapshot the work tree: %w", err)
	}
	defer os.RemoveAll(tmp)
	// A private index: the repository's own is not touched. Starting it from
	// HEAD lets add --all hash only what changed.
	// It never talks to the remote: no credential.
	in := *r
	in.indexFile, in.remoteAuth = filepath.Join(tmp, "index"), nil
	if _, err := in.run(ctx, nil, "read-tree", "HEAD"); err != nil {
		return "", fmt.Errorf("snapshot the work tree: %w", err)
	}
	// Not refused here: the commit that follows refuses a nested repository,
	// and a new gitlink in a snapshot runs nothing.
	links, err := in.indexGitlinks(ctx)
	if err != nil {
		return "", fmt.Errorf("snapshot the work tree: %w", err)
	}
	if err := in.addAll(ctx, links); err != nil {
		return "", fmt.Errorf("snapshot the work tree: %w", err)
	}
	out, err := in.run(ctx, nil, "write-tree")
	if err != nil {
		return "", fmt.Errorf("snapshot the work tree: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}
