package policy

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

func TestDefaultParses(t *testing.T) {
	p := Default()
	if err := p.Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v", err)
	}
	if got, want := p.Timeout, 10*time.Minute; got != want {
		t.Errorf("default timeout = %v, want %v", got, want)
	}
	if got, want := p.OutputTail, 64<<10; got != want {
		t.Errorf("default output tail = %d, want %d", got, want)
	}
	// Default returns a fresh table each time: a caller's edit stays its own.
	p.Programs[0].Allow = false
	if !Default().Programs[0].Allow {
		t.Error("editing one Default() changed the next")
	}
}

func TestCheck(t *testing.T) {
	p := Default()
	tests := []struct {
		argv     []string
		wantRule string // "" means allowed
		wantRow  string
	}{
		{argv: []string{"go", "test", "./..."}},
		{argv: []string{"go", "test", "-run", "TestX", "./internal/..."}},
		{argv: []string{"go", "vet", "./..."}},
		{argv: []string{"go", "mod", "tidy"}},
		{argv: []string{"go", "env"}},
		{argv: []string{"git", "status"}},
		{argv: []string{"git", "--no-pager", "log", "-n", "5"}},
		{argv: []string{"git", "grep", "-n", "-e", "push"}},
		{argv: []string{"git", "grep", "-n", "-e", "-c", "--", "x.go"}},
		{argv: []string{"git", "log", "--grep", "push"}},
		{argv: []string{"git", "diff", "main..feature"}},
		{argv: []string{"ls", "-la"}},
		{argv: []string{"env"}},
		{argv: []string{"find", ".", "-name", "*.go"}},
		{argv: []string{"curl", "https://example.com"}, wantRule: "program refused", wantRow: "curl"},
		{argv: []string{"wget", "x"}, wantRule: "program refused", wantRow: "wget"},
		{argv: []string{"gh", "pr", "list"}, wantRule: "program refused", wantRow: "gh"},
		{argv: []string{"ssh", "host"}, wantRule: "program refused", wantRow: "ssh"},
		{argv: []string{"bash", "-c", "ls"}, wantRule: "program refused", wantRow: "bash"},
		{argv: []string{"git", "push"}, wantRule: `deny "push"`, wantRow: "git"},
		{argv: []string{"git", "push", "origin", "main"}, wantRule: `deny "push"`, wantRow: "git"},
		{argv: []string{"git", "--no-pager", "push"}, wantRule: `deny "push"`, wantRow: "git"},
		{argv: []string{"git", "-c", "credential.helper=x", "status"}, wantRule: `deny "-c"`, wantRow: "git"},
		{argv: []string{"git", "-C", "/etc", "status"}, wantRule: `deny "-C"`, wantRow: "git"},
		{argv: []string{"git", "fetch"}, wantRule: `deny "fetch"`, wantRow: "git"},
		{argv: []string{"git", "pull"}, wantRule: `deny "pull"`, wantRow: "git"},
		{argv: []string{"git", "clone", "u"}, wantRule: `deny "clone"`, wantRow: "git"},
		{argv: []string{"git", "remote", "add", "o", "u"}, wantRule: `deny "remote"`, wantRow: "git"},
		{argv: []string{"git", "submodule", "update"}, wantRule: `deny "submodule"`, wantRow: "git"},
		{argv: []string{"git", "config", "credential.helper"}, wantRule: `deny "config"`, wantRow: "git"},
		{argv: []string{"git", "credential-store", "get"}, wantRule: `deny "credential*"`, wantRow: "git"},
		{argv: []string{"git", "--exec-path=/tmp", "status"}, wantRule: `deny "--exec-path*"`, wantRow: "git"},
		{argv: []string{"git", "gc"}, wantRule: "args", wantRow: "git"},
		{argv: []string{"go", "get", "example.com/x"}, wantRule: `deny "get"`, wantRow: "go"},
		{argv: []string{"go", "install", "example.com/x@latest"}, wantRule: `deny "install"`, wantRow: "go"},
		{argv: []string{"go", "mod", "download"}, wantRule: `deny "mod download"`, wantRow: "go"},
		{argv: []string{"go", "generate", "./..."}, wantRule: `deny "generate"`, wantRow: "go"},
		{argv: []string{"go", "test", "-exec", "sh", "./..."}, wantRule: `deny "-exec*"`, wantRow: "go"},
		{argv: []string{"go", "test", "-toolexec=sh", "./..."}, wantRule: `deny "-toolexec*"`, wantRow: "go"},
		{argv: []string{"go", "env", "-w", "GOPROXY=x"}, wantRule: `deny "env -w*"`, wantRow: "go"},
		{argv: []string{"go"}, wantRule: "args", wantRow: "go"},
		{argv: []string{"npm", "install"}, wantRule: `deny "install"`, wantRow: "npm"},
		{argv: []string{"env", "curl", "x"}, wantRule: `deny "*"`, wantRow: "env"},
		{argv: []string{"env", "-i", "x"}, wantRule: `deny "*"`, wantRow: "env"},
		{argv: []string{"find", ".", "-exec", "rm", "{}", ";"}, wantRule: `deny "-exec*"`, wantRow: "find"},
		{argv: []string{"/usr/bin/curl"}, wantRule: "program by path"},
		{argv: []string{"./mygit", "status"}, wantRule: "program by path"},
		{argv: []string{"nosuchprogram"}, wantRule: "no row"},
		{argv: nil, wantRule: "empty"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.argv, " "), func(t *testing.T) {
			err := p.Check(tt.argv)
			if tt.wantRule == "" {
				if err != nil {
					t.Fatalf("Check(%q) = %v, want allowed", tt.argv, err)
				}
				return
			}
			var r *Refusal
			if !errors.As(err, &r) {
				t.Fatalf("Check(%q) = %v, want a *Refusal", tt.argv, err)
			}
			if got := [2]string{r.Row, r.Rule}; got != [2]string{tt.wantRow, tt.wantRule} {
				t.Errorf("Check(%q) refused by row %q rule %q, want row %q rule %q", tt.argv, r.Row, r.Rule, tt.wantRow, tt.wantRule)
			}
			if r.Reason == "" {
				t.Errorf("Check(%q): refusal has no reason for the model", tt.argv)
			}
		})
	}
}

func TestParse(t *testing.T) {
	t.Run("rows override and extend the default", func(t *testing.T) {
		p, err := Parse([]byte(`
timeout: 2m
programs:
  - program: curl
    allow: true
  - program: python3
    allow: true
    args: ["-m pytest"]
    timeout: 30m
`))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Check([]string{"curl", "x"}); err != nil {
			t.Errorf("curl after override: %v, want allowed", err)
		}
		if err := p.Check([]string{"python3", "-m", "pytest"}); err == nil {
			// "-m" is an option word and "pytest" positional: the form matches.
		} else {
			t.Errorf("python3 -m pytest: %v, want allowed", err)
		}
		if err := p.Check([]string{"git", "push"}); err == nil {
			t.Error("git push allowed after an unrelated override")
		}
		timeout, head, tail := p.limits("python3")
		if diff := cmp.Diff([]any{30 * time.Minute, DefaultOutputHead, DefaultOutputTail}, []any{timeout, head, tail}); diff != "" {
			t.Errorf("python3 limits (-want +got):\n%s", diff)
		}
		if timeout, _, _ := p.limits("go"); timeout != 2*time.Minute {
			t.Errorf("go timeout = %v, want the file's 2m", timeout)
		}
	})
	t.Run("mapping form, as in the repository configuration", func(t *testing.T) {
		var doc struct {
			Policy yaml.Node `yaml:"policy"`
		}
		src := "policy:\n  timeout: 5m\n  programs:\n    python3: {allow: true, args: [\"-m pytest\"]}\n    go: {allow: true}\n"
		if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
			t.Fatal(err)
		}
		p, err := ParseNode(&doc.Policy)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Check([]string{"python3", "-m", "pytest"}); err != nil {
			t.Errorf("python3 -m pytest: %v", err)
		}
		// The go row was replaced by one without args or deny forms.
		if err := p.Check([]string{"go", "get", "x"}); err != nil {
			t.Errorf("go get after replacing the go row: %v", err)
		}
		if p.Timeout != 5*time.Minute {
			t.Errorf("timeout = %v, want 5m", p.Timeout)
		}
		if _, err := ParseNode(&yaml.Node{}); err != nil {
			t.Errorf("ParseNode(empty) = %v, want the default", err)
		}
		bad := "policy:\n  programs:\n    go: {allowed: true}\n"
		if err := yaml.Unmarshal([]byte(bad), &doc); err != nil {
			t.Fatal(err)
		}
		if _, err := ParseNode(&doc.Policy); err == nil || !strings.Contains(err.Error(), "allowed") {
			t.Errorf("ParseNode with a typo = %v, want an error naming it", err)
		}
	})
	t.Run("replace drops the default", func(t *testing.T) {
		p, err := Parse([]byte("replace: true\nprograms:\n  - {program: go, allow: true}\n"))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Check([]string{"ls"}); err == nil {
			t.Error("ls allowed by a replacing table without it")
		}
		if got, want := len(p.Programs), 1; got != want {
			t.Errorf("rows = %d, want %d", got, want)
		}
	})
	t.Run("empty file is the default", func(t *testing.T) {
		p, err := Parse(nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(Default(), p); diff != "" {
			t.Errorf("Parse(empty) differs from Default() (-want +got):\n%s", diff)
		}
	})
	for _, tt := range []struct{ name, yaml, want string }{
		{"unknown field", "programs:\n  - {program: go, allowed: true}\n", "allowed"},
		{"path as program", "programs:\n  - {program: /bin/go, allow: true}\n", "bare name"},
		{"duplicate", "replace: true\nprograms:\n  - {program: go}\n  - {program: go}\n", "twice"},
		{"bad glob", "programs:\n  - {program: go, allow: true, deny: ['[']}\n", "bad pattern"},
		{"negative", "timeout: -1s\n", "negative"},
		{"unknown options syntax", "programs:\n  - {program: go, allow: true, options: posix}\n", "options"},
		{"bad unless glob", "programs:\n  - {program: grep, allow: true, deny: [{args: -r, unless: '['}]}\n", "bad pattern"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse = %v, want an error mentioning %q", err, tt.want)
			}
		})
	}
}

func TestRefusalMessage(t *testing.T) {
	err := Default().Check([]string{"git", "push"})
	got := err.Error()
	for _, want := range []string{`row "git"`, `deny "push"`, "pushes"} {
		if !strings.Contains(got, want) {
			t.Errorf("refusal %q does not name %q", got, want)
		}
	}
}
