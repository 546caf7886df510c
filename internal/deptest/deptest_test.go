package deptest

import (
	"encoding/json"
	"io"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/roadmap-dev/roadmap"

// allowed lists, for each package that has a rule, the internal packages it may
// import. Packages not listed (cli, implement, report, stage, demo, eval …) are
// phase packages and may import anything.
var allowed = map[string][]string{
	"internal/record":     {},
	"internal/event":      {},
	"internal/plan":       {"internal/nofollow"},
	"internal/gates":      {"internal/plan", "internal/nofollow", "internal/symbols"},
	"internal/symbols":    {},
	"internal/redact":     {},
	"internal/failure":    {},
	"internal/trace":      {},
	"internal/policy":     {"internal/sandbox"},
	"internal/sandbox":    {},
	"internal/agent":      {"internal/nofollow"},
	"internal/nofollow":   {},
	"internal/llm":        {"internal/agent", "internal/clock"},
	"internal/github":     {"internal/record", "internal/clock"},
	"internal/clock":      {},
	"internal/githubfake": {},
	"internal/git":        {},
	"internal/checks":     {"internal/policy", "internal/sandbox"},
	"internal/f2p":        {"internal/git", "internal/policy", "internal/sandbox", "internal/nofollow", "internal/checks", "internal/inputerr"},
	"internal/actionsio":  {},
	"internal/config":     {},
	// The one error a caller can fix, at the CLI's edge: imports nothing.
	"internal/inputerr": {},
	// The quality before ready: the review reads through the agent's tools,
	// test strength runs commands only through a check runner.
	"internal/review":   {"internal/agent", "internal/nofollow"},
	"internal/strength": {"internal/checks", "internal/git"},
	// An item's state and cost from its record: pure, shared by the
	// dashboard, metrics and alerts.
	"internal/items": {"internal/record", "internal/trace"},
	// The dashboard issue: rendered from items' lines, kept through the
	// GitHub client.
	"internal/dashboard": {"internal/items", "internal/record", "internal/trace", "internal/github", "internal/clock"},
	// The console reads GitHub and the record; it runs nothing.
	"internal/console": {"internal/github", "internal/record", "internal/trace", "internal/actionsio", "internal/inputerr"},
	// Pipeline outcomes across items: a pure function of their state.
	"internal/metrics": {"internal/items", "internal/record"},
	// The tracker check reads GitHub through internal/github's domain types only.
	"internal/tracker": {"internal/github"},
	// Claims on units: git refs, the plan's paths as the gates read them,
	// a holder's run read through the GitHub client, bounds from the record.
	"internal/claims": {"internal/git", "internal/github", "internal/plan", "internal/gates", "internal/record"},
}

type pkg struct {
	ImportPath string
	Imports    []string
}

func TestImportDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-json", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decode go list: %v", err)
		}
		rel := strings.TrimPrefix(p.ImportPath, module+"/")
		rules, ok := allowed[rel]
		if !ok {
			continue
		}
		seen++
		var bad []string
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			dep := strings.TrimPrefix(imp, module+"/")
			if !contains(rules, dep) {
				bad = append(bad, dep)
			}
		}
		sort.Strings(bad)
		if len(bad) > 0 {
			t.Errorf("%s imports %v; it may import only %v", rel, bad, rules)
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
