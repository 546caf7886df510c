package gates

import "testing"

// TestGatePremiseProbesIssueClaims: the issue's own claims (a file, a
// function it speaks of as there) are probed at the staging commit (#3011),
// not only the premises the plan writes. A false claim fails the plan unless
// a premise of the plan names it; a line asking for a thing to be made, a
// fenced block and another module's symbol claim nothing.
func TestGatePremiseProbesIssueClaims(t *testing.T) {
	issue := func(body string) *Issue { return &Issue{Number: 21, Title: "Discounts", Body: body} }
	// A plan whose one premise is about another file: its Premises heading
	// is line 5.
	onePremise := map[string]string{"proposal.md": "# Fix\n\nKind: fix\n\n## Premises\n\n- `internal/price/price.go` exists\n"}
	runCases(t, PremiseProbe, []gateCase{
		{
			name:  "what the issue names is there",
			issue: issue("`Total()` in `internal/price/price.go` ignores discounts; `price.Total` is called from `internal/order/order.go`.\n"),
		},
		{
			name:  "a file the issue says is there is not",
			plan:  onePremise,
			issue: issue("The discount logic in `internal/price/discount.go` is never applied.\n"),
			want:  []at{{proposalMD, 5}},
			says:  []string{"issue #21 (line 1) names internal/price/discount.go as if it were there, but at the staging commit internal/price/discount.go does not exist"},
		},
		{
			name:  "a function the issue says is there is not, with the file it is elsewhere",
			plan:  onePremise,
			issue: issue("Intro.\n\n`Subtotal()` double-counts, see `price/price.go`.\n"),
			want:  []at{{proposalMD, 5}, {proposalMD, 5}},
			says: []string{
				"issue #21 (line 3) names Subtotal() as if it were there, but at the staging commit nothing in the repository declares Subtotal",
				"price/price.go does not exist; price.go is at internal/price/price.go",
			},
		},
		{
			name:  "the plan's premise names the false claim: seen, not failed",
			issue: issue("The discount logic in `internal/price/discount.go` is never applied.\n"),
			says:  []string{"the plan's premise \"`internal/price/discount.go` does not exist\" says so"},
		},
		{
			name:  "asked for, fenced, another module's, or prose in code: no claim",
			issue: issue("Add `internal/tax/tax.go` and declare `Rate()` there.\n\n```go\nx := Missing()\n```\n\nUse `http.Client` and set `timeout` to `30s`.\n"),
		},
	})
}

// TestGateSpecDeltaByPaths: the spec-delta rule reads the paths the tasks
// change (#3013), not only a declared Kind: a change that touches only
// documentation carries no delta spec, whatever it declares; one that
// changes code or plans a failing test keeps it.
func TestGateSpecDeltaByPaths(t *testing.T) {
	readmeOnly := "## 1. Document discounts\n\n- [ ] 1.1 Explain discounts in `README.md` and `docs/pricing.md`; verify: `grep -q discount README.md`\n"
	runCases(t, SpecDelta, []gateCase{
		{
			name: "only README.md and docs, a delta spec, no Kind",
			plan: map[string]string{"proposal.md": "# Discounts\n", "tasks.md": readmeOnly},
			want: []at{{deltaMD, 1}},
			says: []string{"delta spec for pricing, but the tasks change only README.md, docs/pricing.md, no source"},
		},
		{
			name: "only docs under a declared feat",
			plan: map[string]string{"proposal.md": "# Discounts\n\nKind: feat\n", "tasks.md": readmeOnly},
			want: []at{{deltaMD, 1}},
			says: []string{"(" + proposalMD + ":3 declares feat)"},
		},
		{
			name: "only docs and no delta spec",
			plan: map[string]string{"proposal.md": "# Discounts\n", "tasks.md": readmeOnly, "specs/pricing/spec.md": ""},
		},
		{
			name: "docs and a symbol the task changes",
			plan: map[string]string{"proposal.md": "# Discounts\n", "tasks.md": "## 1. Discounts\n\n- [ ] 1.1 Make `Total` subtract discounts and say so in `README.md`; verify: `grep -q discount README.md`\n"},
		},
		{
			name: "code paths and a delta spec (the sound plan)",
		},
	})
}

// TestGateGroupOrderBySymbols: the group-order rule reads symbols as well as
// paths (#3017): a group that calls a function a later group declares fails,
// though it names only the caller's file; the same order reversed, a symbol
// the repository declares already, and a failing test written first (its
// group names the symbol with create wording) pass.
func TestGateGroupOrderBySymbols(t *testing.T) {
	tasks := func(s string) map[string]string { return map[string]string{"tasks.md": s} }
	runCases(t, GroupOrder, []gateCase{
		{
			name: "a group calls a function a later group declares, naming only the caller's file",
			plan: tasks("## 1. Use the rate\n\n- [ ] 1.1 Call `tax.Rate()` from `Total` in `internal/price/price.go`; verify: `go test ./internal/price`\n" +
				"\n## 2. Tax\n\n- [ ] 2.1 Implement `Rate()` in the tax package; verify: `go vet ./...`\n"),
			want: []at{{tasksMD, 3}},
			says: []string{"group 1 (task 1.1) uses tax.Rate(), which nothing declares until group 2 declares Rate (task 2.1)"},
		},
		{
			name: "declared first, then called",
			plan: tasks("## 1. Tax\n\n- [ ] 1.1 Implement `Rate()` in the tax package; verify: `go vet ./...`\n" +
				"\n## 2. Use the rate\n\n- [ ] 2.1 Call `tax.Rate()` from `Total` in `internal/price/price.go`; verify: `go test ./internal/price`\n"),
		},
		{
			name: "a symbol the repository declares is never created",
			plan: tasks("## 1. Use it\n\n- [ ] 1.1 Call `Cart.Add` from `internal/price/price.go`; verify: `go test ./internal/price`\n" +
				"\n## 2. Change it\n\n- [ ] 2.1 Implement a cap in `Cart.Add`; verify: `go test ./internal/price`\n"),
		},
		{
			name: "a failing test first names the symbol with create wording",
			plan: tasks("## 1. Test\n\n- [ ] 1.1 Add a failing test of `Rate()` in `internal/price/price_test.go`; verify: `go test ./internal/price` fails\n" +
				"\n## 2. Tax\n\n- [ ] 2.1 Implement `Rate()` in `internal/price/price.go`; verify: `go test ./internal/price`\n"),
		},
	})
}

// TestGroupDependenciesBySymbols: the dependencies parallel groups read
// (GroupDependencies) count a symbol a later group uses and an earlier one
// declares, as the gate does: the two may not run side by side.
func TestGroupDependenciesBySymbols(t *testing.T) {
	root := setup(t, map[string]string{"tasks.md": "## 1. Tax\n\n- [ ] 1.1 Implement `Rate()` in the tax package; verify: `go vet ./...`\n" +
		"\n## 2. Docs\n\n- [ ] 2.1 Explain pricing in `docs/pricing.md`; verify: `grep -q price docs/pricing.md`\n" +
		"\n## 3. Use the rate\n\n- [ ] 3.1 Call `tax.Rate()` from `Total` in `internal/price/price.go`; verify: `go test ./internal/price`\n"})
	deps, err := GroupDependencies(Input{Root: root, ChangeID: change})
	if err != nil {
		t.Fatal(err)
	}
	if got := deps[3]; len(got) != 1 || got[0] != 1 {
		t.Errorf("GroupDependencies = %v; want group 3 to need group 1 (Rate)", deps)
	}
	if _, ok := deps[2]; ok {
		t.Errorf("GroupDependencies = %v; group 2 needs nothing", deps)
	}
}
