package job

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/config"
)

const (
	canaryKeyVar = "LLM"
	canaryKey    = "k3y-canary-0a1b2c3d4e5f60718293a4b5c6d7e8f9"
)

// A model key configured under a neutral name (api_key_env: LLM) carries no
// sign of a secret in its name: it is masked because the configuration
// names it, and it never reaches a tool (the boundary's allow-list drops it).
func TestModelKeyUnderNeutralNameIsMasked(t *testing.T) {
	env := map[string]string{canaryKeyVar: canaryKey, "PATH": os.Getenv("PATH")}
	plain := Setup{Env: env, Config: &config.Config{}}
	if !strings.Contains(plain.masker().Mask("the key is "+canaryKey), canaryKey) {
		t.Fatal("the masker hides the canary by its shape alone: this test could not see the by-name masking fail")
	}
	s := Setup{Env: env, Config: &config.Config{Models: []config.Model{{Provider: "openai", Name: "m", APIKeyEnv: canaryKeyVar}}}}
	if got := s.masker().Mask("the key is " + canaryKey); strings.Contains(got, canaryKey) {
		t.Errorf("the configured model key is not masked: %q", got)
	}
	b, err := OpenBoundary(context.Background(), &config.Config{Isolation: config.IsolationNone}, t.TempDir(), env, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, kv := range b.Env() {
		if strings.Contains(kv, canaryKey) {
			t.Errorf("the model key reaches tool processes: %s", kv)
		}
	}
}

// The GitHub token is masked by value, whatever variable (if any) held it:
// the suites pass it to Open directly.
func TestTokenMaskedByValue(t *testing.T) {
	tok := "not-shaped-like-a-token-42"
	s := Setup{Env: map[string]string{}, Config: &config.Config{}, Token: tok, PushToken: "push-" + tok}
	if got := s.masker().Mask("a " + tok + " and push-" + tok); strings.Contains(got, tok) {
		t.Errorf("a token passed to Open is not masked: %q", got)
	}
}
