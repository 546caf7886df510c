package adopt

import "strings"

// file is one file init writes, by its path in the repository.
type file struct{ path, text string }

// The paths init writes.
const (
	CallerPath = ".github/workflows/roadmap.yml"
	ChecksPath = ".github/workflows/roadmap-checks.yml"
	ConfigPath = ".github/roadmap.yml"
)

// files are the caller workflow, the checks workflow and the configuration,
// for roadmap's reusable workflows at ref and the repository's default
// branch. The caller is docs/examples/roadmap-caller.yml, named roadmap.yml.
func files(ref, defaultBranch string) []file {
	r := strings.NewReplacer("@REF", "@"+ref, "BRANCH", defaultBranch)
	return []file{
		{CallerPath, r.Replace(callerYAML)},
		{ChecksPath, r.Replace(checksYAML)},
		{ConfigPath, r.Replace(configYAML)},
	}
}

const callerYAML = `# Written by roadmap init. It runs roadmap when an issue gets the roadmap:implement label,
# when report dispatches a continuation, and when a person answers a question on an issue
# waiting for input (docs/install.md). Pin the roadmap references to a release's commit SHA.
name: roadmap

on:
  issues:
    types: [labeled]
  workflow_dispatch:
    inputs:
      issue:
        description: The issue to implement.
        required: true
        type: number
      attempt:
        description: The Job's number for the item (set by report for a continuation).
        required: false
        type: number
        default: 0
      record-comment:
        description: The issue's record comment id (set by report for a continuation).
        required: false
        type: number
        default: 0
  issue_comment:
    types: [created]

permissions: {}

jobs:
  roadmap:
    if: >-
      (github.event_name == 'issues' && github.event.label.name == 'roadmap:implement') ||
      github.event_name == 'workflow_dispatch'
    uses: roadmap-dev/roadmap/.github/workflows/roadmap.yml@REF
    permissions:
      actions: write
      contents: write
      pull-requests: write
      issues: write
      statuses: write
      checks: read
      models: read
    with:
      issue: ${{ github.event.issue.number || inputs.issue }}
      attempt: ${{ inputs.attempt || 0 }}
      record-comment: ${{ inputs.record-comment || 0 }}
      timeout-minutes: 60
      dispatch-workflow: roadmap.yml

  # A reply on an issue waiting for input: report resumes the item when the author has write
  # access and ignores anyone else.
  answer:
    if: >-
      github.event_name == 'issue_comment' && !github.event.issue.pull_request &&
      contains(github.event.issue.labels.*.name, 'roadmap:needs-input')
    runs-on: ubuntu-latest
    timeout-minutes: 5
    # No concurrency group: GitHub keeps one pending run per group and replaces it with a
    # later one, so a later comment's run could drop this answer (docs/install.md).
    permissions:
      actions: write        # dispatch the continuation
      checks: read          # a killed implement job's annotations
      contents: read        # the configuration
      issues: write         # the record, the labels, the comments
      pull-requests: read   # the PR's head, for the roadmap/implement status
      statuses: write       # roadmap/implement
    steps:
      # Only the configuration: report reads the labels and the caps from it.
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
        with:
          sparse-checkout: .github
          persist-credentials: false
      - uses: roadmap-dev/roadmap/actions/report@REF
        with:
          issue: ${{ github.event.issue.number }}
          workflow: roadmap.yml
`

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
