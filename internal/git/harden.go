package git

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
)

// hardened are the settings every git command of the runner runs with. The
// work tree is hostile input (the model writes it, and under `isolation:
// none` its .git too): nothing it plants may run inside roadmap's git, which
// holds the token. Command-line settings win over every configuration file.
var hardened = []string{
	"-c", "core.hooksPath=/dev/null", // no hook runs, --no-verify or not
	"-c", "core.fsmonitor=false",
	"-c", "core.pager=cat",
	"-c", "core.editor=true",
	"-c", "sequence.editor=true",
	"-c", "core.askPass=",
	"-c", "credential.helper=",
	"-c", "diff.external=",
	"-c", "protocol.ext.allow=never",
	"-c", "protocol.file.allow=always", // the local bare remotes of tests and the demo
	// Nested repositories are inert: a gitlink's repository is the model's,
	// config and all, and git asks it whether it is dirty (running its
	// filters) on status and diff, or pushes and fetches it. The settings
	// are the defaults of the porcelain; status and diff also pass
	// --ignore-submodules=all, which a .gitmodules `ignore` cannot override.
	"-c", "diff.ignoreSubmodules=all",
	"-c", "diff.submodule=short",
	"-c", "status.submoduleSummary=false",
	"-c", "submodule.recurse=false",
	"-c", "fetch.recurseSubmodules=false",
	"-c", "push.recurseSubmodules=no",
	// The work tree belongs to the sandbox user while a boundary is open;
	// roadmap's git is the one that may trust it.
	"-c", "safe.directory=*",
}

// executingKeys are repository configuration keys that make git run a
// program, or read more configuration from elsewhere, and that the hardened
// settings do not override. The runner takes the repository's config as it
// finds it at Open (before any model-written command ran: git-lfs's filters
// are ordinary there) and refuses to run git once one of these keys appears
// or changes: the sandbox user cannot write .git, so a change means the
// boundary is off (`isolation: none`) and the work was hostile. Matching is
// on the lower-cased key; "*" stands for a subsection.
var executingKeys = []string{
	"filter.*.clean", "filter.*.smudge", "filter.*.process",
	"diff.*.command", "diff.*.textconv", "merge.*.driver",
	"core.sshcommand", "core.gitproxy", "gpg.program", "gpg.*.program",
	"include.path", "includeif.*.path", "uploadpack.packobjectshook",
	"remote.*.uploadpack", "remote.*.receivepack", "remote.*.url", "remote.*.pushurl",
	"core.worktree", "core.attributesfile", "core.excludesfile",
}

// credentialKeys are removed from the repository's own config at Open:
// actions/checkout persists the token there as an extraheader unless told
// not to, and the sandbox user can read .git.
var credentialKeys = []string{"http.*.extraheader", "http.extraheader"}

func matchKey(pattern, key string) bool {
	ps, ks := strings.Split(pattern, "."), strings.Split(key, ".")
	if len(ps) == 2 && len(ks) >= 2 {
		// "pager.*" matches pager.log; "alias.*" matches alias.x.
		return ps[0] == ks[0] && (ps[1] == "*" || (len(ks) == 2 && ps[1] == ks[1]))
	}
	if len(ps) != 3 || len(ks) < 3 {
		return false
	}
	return ps[0] == ks[0] && ps[2] == ks[len(ks)-1] && (ps[1] == "*" || ps[1] == strings.Join(ks[1:len(ks)-1], "."))
}

func matchAny(patterns []string, key string) bool {
	for _, p := range patterns {
		if matchKey(p, key) {
			return true
		}
	}
	return false
}

// configStamp identifies a version of .git/config without reading it.
type configStamp struct {
	ino, size int64
	mtime     int64
}

func stampOf(path string) configStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return configStamp{}
	}
	st := configStamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if s, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = int64(s.Ino)
	}
	return st
}

// localConfig lists the entries of the repository's own config file (not
// includes, not the user's or the system's) as "key=value" lines, keys
// lower-cased.
func (r *Repo) localConfig(ctx context.Context) ([]string, error) {
	out, err := r.exec(ctx, nil, false, "config", "--local", "--no-includes", "--list", "-z")
	if err != nil {
		return nil, fmt.Errorf("read the repository's config: %w", err)
	}
	var entries []string
	for _, e := range strings.Split(string(out), "\x00") {
		if e == "" {
			continue
		}
		k, v, _ := strings.Cut(e, "\n")
		entries = append(entries, strings.ToLower(k)+"="+v)
	}
	return entries, nil
}

// executing returns the entries of config whose keys make git run something.
func executing(config []string) []string {
	var out []string
	for _, e := range config {
		k, _, _ := strings.Cut(e, "=")
		if matchAny(executingKeys, k) {
			out = append(out, e)
		}
	}
	sort.Strings(out)
	return out
}

// audit refuses to go on once the repository's config gained or changed a
// key that runs a program since Open. It reads the config again only when
// the file changed since the last audit.
func (r *Repo) audit(ctx context.Context) error {
	if r.gitDir == "" {
		return nil
	}
	st := stampOf(filepath.Join(r.gitDir, "config"))
	if r.audited && st == r.stamp {
		return nil
	}
	config, err := r.localConfig(ctx)
	if err != nil {
		return err
	}
	now := executing(config)
	if !r.audited {
		r.trusted = now
	} else if !slices.Equal(now, r.trusted) {
		var planted []string
		for _, e := range now {
			if !slices.Contains(r.trusted, e) {
				k, _, _ := strings.Cut(e, "=")
				planted = append(planted, k)
			}
		}
		return fmt.Errorf("the repository's .git/config changed during the Job (%s), which could make roadmap's git run a program; roadmap refuses to run git on it (docs/isolation.md)", strings.Join(planted, ", "))
	}
	r.stamp, r.audited = st, true
	return nil
}

// scrubCredentials removes persisted credentials from the repository's own
// config: the runner authenticates its pushes through the environment.
func (r *Repo) scrubCredentials(ctx context.Context) error {
	config, err := r.localConfig(ctx)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, e := range config {
		k, _, _ := strings.Cut(e, "=")
		if !matchAny(credentialKeys, k) || seen[k] {
			continue
		}
		seen[k] = true
		if _, err := r.exec(ctx, nil, false, "config", "--local", "--unset-all", k); err != nil {
			return fmt.Errorf("remove the persisted credential %s from .git/config: %w", k, err)
		}
	}
	return nil
}
