package adopt

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/config"
)

// file is one file init writes, by its path in the repository.
type file struct{ path, text string }

// The paths init writes.
const (
	CallerPath = ".github/workflows/roadmap.yml"
	ChecksPath = ".github/workflows/roadmap-checks.yml"
	ConfigPath = ".github/roadmap.yml"
	WakePath   = ".github/workflows/roadmap-wake.yml"
	// AgentsPath is the repository's instructions for agents, roadmap's
	// among them (docs/agent.md, "The repository's instructions"): init
	// writes a stub when the repository has no instructions file.
	AgentsPath = "AGENTS.md"
	// EvalPath is the scheduled eval workflow, written with --eval-workflow.
	EvalPath = ".github/workflows/roadmap-eval.yml"
	// SetupDir is the project's setup, a composite action the caller names
	// in the reusable workflow's setup input (docs/install.md, "The
	// project's setup"); init writes it for a language with setup steps.
	SetupDir  = ".github/actions/roadmap-setup"
	SetupPath = SetupDir + "/action.yml"
)

// files are the caller workflow, the checks workflow, the wake workflow and
// the configuration, for roadmap's reusable workflows at pin, the
// repository's default branch, its toolchain and its CI. The caller is
// docs/examples/roadmap-caller.yml, named roadmap.yml.
//
// dashboard is the dashboard issue the caller and the wake workflow name (0
// on a dry run that would open it: no issue, no day budget). evalModel,
// when not "", adds the scheduled eval workflow on GitHub Models with that
// model. provider is the one whose ladder the configuration holds
// (Providers).
func files(pin Pin, defaultBranch string, tc Toolchain, ci CI, dashboard int, evalModel string, provider Provider) []file {
	// Every @REF ends its line, so the pin's comment can follow it.
	r := strings.NewReplacer("@REF", "@"+pin.uses(), "BRANCH", defaultBranch, "DASHBOARD_ISSUE", strconv.Itoa(dashboard), "EVAL_MODEL", evalModel)
	checks, caller := checksYAML, callerYAML
	if tc.setup != "" {
		checks = checksStepsYAML(tc)
		// Both jobs that call roadmap.yml run the project's setup first.
		caller = strings.ReplaceAll(caller, "      dispatch-workflow: roadmap.yml\n",
			"      dispatch-workflow: roadmap.yml\n      setup: "+SetupDir+"\n")
	}
	out := []file{
		{CallerPath, r.Replace(caller)},
		{ChecksPath, r.Replace(checks)},
		{WakePath, r.Replace(wakeYAML)},
		{ConfigPath, configText(pin.Ref, defaultBranch, tc, ci, provider)},
	}
	if evalModel != "" {
		out = append(out, file{EvalPath, r.Replace(evalYAML)})
	}
	if tc.setup != "" {
		out = append(out, file{SetupPath, setupActionYAML(tc)})
	}
	return out
}

// setupActionYAML is the project's setup as a composite action: the
// language's setup steps, which the checks workflow runs in its job, for the
// stage and implement jobs of roadmap.yml to run before roadmap. A composite
// action's run steps must name their shell.
func setupActionYAML(tc Toolchain) string {
	var b strings.Builder
	b.WriteString(`# Written by roadmap init: the project's setup, which roadmap's stage and implement jobs run
# after the checkout and before roadmap (the caller's setup input; docs/install.md, "The
# project's setup"), so the agent's and the checks' commands find the ` + tc.Language + ` toolchain
# and the dependencies (` + tc.DetectedBy + `). Change the steps as your tests need.
name: roadmap-setup
description: The ` + tc.Language + ` toolchain and dependencies roadmap's jobs need.
runs:
  using: composite
  steps:
`)
	for _, line := range strings.Split(strings.TrimRight(tc.setup, "\n"), "\n") {
		// The checks job's steps are indented six spaces; a composite
		// action's four.
		line = strings.TrimPrefix(line, "  ")
		trimmed := strings.TrimLeft(line, " ")
		indent := line[:len(line)-len(trimmed)]
		switch {
		case strings.HasPrefix(trimmed, "run: "):
			b.WriteString(indent + "shell: bash\n" + line + "\n")
		case strings.HasPrefix(trimmed, "- run: "):
			b.WriteString(line + "\n" + indent + "  shell: bash\n")
		default:
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// callerYAML is docs/examples/roadmap-caller.yml as init writes it
// (TestInitCallerIsTheExample keeps the two the same).
//
//go:embed caller.yml
var callerYAML string

// wakeYAML is docs/examples/roadmap-wake.yml as init writes it
// (TestInitWakeIsTheExample keeps the two the same): roadmap wake on a
// schedule, for the items waiting for the day's budget.
//
//go:embed wake.yml
var wakeYAML string

// evalYAML is docs/examples/roadmap-eval.yml as init writes it
// (TestInitEvalIsTheExample keeps the two the same): the golden suites
// weekly on GitHub Models, their scores posted to the dashboard.
//
//go:embed eval.yml
var evalYAML string

// checksYAML runs the plan's group checks on every pull request: one with
// no plan passes (roadmap/checks success, "no plan"), and one from a fork,
// whose token is read-only, runs without a status and says so in the job's
// summary, so neither fails (docs/install.md, "The checks workflow").
const checksYAML = `# Written by roadmap init: the plan's group checks on every pull request, as the
# roadmap/checks status. A pull request with no plan passes; one from a fork (whose token
# cannot set a status) runs, sets no status and says so in the job's summary.
name: roadmap-checks

on:
  pull_request:
    types: [opened, synchronize, reopened, ready_for_review]

permissions: {}

jobs:
  checks:
    uses: roadmap-dev/roadmap/.github/workflows/roadmap-checks.yml@REF
    permissions:
      id-token: write  # the pin job: which roadmap commit this call runs (docs/install.md)
      contents: read
      statuses: write
`

// checksStepsYAML is the checks workflow for a language whose tests need a
// toolchain and dependencies set up first: the steps of the reusable
// roadmap-checks.yml, with the language's setup in place of setup-go.
func checksStepsYAML(tc Toolchain) string {
	return `# Written by roadmap init: the plan's group checks on every pull request, as the
# roadmap/checks status. A pull request with no plan passes; one from a fork (whose token
# cannot set a status) runs, sets no status and says so in the job's summary. The setup
# steps are for ` + tc.Language + ` (` + tc.DetectedBy + `); change them as your tests need.
name: roadmap-checks

on:
  pull_request:
    types: [opened, synchronize, reopened, ready_for_review]

permissions: {}

jobs:
  checks:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    permissions:
      contents: read
      statuses: write
    # One run per PR; a newer push makes the older run moot.
    concurrency:
      group: roadmap-checks-${{ github.event.pull_request.number }}
      cancel-in-progress: true
    steps:
      # fetch-depth 0 brings the base branch, which fail-to-pass needs for its merge base.
      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1
        with:
          fetch-depth: 0
          persist-credentials: false
` + tc.setup + `      - uses: roadmap-dev/roadmap/actions/checks@REF
`
}

// configText is the configuration: the base branch, the CI workflows the
// watch dispatches, the checks and the policy rows for the language.
// SchemaURL is where an editor finds the configuration's JSON Schema
// (internal/config/roadmap.schema.json) at roadmap's ref.
func SchemaURL(ref string) string {
	return "https://raw.githubusercontent.com/roadmap-dev/roadmap/" + ref + "/internal/config/roadmap.schema.json"
}

func configText(ref, defaultBranch string, tc Toolchain, ci CI, provider Provider) string {
	var b strings.Builder
	// The modeline gives an editor running the YAML language server the schema of the
	// configuration at the roadmap version the workflows pin (docs/configuration.md).
	b.WriteString("# yaml-language-server: $schema=" + SchemaURL(ref) + "\n")
	b.WriteString(`# roadmap's configuration (docs/configuration.md), written by roadmap init. A key left out
# takes its default.
` + ladderYAML(provider) + `implement:
  # The branch roadmap's pull requests target: the repository's default branch.
  base_branch: ` + defaultBranch + "\n")
	if len(ci.Dispatchable) > 0 {
		b.WriteString(`  # Your CI workflows with on: workflow_dispatch. roadmap pushes with GITHUB_TOKEN, whose
  # pushes start no workflow run, so the watch dispatches these on the work branch. With a
  # push token (ROADMAP_PUSH_TOKEN or a GitHub App) remove this, or CI runs twice.
  ci_workflows: [` + strings.Join(ci.Dispatchable, ", ") + "]\n")
	}
	b.WriteString(`  # Mutants on each group's changed, covered lines (Go, Python, JavaScript; a Rust change
  # says "not measured" without cargo-mutants): a test that would pass on broken code goes
  # back to the agent, and a score under the floor keeps the PR a draft. On by default.
  test_strength: true
  test_strength_floor: 0.6
`)
	b.WriteString(`review:
  # An independent review of the diff before the PR is marked ready (docs/review.md).
  enabled: true
`)
	b.WriteString(`# The dashboard issue's alerts (docs/dashboard.md), at their defaults; name who they mention.
# alerts:
#   owners: ["@your-org/your-team"]  # @login or @org/team, mentioned in an alert's comment
#   stops_per_day: 3                 # stops of one failure class across items in 24 hours; 0 = off
#   day_budget_share: 0.8            # the day's spend reaches this share of budgets.day.usd; 0 = off
`)
	if len(tc.Checks) > 0 {
		b.WriteString(`checks:
  # Run after every task group and at the head, for ` + tc.Language + ` (` + tc.DetectedBy + `).
  commands:
`)
		for _, c := range tc.Checks {
			b.WriteString(`    - "` + c + "\"\n")
		}
	}
	b.WriteString(tc.policy)
	return b.String()
}

// DefaultProvider is the provider init sets up without --provider: GitHub
// Models, which the workflows' GITHUB_TOKEN reaches with the models: read
// permission, so it needs no secret.
const DefaultProvider = "github-models"

// Providers are the providers init writes a ladder for (config.InitLadders),
// each with the variable its models read their key from: the name
// internal/llm reads by default, written as api_key_env so the
// configuration names it. The caller passes OPENAI_API_KEY and
// ANTHROPIC_API_KEY from the repository's secrets of those names to
// roadmap's stage and implement jobs (TestInitProviderSecretReachesModel);
// GITHUB_TOKEN is the workflow's own.
var Providers = []Provider{
	{Name: "github-models", KeyEnv: "GITHUB_TOKEN", Title: "GitHub Models"},
	{Name: "openai", KeyEnv: "OPENAI_API_KEY", Title: "OpenAI", KeyPage: "https://platform.openai.com/api-keys"},
	{Name: "anthropic", KeyEnv: "ANTHROPIC_API_KEY", Title: "Anthropic", KeyPage: "https://console.anthropic.com/settings/keys"},
}

// Provider is one provider init can set up.
type Provider struct {
	// Name is the provider as the configuration spells it.
	Name string
	// KeyEnv is the variable its models read the key from.
	KeyEnv string
	// Title is the provider's name for people.
	Title string
	// KeyPage is where a person makes a key; "" for GitHub Models, whose
	// key is the workflow's token.
	KeyPage string
}

// Secret is the repository secret a person must add for the provider: ""
// for GitHub Models, whose key is the workflow's own GITHUB_TOKEN.
func (p Provider) Secret() string {
	if p.KeyEnv == "GITHUB_TOKEN" {
		return ""
	}
	return p.KeyEnv
}

// FindProvider is the provider init sets up by that name; an error names
// the ones it knows.
func FindProvider(name string) (Provider, error) {
	var names []string
	for _, p := range Providers {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Provider{}, fmt.Errorf("init sets up the provider %s, not %q (another provider: write models: by hand, docs/models.md)", strings.Join(names, ", "), name)
}

// ladderYAML is the models: key with config.InitLadders' two tiers for
// provider: the implementer starts on the first, repairs climb to the
// second, and the verifier and the reviewer take the second, so they judge
// with another model than the one whose work they judge. Each tier names
// the variable its key is read from.
func ladderYAML(p Provider) string {
	var b strings.Builder
	b.WriteString(`# The model ladder (docs/models.md): the implementer starts on the first model and repairs
# climb to the second; the verifier and the reviewer use the second, another model than the one
# whose work they judge. Built-in prices cover both; prices: overrides them.
`)
	if s := p.Secret(); s != "" {
		b.WriteString("# The key is the repository secret " + s + ", which the caller passes to roadmap's jobs.\n")
	} else {
		b.WriteString("# The key is the workflow's GITHUB_TOKEN, with the models: read permission the caller grants.\n")
	}
	b.WriteString("models:\n")
	for _, m := range config.InitLadders[p.Name] {
		b.WriteString("  - provider: " + m.Provider + "\n    name: " + m.Name + "\n    api_key_env: " + p.KeyEnv + "\n")
		b.WriteString("    input_window: " + strconv.Itoa(m.InputWindow) + "\n    max_output: " + strconv.Itoa(m.MaxOutput) + "\n")
	}
	return b.String()
}

// instructionFiles are the files roadmap's agents read as the repository's
// instructions (internal/instructions): with any of them, init writes no
// stub.
var instructionFiles = []string{AgentsPath, ".github/copilot-instructions.md", "CLAUDE.md"}

// agentsStub is a short AGENTS.md for a person to fill in: how the project
// is checked (the commands init found) and the headings the agents look for.
func agentsStub(tc Toolchain) string {
	var b strings.Builder
	b.WriteString("# AGENTS.md\n\n" +
		"Instructions for coding agents (roadmap's planner, implementer and reviewer read this file from the default branch).\n" +
		"Keep it short: conventions an agent cannot guess from the code.\n\n## Checks\n\n")
	if len(tc.Checks) == 0 {
		b.WriteString("- (the commands that build and test the project)\n")
	}
	for _, c := range tc.Checks {
		b.WriteString("- `" + c + "`\n")
	}
	b.WriteString("\n## Conventions\n\n- (how code and tests are laid out; what not to touch)\n")
	return b.String()
}
