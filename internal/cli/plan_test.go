package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var openspecCases = filepath.Join("..", "..", "testdata", "openspec")

func planCLI(t *testing.T, environ []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(context.Background(), append([]string{"plan", "validate"}, args...), environ, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// findingLine is the FILE:LINE: rule: message shape of every printed finding.
var findingLine = regexp.MustCompile(`^[^:]+\.(md|yaml):[1-9][0-9]*: (openspec|roadmap)/[a-z-]+(/[a-z-]+)?: .+$`)

func TestPlanValidateFindings(t *testing.T) {
	dir := filepath.Join(openspecCases, "stray-header")
	code, out, errOut := planCLI(t, nil, dir)
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d; stderr %s", code, ExitFindings, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, l := range lines {
		if !findingLine.MatchString(l) {
			t.Errorf("line %q is not FILE:LINE: rule: message", l)
		}
	}
	want := filepath.ToSlash(dir) + "/openspec/changes/add-rate-limit-headers/specs/rate-limit-headers/spec.md:10: roadmap/stray-header: "
	if !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
}

func TestPlanValidateClean(t *testing.T) {
	for _, dir := range []string{
		filepath.Join(openspecCases, "valid-added"),
		filepath.Join(openspecCases, "valid-added", "openspec", "changes", "add-rate-limit-headers"),
	} {
		code, out, errOut := planCLI(t, nil, dir)
		if code != ExitOK || out != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 0 and nothing", dir, code, out, errOut)
		}
	}
}

// An INFO finding is printed but does not fail the plan.
func TestPlanValidateInfoPasses(t *testing.T) {
	code, out, _ := planCLI(t, nil, filepath.Join(openspecCases, "skip-specs-accepted"))
	if code != ExitOK || !strings.Contains(out, "openspec/skip-specs: skip_specs is set") {
		t.Errorf("exit %d, output %q; want 0 and the skip_specs note", code, out)
	}
}

func TestPlanValidateJSON(t *testing.T) {
	code, out, _ := planCLI(t, nil, "--json", filepath.Join(openspecCases, "no-shall"))
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d", code, ExitFindings)
	}
	var res planValidateResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if res.Passed || len(res.Changes) != 1 || res.Changes[0].OpenSpecValid {
		t.Fatalf("result %+v; want one failing change", res)
	}
	f := res.Changes[0].Findings[0]
	if f.Level != "WARNING" || f.Rule != "openspec/shall-must" || f.Line != 3 || f.Ours || !strings.HasSuffix(f.File, "specs/rate-limit-headers/spec.md") {
		t.Errorf("finding %+v", f)
	}
}

func TestPlanValidateBadInput(t *testing.T) {
	for _, args := range [][]string{
		{},
		{filepath.Join(openspecCases, "does-not-exist")},
		{filepath.Join(openspecCases, "valid-added", "openspec")}, // no changes under it
		{"a", "b"},
	} {
		if code, _, _ := planCLI(t, nil, args...); code != ExitUsage {
			t.Errorf("plan validate %v: exit %d, want %d", args, code, ExitUsage)
		}
	}
}

func TestPlanValidateAnnotations(t *testing.T) {
	_, out, _ := planCLI(t, []string{"GITHUB_ACTIONS=true"}, filepath.Join(openspecCases, "no-scenario"))
	want := "::error file=" + filepath.ToSlash(openspecCases) + "/no-scenario/openspec/changes/add-rate-limit-headers/specs/rate-limit-headers/spec.md,line=3::openspec/scenario-required: ADDED \"Retry hint\" must include at least one scenario"
	if !strings.Contains(out, want) {
		t.Errorf("no annotation %q in:\n%s", want, out)
	}
}

// gatedRepo copies the valid-added case to a temporary repository and
// replaces its tasks.md.
func gatedRepo(t *testing.T, tasks string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(filepath.Join(openspecCases, "valid-added"))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "openspec", "changes", "add-rate-limit-headers", "tasks.md"), []byte(tasks), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// The plan gates' findings join OpenSpec's: same printing, same exit code.
func TestPlanValidateGates(t *testing.T) {
	root := gatedRepo(t, "## 1. Headers\n\n"+
		"- [ ] 1.1 Set the header in `internal/api/headers.go`; verify: `go build ./...`\n"+
		"- [ ] 1.2 Add a failing test; verify: `curl -s 127.0.0.1:8080` fails\n")
	code, out, errOut := planCLI(t, nil, root)
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d; stdout %s stderr %s", code, ExitFindings, out, errOut)
	}
	tasks := filepath.ToSlash(root) + "/openspec/changes/add-rate-limit-headers/tasks.md"
	for _, want := range []string{
		tasks + ":3: roadmap/gate/failing-test-first: group 1: task 1.1 comes before the failing test (task 1.2)",
		tasks + ":4: roadmap/gate/verify-form: task 1.2: verify command `curl -s 127.0.0.1:8080` is not of a configured form",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !findingLine.MatchString(l) {
			t.Errorf("line %q is not FILE:LINE: rule: message", l)
		}
	}

	code, out, _ = planCLI(t, nil, "--json", root)
	var res planValidateResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != ExitFindings {
		t.Fatalf("exit %d, %v\n%s", code, err, out)
	}
	c := res.Changes[0]
	if !c.OpenSpecValid || c.Passed {
		t.Errorf("openspec_valid %v passed %v; want the gates alone to fail the plan", c.OpenSpecValid, c.Passed)
	}
	var gated int
	for _, f := range c.Findings {
		if strings.HasPrefix(f.Rule, "roadmap/gate/") {
			gated++
			if !f.Ours || f.Level != "ERROR" {
				t.Errorf("gate finding %+v: want ours and ERROR", f)
			}
		}
	}
	if gated != 2 {
		t.Errorf("%d gate findings, want 2: %+v", gated, c.Findings)
	}
}

// The verify forms are the configuration's: gates.extra_verify_forms in the
// repository's .github/roadmap.yml adds a runner to the default, and
// gates.verify_forms in a --config file replaces the default.
func TestPlanValidateConfiguredVerifyForms(t *testing.T) {
	root := gatedRepo(t, "## 1. Headers\n\n"+
		"- [ ] 1.1 Add a failing test; verify: `bazel test //api:headers_test` fails\n"+
		"- [ ] 1.2 Set the header; verify: `go build ./...`\n")
	refused := func(cmd string) string { return "verify command `" + cmd + "` is not of a configured form" }
	code, out, errOut := planCLI(t, nil, root)
	if code != ExitFindings || !strings.Contains(out, refused("bazel test //api:headers_test")) {
		t.Fatalf("no configuration: exit %d, stdout %q, stderr %q; want bazel test refused", code, out, errOut)
	}
	write := func(p, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, ".github", "roadmap.yml"), "gates:\n  extra_verify_forms: [bazel test]\n")
	if code, out, errOut := planCLI(t, nil, root); code != ExitOK {
		t.Errorf("extra_verify_forms: exit %d, stdout %q, stderr %q; want %d", code, out, errOut, ExitOK)
	}
	only := filepath.Join(t.TempDir(), "roadmap.yml")
	write(only, "gates:\n  verify_forms: [bazel test]\n")
	code, out, errOut = planCLI(t, nil, "--config", only, root)
	if code != ExitFindings || !strings.Contains(out, refused("go build ./...")) || strings.Contains(out, refused("bazel test //api:headers_test")) {
		t.Errorf("verify_forms: exit %d, stdout %q, stderr %q; want go build refused, bazel test taken", code, out, errOut)
	}
	write(only, "gates:\n  verify_forms: [\"^(\"]\n")
	if code, _, errOut := planCLI(t, nil, "--config", only, root); code != ExitUsage || !strings.Contains(errOut, "gates.verify_forms[0]") {
		t.Errorf("a bad form: exit %d, stderr %q; want %d naming the key", code, errOut, ExitUsage)
	}
}

// --body-file FILE gives the acceptance-map gate the issue body; without it the
// gate does not run.
func TestPlanValidateIssue(t *testing.T) {
	dir := filepath.Join(openspecCases, "valid-added")
	issue := filepath.Join(t.TempDir(), "issue.md")
	body := "Clients retry blindly.\n\n## Acceptance criteria\n\n- [ ] Every response carries the remaining quota\n- [ ] Rejected calls say when to retry\n"
	if err := os.WriteFile(issue, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := planCLI(t, nil, "--body-file", issue, dir)
	want := filepath.ToSlash(dir) + "/openspec/changes/add-rate-limit-headers/tasks.md:1: roadmap/gate/acceptance-map: acceptance criterion 1 of the issue maps to no task group: \"Every response carries the remaining quota\""
	if code != ExitFindings || !strings.Contains(out, want) {
		t.Errorf("exit %d, output %q, stderr %q; want %d and %q", code, out, errOut, ExitFindings, want)
	}
	if code, _, _ := planCLI(t, nil, dir); code != ExitOK {
		t.Errorf("without --body-file: exit %d, want %d", code, ExitOK)
	}
	if code, _, errOut := planCLI(t, nil, "--body-file", filepath.Join(t.TempDir(), "missing.md"), dir); code != ExitUsage || !strings.Contains(errOut, "read issue") {
		t.Errorf("missing issue file: exit %d, stderr %q; want %d", code, errOut, ExitUsage)
	}
}

// --openspec checks only what the OpenSpec CLI checks: a change it accepts
// passes even when roadmap's own rules fail it, and every finding printed is
// OpenSpec's. Flags may follow DIR.
func TestPlanValidateOpenSpecOnly(t *testing.T) {
	for _, name := range []string{"task-no-verify", "stray-header"} {
		dir := filepath.Join(openspecCases, name)
		code, out, errOut := planCLI(t, nil, dir)
		if code != ExitFindings || !strings.Contains(out, ": roadmap/") {
			t.Fatalf("%s: exit %d, stdout %q; want %d and roadmap's findings", name, code, out, ExitFindings)
		}
		if !strings.Contains(errOut, "only roadmap's rules fail it") {
			t.Errorf("%s: stderr %q does not say OpenSpec accepts the change", name, errOut)
		}
		code, out, errOut = planCLI(t, nil, dir, "--openspec")
		if code != ExitOK || strings.Contains(out, "roadmap/") {
			t.Errorf("%s --openspec: exit %d, stdout %q, stderr %q; want 0 and no roadmap finding", name, code, out, errOut)
		}
	}
	code, _, _ := planCLI(t, nil, filepath.Join(openspecCases, "no-scenario"), "--openspec")
	if code != ExitFindings {
		t.Errorf("--openspec on a change OpenSpec rejects: exit %d, want %d", code, ExitFindings)
	}
	if code, _, _ := planCLI(t, nil, "--openspec", "--body-file", "x.md", filepath.Join(openspecCases, "valid-added")); code != ExitUsage {
		t.Errorf("--openspec with --issue: exit %d, want %d", code, ExitUsage)
	}
}

// Each finding of --json says whose rule it is, and flags after DIR count.
func TestPlanValidateJSONOwner(t *testing.T) {
	code, out, errOut := planCLI(t, nil, filepath.Join(openspecCases, "stray-header"), "--json")
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d; stderr %s", code, ExitFindings, errOut)
	}
	var res struct {
		Changes []struct {
			OpenSpecValid bool `json:"openspec_valid"`
			Findings      []struct {
				Rule  string `json:"rule"`
				Owner string `json:"owner"`
			} `json:"findings"`
		} `json:"changes"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	owners := map[string]int{}
	for _, f := range res.Changes[0].Findings {
		owners[f.Owner]++
		if !strings.HasPrefix(f.Rule, f.Owner+"/") {
			t.Errorf("finding %s has owner %q", f.Rule, f.Owner)
		}
	}
	if owners["openspec"] == 0 || owners["roadmap"] == 0 || len(owners) != 2 {
		t.Errorf("owners %v; want both openspec and roadmap findings and no other owner", owners)
	}
	if !res.Changes[0].OpenSpecValid {
		t.Error("openspec_valid is false for a change OpenSpec accepts")
	}
}
