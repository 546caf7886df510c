package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/github"
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

// gitHubClient is a client for the repository the environment names: -R,
// else GITHUB_REPOSITORY, else the origin remote of the work tree
// (e.repository).
func (e *Env) gitHubClient(m *redact.Masker, deadline time.Time) (*github.Client, error) {
	repoFull := e.repository()
	if repoFull == "" {
		return nil, errors.New("no repository: pass -R OWNER/REPO, set GITHUB_REPOSITORY, or run in a clone whose origin remote is on GitHub")
	}
	owner, repo, ok := strings.Cut(repoFull, "/")
	if !ok || owner == "" || repo == "" {
		return nil, fmt.Errorf("GITHUB_REPOSITORY %q is not owner/repo", repoFull)
	}
	token := e.token()
	if token == "" {
		e.authMissing = true
		return nil, errNoAuth
	}
	base := e.Getenv("GITHUB_API_URL")
	if base != "" && !strings.HasSuffix(base, "/") {
		base += "/"
	}
	timeout, err := github.Timeout(e.Getenv(github.EnvTimeout))
	if err != nil {
		return nil, err
	}
	return github.New(github.Options{
		BaseURL: base, GraphQLURL: e.Getenv("GITHUB_GRAPHQL_URL"), Token: token,
		Owner: owner, Repo: repo, Masker: m, Deadline: deadline, Identity: e.Getenv("ROADMAP_IDENTITY"),
		HTTPClient: &http.Client{Timeout: timeout}, OnRecovery: github.LogRecoveries(e.Stderr),
	})
}

// token is the GitHub token, looked for as the gh CLI does: GH_TOKEN, then
// GITHUB_TOKEN, then the gh CLI's own login (`gh auth token`). A token from
// gh is put in the environment as GH_TOKEN, so every masker built after it
// masks it too. The token is never printed.
func (e *Env) token() string {
	for _, k := range []string{"GH_TOKEN", "GITHUB_TOKEN"} {
		if t := strings.TrimSpace(e.Getenv(k)); t != "" {
			return t
		}
	}
	ask := e.ghAuthToken
	if ask == nil {
		ask = ghAuthToken
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	t, err := ask(ctx)
	if err != nil || t == "" {
		return ""
	}
	e.Vars["GH_TOKEN"] = t
	return t
}

// ghAuthToken runs `gh auth token`; an error when gh is missing or logged
// out. Only the first line of its output is read, and none of it is shown.
func ghAuthToken(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "gh", "auth", "token").Output()
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(out), "\n")
	line = strings.TrimSpace(line)
	if len(line) > 1024 || strings.ContainsAny(line, " \t") {
		return "", fmt.Errorf("gh auth token: not a token")
	}
	return line, nil
}

// repoFlag adds -R and --repo OWNER/REPO to a verb that reads GitHub: the
// repository to read, over GITHUB_REPOSITORY and the origin remote.
func repoFlag(fs *pflag.FlagSet, env *Env) {
	set := func(s string) error {
		owner, repo, ok := strings.Cut(s, "/")
		if !ok || owner == "" || repo == "" || strings.ContainsAny(repo, "/ ") {
			return fmt.Errorf("%q is not OWNER/REPO", s)
		}
		env.Vars["GITHUB_REPOSITORY"] = s
		return nil
	}
	fs.FuncP("repo", "R", "the repository `OWNER/REPO` (default: $GITHUB_REPOSITORY, else the origin remote's)", set)
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
