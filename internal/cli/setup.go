package cli

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/spf13/pflag"
)

// What the GitHub-facing verbs share: the masker built from the environment
// and a GitHub client for GITHUB_REPOSITORY at GITHUB_API_URL.

// environ returns the environment as KEY=VALUE lines, sorted.
func (e *Env) environ() []string {
	out := make([]string, 0, len(e.Vars))
	for k, v := range e.Vars {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// masker masks the secret families, the value of every secret-looking
// variable in the environment (GITHUB_TOKEN, model keys, …) and extra (the
// values of variables the configuration names as keys).
func (e *Env) masker(extra ...string) *redact.Masker {
	return redact.New(redact.Config{Secrets: append(redact.SecretsFromEnv(e.environ()), extra...)})
}

// repoFlag adds -R and --repo OWNER/REPO to a verb that reads GitHub: the
// repository to read, over GITHUB_REPOSITORY, GH_REPO and the origin remote.
func repoFlag(fs *pflag.FlagSet, env *Env) {
	repoFlagUsage(fs, env, "the repository `OWNER/REPO` (default: $GITHUB_REPOSITORY, else $GH_REPO, else the origin remote's)")
}

// repoFlagUsage is repoFlag with the verb's own help text.
func repoFlagUsage(fs *pflag.FlagSet, env *Env, usage string) {
	set := func(s string) error {
		owner, repo, ok := strings.Cut(s, "/")
		if !ok || owner == "" || repo == "" || strings.ContainsAny(repo, "/ ") {
			return fmt.Errorf("%q is not OWNER/REPO", s)
		}
		env.Vars["GITHUB_REPOSITORY"] = s
		return nil
	}
	fs.FuncP("repo", "R", usage, set)
}

// issueArg is the one ISSUE argument of a verb's positional arguments pos,
// "12" or "#12"; ok is false when pos is not one issue number, usage or
// the error said.
func issueArg(env *Env, pos []string, usage string) (n int, ok bool) {
	if len(pos) != 1 {
		env.Errorf("%s", usage)
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(pos[0], "#"))
	if err != nil || n <= 0 {
		env.Errorf("%q is not an issue number", pos[0])
		return 0, false
	}
	return n, true
}

// workdir is the workspace: the flag, else GITHUB_WORKSPACE, else the current directory.
func (e *Env) workdir(flag string) string {
	if flag != "" {
		return flag
	}
	if w := e.Getenv("GITHUB_WORKSPACE"); w != "" {
		return w
	}
	wd, _ := os.Getwd()
	return wd
}

// runURL links a workflow run on the server the environment names; "" when
// it names none.
func (e *Env) runURL(runID int64) string {
	server, repo := e.Getenv("GITHUB_SERVER_URL"), e.Getenv("GITHUB_REPOSITORY")
	if server == "" || repo == "" || runID <= 0 {
		return ""
	}
	return fmt.Sprintf("%s/%s/actions/runs/%d", strings.TrimSuffix(server, "/"), repo, runID)
}

// recordCommentInput reads the record comment's id handed to a continuation
// as the dispatch input record-comment; 0 when absent.
func recordCommentInput(inputs map[string]string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(inputs["record-comment"]), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}
