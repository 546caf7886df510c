package gates

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/plan"
)

const change = "fix-total"

// repo is the repository at the staging commit every case starts from: a
// small Go module with a function, its callers and its test, a script a
// Makefile runs, and a README.
var repo = map[string]string{
	"go.mod": "module example.com/shop\n\ngo 1.22\n",
	"internal/price/price.go": `package price

// Total sums the items.
func Total(items []int) int {
	t := 0
	for _, i := range items {
		t += i
	}
	return t
}

// Cart holds items.
type Cart struct{ items []int }

// Add puts an item in the cart.
func (c *Cart) Add(n int) { c.items = append(c.items, n) }
`,
	"internal/price/price_test.go": `package price

import "testing"

func TestTotal(t *testing.T) {
	if Total([]int{1, 2}) != 3 {
		t.Fatal("total")
	}
}
`,
	"internal/order/order.go": `package order

import "example.com/shop/internal/price"

// Checkout totals a cart.
func Checkout(items []int) int {
	var c price.Cart
	c.Add(1)
	return price.Total(items)
}
`,
	"cmd/shop/main.go": `package main

import (
	"fmt"

	p "example.com/shop/internal/price"
)

func main() { fmt.Println(p.Total(nil)) }
`,
	"internal/ship/ship.go":  "package ship\n\n// Total is the shipping cost of n items.\nfunc Total(n int) int { return n }\n",
	"web/app.js":             "export const x = 1;\n",
	"web/test/app.test.js":   "test('x', () => {});\n",
	"scripts/release.sh":     "#!/bin/sh\necho release\n",
	"Makefile":               "release:\n\tsh scripts/release.sh\n",
	"README.md":              "# shop\n\nRun `make release`.\n",
	"docs/pricing.md":        "# Pricing\n",
	"internal/price/doc.txt": "notes\n",
}

const soundProposal = `# Fix the total

Kind: fix

## Why

Total ignores discounts.

## Premises

- ` + "`internal/price/price.go`" + ` exists
- ` + "`Total`" + ` is defined in ` + "`internal/price/price.go`" + `
- ` + "`internal/price/price.go`" + ` does not contain ` + "`discount`" + `
- ` + "`internal/price/discount.go`" + ` does not exist
`

const soundTasks = "## 1. Discounts in the total\n\n" +
	"- [ ] 1.1 Add a failing test TestTotalDiscount to `internal/price/price_test.go`; verify: `go test ./internal/price -run TestTotalDiscount` fails\n" +
	"- [ ] 1.2 Apply the discount in `Total`; update its callers in `internal/order/order.go` and `cmd/shop/main.go`; verify: `go test ./internal/price -run TestTotal`\n" +
	"\n## 2. Document discounts\n\n" +
	"- [ ] 2.1 Describe discounts in `docs/pricing.md`; verify: `grep -q discount docs/pricing.md`\n"

const soundDelta = `## MODIFIED Requirements

### Requirement: Total
The total SHALL subtract the discount.

#### Scenario: A discount
- **WHEN** a cart of 10 has a discount of 2
- **THEN** the total is 8
`

// setup writes the repository and the plan (paths relative to the change
// directory; "" deletes a file of the sound plan) and returns the root.
func setup(t *testing.T, planFiles map[string]string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{}
	for k, v := range repo {
		files[k] = v
	}
	sound := map[string]string{
		"proposal.md":           soundProposal,
		"tasks.md":              soundTasks,
		"specs/pricing/spec.md": soundDelta,
	}
	for k, v := range planFiles {
		sound[k] = v
	}
	for k, v := range sound {
		if v != "" {
			files["openspec/changes/"+change+"/"+k] = v
		}
	}
	for rel, body := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// at is a finding as a test asserts it: where, and a piece of what it says.
type at struct {
	File string
	Line int
}

func run(t *testing.T, gate string, in Input) []plan.Finding {
	t.Helper()
	if in.ChangeID == "" {
		in.ChangeID = change
	}
	fs, err := Check(context.Background(), in, gate)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	for _, f := range fs {
		if f.Rule != RulePrefix+gate || !f.Ours {
			t.Errorf("finding %v: rule %q ours %v, want %s%s and ours", f, f.Rule, f.Ours, RulePrefix, gate)
		}
	}
	return fs
}

// failing returns where the failing (ERROR, WARNING) findings are.
func failing(fs []plan.Finding) []at {
	out := []at{}
	for _, f := range fs {
		if f.Fails() {
			out = append(out, at{f.File, f.Line})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out
}

func messages(fs []plan.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(f.String() + "\n")
	}
	return b.String()
}

const (
	proposalMD = "openspec/changes/" + change + "/proposal.md"
	designMD   = "openspec/changes/" + change + "/design.md"
	tasksMD    = "openspec/changes/" + change + "/tasks.md"
	deltaMD    = "openspec/changes/" + change + "/specs/pricing/spec.md"
)

type gateCase struct {
	name  string
	plan  map[string]string
	issue *Issue
	runFn Runner
	want  []at     // where the failing findings are
	says  []string // each appears in some finding's message
}

func runCases(t *testing.T, gate string, cases []gateCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := setup(t, c.plan)
			fs := run(t, gate, Input{Root: root, Issue: c.issue, Run: c.runFn})
			want := c.want
			if want == nil {
				want = []at{}
			}
			if diff := cmp.Diff(want, failing(fs)); diff != "" {
				t.Errorf("findings (-want +got):\n%s\nall:\n%s", diff, messages(fs))
			}
			all := messages(fs)
			for _, s := range c.says {
				if !strings.Contains(all, s) {
					t.Errorf("no finding says %q:\n%s", s, all)
				}
			}
		})
	}
}

func TestGatePremiseProbe(t *testing.T) {
	exits := func(code int, out string) Runner {
		return RunnerFunc(func(_ context.Context, cmd string) (int, string, error) {
			if cmd != "go test ./internal/price -run TestTotalDiscount" {
				return 0, "", errors.New("unexpected command " + cmd)
			}
			return code, out, nil
		})
	}
	premises := func(lines ...string) map[string]string {
		return map[string]string{"proposal.md": "# Fix\n\nKind: fix\n\n## Premises\n\n" + strings.Join(lines, "\n") + "\n\n## Why\n\n- not a premise\n"}
	}
	runCases(t, PremiseProbe, []gateCase{
		{name: "sound", says: []string{}},
		{
			name: "missing file, with where it is",
			plan: premises("- `price/price.go` exists"),
			want: []at{{proposalMD, 7}},
			says: []string{"price/price.go does not exist; price.go is at internal/price/price.go"},
		},
		{
			name: "file that exists said absent",
			plan: premises("- `internal/price/price.go` exists", "- `cmd/shop/main.go` does not exist"),
			want: []at{{proposalMD, 8}},
			says: []string{"cmd/shop/main.go exists"},
		},
		{
			name: "symbol not declared, with what is",
			plan: premises("- `Subtotal` is defined in `internal/price/price.go`", "- `Cart.Add` is defined in `internal/price/price.go`"),
			want: []at{{proposalMD, 7}},
			says: []string{"does not declare Subtotal; it declares Total, Cart, Cart.Add"},
		},
		{
			name: "symbol said undefined is declared",
			plan: premises("- `Total` is not defined in `internal/price/price.go`"),
			want: []at{{proposalMD, 7}},
			says: []string{"declares Total at line 4"},
		},
		{
			name: "text said absent is there, with its line",
			plan: premises("- `internal/order/order.go` does not contain `price.Total`", "- `README.md` contains `make release`"),
			want: []at{{proposalMD, 7}},
			says: []string{"internal/order/order.go line 9 contains"},
		},
		{
			name: "text said present is not",
			plan: premises("- `README.md` contains `discount`"),
			want: []at{{proposalMD, 7}},
			says: []string{`no line of README.md contains "discount"`},
		},
		{
			name: "a premise in design.md, and one outside the grammar",
			plan: map[string]string{"design.md": "# Design\n\n## Premises\n\n* `go.sum` exists\n* prices are in cents\n"},
			want: []at{{designMD, 5}, {designMD, 6}},
			says: []string{"go.sum does not exist", `premise "prices are in cents" does not follow the premise grammar`},
		},
		{
			name:  "a command said to fail passes",
			plan:  premises("- `go test ./internal/price -run TestTotalDiscount` fails"),
			runFn: exits(0, "ok  \texample.com/shop/internal/price\n"),
			want:  []at{{proposalMD, 7}},
			says:  []string{"exits 0; output ends: ok example.com/shop/internal/price"},
		},
		{
			name:  "a command said to fail fails",
			plan:  premises("- `go test ./internal/price -run TestTotalDiscount` fails today"),
			runFn: exits(1, "--- FAIL"),
		},
		{
			name:  "a command said to pass fails",
			plan:  premises("- `go test ./internal/price -run TestTotalDiscount` passes"),
			runFn: exits(2, "build failed"),
			want:  []at{{proposalMD, 7}},
			says:  []string{"exits 2; output ends: build failed"},
		},
		{
			name: "no runner: not run, not failed",
			plan: premises("- `go test ./internal/price -run TestTotalDiscount` fails"),
			says: []string{"not run: no isolation boundary"},
		},
		{
			name: "a path out of the tree is not a premise",
			plan: premises("- `../../etc/passwd` exists"),
			want: []at{{proposalMD, 7}},
			says: []string{"does not follow the premise grammar"},
		},
	})
}

func TestGatePremiseNoSection(t *testing.T) {
	root := setup(t, map[string]string{"proposal.md": "# Fix\n\nKind: fix\n"})
	fs := run(t, PremiseProbe, Input{Root: root})
	if len(fs) != 0 {
		t.Errorf("findings %v; want none: a plan need not state premises", fs)
	}
}

func TestGateCallersAndTests(t *testing.T) {
	tasks := func(t12 string) map[string]string {
		return map[string]string{"tasks.md": "## 1. Discounts in the total\n\n" +
			"- [ ] 1.1 Add a failing test; verify: `go test ./internal/price -run TestTotalDiscount` fails\n" +
			"- [ ] 1.2 " + t12 + "; verify: `go test ./internal/price`\n"}
	}
	runCases(t, CallersAndTests, []gateCase{
		{name: "sound: callers and test named"},
		{
			name: "callers in other packages not named",
			plan: tasks("Apply the discount in `price.Total`; the test is in price_test.go"),
			want: []at{{tasksMD, 4}},
			says: []string{"the plan changes `Total` (internal/price/price.go:4), which has callers the plan does not name: cmd/shop/main.go (main), internal/order/order.go (Checkout)"},
		},
		{
			name: "callers named by function, test not named",
			plan: tasks("Apply the discount in `Total()` and in `Checkout` and main"),
			want: []at{{tasksMD, 4}},
			says: []string{"tests the plan does not name: internal/price/price_test.go (TestTotal)"},
		},
		{
			name: "test named by its function",
			plan: tasks("Apply the discount in `Total()`, Checkout, main; run TestTotal"),
		},
		{
			name: "a method's callers",
			plan: map[string]string{"design.md": "# Design\n\nWe change `Cart.Add` to refuse negatives.\n", "tasks.md": tasks("Refuse negatives; see price_test.go")["tasks.md"]},
			want: []at{{designMD, 3}},
			says: []string{"`Cart.Add` (internal/price/price.go:16), which has callers the plan does not name: internal/order/order.go (Checkout)"},
		},
		{
			name: "a name two packages declare, the package not named: ambiguous, left out",
			plan: map[string]string{"proposal.md": "# Round\n", "tasks.md": "## 1. Round\n\n- [ ] 1.1 Round in `Total`; verify: `go vet ./...`\n"},
		},
		{
			name: "a name two packages declare, narrowed by the package the plan names",
			plan: map[string]string{"proposal.md": "# Round\n", "tasks.md": "## 1. Round\n\n- [ ] 1.1 Round in `Total` of internal/price; verify: `go vet ./...`\n"},
			want: []at{{tasksMD, 3}},
			says: []string{"`Total` (internal/price/price.go:4)"},
		},
		{
			name: "a symbol the plan adds has no callers",
			plan: tasks("Add `ApplyDiscount` in `internal/price/discount.go`"),
		},
		{
			name: "a script and what runs it",
			plan: tasks("Sign the artefacts in `scripts/release.sh`"),
			want: []at{{tasksMD, 4}},
			says: []string{"the plan changes scripts/release.sh, which Makefile refer to by path"},
		},
		{
			name: "a script whose runner is named",
			plan: tasks("Sign the artefacts in `scripts/release.sh`, run by the Makefile"),
		},
	})
}

func TestGateSpecDelta(t *testing.T) {
	noBehaviour := "# Tidy\n\nKind: refactor\n\nNo behaviour changes.\n"
	refactorTasks := "## 1. Tidy (refactor)\n\n- [ ] 1.1 Split `Total`; verify: `go test ./internal/price`\n"
	runCases(t, SpecDelta, []gateCase{
		{name: "sound: a fix with a delta"},
		{
			name: "a failing test and no delta spec",
			plan: map[string]string{"proposal.md": "# Fix\n", "specs/pricing/spec.md": ""},
			want: []at{{tasksMD, 3}},
			says: []string{"task 1.1 has a `fails` verify (a behaviour change), but the change has no delta spec"},
		},
		{
			name: "a declared fix and no delta spec",
			plan: map[string]string{"proposal.md": "# Fix\n\n**Kind:** feat\n", "specs/pricing/spec.md": "", "tasks.md": refactorTasks},
			want: []at{{proposalMD, 3}},
			says: []string{"the proposal declares `Kind: feat`"},
		},
		{
			name: "a refactor with a delta spec",
			plan: map[string]string{"proposal.md": noBehaviour, "tasks.md": refactorTasks},
			want: []at{{deltaMD, 1}},
			says: []string{"delta spec for pricing, but " + proposalMD + ":3 declares refactor"},
		},
		{
			name: "skip_specs with a delta spec, the delta's section line",
			plan: map[string]string{"proposal.md": "# Tidy\n", "tasks.md": refactorTasks, ".openspec.yaml": "schema: spec-driven\nskip_specs: true\n", "specs/pricing/spec.md": "# notes\n\n" + soundDelta},
			want: []at{{deltaMD, 3}},
			says: []string{"declares skip_specs: true"},
		},
		{
			name: "a refactor without a delta",
			plan: map[string]string{"proposal.md": noBehaviour, "tasks.md": refactorTasks, "specs/pricing/spec.md": ""},
		},
		{
			name: "a docs change that plans a failing test",
			plan: map[string]string{"proposal.md": "# Docs\n\n- Kind: docs\n", "specs/pricing/spec.md": ""},
			want: []at{{tasksMD, 3}},
			says: []string{"declares docs (no behaviour change): a change with a failing test changes behaviour"},
		},
	})
}

func TestGateVerifyForm(t *testing.T) {
	tasks := func(lines ...string) map[string]string {
		return map[string]string{"tasks.md": "## 1. One\n\n" + strings.Join(lines, "\n") + "\n"}
	}
	runCases(t, VerifyForm, []gateCase{
		{name: "sound"},
		{
			name: "a verify command of no configured form",
			plan: tasks("- [ ] 1.1 Add a failing test `internal/price/total_test.go`; verify: `go test ./internal/price` fails",
				"- [ ] 1.2 Implement it; verify: `curl http://127.0.0.1:8080/`",
				"- [ ] 1.3 Check; verify: `grep -q x README.md`"),
			want: []at{{tasksMD, 4}},
			says: []string{"task 1.2: verify command `curl http://127.0.0.1:8080/` is not of a configured form"},
		},
		{
			name: "a group with no verify at all",
			plan: map[string]string{"tasks.md": soundTasks + "\n## 3. Tidy\n\n- [ ] 3.1 Tidy up\n"},
			want: []at{{tasksMD, 10}},
			says: []string{"group 3 has no verify command"},
		},
		{
			name: "a Go test away from its package",
			plan: tasks("- [ ] 1.1 Add a failing test in `tests/price_test.go`; verify: `go test ./tests` fails"),
			want: []at{{tasksMD, 3}},
			says: []string{"tests/price_test.go in tests, which holds no Go package: a Go test sits beside the package it tests; price.go is in internal/price, so its test is internal/price/price_test.go"},
		},
		{
			name: "a Go test beside a package the plan creates",
			plan: tasks("- [ ] 1.1 Create `internal/tax/tax.go` and `internal/tax/tax_test.go`; verify: `go test ./internal/tax`"),
		},
		{
			name: "a JavaScript test outside the repository's test directory",
			plan: tasks("- [ ] 1.1 Add `web/app.test.js`; verify: `make test`"),
			want: []at{{tasksMD, 3}},
			says: []string{"the repository keeps its .js tests in web/test"},
		},
		{
			name: "a JavaScript test in it",
			plan: tasks("- [ ] 1.1 Add `web/test/cart.test.js`; verify: `make test`"),
		},
	})
	t.Run("configured forms", func(t *testing.T) {
		root := setup(t, nil)
		fs := run(t, VerifyForm, Input{Root: root, Config: Config{VerifyForms: []string{"devops ci test", `^grep -q \S+ \S+$`}}})
		if diff := cmp.Diff([]at{{tasksMD, 3}, {tasksMD, 4}}, failing(fs)); diff != "" {
			t.Errorf("(-want +got):\n%s\n%s", diff, messages(fs))
		}
		if _, err := Check(context.Background(), Input{Root: root, ChangeID: change, Config: Config{VerifyForms: []string{"^("}}}, VerifyForm); err == nil {
			t.Error("a bad regexp form is not an error")
		}
	})
}

func TestGateGroupOrder(t *testing.T) {
	runCases(t, GroupOrder, []gateCase{
		{name: "sound"},
		{
			name: "a group modifies a file a later group creates",
			plan: map[string]string{"tasks.md": "## 1. Use it\n\n" +
				"- [ ] 1.1 Call the rate from `internal/tax/tax.go` in `internal/price/price.go`; verify: `go test ./internal/price`\n" +
				"\n## 2. Tax\n\n- [ ] 2.1 Create `internal/tax/tax.go`; verify: `go test ./internal/tax`\n"},
			want: []at{{tasksMD, 3}},
			says: []string{"group 1 (task 1.1) names internal/tax/tax.go, which does not exist until group 2 creates internal/tax/tax.go (task 2.1)"},
		},
		{
			name: "a verify reads a directory a later group creates",
			plan: map[string]string{"tasks.md": "## 1. Use it\n\n" +
				"- [ ] 1.1 Call it; verify: `go test ./internal/tax/...`\n" +
				"\n## 2. Tax\n\n- [ ] 2.1 Add `internal/tax/tax.go`; verify: `go vet ./internal/price`\n"},
			want: []at{{tasksMD, 3}},
			says: []string{"group 1 (task 1.1) verifies with internal/tax, which does not exist until group 2 creates internal/tax/tax.go"},
		},
		{
			name: "created first, then used",
			plan: map[string]string{"tasks.md": "## 1. Tax\n\n- [ ] 1.1 Add `internal/tax/tax.go`; verify: `go test ./internal/tax`\n" +
				"\n## 2. Use it\n\n- [ ] 2.1 Call `internal/tax/tax.go` from `internal/price/price.go`; verify: `go test ./internal/tax/... ./internal/price`\n"},
		},
		{
			name: "an absent path with no create wording is created where first named",
			plan: map[string]string{"tasks.md": "## 1. Tax\n\n- [ ] 1.1 Put the rate in `internal/tax/rate.go`; verify: `go test ./internal/tax`\n" +
				"\n## 2. Use it\n\n- [ ] 2.1 Use `internal/tax/rate.go`; verify: `go test ./internal/price`\n"},
		},
	})
}

const issueBody = `The total is wrong.

## Acceptance criteria

- [ ] The total subtracts a cart discount
- [ ] Pricing documentation explains discounts
  with an example
- [ ] Refunds are emailed to the customer

## Notes

- not a criterion
`

func TestGateAcceptanceMap(t *testing.T) {
	issue := &Issue{Number: 14, Title: "Discounts", Body: issueBody}
	runCases(t, AcceptanceMap, []gateCase{
		{name: "no issue: skipped"},
		{
			name:  "an unmapped criterion",
			issue: issue,
			want:  []at{{tasksMD, 1}},
			says:  []string{`acceptance criterion 3 of issue #14 maps to no task group: "Refunds are emailed to the customer"`},
		},
		{
			name:  "mapped by an explicit reference",
			issue: issue,
			plan:  map[string]string{"tasks.md": soundTasks + "\n## 3. Mail (AC3)\n\n- [ ] 3.1 Send it; verify: `go test ./internal/mail`\n"},
		},
		{
			name:  "mapped by shared words",
			issue: issue,
			plan:  map[string]string{"tasks.md": soundTasks + "\n## 3. Email refunds\n\n- [ ] 3.1 Email each refund to its customer; verify: `go test ./internal/mail`\n"},
		},
		{
			name:  "every criterion unmapped",
			issue: issue,
			plan:  map[string]string{"tasks.md": "## 1. Logging\n\n- [ ] 1.1 Log requests; verify: `go test ./internal/log`\n"},
			want:  []at{{tasksMD, 1}, {tasksMD, 1}, {tasksMD, 1}},
			says:  []string{"criterion 2 of issue #14 maps to no task group: \"Pricing documentation explains discounts with an example\""},
		},
	})
	t.Run("an issue with no criteria", func(t *testing.T) {
		fs := run(t, AcceptanceMap, Input{Root: setup(t, nil), Issue: &Issue{Number: 3, Body: "Fix it.\n"}})
		if len(fs) != 1 || fs[0].Level != plan.LevelInfo {
			t.Errorf("findings %v; want one INFO", fs)
		}
	})
}

func TestGateFailingTestFirst(t *testing.T) {
	runCases(t, FailingTestFirst, []gateCase{
		{name: "sound: behaviour with a failing test first, docs with a repeatable verify"},
		{
			name: "code before the failing test",
			plan: map[string]string{"tasks.md": "## 1. Discounts\n\n" +
				"- [ ] 1.1 Apply the discount in `internal/price/price.go`; verify: `go build ./...`\n" +
				"- [ ] 1.2 Add a failing test; verify: `go test ./internal/price -run TestTotalDiscount` fails\n"},
			want: []at{{tasksMD, 3}},
			says: []string{"group 1: task 1.1 comes before the failing test (task 1.2)"},
		},
		{
			name: "a behaviour group with no failing test",
			plan: map[string]string{"tasks.md": "## 1. Discounts\n\n" +
				"- [ ] 1.1 Apply the discount in `internal/price/price.go`; verify: `go test ./internal/price`\n"},
			want: []at{{tasksMD, 1}},
			says: []string{"group 1 changes behaviour (task 1.1 changes internal/price/price.go) but plans no failing test"},
		},
		{
			name: "implement wording is behaviour",
			plan: map[string]string{"tasks.md": "## 1. Discounts\n\n- [ ] 1.1 Implement discounts; verify: `go test ./internal/price`\n"},
			want: []at{{tasksMD, 1}},
		},
		{
			name: "a docs group with a failing verify",
			plan: map[string]string{"tasks.md": soundTasks + "\n## 3. Glossary (docs)\n\n- [ ] 3.1 Add a glossary; verify: `grep -q glossary README.md` fails\n"},
			want: []at{{tasksMD, 12}},
			says: []string{"group 3 changes no behaviour (its title is tagged as no behaviour change), but task 3.1's verify is marked `fails`"},
		},
		{
			name: "a refactor group touching code needs no failing test",
			plan: map[string]string{"tasks.md": soundTasks + "\n## 3. Split (refactor)\n\n- [ ] 3.1 Split `internal/price/price.go`; verify: `go test ./internal/price`\n"},
		},
		{
			name: "a refactor proposal",
			plan: map[string]string{"proposal.md": "# Tidy\n\nKind: refactor\n", "tasks.md": "## 1. Split\n\n- [ ] 1.1 Split `internal/price/price.go`; verify: `go test ./internal/price`\n"},
		},
	})
}

// The plan's own parse failure is reported by plan.Validate; the gates say
// they did not run.
func TestCheckUnparsedTasks(t *testing.T) {
	root := setup(t, map[string]string{"tasks.md": "no groups here\n"})
	fs, err := Check(context.Background(), Input{Root: root, ChangeID: change})
	if err != nil || len(fs) != 1 || fs[0].Level != plan.LevelInfo || fs[0].File != tasksMD {
		t.Errorf("Check = %v, %v; want one INFO on tasks.md", fs, err)
	}
	if _, err := Check(context.Background(), Input{Root: root, ChangeID: "nope"}); !errors.Is(err, plan.ErrNoChange) {
		t.Errorf("missing change: err %v, want ErrNoChange", err)
	}
	if _, err := Check(context.Background(), Input{Root: root, ChangeID: change}, "no-such-gate"); err == nil {
		t.Error("an unknown gate name is not an error")
	}
}

// A sound plan passes every gate at once.
func TestCheckSoundPlan(t *testing.T) {
	issue := &Issue{Number: 14, Body: "## Acceptance\n\n- The total subtracts a cart discount\n- Pricing documentation explains discounts\n"}
	fs, err := Check(context.Background(), Input{Root: setup(t, nil), ChangeID: change, Issue: issue})
	if err != nil {
		t.Fatal(err)
	}
	if got := failing(fs); len(got) != 0 {
		t.Errorf("a sound plan fails:\n%s", messages(fs))
	}
}

// A symlink out of the work tree is not followed.
func TestCheckSymlinkOut(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("TOKEN=abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := setup(t, map[string]string{"proposal.md": "# Fix\n\nKind: fix\n\n## Premises\n\n- `link.txt` contains `TOKEN`\n"})
	if err := os.Symlink(secret, filepath.Join(root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	fs := run(t, PremiseProbe, Input{Root: root})
	if diff := cmp.Diff([]at{{proposalMD, 7}}, failing(fs)); diff != "" || strings.Contains(messages(fs), "abc") {
		t.Errorf("(-want +got):\n%s\n%s", diff, messages(fs))
	}
}

// The demo's plan (add-greetings) passes every gate but, while it has no
// delta spec, spec-delta: its groups 1 and 2 are behaviour groups.
func TestDemoPlan(t *testing.T) {
	root := filepath.Join("..", "demo", "testdata", "demo", "repo")
	issue := &Issue{Number: 1, Body: "## Acceptance criteria\n\n- Hello(name) returns Hello, NAME!\n- Goodbye(name) returns Goodbye, NAME!\n- The README documents both\n"}
	fs, err := Check(context.Background(), Input{Root: root, ChangeID: "add-greetings", Issue: issue})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if !f.Fails() {
			continue
		}
		if f.Rule != RulePrefix+SpecDelta || f.File != "openspec/changes/add-greetings/tasks.md" || f.Line != 3 {
			t.Errorf("the demo plan fails a gate: %v", f)
		}
	}
}

// A plan over implement.max_groups gets one ERROR naming the limit, at the
// first group past it, and no gate runs on it.
func TestCheckGroupLimit(t *testing.T) {
	var tasks strings.Builder
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(&tasks, "## %d. Step %d\n\n- [ ] %d.1 Do it; verify: `go test ./internal/price`\n\n", i, i, i)
	}
	root := setup(t, map[string]string{"tasks.md": tasks.String()})
	fs, err := Check(context.Background(), Input{Root: root, ChangeID: change, Config: Config{MaxGroups: 2}})
	if err != nil || len(fs) != 1 || fs[0].Level != plan.LevelError || fs[0].Line != 9 ||
		!strings.Contains(fs[0].Message, "3 task groups; a plan holds at most 2 (implement.max_groups)") {
		t.Errorf("Check(3 groups, limit 2) = %v, %v; want one ERROR at line 9 naming the limit", fs, err)
	}
	fs, err = Check(context.Background(), Input{Root: root, ChangeID: change, Config: Config{MaxGroups: 3}})
	if err != nil || slices.ContainsFunc(fs, func(f plan.Finding) bool { return strings.Contains(f.Message, "implement.max_groups") }) {
		t.Errorf("Check(3 groups, limit 3) = %v, %v; want no group limit finding", fs, err)
	}
}
