package plan

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestValidateOpenSpecOnly holds ValidateOpenSpec to OpenSpec's rules alone
// on every corpus case: none of roadmap's findings, exactly OpenSpec's
// findings of Validate, and, where the pinned CLI can run, the verdict of
// `openspec validate <id> --strict`. Some cases must be ones the CLI accepts
// and roadmap's own rules fail: those are what the OpenSpec-only check is for.
func TestValidateOpenSpecOnly(t *testing.T) {
	bin := ""
	if _, err := exec.LookPath("node"); err == nil {
		bin = openspecCLI(t)
	} else {
		t.Log("Node.js is not on PATH: checking against Validate only, not against the OpenSpec CLI")
	}
	dir, cases := corpus(t)
	theirsOnly := make(chan string, len(cases))
	t.Run("cases", func(t *testing.T) {
		for _, name := range cases {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				root := copyTree(t, filepath.Join(dir, name))
				id := onlyChange(t, root)
				only, err := ValidateOpenSpec(root, id)
				if err != nil {
					t.Fatal(err)
				}
				full, err := Validate(root, id)
				if err != nil {
					t.Fatal(err)
				}
				var want []Finding
				for _, f := range full.Findings {
					if !f.Ours {
						want = append(want, f)
					}
				}
				for _, f := range only.Findings {
					if f.Owner() != OwnerOpenSpec || !strings.HasPrefix(f.Rule, "openspec/") {
						t.Errorf("roadmap's finding in the OpenSpec-only report: %s", f)
					}
				}
				if diff := cmp.Diff(want, only.Findings, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("OpenSpec-only findings differ from Validate's OpenSpec findings (-Validate +ValidateOpenSpec):\n%s", diff)
				}
				if only.Clean() != full.OpenSpecValid() {
					t.Errorf("ValidateOpenSpec clean=%v, Validate's OpenSpec verdict %v", only.Clean(), full.OpenSpecValid())
				}
				if bin != "" {
					v := validateCase(t, bin, dir, name, id)
					out, stderr, code := v.out, v.stderr, v.code
					var cli cliReport
					if err := json.Unmarshal(out, &cli); err != nil || len(cli.Items) != 1 {
						t.Fatalf("openspec validate (exit %d): %v\n%s\n%s", code, err, out, stderr)
					}
					if cli.Items[0].Valid != only.Clean() {
						t.Errorf("openspec validate --strict says valid=%v; ValidateOpenSpec clean=%v with %v", cli.Items[0].Valid, only.Clean(), only.Findings)
					}
				}
				if only.Clean() && !full.Clean() {
					theirsOnly <- name
				}
			})
		}
	})
	close(theirsOnly)
	var names []string
	for n := range theirsOnly {
		names = append(names, n)
	}
	if len(names) == 0 && !t.Failed() {
		t.Fatal("no corpus case passes OpenSpec's rules and fails roadmap's; the corpus should hold some (task-no-verify, stray-header)")
	}
	t.Logf("%d cases pass OpenSpec's rules and fail only roadmap's: %v", len(names), names)
}

// A finding's JSON names its owner.
func TestFindingJSONOwner(t *testing.T) {
	for _, f := range []Finding{
		{Level: LevelError, Rule: "openspec/no-deltas", File: "a", Line: 1, Message: "m"},
		{Level: LevelError, Rule: "roadmap/verify-command", File: "a", Line: 1, Message: "m", Ours: true},
	} {
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		want := strings.SplitN(f.Rule, "/", 2)[0]
		if got["owner"] != want || got["rule"] != f.Rule || got["ours"] != f.Ours {
			t.Errorf("%s: JSON %s; want owner %q", f.Rule, b, want)
		}
	}
}
