package adopt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/roadmap-dev/roadmap/internal/llm"
)

// TestInitProviderSecretReachesModel: for each provider init sets up, the
// key reaches the model the configuration names. The variable init writes
// as api_key_env is the one internal/llm reads for that provider; a
// provider with a secret has it passed by name from the caller init writes
// (both of its calls of roadmap.yml), declared by the reusable roadmap.yml
// and set in the environment of its stage and implement steps; GitHub
// Models, with no secret, has models: read granted by the caller and held
// by those jobs.
func TestInitProviderSecretReachesModel(t *testing.T) {
	var caller, reusable struct {
		On struct {
			WorkflowCall struct {
				Secrets map[string]yaml.Node `yaml:"secrets"`
			} `yaml:"workflow_call"`
		} `yaml:"on"`
		Jobs map[string]struct {
			Uses        string            `yaml:"uses"`
			Permissions map[string]string `yaml:"permissions"`
			Secrets     map[string]string `yaml:"secrets"`
			Steps       []struct {
				Uses string            `yaml:"uses"`
				Env  map[string]string `yaml:"env"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(callerYAML), &caller); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, ".github", "workflows", "roadmap.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &reusable); err != nil {
		t.Fatal(err)
	}
	for _, p := range Providers {
		c, err := llm.New(llm.Config{Provider: p.Name, Model: "m"}, llm.WithGetenv(func(string) string { return "key" }))
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		if got := c.Config().APIKeyEnv; got != p.KeyEnv {
			t.Errorf("%s: init writes api_key_env %s, internal/llm reads %s by default", p.Name, p.KeyEnv, got)
		}
		want := "${{ secrets." + p.KeyEnv + " }}"
		calls := 0
		for name, j := range caller.Jobs {
			if !strings.HasPrefix(j.Uses, "roadmap-dev/roadmap/.github/workflows/roadmap.yml@") {
				continue
			}
			calls++
			switch {
			case p.Secret() == "" && j.Permissions["models"] != "read":
				t.Errorf("%s: the caller's job %s grants models: %q, want read", p.Name, name, j.Permissions["models"])
			case p.Secret() != "" && j.Secrets[p.Secret()] != want:
				t.Errorf("%s: the caller's job %s passes %s as %q, want %q", p.Name, name, p.Secret(), j.Secrets[p.Secret()], want)
			}
		}
		if calls != 2 {
			t.Errorf("the caller calls roadmap.yml in %d jobs, want 2 (implement-approved and roadmap)", calls)
		}
		if _, ok := reusable.On.WorkflowCall.Secrets[p.Secret()]; p.Secret() != "" && !ok {
			t.Errorf("%s: roadmap.yml declares no secret %s", p.Name, p.Secret())
		}
		for _, verb := range []string{"stage", "implement"} {
			j, ok := reusable.Jobs[verb]
			if !ok {
				t.Fatalf("roadmap.yml has no %s job", verb)
			}
			if p.Secret() == "" {
				if j.Permissions["models"] != "read" {
					t.Errorf("%s: roadmap.yml's %s job has models: %q, want read", p.Name, verb, j.Permissions["models"])
				}
				continue
			}
			passed := false
			for _, s := range j.Steps {
				if s.Uses == "./.roadmap-run/roadmap/actions/"+verb && s.Env[p.Secret()] == want {
					passed = true
				}
			}
			if !passed {
				t.Errorf("%s: roadmap.yml's %s step does not set %s to %s", p.Name, verb, p.Secret(), want)
			}
		}
	}
}

// TestFindProvider: a name init does not set up is refused with the names
// it does.
func TestFindProvider(t *testing.T) {
	for _, name := range []string{"openai", "anthropic", "github-models"} {
		if p, err := FindProvider(name); err != nil || p.Name != name {
			t.Errorf("FindProvider(%q) = %+v, %v", name, p, err)
		}
	}
	for _, name := range []string{"mistral", "openai-compatible", "replay", "OpenAI", ""} {
		_, err := FindProvider(name)
		if err == nil || !strings.Contains(err.Error(), "github-models, openai, anthropic") {
			t.Errorf("FindProvider(%q): %v, want a refusal naming github-models, openai, anthropic", name, err)
		}
	}
}
