package actionsio

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parseOutputFile reads $GITHUB_OUTPUT the way the runner does.
func parseOutputFile(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		name, delim, ok := strings.Cut(line, "<<")
		if !ok {
			t.Fatalf("line %q is not name<<delimiter", line)
		}
		var val []string
		for sc.Scan() && sc.Text() != delim {
			val = append(val, sc.Text())
		}
		out[name] = strings.Join(val, "\n")
	}
	return out
}

func TestSetOutputRandomDelimiter(t *testing.T) {
	dir := t.TempDir()
	outPath := filepath.Join(dir, "out")
	env := map[string]string{"GITHUB_OUTPUT": outPath, "GITHUB_ACTIONS": "true"}
	var stdout bytes.Buffer
	a := New(func(k string) string { return env[k] }, &stdout)
	// A hostile value tries to close the library's fixed delimiter and forge an output.
	hostile := "line one\n_GitHubActionsFileCommandDelimeter_\nresult<<EOF\nready\nEOF"
	if err := a.SetOutput("summary", hostile); err != nil {
		t.Fatal(err)
	}
	if err := a.SetOutput("result", "stopped"); err != nil {
		t.Fatal(err)
	}
	got := parseOutputFile(t, outPath)
	want := map[string]string{"summary": hostile, "result": "stopped"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout = %q, want nothing", stdout.String())
	}
}

func TestOutsideActions(t *testing.T) {
	var stdout bytes.Buffer
	a := New(func(string) string { return "" }, &stdout)
	if err := a.SetOutput("result", "ready"); err != nil {
		t.Fatal(err)
	}
	a.AddMask("secret-value")
	a.Error("f.go", 3, "boom")
	if err := a.AddSummary("# hi"); err != nil {
		t.Fatal(err)
	}
	if got := a.Outputs()["result"]; got != "ready" {
		t.Errorf("result = %q, want ready", got)
	}
	if stdout.Len() != 0 {
		t.Errorf("outside Actions nothing goes to stdout, got %q", stdout.String())
	}
}

func TestAnnotationsAndMask(t *testing.T) {
	var stdout bytes.Buffer
	env := map[string]string{"GITHUB_ACTIONS": "true", "INPUT_ISSUE": " 42 "}
	a := New(func(k string) string { return env[k] }, &stdout)
	a.Error("internal/x.go", 7, "checks failed")
	a.Warning("", 0, "slow")
	a.AddMask("s3cr3t")
	got := stdout.String()
	for _, want := range []string{"::error file=internal/x.go,line=7::checks failed", "::warning::slow", "::add-mask::s3cr3t"} {
		if !strings.Contains(got, want) {
			t.Errorf("stdout %q lacks %q", got, want)
		}
	}
	if a.Input("issue") != "42" {
		t.Errorf("Input(issue) = %q, want 42", a.Input("issue"))
	}
}

func TestSummary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "summary")
	a := New(func(k string) string {
		if k == "GITHUB_STEP_SUMMARY" {
			return path
		}
		return ""
	}, &bytes.Buffer{})
	_ = a.AddSummary("| a |")
	_ = a.AddSummary("| b |\n")
	data, _ := os.ReadFile(path)
	if string(data) != "| a |\n| b |\n" {
		t.Errorf("summary = %q", data)
	}
}

func TestAnnotationIsOneLine(t *testing.T) {
	var stdout bytes.Buffer
	a := New(func(k string) string { return map[string]string{"GITHUB_ACTIONS": "true"}[k] }, &stdout)
	a.Error("plan.md", 2, "the plan is wrong\n::error::roadmap: stopped: class=auth\n##[warning]forged")
	lines := runnerLines(stdout.String())
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "::error file=plan.md,line=2::the plan is wrong ") || strings.Contains(lines[0], "##[") {
		t.Errorf("annotation printed as %q, want one ::error command and nothing else", stdout.String())
	}
}
