package adopt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/strength"
)

// Toolchain is the repository's language and how its tests are set up and
// run, as init detected it from the files at the work tree's root.
type Toolchain struct {
	// Language is "go", "python", "node", "rust", or "" when init found
	// none of their files.
	Language string `json:"name"`
	// Manager is the package manager: go, pip, npm, pnpm, yarn or cargo.
	Manager string `json:"manager,omitempty"`
	// DetectedBy is the file the language was detected by ("go.mod").
	DetectedBy string `json:"detected_by,omitempty"`
	// Checks are the checks.commands written to the configuration.
	Checks []string `json:"checks"`

	// setup is the checks job's steps between the checkout and the checks
	// action: the toolchain, and the dependencies fetched while the job
	// still has the network (the checks themselves run with loopback only,
	// docs/isolation.md). "" for Go, whose checks workflow is the reusable
	// roadmap-checks.yml with its own setup-go.
	setup string
	// policy is the configuration's policy rows that let the checks and the
	// agent run the language's test command, which the default table refuses.
	policy string
}

// The actions the setup steps use, pinned to a release's commit.
const (
	setupPython = "actions/setup-python@a309ff8b426b58ec0e2a45f0f869d46889d02405 # v6.2.0"
	setupNode   = "actions/setup-node@6044e13b5dc448c55e2357c09f80417699197238 # v6.2.0"
)

// DetectToolchain reads the work tree's root for the files that name its
// language. A repository with several (a Go service with a package.json for
// its docs) is taken as the first of Go, Rust, Python, Node: the language of
// the build, before the tooling around it.
func DetectToolchain(dir string) (Toolchain, error) {
	has := func(name string) (bool, error) {
		_, err := os.Stat(filepath.Join(dir, name))
		if err == nil {
			return true, nil
		}
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("detect the language: %w", err)
	}
	first := func(names ...string) (string, error) {
		for _, n := range names {
			ok, err := has(n)
			if err != nil || ok {
				return n, err
			}
		}
		return "", nil
	}

	if ok, err := has("go.mod"); err != nil || ok {
		return goToolchain(), err
	}
	if ok, err := has("Cargo.toml"); err != nil || ok {
		pinned, err2 := first("rust-toolchain.toml", "rust-toolchain")
		return rustToolchain(pinned != ""), errors.Join(err, err2)
	}
	if by, err := first("pyproject.toml", "setup.cfg", "setup.py", "requirements.txt"); err != nil || by != "" {
		reqs, err2 := has("requirements.txt")
		version, err3 := first(".python-version")
		return pythonToolchain(by, reqs, version != ""), errors.Join(err, err2, err3)
	}
	if ok, err := has("package.json"); err != nil || ok {
		lock, err2 := first("pnpm-lock.yaml", "yarn.lock", "package-lock.json", "npm-shrinkwrap.json")
		nvmrc, err3 := first(".nvmrc", ".node-version")
		return nodeToolchain(lock, nvmrc), errors.Join(err, err2, err3)
	}
	return Toolchain{Checks: []string{}}, nil
}

func goToolchain() Toolchain {
	return Toolchain{Language: "go", Manager: "go", DetectedBy: "go.mod", Checks: []string{"go vet ./...", "go test ./..."}}
}

func rustToolchain(pinned bool) Toolchain {
	install := "rustup toolchain install stable --profile minimal && rustup default stable"
	if pinned {
		// rustup installs the toolchain the file names on its first use.
		install = "rustup show active-toolchain"
	}
	return Toolchain{
		Language: "rust", Manager: "cargo", DetectedBy: "Cargo.toml",
		Checks: []string{"cargo build --offline", "cargo test --offline"},
		setup: `      # The runner's rustup: the toolchain, and the crates fetched while the job has the network.
      - name: Set up Rust
        run: ` + install + `
      - name: Fetch the crates
        run: cargo fetch
`,
		policy: `policy:
  programs:
    # The default table refuses cargo (it fetches crates); the checks run it offline.
    cargo:
      allow: true
      args: [build, test, check, clippy, fmt, tree, metadata]
`,
	}
}

// StrengthTool is a tool that test strength (internal/strength) runs on a
// language's changes and that init's setup installs: always at one version,
// never the latest, so a new release cannot change what a score means.
type StrengthTool struct {
	Name, Version string
	// Install is the setup's line that installs it, pinned.
	Install string
}

// strengthTools are the tools init's setup installs for test strength, by
// language. Python's mutants are made by roadmap's own mutator on python3's
// ast module (nothing to install) and run by pytest, pinned here.
// JavaScript's are made by StrykerJS's own mutators
// (@stryker-mutator/instrumenter, strength.StrykerVersion), installed out of
// the tree, under $RUNNER_TEMP/roadmap-strength, where roadmap looks for it
// (strength.DefaultInstrumenterDir); roadmap runs them itself, not through
// StrykerJS, whose mutants the tests could read. Rust's cargo-mutants is not
// installed: roadmap does not run it yet, since it writes its mutants where
// the tests can read them, and a Rust change says "not measured:
// cargo-mutants not installed". Go needs nothing but go.
var strengthTools = map[string][]StrengthTool{
	"python": {{Name: "pytest", Version: "8.4.2", Install: "python -m pip install pytest==8.4.2"}},
	"node": {{Name: "@stryker-mutator/instrumenter", Version: strength.StrykerVersion,
		Install: `npm install --prefix "$RUNNER_TEMP/roadmap-strength" --no-save --no-audit --no-fund --ignore-scripts @stryker-mutator/instrumenter@` + strength.StrykerVersion}},
}

func pythonToolchain(by string, requirements, versionFile bool) Toolchain {
	version := `          python-version: "3.x"`
	if versionFile {
		version = `          python-version-file: .python-version`
	}
	var install []string
	if requirements {
		install = append(install, "python -m pip install -r requirements.txt")
	}
	if by != "requirements.txt" {
		install = append(install, "python -m pip install -e .")
	}
	for _, t := range strengthTools["python"] {
		install = append(install, t.Install)
	}
	return Toolchain{
		Language: "python", Manager: "pip", DetectedBy: by,
		Checks: []string{"python3 -m pytest -q"},
		setup: `      - uses: ` + setupPython + `
        with:
` + version + `
      # The dependencies, while the job has the network.
      - name: Install the dependencies
        run: |
          ` + strings.Join(install, "\n          ") + `
`,
		policy: `policy:
  programs:
    # The default table refuses interpreters; this row allows the tests alone.
    python3:
      allow: true
      args: ["-m pytest"]
`,
	}
}

func nodeToolchain(lock, versionFile string) Toolchain {
	t := Toolchain{Language: "node", Manager: "npm", DetectedBy: "package.json"}
	version := `          node-version: lts/*`
	if versionFile != "" {
		version = `          node-version-file: ` + versionFile
	}
	cache, install := "npm", "npm ci"
	switch lock {
	case "pnpm-lock.yaml":
		t.Manager, cache, install = "pnpm", "pnpm", "pnpm install --frozen-lockfile"
	case "yarn.lock":
		t.Manager, cache, install = "yarn", "yarn", "yarn install --frozen-lockfile"
	case "":
		// No lockfile: npm ci refuses to run without one.
		cache, install = "", "npm install"
	}
	t.Checks = []string{t.Manager + " test"}
	var pm string
	if t.Manager != "npm" {
		// setup-node's cache needs the package manager on the PATH first.
		pm = `      - name: Install ` + t.Manager + `
        run: npm install --global ` + t.Manager + `
`
	}
	with := version
	if cache != "" {
		with += "\n          cache: " + cache
	}
	t.setup = pm + `      - uses: ` + setupNode + `
        with:
` + with + `
      # The dependencies, while the job has the network.
      - name: Install the dependencies
        run: ` + install + `
`
	for _, tool := range strengthTools["node"] {
		t.setup += `      # Test strength's JavaScript mutants: StrykerJS's mutators, pinned, out of the tree.
      - name: Install ` + tool.Name + `
        run: ` + tool.Install + `
`
	}
	if t.Manager != "npm" {
		t.policy = `policy:
  programs:
    # The default table refuses ` + t.Manager + ` (it downloads packages); this row allows its tests.
    ` + t.Manager + `:
      allow: true
      args: [test, run]
`
	}
	return t
}

// PolicyRows is the toolchain's policy rows as a policy file's text
// (internal/policy), the rows init writes under the configuration's
// `policy:` for its checks to run; nil when the default table allows them.
func (t Toolchain) PolicyRows() []byte {
	rest, ok := strings.CutPrefix(t.policy, "policy:\n")
	if !ok {
		return nil
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(rest, "\n") {
		b.WriteString(strings.TrimPrefix(l, "  "))
	}
	return []byte(b.String())
}

// RunTimeChecks are the checks a Job runs besides the plan's verify
// commands, and the policy rows they need: the configuration's
// checks.commands when it names any; else, unless checks.detect is off,
// the ones init would write for the repository at dir (DetectToolchain),
// with by naming the file they were detected by ("" when none).
func RunTimeChecks(c *config.Config, dir string) (cmds []string, rows []byte, by string, err error) {
	if len(c.Checks.Commands) > 0 || !c.Checks.Detect {
		return c.Checks.Commands, nil, "", nil
	}
	t, err := DetectToolchain(dir)
	if err != nil || len(t.Checks) == 0 {
		return nil, nil, "", err
	}
	return t.Checks, t.PolicyRows(), t.DetectedBy, nil
}
