package githubfake

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// readBranch reads refs/heads/<branch> of the bare repository gitDir from
// its files, as git stores them: the loose ref, else the packed-refs line.
// It answers what `git rev-parse --verify --quiet refs/heads/<branch>` does
// without starting git, which the fake asks on most requests (a pull
// request's head and base, a ref to resolve): a test's Job made a hundred
// or more of them. ok is false when the files cannot tell (a name git
// would refuse or read otherwise, a symbolic ref, a repository not in the
// files format), and the caller asks git.
func readBranch(gitDir, branch string) (sha string, ok bool) {
	if !plainBranch(branch) {
		return "", false
	}
	if _, err := os.Stat(filepath.Join(gitDir, "reftable")); err == nil {
		return "", false
	}
	ref := "refs/heads/" + branch
	data, err := os.ReadFile(filepath.Join(gitDir, filepath.FromSlash(ref)))
	switch {
	case err == nil:
		s := strings.TrimSpace(string(data))
		if !shaRE().MatchString(s) {
			return "", false // a symbolic ref, or a file git would not take
		}
		return strings.ToLower(s), true
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.EISDIR), errors.Is(err, syscall.ENOTDIR):
		// No loose ref (refs/heads/a may be a directory of others, or
		// refs/heads/a/b lie under a ref a): packed-refs may hold it.
	default:
		return "", false
	}
	packed, err := os.ReadFile(filepath.Join(gitDir, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", true // no such branch
	}
	if err != nil {
		return "", false
	}
	sc := bufio.NewScanner(bytes.NewReader(packed))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || line[0] == '^' {
			continue
		}
		s, name, found := strings.Cut(line, " ")
		if !found || name != ref {
			continue
		}
		if !shaRE().MatchString(s) {
			return "", false
		}
		return strings.ToLower(s), true
	}
	if sc.Err() != nil {
		return "", false
	}
	return "", true // no such branch
}

// plainBranch reports whether name is a branch name the files answer for
// plainly: components of letters, digits and . _ - that git's ref rules
// allow. Anything else (a .. or a component starting with a dot, a .lock
// suffix, @{, a control character) is left to git.
func plainBranch(name string) bool {
	if name == "" || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.Contains(name, "//") {
		return false
	}
	for _, c := range strings.Split(name, "/") {
		if c == "" || c[0] == '.' || c[0] == '-' || strings.HasSuffix(c, ".lock") || strings.HasSuffix(c, ".") || strings.Contains(c, "..") {
			return false
		}
		for _, r := range c {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
				return false
			}
		}
	}
	return name != "HEAD"
}
