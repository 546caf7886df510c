package deptest

import (
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/roadmap-dev/roadmap"

// allowed lists, for each package that has a rule, the internal packages it may
// import. Packages not listed (cli, implement, report, stage, demo, eval …) are
// phase packages and may import anything.
var allowed = map[string][]string{
	// record may import text only, itself importing nothing: the record
	// comment shows money as every view does (text.USD).
	"internal/record":     {"internal/text"},
	"internal/event":      {},
	"internal/plan":       {"internal/nofollow"},
	"internal/gates":      {"internal/plan", "internal/nofollow", "internal/symbols", "internal/text"},
	"internal/symbols":    {},
	"internal/unidiff":    {},
	"internal/retry":      {},
	"internal/text":       {},
	"internal/redact":     {},
	"internal/failure":    {"internal/text"},
	"internal/trace":      {"internal/text"},
	"internal/policy":     {"internal/sandbox"},
	"internal/sandbox":    {},
	"internal/agent":      {"internal/nofollow"},
	"internal/nofollow":   {},
	"internal/llm":        {"internal/agent", "internal/clock", "internal/retry", "internal/text"},
	"internal/github":     {"internal/record", "internal/clock", "internal/retry"},
	"internal/clock":      {},
	"internal/githubfake": {},
	"internal/git":        {},
	"internal/checks":     {"internal/policy", "internal/sandbox"},
	"internal/f2p":        {"internal/git", "internal/policy", "internal/sandbox", "internal/nofollow", "internal/checks", "internal/inputerr"},
	"internal/actionsio":  {},
	"internal/config":     {},
	// The one error a caller can fix, at the CLI's edge: imports nothing.
	"internal/inputerr": {},
	// The repository's instructions: read through a small Reader (git's),
	// rendered as text; imports nothing.
	"internal/instructions": {"internal/text"},
	// The quality before ready: the review reads through the agent's tools,
	// test strength runs commands only through a check runner.
	"internal/review":   {"internal/agent", "internal/instructions", "internal/nofollow", "internal/text", "internal/unidiff"},
	"internal/strength": {"internal/checks", "internal/git", "internal/unidiff"},
	// An item's state and cost from its record: pure, shared by the
	// dashboard, metrics and alerts.
	"internal/items": {"internal/record", "internal/trace"},
	// The dashboard issue: rendered from items' lines, kept through the
	// GitHub client.
	"internal/dashboard": {"internal/items", "internal/record", "internal/trace", "internal/github", "internal/clock", "internal/text"},
	// The record store: the record's one door, on the GitHub client.
	"internal/recordstore": {"internal/github", "internal/record"},
	// The console reads GitHub and the record; it runs nothing.
	"internal/console": {"internal/github", "internal/record", "internal/recordstore", "internal/trace", "internal/actionsio", "internal/inputerr", "internal/text"},
	// Pipeline outcomes across items: a pure function of their state.
	"internal/metrics": {"internal/items", "internal/record"},
	// The tracker check, and the read of an item's blockers, read GitHub
	// through internal/github's domain types only.
	"internal/tracker": {"internal/blockers", "internal/github", "internal/issueref", "internal/text"},
	// The one grammar of issue references in a person's text: imports
	// nothing (stdAllowed too).
	"internal/issueref": {},
	// What an item's blockers say: a pure decision on the reference
	// grammar (stdAllowed too).
	"internal/blockers": {"internal/issueref"},
	// Claims on units: git refs, the plan's paths as the gates read them,
	// a holder's run read through the GitHub client, bounds from the record.
	// The day ledger: comments on the dashboard issue, read through the
	// GitHub client; the Jobs read it, report writes it.
	"internal/ledger": {"internal/github", "internal/record"},
	"internal/claims": {"internal/git", "internal/github", "internal/plan", "internal/gates", "internal/record"},
	// implement's concerns in rooms of their own (TestImplementConcernsApart):
	// a concern's failure in the taxonomy's words; the CI watch reads
	// checks through the GitHub client's domain types; the checks before
	// ready judge what strength and the review measured; the waves are
	// the plan's units and the group-order gate's dependencies.
	"internal/verdict":  {"internal/failure", "internal/text"},
	"internal/citriage": {"internal/failure", "internal/github", "internal/verdict"},
	"internal/ready":    {"internal/failure", "internal/record", "internal/review", "internal/strength", "internal/verdict"},
	"internal/waves":    {"internal/claims", "internal/gates", "internal/plan"},
	// The progress a person watches in the PR comment: the checklist and
	// when to write it, from the plan's groups and the time it is given.
	"internal/progress": {"internal/redact", "internal/text"},
	// report's decisions in rooms of their own (TestReportConcernsApart):
	// how a Job's ending is decided, from the taxonomy and the record's
	// lines, and a person's commands read from a comment.
	"internal/report/decide":  {"internal/failure", "internal/record"},
	"internal/report/command": {"internal/record"},
	// What a phase does next, given the record and what git shows: a pure
	// decision in the record's and the taxonomy's words (stdAllowed too).
	"internal/next": {"internal/failure", "internal/record"},
	// What a repair Job does about people's comments on the PR: a pure
	// decision in the record's words (stdAllowed too).
	"internal/prfix": {"internal/record"},
}

// stdAllowed lists, for a package whose rule covers the standard library
// too, the standard packages it may import: a pure decision reads no file,
// network or clock.
var stdAllowed = map[string][]string{
	"internal/next":     {"fmt"},
	"internal/prfix":    {"fmt", "slices", "strings", "time"},
	"internal/progress": {"fmt", "strings", "time"},
	"internal/issueref": {"regexp", "strconv", "strings"},
	"internal/blockers": {"fmt", "maps", "regexp", "slices", "sort", "strconv", "strings"},
}

type pkg struct {
	ImportPath string
	Imports    []string
}

func TestImportDirection(t *testing.T) {
	seen := 0
	for _, p := range modulePackages(t) {
		rel := p.ImportPath
		rules, ok := allowed[rel]
		if !ok {
			continue
		}
		seen++
		var bad []string
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				if std, ok := stdAllowed[rel]; ok && !contains(std, imp) {
					bad = append(bad, imp)
				}
				continue
			}
			dep := strings.TrimPrefix(imp, module+"/")
			if !contains(rules, dep) {
				bad = append(bad, dep)
			}
		}
		sort.Strings(bad)
		if len(bad) > 0 {
			t.Errorf("%s imports %v; it may import only %v", rel, bad, slices.Concat(rules, stdAllowed[rel]))
		}
	}
	if seen == 0 {
		t.Fatal("no package with a rule was found; is the module path right?")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
