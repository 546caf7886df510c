package cli

import (
	"fmt"
	"io"
	"strings"
)

// What a verb's help says beyond its flags: a paragraph for the verbs
// whose effects a person should know before running them, and EXAMPLES,
// real command lines as the gh CLI shows them. TestHelpHasExamples parses
// every example with the verb's own flag set, so one that names a flag the
// verb lacks fails the test.

// verbAbout is a paragraph shown under a verb's usage line.
var verbAbout = map[string]string{
	"init": "init writes files in the work tree, and on GitHub it creates, before you have committed\n" +
		"anything, the labels roadmap uses that the repository lacks (roadmap:stage, roadmap:implement,\n" +
		"roadmap:dashboard, …) and the dashboard issue (unless one labelled roadmap:dashboard is open).\n" +
		"It says what it will create before it creates it; --dry-run prints all of it, files included,\n" +
		"and creates and writes nothing. A second run changes nothing.",
	"demo": "Nothing leaves the machine: the GitHub and the model are local fakes.",
	"try": "try plays an item on the committed tree at HEAD of your checkout, copied to a scratch bare\n" +
		"remote, against a local fake GitHub. It only reads your checkout (no write to its .git, index,\n" +
		"work tree or remotes) and, with --issue, reads one issue from GitHub (a GET). Your CI is not\n" +
		"run: the PR's CI status is played; the Job's own checks do run, locally, behind the boundary.\n" +
		"The model is --replay's recorded exchanges, else the models your .github/roadmap.yml names.",
	"mask":  "Reads stdin and writes it to stdout with every secret masked.",
	"stage": "Run by the roadmap workflow in GitHub Actions; run by hand it needs the same environment\n(GITHUB_REPOSITORY, GITHUB_EVENT_PATH, a token, a model key).",
	"implement": "Run by the roadmap workflow in GitHub Actions; run by hand it needs the same environment\n" +
		"(GITHUB_REPOSITORY, a token, a model key) and a checkout of the item's branch.",
}

// verbExamples are each verb's examples: a line starting "# " says what
// the next one does; every other line is a command line.
var verbExamples = map[string][]string{
	"version": {"roadmap version", "roadmap version --jq .version"},
	"stage":   {"# In a workflow step, for the issue that triggered it:", "roadmap stage --issue 12 --json"},
	"implement": {"# In a workflow step, with the item's budget:",
		"roadmap implement --issue 12 --budget-usd 5 --json"},
	"report": {"# After the implement job, in the same workflow:",
		"roadmap report --issue 12 --job-result failure --workflow roadmap.yml"},
	"wake": {"# What would be dispatched today, without dispatching:", "roadmap wake --dry-run -R acme/widgets",
		"roadmap wake --workflow roadmap.yml --dashboard 1"},
	"checks": {"# The plan's checks on the checked-out head, without setting a status:",
		"roadmap checks --no-status --base main"},
	"review": {"# Review PR 34 from a checkout of its head:", "roadmap review --pr 34 --base main"},
	"demo":   {"roadmap demo", "# Keep the fake GitHub's state, the repositories and the traces:", "roadmap demo --keep /tmp/roadmap-demo"},
	"try": {"# An issue written in a file, on the checkout in the current directory, with your models:",
		"roadmap try --issue-file issue.md",
		"# Issue 12 of acme/widgets (read-only), recorded model exchanges, everything kept:",
		"roadmap try -C ~/src/widgets -R acme/widgets --issue 12 --replay fixtures --keep /tmp/try",
		"roadmap try --issue-file issue.md --replay fixtures --jq .result"},
	"mask": {"roadmap mask < job.log > job-masked.log", "roadmap mask --secret \"$MY_KEY\" < notes.txt"},
	"explain": {"roadmap explain 12", "roadmap explain 12 -R acme/widgets --trace",
		"roadmap explain 12 --jq '.jobs[] | \"\\(.job) \\(.result) $\\(.usd)\"'"},
	"console":           {"roadmap console 12 --follow", "roadmap console 12 -R acme/widgets --json"},
	"metrics":           {"roadmap metrics", "GH_REPO=acme/widgets roadmap metrics --since 7d --jq .success_rate"},
	"tracker status":    {"roadmap tracker status 40", "roadmap tracker status 40 -R acme/widgets --json"},
	"dashboard refresh": {"roadmap dashboard refresh", "roadmap dashboard refresh --since all -R acme/widgets"},
	"dashboard eval": {"roadmap eval gates --json > gates.json",
		"roadmap dashboard eval --from gates.json --from stage.json"},
	"init": {"# See what init would write and create on GitHub, changing nothing:", "roadmap init --dry-run",
		"# Set up the repository of the clone in the current directory:", "roadmap init",
		"roadmap init -R acme/widgets --workdir ~/src/widgets --provider anthropic"},
	"record show":   {"roadmap record show --body-file issue.md", "gh issue view 12 --json body --jq .body | roadmap record show --body-file - --json"},
	"plan validate": {"roadmap plan validate .", "roadmap plan validate openspec/changes/add-greetings --body-file issue.md --json"},
	"classify":      {"roadmap classify --log job.log --conclusion failure", "roadmap classify --log job.log --jq .class"},
	"eval gates":    {"roadmap eval gates", "roadmap eval gates --skip-gate acceptance-map --json"},
	"eval stage": {"roadmap eval stage", "# With a real model instead of the recordings:",
		"roadmap eval stage --provider github-models --model openai/gpt-4o-mini"},
	"eval implement": {"roadmap eval implement", "roadmap eval implement --floor 0.8 --json"},
	"faults run":     {"roadmap faults run", "roadmap faults run --seeds 3 --only kill --keep /tmp/faults"},
	"ci fail-to-pass": {"roadmap ci fail-to-pass --base origin/main",
		"roadmap ci fail-to-pass --base origin/main --test 'go test ./...' -C ~/src/widgets --json"},
	"ci test-strength": {"roadmap ci test-strength --base origin/main", "roadmap ci test-strength --base origin/main --floor 0.6 --jq .score"},
	"dev replay-model": {"roadmap dev replay-model --fixtures testdata/golden/stage/stage-clean/fixtures --addr 127.0.0.1:8081"},
	"dev fake-github":  {"roadmap dev fake-github --addr 127.0.0.1:8080 --state /tmp/fake-github.json -R acme/widgets"},
}

// writeVerbAbout writes the paragraph of verb name, if it has one.
func writeVerbAbout(w io.Writer, name string) {
	if about := verbAbout[name]; about != "" {
		fmt.Fprintf(w, "\n%s\n", about)
	}
}

// writeVerbExamples writes the EXAMPLES section of verb name.
func writeVerbExamples(w io.Writer, name string) {
	ex := verbExamples[name]
	if len(ex) == 0 {
		return
	}
	fmt.Fprint(w, "\nEXAMPLES\n")
	for _, l := range ex {
		if strings.HasPrefix(l, "# ") {
			fmt.Fprintf(w, "  %s\n", l)
			continue
		}
		fmt.Fprintf(w, "  $ %s\n", l)
	}
}
