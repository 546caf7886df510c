package redact

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSecretsFromEnv(t *testing.T) {
	environ := []string{
		"GITHUB_TOKEN=ghs_runner_token_value",
		"ACTIONS_RUNTIME_TOKEN=runtime-token-value",
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN=oidc-request-token",
		"ACTIONS_ID_TOKEN_REQUEST_URL=https://token.actions.example/abc", // a location, not a secret
		"OPENAI_API_KEY=sk-openai-value-123",
		"ANTHROPIC_API_KEY=sk-ant-value-456",
		"AWS_SECRET_ACCESS_KEY=aws-secret-value",
		"DB_PASSWORD=db-password-value",
		"GH_PAT=personal-access-token",
		"INPUT_GITHUB-TOKEN=action-input-token", // action inputs keep their hyphens
		"GOOGLE_CREDENTIALS=google-credentials-json",
		"NPMTOKEN=npm-token-value",
		"SHORT_TOKEN=abc", // too short to mask
		"DUPLICATE_SECRET=db-password-value",
		"PATH=/usr/local/bin:/usr/bin", // PAT is a name part, not a substring
		"PWD=/home/runner/work",
		"HOME=/home/runner",
		"KEYBOARD_LAYOUT=us-international",
		"SECRET_NAME=prod-db-password", // a label
		"TOKEN_FILE=/run/secrets/token",
		"not-an-assignment",
	}
	got := SecretsFromEnv(environ)
	want := []string{
		"action-input-token",
		"aws-secret-value",
		"db-password-value",
		"ghs_runner_token_value",
		"google-credentials-json",
		"npm-token-value",
		"oidc-request-token",
		"personal-access-token",
		"runtime-token-value",
		"sk-ant-value-456",
		"sk-openai-value-123",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SecretsFromEnv mismatch (-want +got):\n%s", diff)
	}
}

func TestSecretForms(t *testing.T) {
	forms := secretForms([]string{"abc", "Tr0ub4dor&3\"x", strings.Repeat("k", 9000)})
	has := map[string]bool{}
	for _, f := range forms {
		has[f] = true
		if len(f) > maxLiteral {
			t.Errorf("literal of %d bytes, over maxLiteral", len(f))
		}
		if len(f) < MinSecretLength {
			t.Errorf("literal %q shorter than MinSecretLength", f)
		}
	}
	for _, want := range []string{
		`Tr0ub4dor&3"x`,
		`Tr0ub4dor\u00263\"x`, // JSON, HTML-escaped
		`Tr0ub4dor&3\"x`,      // JSON
		"Tr0ub4dor%263%22x",   // query escape
		base64.StdEncoding.EncodeToString([]byte(`Tr0ub4dor&3"x`)),
		base64.RawURLEncoding.EncodeToString([]byte(`Tr0ub4dor&3"x`)),
	} {
		if !has[want] {
			t.Errorf("forms lack %q", want)
		}
	}
	if has["abc"] {
		t.Error("a 3-byte secret was registered")
	}
}
