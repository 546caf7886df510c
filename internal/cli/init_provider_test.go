package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/adopt"
	"github.com/roadmap-dev/roadmap/internal/config"
)

// TestInitLadderGitHubModels: init with no --provider writes GitHub
// Models' two-tier ladder, read with the workflow's GITHUB_TOKEN, and asks
// for no secret.
func TestInitLadderGitHubModels(t *testing.T) {
	initLadder(t, "", "github-models", "")
}

// TestInitLadderOpenAI: init --provider openai writes OpenAI's two-tier
// ladder, its models reading OPENAI_API_KEY, and the to-do asks for that
// repository secret.
func TestInitLadderOpenAI(t *testing.T) {
	r := initLadder(t, "openai", "openai", "OPENAI_API_KEY")

	// Another provider on a repository set up for OpenAI: the configuration
	// is kept, and the to-do's secret is conditional on its models.
	got := r.json("--provider", "anthropic")
	for _, f := range got.Files {
		if f.Path == adopt.ConfigPath && f.Status != adopt.Kept {
			t.Errorf("--provider anthropic after openai: %s is %q, want %q", f.Path, f.Status, adopt.Kept)
		}
	}
	if s := secretToDos(got.ToDo); len(s) != 1 || !strings.HasPrefix(s[0], "If the models: of "+adopt.ConfigPath+" (which init left as it is) are anthropic's, add the repository secret ANTHROPIC_API_KEY") {
		t.Errorf("the to-do's secret when the configuration was kept: %q", s)
	}
	cfg, err := config.LoadExplicit(filepath.Join(r.dir, adopt.ConfigPath))
	if err != nil || cfg.Models[0].Provider != "openai" {
		t.Errorf("--provider anthropic changed the kept configuration: %+v, %v", cfg.Models, err)
	}
}

// TestInitLadderAnthropic: init --provider anthropic writes Anthropic's
// two-tier ladder (its Messages API, internal/llm's anthropic provider),
// its models reading ANTHROPIC_API_KEY, and the to-do asks for that secret.
func TestInitLadderAnthropic(t *testing.T) {
	initLadder(t, "anthropic", "anthropic", "ANTHROPIC_API_KEY")
}

// initLadder runs init with --provider flag (none when "") on a Go
// repository and checks the ladder, the key's variable, the secret in the
// to-do and --json, the caller passing the secret, and a second run that
// changes nothing. It returns the repository for more runs.
func initLadder(t *testing.T, flag, provider, secret string) *initRepo {
	t.Helper()
	r := newInitRepo(t, map[string]string{"go.mod": "module example.com/widgets\n"})
	var args []string
	if flag != "" {
		args = []string{"--provider", flag}
	}
	got := r.json(args...)
	if got.Provider != provider || got.Secret != secret {
		t.Errorf("--json provider %q, secret %q; want %q, %q", got.Provider, got.Secret, provider, secret)
	}
	cfg, err := config.LoadExplicit(filepath.Join(r.dir, adopt.ConfigPath))
	if err != nil {
		t.Fatal(err)
	}
	keyEnv := firstSet(secret, "GITHUB_TOKEN")
	want := config.InitLadders[provider]
	if len(cfg.Models) != 2 || len(want) != 2 {
		t.Fatalf("the configuration's models %+v, want the two tiers %+v", cfg.Models, want)
	}
	for i, m := range cfg.Models {
		if m.Provider != provider || m.Name != want[i].Name || m.APIKeyEnv != keyEnv {
			t.Errorf("tier %d is %s %s reading %s, want %s %s reading %s", i, m.Provider, m.Name, m.APIKeyEnv, provider, want[i].Name, keyEnv)
		}
		if p := cfg.Prices[m.Name]; p.Input <= 0 || p.Output <= 0 {
			t.Errorf("tier %d, %s, has no price: %+v", i, m.Name, p)
		}
	}
	if cfg.Models[0].Name == cfg.Models[1].Name {
		t.Errorf("the two tiers are one model, %s", cfg.Models[0].Name)
	}

	s := secretToDos(got.ToDo)
	switch {
	case secret == "" && len(s) > 0:
		t.Errorf("%s needs no secret; the to-do asks for one: %q", provider, s)
	case secret != "" && (len(s) != 1 || !strings.HasPrefix(s[0], "Add the repository secret "+secret+",") ||
		!strings.Contains(s[0], "https://github.example/acme/widgets/settings/secrets/actions")):
		t.Errorf("the to-do's secret = %q, want one entry adding %s with the settings link", s, secret)
	}
	if secret != "" {
		// Before the first item is labelled: the Job needs the key.
		if i := indexOf(got.ToDo, s[0]); i < 0 || i >= len(got.ToDo)-1 {
			t.Errorf("the secret is not asked for before the last step:\n%q", got.ToDo)
		}
		if caller := r.read(adopt.CallerPath); strings.Count(caller, secret+": ${{ secrets."+secret+" }}") != 2 {
			t.Errorf("the caller does not pass %s to both calls of roadmap.yml", secret)
		}
	}
	if out, _ := r.run(append([]string{"--dry-run"}, args...)...); !strings.Contains(out, "models: ") || !strings.Contains(out, want[0].Name+" then "+want[1].Name) {
		t.Errorf("init does not say which ladder it writes:\n%s", out)
	}

	again := r.json(args...)
	if again.Changed {
		t.Error("a second run with the same provider says it changed something")
	}
	for _, f := range again.Files {
		if f.Status != adopt.Unchanged {
			t.Errorf("a second run: %s is %q, want %q", f.Path, f.Status, adopt.Unchanged)
		}
	}
	return r
}

// secretToDos are the to-do's entries that ask for a model's secret.
func secretToDos(todo []string) []string {
	var out []string
	for _, s := range todo {
		if strings.Contains(s, "_API_KEY") {
			out = append(out, s)
		}
	}
	return out
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// TestInitBadProvider: a provider init does not set up is a usage error
// (exit 2) that names the ones it does, before any request or file.
func TestInitBadProvider(t *testing.T) {
	r := newInitRepo(t, map[string]string{"go.mod": "module example.com/widgets\n"})
	environ := []string{"GITHUB_TOKEN=" + explainToken, "GITHUB_API_URL=" + r.srv.URL}
	for _, bad := range []string{"mistral", "openai-compatible", ""} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), []string{"init", "-R", "acme/widgets", "--dir", r.dir, "--provider", bad}, environ, strings.NewReader(""), &out, &errb)
		if code != ExitUsage {
			t.Errorf("--provider %q: exit %d, want %d\n%s%s", bad, code, ExitUsage, out.String(), errb.String())
		}
		if !strings.Contains(errb.String(), "github-models, openai, anthropic") || !strings.Contains(errb.String(), "--provider") {
			t.Errorf("--provider %q: the error does not name the providers:\n%s", bad, errb.String())
		}
	}
	if reqs := r.fake.Requests(); len(reqs) != 0 {
		t.Errorf("a bad --provider sent %d requests, first %s %s", len(reqs), reqs[0].Method, reqs[0].Path)
	}
	if entries, _ := filepath.Glob(filepath.Join(r.dir, ".github", "*")); len(entries) != 0 {
		t.Errorf("a bad --provider wrote %v", entries)
	}
}
