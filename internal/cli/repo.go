package cli

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// repository is OWNER/REPO of the repository a verb reads: -R (which sets
// GITHUB_REPOSITORY), else GITHUB_REPOSITORY, else GH_REPO (the gh CLI's
// variable, ghRepo), else the origin remote of the work tree (e.repoDir,
// else the workspace). GITHUB_REPOSITORY comes before GH_REPO: in a
// workflow it is the repository the run belongs to, and a GH_REPO set there
// for gh's steps must not send roadmap's Jobs elsewhere. One found in
// GH_REPO or on the remote is kept in GITHUB_REPOSITORY, so whatever reads
// the repository later in the run reads the same one. "" when none names
// one; an error when GH_REPO is set but names none.
func (e *Env) repository() (string, error) {
	if r := e.Getenv("GITHUB_REPOSITORY"); r != "" {
		return r, nil
	}
	if v := e.Getenv("GH_REPO"); v != "" {
		r, err := ghRepo(v, e.Getenv("GITHUB_SERVER_URL"))
		if err != nil {
			return "", err
		}
		e.Vars["GITHUB_REPOSITORY"] = r
		return r, nil
	}
	dir := e.repoDir
	if dir == "" {
		dir = e.workdir("")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := e.originRepository(ctx, dir)
	if r != "" {
		e.Vars["GITHUB_REPOSITORY"] = r
	}
	return r, nil
}

// ghRepo is OWNER/REPO from GH_REPO, which the gh CLI reads as
// [HOST/]OWNER/REPO. A HOST must be the server roadmap talks to (the host
// of server, GITHUB_SERVER_URL, else github.com): roadmap reads one server,
// and dropping another host's name would read a different repository.
func ghRepo(v, server string) (string, error) {
	parts := strings.Split(strings.TrimSpace(v), "/")
	if len(parts) == 3 {
		host := "github.com"
		if u, err := url.Parse(server); err == nil && u.Host != "" {
			host = u.Host
		}
		if !strings.EqualFold(parts[0], host) {
			return "", fmt.Errorf("GH_REPO %q names the host %s, but roadmap talks to %s (GITHUB_SERVER_URL): pass -R OWNER/REPO or set GH_REPO to OWNER/REPO", v, parts[0], host)
		}
		parts = parts[1:]
	}
	if len(parts) != 2 || !ownerName.MatchString(parts[0]) || !repoName.MatchString(parts[1]) || parts[1] == "." || parts[1] == ".." {
		return "", fmt.Errorf("GH_REPO %q is not [HOST/]OWNER/REPO", v)
	}
	return parts[0] + "/" + parts[1], nil
}

// originRepository is OWNER/REPO from the origin remote of the work tree
// dir, "" when there is none or it names no repository on a server. git
// runs without the verb's environment (no token reaches it) but PATH and
// HOME, so the person's url.*.insteadOf rewrites still apply.
func (e *Env) originRepository(ctx context.Context, dir string) string {
	cmd := exec.CommandContext(ctx, "git", "-C", dir, "remote", "get-url", "origin")
	cmd.Env = []string{"GIT_TERMINAL_PROMPT=0"}
	for _, k := range []string{"PATH", "HOME", "XDG_CONFIG_HOME"} {
		if v := e.Getenv(k); v != "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	var out bytes.Buffer
	cmd.Stdout = &limitedWriter{w: &out, n: 4096}
	if err := cmd.Run(); err != nil {
		return ""
	}
	line, _, _ := strings.Cut(out.String(), "\n")
	return remoteRepository(line)
}

// remoteRepository is OWNER/REPO from a git remote URL, "" when the URL
// names none: https://github.com/acme/widgets(.git),
// ssh://git@github.com/acme/widgets.git, git@github.com:acme/widgets.git.
// The URL is untrusted text (a clone's configuration): anything that is not
// exactly a server and an OWNER/REPO path (a local path, file://, a deeper
// path, a name GitHub would not take) is refused, and the URL itself, which
// may carry credentials, is never shown.
func remoteRepository(raw string) string {
	u := strings.TrimSpace(raw)
	if u == "" || len(u) > 2048 || strings.ContainsAny(u, " \t\r\n\x00") {
		return ""
	}
	var path string
	if strings.Contains(u, "://") {
		pu, err := url.Parse(u)
		if err != nil || pu.Host == "" {
			return ""
		}
		switch pu.Scheme {
		case "https", "http", "ssh", "git", "git+ssh", "ssh+git":
		default:
			return "" // file:// and the like name no repository on a server
		}
		path = pu.Path
	} else {
		m := scpRemote.FindStringSubmatch(u)
		if m == nil {
			return "" // a local path
		}
		path = m[1]
	}
	path = strings.TrimSuffix(strings.Trim(path, "/"), ".git")
	owner, repo, ok := strings.Cut(path, "/")
	if !ok || !ownerName.MatchString(owner) || !repoName.MatchString(repo) || repo == "." || repo == ".." {
		return ""
	}
	return owner + "/" + repo
}

// scpRemote is git's scp-like form, [user@]host:path, the host holding a dot
// or led by user@ (so that "C:" or "notes:x" is not taken for one).
var scpRemote = regexp.MustCompile(`^(?:[A-Za-z0-9._-]+@[A-Za-z0-9.-]+|[A-Za-z0-9-]+\.[A-Za-z0-9.-]+):([^:]*)$`)

// GitHub's rules for names: an owner is up to 39 letters, digits and
// inner hyphens; a repository up to 100 letters, digits, '.', '-', '_'.
var (
	ownerName = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?$`)
	repoName  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)
)

// limitedWriter keeps the first n bytes written to it and drops the rest.
type limitedWriter struct {
	w interface{ Write([]byte) (int, error) }
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}
