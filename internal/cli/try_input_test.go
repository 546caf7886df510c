package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/demo"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/world"
)

// TestTryInputs: roadmap try says in one line what is wrong with what it
// was given, before it plays anything: no issue, two issues, a folder that
// is no git checkout, an issue file without a title, no model to run, a
// model whose key is unset. And the Job's configuration is the
// repository's with only what the local world needs changed.
func TestTryInputs(t *testing.T) {
	dir := t.TempDir()
	checkout := filepath.Join(dir, "checkout")
	noConfig := filepath.Join(dir, "bare-checkout")
	for _, d := range []struct {
		dir   string
		files map[string]string
	}{
		{checkout, map[string]string{"go.mod": "module x\n", demo.ConfigPath: "models:\n  - provider: openai\n    name: gpt-4.1\nchecks:\n  commands: [\"go vet ./...\"]\n"}},
		{noConfig, map[string]string{"go.mod": "module x\n"}},
	} {
		if err := world.WriteFiles(d.dir, d.files); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"init", "-q", d.dir}, {"-C", d.dir, "add", "-A"}, {"-C", d.dir, "commit", "-q", "-m", "x"}} {
			if _, err := world.Git(world.GitEnv(), ".", args...); err != nil {
				t.Fatal(err)
			}
		}
	}
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	issue := write("issue.md", "# Add greetings\n\nSay hello.\n")
	untitled := write("untitled.md", "\n\n   \n")
	environ := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	tests := []struct {
		name    string
		args    []string
		environ []string
		stderr  string
	}{
		{"no issue", []string{"-C", checkout}, nil, "roadmap try: no issue: pass --issue-file FILE, or --issue N"},
		{"two issues", []string{"-C", checkout, "--issue-file", issue, "--issue", "3"}, nil, "--issue-file and --issue name two issues"},
		{"not a checkout", []string{"-C", dir, "--issue-file", issue}, nil, "is not a git checkout (pass -C DIR)"},
		{"an issue file without a title", []string{"-C", checkout, "--issue-file", untitled}, nil, "no title: its first line (or a \"# \" heading) is the issue's title"},
		{"a missing issue file", []string{"-C", checkout, "--issue-file", filepath.Join(dir, "nope.md")}, nil, "--issue-file: open"},
		{"no configuration and no replay", []string{"-C", noConfig, "--issue-file", issue}, nil,
			"no model: pass --replay DIR (recorded model exchanges), or commit a .github/roadmap.yml"},
		{"a model's key unset", []string{"-C", checkout, "--issue-file", issue}, nil, "reads its key from OPENAI_API_KEY, which is unset"},
		{"a replay folder that is not one", []string{"-C", checkout, "--issue-file", issue, "--replay", filepath.Join(dir, "none")}, nil, "--replay "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := roadmapCLI(t, append(environ, tt.environ...), append([]string{"try"}, tt.args...)...)
			if code != ExitUsage || !strings.Contains(errOut, tt.stderr) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d and one line with %q", code, out, errOut, ExitUsage, tt.stderr)
			}
		})
	}

	// The Job's configuration: the repository's checks kept, the poll short,
	// main the base, no CI workflow to dispatch; replaying, the replay model
	// alone; else GitHub Models' key read from a name of its own.
	try := demo.Try{Checkout: &demo.Checkout{Files: map[string]string{demo.ConfigPath: "models:\n  - provider: github-models\n    name: openai/gpt-4.1\n" +
		"review:\n  model: openai/gpt-4.1\nimplement:\n  base_branch: trunk\n  ci_workflows: [ci.yml]\n  poll_interval: 30s\nchecks:\n  commands: [\"make test\"]\n"}}}
	data, err := try.JobConfig("")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("job", data)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Implement.PollInterval.Seconds() != 1 || cfg.Implement.BaseBranch != "main" || len(cfg.Implement.CIWorkflows) != 0 ||
		len(cfg.Checks.Commands) != 1 || cfg.Checks.Commands[0] != "make test" {
		t.Errorf("the Job's configuration:\n%s", data)
	}
	if len(cfg.Models) != 1 || cfg.Models[0].APIKeyEnv != demo.ModelsTokenEnv || !try.NeedsModelsToken() {
		t.Errorf("GitHub Models' key is not read from %s:\n%s", demo.ModelsTokenEnv, data)
	}
	try.Replay = llm.NewReplay(nil)
	if data, err = try.JobConfig("http://127.0.0.1:9/v1"); err == nil {
		cfg, err = config.Parse("job", data)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Models) != 1 || cfg.Models[0].Name != "replay" || cfg.Models[0].BaseURL != "http://127.0.0.1:9/v1" || cfg.Review.Model != "" {
		t.Errorf("replaying, the Job's configuration does not name the replay model alone:\n%s", data)
	}
}
