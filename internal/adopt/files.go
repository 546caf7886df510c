package adopt

import (
	_ "embed"
	"strings"
)

// file is one file init writes, by its path in the repository.
type file struct{ path, text string }

// The paths init writes.
const (
	CallerPath = ".github/workflows/roadmap.yml"
	ChecksPath = ".github/workflows/roadmap-checks.yml"
	ConfigPath = ".github/roadmap.yml"
	WakePath   = ".github/workflows/roadmap-wake.yml"
)

// files are the caller workflow, the checks workflow and the configuration,
// for roadmap's reusable workflows at ref and the repository's default
// branch. The caller is docs/examples/roadmap-caller.yml, named roadmap.yml.
func files(ref, defaultBranch string) []file {
	r := strings.NewReplacer("@REF", "@"+ref, "BRANCH", defaultBranch)
	return []file{
		{CallerPath, r.Replace(callerYAML)},
		{ChecksPath, r.Replace(checksYAML)},
		{WakePath, r.Replace(wakeYAML)},
		{ConfigPath, r.Replace(configYAML)},
	}
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
      contents: read
      statuses: write
`

const configYAML = `# roadmap's configuration (docs/configuration.md), written by roadmap init. A key left out
# takes its default.
implement:
  # The branch roadmap's pull requests target: the repository's default branch.
  base_branch: BRANCH
`
