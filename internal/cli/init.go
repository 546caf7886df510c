package cli

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/adopt"
)

// runInit sets a repository up for roadmap: `roadmap init [-R OWNER/REPO]
// [--dir DIR] [--dry-run] [--json]`. The work is internal/adopt's. With
// --json, stdout is the one object adopt.Result (docs/cli.md) and the
// progress lines go to stderr.
func runInit(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "init")
	dir := fs.String("dir", "", "the repository's work tree (default: the current directory)")
	dryRun := fs.Bool("dry-run", false, "print the files and changes without making them")
	asJSON := fs.Bool("json", false, "print what init did as one JSON object on stdout (docs/cli.md)")
	ref := fs.String("ref", "", "the `REF` the workflows pin roadmap to (default: this release's tag, else v1)")
	repoFlag(fs, env)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		env.Errorf("usage: roadmap init [-R OWNER/REPO] [--dir DIR] [--dry-run] [--json]")
		return ExitUsage
	}
	wd := env.workdir(*dir)
	if env.Getenv("GITHUB_REPOSITORY") == "" {
		if r := originRepo(ctx, wd); r != "" {
			env.Vars["GITHUB_REPOSITORY"] = r
		}
	}
	if *ref == "" {
		*ref = "v1"
		if releaseTag.MatchString(Version) {
			*ref = Version
		}
	}
	gh, err := env.gitHubClient(env.masker(), time.Time{})
	if err != nil {
		env.Errorf("%v", err)
		return ExitUsage
	}
	server := env.Getenv("GITHUB_SERVER_URL")
	if server == "" {
		server = "https://github.com"
	}
	out := env.Stdout
	if *asJSON {
		out = env.Stderr
	}
	res, err := adopt.Run(ctx, adopt.Options{Dir: wd, GitHub: gh, Repository: env.Getenv("GITHUB_REPOSITORY"),
		Server: server, Ref: *ref, DryRun: *dryRun, Out: out})
	if err != nil {
		env.Errorf("%v", err)
		return ExitInternal
	}
	if *asJSON {
		return env.JSON(res)
	}
	return ExitOK
}

var releaseTag = regexp.MustCompile(`^v\d+\.\d+\.\d+$`)

// originRepo is OWNER/REPO from the work tree's origin remote, "" when it
// names none: the gh CLI's guess when no -R is given.
func originRepo(ctx context.Context, dir string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "remote", "get-url", "origin").Output()
	if err != nil {
		return ""
	}
	u := strings.TrimSuffix(strings.TrimSpace(string(out)), ".git")
	if !strings.Contains(u, "://") && !scpRemote.MatchString(u) {
		return "" // a local path names no repository on a server
	}
	m := remoteRepo.FindStringSubmatch(u)
	if m == nil {
		return ""
	}
	return m[1] + "/" + m[2]
}

var scpRemote = regexp.MustCompile(`^[\w.-]+@[\w.-]+:`)

var remoteRepo = regexp.MustCompile(`[:/]([A-Za-z0-9][A-Za-z0-9-]*)/([A-Za-z0-9._-]+)$`)
