package policy

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScrubEnv(t *testing.T) {
	// Built at run time so no token-shaped literal sits in the source.
	ghp := "ghp_" + strings.Repeat("a1B2", 9)
	tests := []struct {
		kv   string
		keep bool
	}{
		{"PATH=/usr/bin:/bin", true},
		{"HOME=/home/runner", true},
		{"GOPATH=/go", true},
		{"GOCACHE=/cache", true},
		{"GOFLAGS=-mod=mod", true},
		{"LANG=C.UTF-8", true},
		{"TMPDIR=/tmp", true},
		{"PWD=/work", true},
		{"CI=true", true},
		{"GITHUB_SHA=abc123", true},
		{"GITHUB_REPOSITORY=o/r", true},
		{"GIT_AUTHOR_NAME=someone", true},
		{"GOPRIVATE=example.com", true},
		{"GITHUB_TOKEN=x", false},
		{"GH_TOKEN=x", false},
		{"ACTIONS_RUNTIME_TOKEN=x", false},
		{"ACTIONS_RUNTIME_URL=https://x", false},
		{"ACTIONS_ID_TOKEN_REQUEST_URL=https://x", false},
		{"ACTIONS_CACHE_URL=https://x", false},
		{"INPUT_GITHUB-TOKEN=x", false},
		{"GITHUB_ENV=/tmp/env", false},
		{"GITHUB_OUTPUT=/tmp/out", false},
		{"MY_API_KEY=x", false},
		{"OPENAI_API_KEY=x", false},
		{"AWS_SECRET_ACCESS_KEY=x", false},
		{"AWS_ACCESS_KEY_ID=x", false},
		{"DB_PASSWORD=x", false},
		{"PGPASS=x", false},
		{"GITHUB_PAT=x", false},
		{"NPM_AUTH=x", false},
		{"GOAUTH=git", false},
		{"SSH_AUTH_SOCK=/tmp/agent", false},
		{"SESSION_COOKIE=x", false},
		{"apiKey=x", false},
		{"githubToken=x", false},
		{"REGISTRY_CREDENTIALS=x", false},
		{"GIT_CONFIG_VALUE_0=AUTHORIZATION: basic eA==", false},
		{"INNOCENT=" + ghp, false},
		{"BUILD_NOTE=" + "github_pat_" + strings.Repeat("x", 30), false},
		{"X=" + "sk-" + strings.Repeat("q", 40), false},
		{"X=" + "AKIA" + strings.Repeat("Z", 16), false},
		{"X=" + "xoxb-" + strings.Repeat("1", 20), false},
		{"HTTPS_PROXY=http://user:hunter22@proxy:3128", false},
		{"HTTPS_PROXY=http://proxy:3128", true},
		{"NOEQUALS", false},
	}
	var in, want []string
	for _, tt := range tests {
		in = append(in, tt.kv)
		if tt.keep {
			want = append(want, tt.kv)
		}
	}
	if diff := cmp.Diff(want, ScrubEnv(in)); diff != "" {
		t.Errorf("ScrubEnv (-want +got):\n%s", diff)
	}
}
