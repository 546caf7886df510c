package cli

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
)

// TestCLIHabits holds the command line to the gh CLI's habits, one row each
// (issue 16, item 7): help everywhere, --version, unknown commands naming
// the known ones, -R, the token order, exit 4 without a login, errors that
// name their verb in one line, and shell completion.
func TestCLIHabits(t *testing.T) {
	w := newExplainWorld(t)
	n := strconv.Itoa(w.item(blockComment("implement.result: ready")))
	api := w.environ[1] // GITHUB_API_URL=…
	loggedIn := func(context.Context) (string, error) { return explainToken, nil }
	badToken := "ghs_notthetoken0000000000000000000000000"

	tests := []struct {
		name    string
		args    []string
		environ []string
		gh      func(context.Context) (string, error) // nil: gh is logged out
		code    int
		stdout  []string // each is in stdout
		stderr  []string // each is in stderr
		not     []string // none is in stdout or stderr
		// oneLine: stderr is a single line.
		oneLine bool
	}{
		{name: "help VERB prints the verb's help", args: []string{"help", "implement"},
			stdout: []string{"roadmap implement: run one implement Job", "usage: roadmap implement [flags]", "-issue"}},
		{name: "VERB --help prints the verb's help", args: []string{"implement", "--help"},
			stdout: []string{"usage: roadmap implement [flags]", "-issue"}},
		{name: "help for a subcommand", args: []string{"help", "dev", "fake-github"},
			stdout: []string{"usage: roadmap dev fake-github [flags]", "-addr"}},
		{name: "a parent lists its subcommands", args: []string{"dev"},
			stdout: []string{"fake-github", "replay-model"}},
		{name: "--version", args: []string{"--version"}, stdout: []string{"roadmap " + Version}},
		{name: "an unknown subcommand lists the known ones", args: []string{"dev", "fake-gitlab"}, code: ExitUsage,
			stderr: []string{`unknown command "fake-gitlab" for 'roadmap dev'`, "fake-github, replay-model"}, oneLine: true},
		{name: "an unknown command lists the known ones", args: []string{"explian"}, code: ExitUsage,
			stderr: []string{`unknown command "explian"`, "explain", "implement"}, oneLine: true},
		{name: "-R overrides GITHUB_REPOSITORY", args: []string{"explain", n, "-R", "acme/widgets"},
			environ: []string{api, "GITHUB_TOKEN=" + explainToken, "GITHUB_REPOSITORY=someone/else"},
			stdout:  []string{"issue #" + n + ": Add greetings", "result: ready"}},
		{name: "--repo without GITHUB_REPOSITORY", args: []string{"explain", "--repo", "acme/widgets", n},
			environ: []string{api, "GITHUB_TOKEN=" + explainToken}, stdout: []string{"result: ready"}},
		{name: "-R that is not OWNER/REPO", args: []string{"explain", n, "-R", "widgets"}, environ: []string{api, "GITHUB_TOKEN=" + explainToken},
			code: ExitUsage, stderr: []string{`roadmap explain: invalid argument "widgets" for "-R, --repo" flag: "widgets" is not OWNER/REPO`}, oneLine: true},
		{name: "GH_TOKEN comes before GITHUB_TOKEN", args: []string{"explain", n},
			environ: []string{api, "GITHUB_REPOSITORY=acme/widgets", "GH_TOKEN=" + explainToken, "GITHUB_TOKEN=" + badToken},
			stdout:  []string{"result: ready"}, not: []string{explainToken}},
		{name: "GITHUB_TOKEN when GH_TOKEN is unset", args: []string{"explain", n},
			environ: []string{api, "GITHUB_REPOSITORY=acme/widgets", "GITHUB_TOKEN=" + explainToken}, gh: func(context.Context) (string, error) { return badToken, nil },
			stdout: []string{"result: ready"}},
		{name: "gh auth token when neither is set", args: []string{"explain", n},
			environ: []string{api, "GITHUB_REPOSITORY=acme/widgets"}, gh: loggedIn,
			stdout: []string{"result: ready"}, not: []string{explainToken}},
		{name: "no login exits 4", args: []string{"explain", n}, environ: []string{api, "GITHUB_REPOSITORY=acme/widgets"},
			code: ExitAuth, stderr: []string{"roadmap explain: no GitHub token: set GH_TOKEN or GITHUB_TOKEN, or log in with 'gh auth login'"}, oneLine: true},
		{name: "no login exits 4 for report too", args: []string{"report", "--issue", "1", "-R", "acme/widgets"},
			environ: []string{api, "GITHUB_EVENT_NAME=workflow_dispatch"}, code: ExitAuth, stderr: []string{"roadmap report: no GitHub token"}},
		{name: "a flag error is one line naming the verb", args: []string{"explain", n, "--verbose"}, code: ExitUsage,
			stderr: []string{"roadmap explain: unknown flag: --verbose (see 'roadmap explain --help')"},
			not:    []string{"Usage", "-trace-file"}, oneLine: true},
		{name: "a GitHub error names the request once", args: []string{"explain", "999999"}, environ: []string{api, "GITHUB_REPOSITORY=acme/widgets", "GITHUB_TOKEN=" + badToken},
			code: ExitInternal, stderr: []string{"roadmap explain: get issue 999999: GET /repos/{owner}/{repo}/issues/{n}: 401"}, not: []string{"GET GET"}, oneLine: true},
	}
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		tests = append(tests, struct {
			name    string
			args    []string
			environ []string
			gh      func(context.Context) (string, error)
			code    int
			stdout  []string
			stderr  []string
			not     []string
			oneLine bool
		}{name: "completion " + sh, args: []string{"completion", sh}, stdout: []string{"roadmap", "__complete"}})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			env := newEnv(tt.args, tt.environ, strings.NewReader(""), &out, &errb)
			env.ghAuthToken = tt.gh
			if env.ghAuthToken == nil {
				env.ghAuthToken = noGHLogin
			}
			code := run(context.Background(), env)
			if code != tt.code {
				t.Errorf("roadmap %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(tt.args, " "), code, tt.code, out.String(), errb.String())
			}
			for _, s := range tt.stdout {
				if !strings.Contains(out.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, out.String())
				}
			}
			for _, s := range tt.stderr {
				if !strings.Contains(errb.String(), s) {
					t.Errorf("stderr lacks %q:\n%s", s, errb.String())
				}
			}
			for _, s := range tt.not {
				if strings.Contains(out.String()+errb.String(), s) {
					t.Errorf("the output holds %q:\nstdout: %s\nstderr: %s", s, out.String(), errb.String())
				}
			}
			if tt.oneLine && strings.Count(strings.TrimSuffix(errb.String(), "\n"), "\n") != 0 {
				t.Errorf("stderr is not one line:\n%s", errb.String())
			}
		})
	}
}

// TestCLIHabitsHelpForEveryVerb: every verb of the table, and every parent
// of two-word verbs, answers `help NAME` and `NAME --help` with its help and
// exit 0, without running.
func TestCLIHabitsHelpForEveryVerb(t *testing.T) {
	parents := map[string]bool{}
	for _, v := range verbs() {
		words := strings.Fields(v.name)
		if len(words) == 2 {
			parents[words[0]] = true
		}
		for _, args := range [][]string{append([]string{"help"}, words...), append(words, "--help"), append(words, "-h")} {
			var out, errb bytes.Buffer
			env := newEnv(args, nil, strings.NewReader(""), &out, &errb)
			env.ghAuthToken = noGHLogin
			if code := run(context.Background(), env); code != ExitOK || !strings.Contains(out.String(), "usage: roadmap "+v.name) {
				t.Errorf("roadmap %s: exit %d, stdout %q, stderr %q; want 0 and the verb's usage", strings.Join(args, " "), code, out.String(), errb.String())
			}
		}
	}
	for p := range parents {
		var out, errb bytes.Buffer
		if code := Main(context.Background(), []string{"help", p}, nil, strings.NewReader(""), &out, &errb); code != ExitOK || !strings.Contains(out.String(), "Available Commands") {
			t.Errorf("roadmap help %s: exit %d, stdout %q; want 0 and its subcommands", p, code, out.String())
		}
	}
}
