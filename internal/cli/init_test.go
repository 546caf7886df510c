package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/adopt"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
)

// TestInit: on the fake GitHub and a sample repository, init writes the
// caller, the checks workflow and the configuration (with the repository's
// real default branch) that actionlint accepts, creates the labels, prints
// the settings still needed in order; a second run changes nothing; and
// --dry-run writes nothing.
func TestInit(t *testing.T) {
	fake := githubfake.New(githubfake.Options{Token: explainToken, Owner: "acme", Repo: "widgets", DefaultBranch: "trunk"})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	environ := []string{"GITHUB_TOKEN=" + explainToken, "GITHUB_API_URL=" + srv.URL, "GITHUB_SERVER_URL=https://github.example"}
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "trunk", dir}, {"-C", dir, "commit", "-q", "--allow-empty", "-m", "start"}} {
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	initCLI := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		code := Main(context.Background(), append([]string{"init", "-R", "acme/widgets", "--dir", dir}, args...), environ, strings.NewReader(""), &out, &errb)
		if code != ExitOK {
			t.Fatalf("roadmap init %v: exit %d\n%s%s", args, code, out.String(), errb.String())
		}
		return out.String()
	}
	repoLabels := func() []string {
		req, _ := http.NewRequest("GET", srv.URL+"/repos/acme/widgets/labels?per_page=100", nil)
		req.Header.Set("Authorization", "Bearer "+explainToken)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var ls []struct{ Name string }
		if err := json.NewDecoder(res.Body).Decode(&ls); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, l := range ls {
			names = append(names, l.Name)
		}
		return names
	}
	wantLabels := []string{"roadmap:implement", "roadmap:stage", "roadmap:needs-input", "roadmap:stopped"}
	paths := []string{adopt.CallerPath, adopt.ChecksPath, adopt.ConfigPath}
	settings := "https://github.example/acme/widgets/settings/actions"

	t.Run("dry run writes nothing", func(t *testing.T) {
		out := initCLI("--dry-run")
		for _, p := range paths {
			if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
				t.Errorf("--dry-run wrote %s", p)
			}
			if !strings.Contains(out, "would write "+p) {
				t.Errorf("--dry-run does not say it would write %s:\n%s", p, out)
			}
		}
		if !strings.Contains(out, "|   base_branch: trunk") {
			t.Errorf("--dry-run does not print the configuration's text:\n%s", out)
		}
		for _, l := range wantLabels {
			if !strings.Contains(out, "would create label "+l) || strings.Contains(strings.Join(repoLabels(), ","), l) {
				t.Errorf("--dry-run: label %s not announced, or created:\n%s", l, out)
			}
		}
	})

	t.Run("first run", func(t *testing.T) {
		out := initCLI()
		for _, p := range paths {
			if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
				t.Errorf("init did not write %s: %v", p, err)
			}
		}
		cfg, err := config.LoadExplicit(filepath.Join(dir, adopt.ConfigPath))
		if err != nil || cfg.Implement.BaseBranch != "trunk" {
			t.Errorf("the configuration: %+v, %v; want base_branch trunk, the repository's default branch", cfg, err)
		} else if !cfg.Review.Enabled {
			t.Errorf("the configuration: review %+v; want the review before ready on", cfg.Review)
		} else if len(cfg.Models) != 2 || cfg.Models[0].Name == cfg.Models[1].Name {
			t.Errorf("the configuration: models %+v; want a ladder of two different models", cfg.Models)
		}
		have := strings.Join(repoLabels(), ",")
		for _, l := range wantLabels {
			if !strings.Contains(have, l) {
				t.Errorf("label %s not created; the repository has %s", l, have)
			}
		}
		allow := strings.Index(out, `1. Turn on "Allow GitHub Actions to create and approve pull requests"`)
		// The test binary names no version or commit (adopt.PinFor): the
		// workflows follow main, and the to-do says so before the commit.
		pin := strings.Index(out, "2. The workflows pin roadmap at its main branch, which moves: this roadmap (dev) names no commit")
		commit := strings.Index(out, "3. Commit and push the files to trunk")
		if allow < 0 || pin < 0 || commit < 0 || !strings.Contains(out, settings) {
			t.Errorf("the settings still needed are not printed in order with the link %s:\n%s", settings, out)
		}
		actionlint(t, dir)
	})

	t.Run("second run changes nothing", func(t *testing.T) {
		fake.ResetLog()
		before := map[string]string{}
		for _, p := range paths {
			b, _ := os.ReadFile(filepath.Join(dir, p))
			before[p] = string(b)
		}
		out := initCLI()
		if !strings.Contains(out, "nothing to change") || strings.Contains(out, "write ") || strings.Contains(out, "keep ") || strings.Contains(out, "create label") {
			t.Errorf("a second run does not say it changes nothing:\n%s", out)
		}
		for _, r := range fake.Requests() {
			if r.Method != "GET" {
				t.Errorf("a second run sent %s %s", r.Method, r.Path)
			}
		}
		for _, p := range paths {
			if b, _ := os.ReadFile(filepath.Join(dir, p)); string(b) != before[p] {
				t.Errorf("a second run changed %s", p)
			}
		}
	})

	t.Run("a setting already on is not asked for", func(t *testing.T) {
		fake.SetWorkflowPermissions("read", true)
		if out := initCLI(); strings.Contains(out, "Allow GitHub Actions") {
			t.Errorf("init asks for a setting that is on:\n%s", out)
		}
	})
}

// actionlint runs the pinned actionlint over the workflows init wrote.
func actionlint(t *testing.T, dir string) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("actionlint not run: no go command to run it with")
	}
	files := []string{filepath.Join(dir, adopt.CallerPath), filepath.Join(dir, adopt.ChecksPath), filepath.Join(dir, adopt.WakePath)}
	// The eval workflow, when init wrote it (--eval-workflow).
	if _, err := os.Stat(filepath.Join(dir, adopt.EvalPath)); err == nil {
		files = append(files, filepath.Join(dir, adopt.EvalPath))
	}
	cmd := exec.Command("go", append([]string{"run", "github.com/rhysd/actionlint/cmd/actionlint@v1.7.12", "-no-color", "-shellcheck=", "-pyflakes="}, files...)...)
	cmd.Dir = dir
	// actionlint is the developer's tool, built from the developer's cache,
	// not the test runner's (TestMain).
	cmd.Env = append(os.Environ(), "GOCACHE="+developerGoCache)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if _, ok := err.(*exec.ExitError); ok && bytes.Contains(out, []byte(".yml:")) {
			t.Errorf("actionlint finds problems in what init wrote:\n%s", out)
			return
		}
		t.Skipf("actionlint could not run: %v\n%s", err, out)
	}
}

// TestInitEvalWorkflow: init writes the scheduled eval workflow only when
// asked (--eval-workflow), with the model named (--eval-model, else the
// configuration's GitHub Models model) and the dashboard issue it found,
// and actionlint accepts it; a second run changes nothing; a model name
// that is not one is refused before anything is written.
func TestInitEvalWorkflow(t *testing.T) {
	fake := githubfake.New(githubfake.Options{Token: explainToken, Owner: "acme", Repo: "widgets"})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	dash := fake.CreateIssue(githubfake.Issue{Title: "roadmap dashboard", Labels: []string{"roadmap:dashboard"}})
	environ := []string{"GITHUB_TOKEN=" + explainToken, "GITHUB_API_URL=" + srv.URL}
	initCLI := func(dir string, args ...string) (int, string) {
		t.Helper()
		var out, errb bytes.Buffer
		code := Main(context.Background(), append([]string{"init", "-R", "acme/widgets", "--dir", dir}, args...), environ, strings.NewReader(""), &out, &errb)
		return code, out.String() + errb.String()
	}
	read := func(dir string) string {
		b, err := os.ReadFile(filepath.Join(dir, adopt.EvalPath))
		if err != nil {
			return ""
		}
		return string(b)
	}

	plain := t.TempDir()
	if code, out := initCLI(plain); code != ExitOK || read(plain) != "" {
		t.Errorf("init without --eval-workflow: exit %d, wrote the eval workflow %v\n%s", code, read(plain) != "", out)
	}

	dir := t.TempDir()
	if code, out := initCLI(dir, "--eval-workflow"); code != ExitOK {
		t.Fatalf("init --eval-workflow: exit %d\n%s", code, out)
	}
	text := read(dir)
	for _, want := range []string{"model: openai/gpt-4o-mini\n", "dashboard: " + itoa(dash) + "  #", "roadmap-dev/roadmap/actions/eval@",
		"roadmap-dev/roadmap/actions/eval-dashboard@", "- cron: ", "workflow_dispatch:", "models: read", "issues: write"} {
		if !strings.Contains(text, want) {
			t.Errorf("the eval workflow does not hold %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "EVAL_MODEL") || strings.Contains(text, "DASHBOARD_ISSUE") || strings.Contains(text, "@REF") {
		t.Errorf("the eval workflow keeps a placeholder:\n%s", text)
	}
	actionlint(t, dir)
	if code, out := initCLI(dir, "--eval-workflow"); code != ExitOK || !strings.Contains(out, "nothing to change") || !strings.Contains(out, "Set the eval floors") {
		t.Errorf("a second run: exit %d, want nothing to change:\n%s", code, out)
	}

	named := t.TempDir()
	if code, out := initCLI(named, "--eval-workflow", "--eval-model", "meta/Llama-3.3-70B-Instruct"); code != ExitOK || !strings.Contains(read(named), "model: meta/Llama-3.3-70B-Instruct\n") {
		t.Errorf("--eval-model: exit %d, workflow:\n%s\n%s", code, read(named), out)
	}
	for _, args := range [][]string{{"--eval-workflow", "--eval-model", "gpt 4o\n  evil: x"}, {"--eval-model", "openai/gpt-4o-mini"}} {
		bad := t.TempDir()
		if code, out := initCLI(bad, args...); code != ExitUsage || read(bad) != "" {
			t.Errorf("init %q: exit %d, want %d and nothing written\n%s", args, code, ExitUsage, out)
		}
	}
}
