package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/failure"
)

var logsDir = filepath.Join("..", "..", "testdata", "logs")

// classifyCLI runs `roadmap classify` in-process with the given environment.
func classifyCLI(t *testing.T, environ []string, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(context.Background(), append([]string{"classify"}, args...), environ, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// logExpectation is one entry of testdata/logs/expected.json.
type logExpectation struct {
	Class       string   `json:"class"`
	Reason      string   `json:"reason"`
	Source      string   `json:"source"`
	Line        int      `json:"line"`
	Evidence    string   `json:"evidence"`
	Conclusion  string   `json:"conclusion"`
	ExitCode    *int     `json:"exit_code"`
	Annotations []string `json:"annotations"`
}

func TestClassifyCommand(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(logsDir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp map[string]logExpectation
	if err := json.Unmarshal(data, &exp); err != nil {
		t.Fatalf("parse expected.json: %v", err)
	}
	files, err := filepath.Glob(filepath.Join(logsDir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 || len(files) != len(exp) {
		t.Fatalf("%d logs, %d expectations", len(files), len(exp))
	}
	// The action a class prints is its row's in the taxonomy (docs/taxonomy.md).
	actions := func(class string) string {
		row, _ := failure.Lookup(failure.Class(class))
		return string(row.Action)
	}
	for _, f := range files {
		name := filepath.Base(f)
		want, ok := exp[name]
		if !ok {
			t.Errorf("%s has no expectation", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			args := []string{"--log", f, "--json"}
			if want.Conclusion != "" {
				args = append(args, "--conclusion", want.Conclusion)
			}
			if want.ExitCode != nil {
				args = append(args, "--exit-code", strconv.Itoa(*want.ExitCode))
			}
			for _, a := range want.Annotations {
				args = append(args, "--annotation", a)
			}
			code, stdout, stderr := classifyCLI(t, nil, "", args...)
			if code != ExitOK {
				t.Fatalf("exit %d, want 0 (a verdict is data); stderr: %s", code, stderr)
			}
			if stderr != "" {
				t.Errorf("stderr = %q, want nothing", stderr)
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
			}
			wantJSON := map[string]any{
				"class": want.Class, "reason": want.Reason, "evidence": want.Evidence,
				"line": float64(want.Line), "source": want.Source, "action": actions(want.Class),
				"stop": actions(want.Class) == "stop",
			}
			for k := range got {
				if _, ok := wantJSON[k]; !ok {
					delete(got, k)
				}
			}
			if diff := cmp.Diff(wantJSON, got); diff != "" {
				t.Errorf("classify --json (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClassifyCommandHuman(t *testing.T) {
	code, stdout, stderr := classifyCLI(t, nil, "", "--log", filepath.Join(logsDir, "exit137-no-evidence.log"), "--exit-code", "137")
	if code != ExitOK {
		t.Fatalf("exit %d; stderr: %s", code, stderr)
	}
	for _, want := range []string{
		"class:     killed (sigkill)\n",
		"action:    continue: ",
		"result:    yielded (automatic)\n",
		// The log's line, made plain: classify may run as a step, where
		// "##[error]" would be a workflow command.
		"evidence:  line 72: ## [error]Process completed with exit code 137.\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}

	code, stdout, _ = classifyCLI(t, nil, "", "--log", filepath.Join(logsDir, "auth.log"))
	if code != ExitOK || !strings.Contains(stdout, "result:    stopped (needs a person, stops the item)\n") {
		t.Errorf("auth: exit %d, stdout:\n%s", code, stdout)
	}

	code, stdout, _ = classifyCLI(t, nil, "", "--log", "-", "--conclusion", "timed_out")
	if code != ExitOK || !strings.Contains(stdout, "evidence:  the job's conclusion, timed_out\n") {
		t.Errorf("empty log, timed_out: exit %d, stdout:\n%s", code, stdout)
	}
}

func TestClassifyCommandStdinAndMask(t *testing.T) {
	const secret = "s3cr3t-value-of-the-token"
	log := "2026-11-29T10:15:02.1234567Z fatal: unable to access 'https://x:" + secret + "@git.example.com/o/r/': The requested URL returned error: 403\n"
	code, stdout, stderr := classifyCLI(t, []string{"ROADMAP_PUSH_TOKEN=" + secret}, log, "--log", "-", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d; stderr: %s", code, stderr)
	}
	var got struct{ Class, Evidence string }
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	if got.Class != "auth" {
		t.Errorf("class = %q, want auth", got.Class)
	}
	if strings.Contains(stdout, secret) || !strings.Contains(got.Evidence, "returned error: 403") {
		t.Errorf("evidence = %q: want the line, with the token masked", got.Evidence)
	}
}

func TestClassifyCommandUsage(t *testing.T) {
	log := filepath.Join(logsDir, "auth.log")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no --log", []string{"--json"}, "needs --log"},
		{"missing file", []string{"--log", filepath.Join(t.TempDir(), "gone.log")}, "no such file"},
		{"a directory", []string{"--log", t.TempDir()}, "read job log"},
		{"bad conclusion", []string{"--log", log, "--conclusion", "exploded"}, "--conclusion"},
		{"bad exit code", []string{"--log", log, "--exit-code", "lots"}, "--exit-code"},
		{"exit code out of range", []string{"--log", log, "--exit-code", "300"}, "--exit-code"},
		{"an argument", []string{"--log", log, "extra"}, "no arguments"},
		{"unknown flag", []string{"--log", log, "--bogus"}, "bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := classifyCLI(t, nil, "", tt.args...)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d", code, ExitUsage)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing on a usage error", stdout)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr = %q, want it to mention %q", stderr, tt.want)
			}
		})
	}
}
