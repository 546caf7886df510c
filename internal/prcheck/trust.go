package prcheck

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/git"
)

// TrustedConfig loads the configuration a run of a change's code may rely
// on: its trust settings (isolation, the shell policy, the configured check
// commands) decide how the change's own code runs, so they never come from
// the change's tree. A PR that says `isolation: none` in its own
// .github/roadmap.yml would otherwise run its verify commands as the
// runner's user, next to the token.
//
// path names the file (relative to top, the repository's top level, or
// absolute); explicit says a person named it (--config). A file outside the
// work tree is the workflow's own and is read from disk. A file inside it is
// read as the base revision base holds it, through git's object database,
// never the work tree: absent there, the defaults apply (the strictest
// isolation), and a file a person named must exist there. With no base in
// the checkout the defaults apply too. source says, for the log, which
// configuration was read.
func TrustedConfig(ctx context.Context, repo *git.Repo, top, path string, explicit bool, base string) (cfg *config.Config, source string, err error) {
	if path == "" {
		path = config.DefaultPath
	}
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(top, path)
	}
	rel, err := filepath.Rel(top, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		// The workflow's own file, outside the checkout.
		if explicit {
			cfg, err = config.LoadExplicit(abs)
		} else {
			cfg, err = config.Load(abs)
		}
		return cfg, abs, err
	}
	rel = filepath.ToSlash(rel)
	if repo == nil || base == "" {
		return config.Default(), "the defaults (the base branch is not in the checkout, and the change's own " + rel + " is not trusted)", nil
	}
	data, found, err := repo.ReadAt(ctx, base, rel)
	switch {
	case err != nil:
		return nil, "", fmt.Errorf("read the configuration at the base: %w", err)
	case !found && explicit:
		return nil, "", fmt.Errorf("%s: not in the base branch's tree (%s); the change's own configuration is not trusted", rel, shortSHA(base))
	case !found:
		return config.Default(), "the defaults (the base branch has no " + rel + ")", nil
	}
	where := rel + " at the base " + shortSHA(base)
	cfg, err = config.Parse(where, data)
	return cfg, where, err
}

// BaseCommit resolves a base branch name to a commit in repo: the remote's
// branch first, then a local one; "" when the checkout has neither.
func BaseCommit(ctx context.Context, repo *git.Repo, branch string) string {
	if repo == nil || branch == "" {
		return ""
	}
	for _, ref := range []string{"refs/remotes/origin/" + branch, branch} {
		if sha, err := repo.RevParse(ctx, ref); err == nil {
			return sha
		}
	}
	return ""
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
