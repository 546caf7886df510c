package git

import (
	"context"
	"fmt"
	"strings"
)

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
