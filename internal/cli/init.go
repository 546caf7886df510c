package cli

import (
	"context"
	"regexp"
	"time"

	"github.com/roadmap-dev/roadmap/internal/adopt"
)

// runInit sets a repository up for roadmap: `roadmap init [-R OWNER/REPO]
// [--workdir DIR] [--dry-run] [--json]`. The work is internal/adopt's. With
// --json, stdout is the one object adopt.Result (docs/cli.md) and the
// progress lines go to stderr.
func runInit(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "init")
	dir := fs.StringP("workdir", "C", "", "the repository checkout (default $GITHUB_WORKSPACE or .)")
	dryRun := fs.Bool("dry-run", false, "print the files and changes without making them")
	asJSON := fs.Bool("json", false, "print what init did as one JSON object on stdout (docs/cli.md)")
	ref := fs.String("ref", "", "the `REF` the workflows pin roadmap to (default: this release's tag, else v1)")
	repoFlag(fs, env)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		env.Errorf("usage: roadmap init [-R OWNER/REPO] [--workdir DIR] [--dry-run] [--json]")
		return ExitUsage
	}
	wd := env.workdir(*dir)
	env.repoDir = wd
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
		Server: server, Ref: *ref, DryRun: *dryRun, Out: out, Now: time.Now()})
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
