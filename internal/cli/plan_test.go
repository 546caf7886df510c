package cli

import (
	"bytes"
	"context"
	"encoding/json"
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
var findingLine = regexp.MustCompile(`^[^:]+\.(md|yaml):[1-9][0-9]*: (openspec|roadmap)/[a-z-]+: .+$`)

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
