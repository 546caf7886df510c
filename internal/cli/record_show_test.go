package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func records(name string) string { return filepath.Join("..", "..", "testdata", "records", name) }

// runCLI runs the roadmap command line in-process.
func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(context.Background(), args, nil, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestRecordShowJSON(t *testing.T) {
	tests := []struct {
		file    string
		keys    map[string]any
		unknown []string
	}{
		{
			file: "valid.md",
			keys: map[string]any{
				"implement.checked_sha":   "3f2a9c1d4e",
				"implement.group":         2.0,
				"implement.published_sha": "3f2a9c1d4e",
				"implement.result":        "yielded",
				"implement.sha":           "3f2a9c1d4e",
				"implement.spend":         map[string]any{"tokens_in": 18230.0, "tokens_out": 4410.0, "usd": 0.21, "model_calls": 14.0},
				"review.round":            "2",
				"stage.plan":              "openspec/changes/add-backoff",
				"stage.pr":                41.0,
				"stage.state":             "planned",
			},
			unknown: []string{"review.round"},
		},
		{
			file: "crlf.md",
			keys: map[string]any{
				"implement.check_log": "--- FAIL: TestBackoffSchedule\n    delay(5) = 2h, want 1h\nFAIL",
				"implement.failure":   "checks_failed",
				"implement.result":    "stopped",
				"implement.stopped":   "checks",
			},
			unknown: []string{},
		},
		{
			file:    "fenced-example.md",
			keys:    map[string]any{"implement.attempt": 1.0, "implement.result": "ready"},
			unknown: []string{},
		},
		{
			file:    "no-record.md",
			keys:    map[string]any{},
			unknown: []string{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", "record", "show", "--body-file", records(tc.file), "--json")
			if code != ExitOK {
				t.Fatalf("exit code = %d, want %d; stderr: %s", code, ExitOK, stderr)
			}
			var got struct {
				Keys    map[string]any `json:"keys"`
				Unknown []string       `json:"unknown"`
			}
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
			}
			if diff := cmp.Diff(tc.keys, got.Keys); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.unknown, got.Unknown); diff != "" {
				t.Errorf("unknown (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRecordShowText(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "record", "show", "--body-file", records("valid.md"))
	if code != ExitOK {
		t.Fatalf("exit code = %d, want 0; stderr: %s", code, stderr)
	}
	want := `implement.checked_sha    3f2a9c1d4e
implement.group          2
implement.published_sha  3f2a9c1d4e
implement.result         yielded
implement.sha            3f2a9c1d4e
implement.spend          {"tokens_in":18230,"tokens_out":4410,"usd":0.21,"model_calls":14}
review.round             2  (unknown key, kept as written)
stage.plan               openspec/changes/add-backoff
stage.pr                 41
stage.state              planned
`
	if diff := cmp.Diff(want, stdout); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}

	code, stdout, stderr = runCLI(t, "", "record", "show", "--body-file", records("no-record.md"))
	if code != ExitOK || stdout != "" || !strings.Contains(stderr, "no record block") {
		t.Errorf("no record: exit %d, stdout %q, stderr %q; want 0, nothing, a note on stderr", code, stdout, stderr)
	}
}

func TestRecordShowBadBody(t *testing.T) {
	tests := []struct {
		file string
		want string // FILE:LINE: and a word of the message
	}{
		{"malformed-line.md", "malformed-line.md:5: want `key: value`"},
		{"duplicate.md", "duplicate.md:9: a second record block"},
		{"unterminated.md", "unterminated.md:3: the record block has no closing `-->` line"},
		{"unknown-version.md", `unknown-version.md:3: unknown record version "v2"`},
		{"wrong-type.md", "wrong-type.md:5: implement.spend: want a spend"},
	}
	for _, tc := range tests {
		for _, asJSON := range []bool{false, true} {
			args := []string{"record", "show", "--body-file", records(tc.file)}
			if asJSON {
				args = append(args, "--json")
			}
			t.Run(strings.Join(args[3:], " "), func(t *testing.T) {
				code, stdout, stderr := runCLI(t, "", args...)
				if code != ExitUsage {
					t.Errorf("exit code = %d, want %d", code, ExitUsage)
				}
				if stdout != "" {
					t.Errorf("stdout = %q, want nothing", stdout)
				}
				if !strings.Contains(stderr, tc.want) {
					t.Errorf("stderr = %q, want it to contain %q", stderr, tc.want)
				}
			})
		}
	}
}

func TestRecordShowUsage(t *testing.T) {
	tests := []struct {
		name  string
		stdin string
		args  []string
		code  int
		out   string
		err   string
		// outHas, when set, is a part of stdout instead of all of it.
		outHas string
	}{
		{name: "no body file", args: []string{}, code: ExitUsage, err: "usage: roadmap record show --body-file FILE"},
		{name: "extra argument", args: []string{"--body-file", records("valid.md"), "extra"}, code: ExitUsage, err: "usage"},
		{name: "missing file", args: []string{"--body-file", records("no-such-file.md")}, code: ExitUsage, err: "no-such-file.md"},
		{name: "unknown flag", args: []string{"--bodyfile", "x"}, code: ExitUsage, err: "unknown flag: --bodyfile"},
		{name: "help", args: []string{"-h"}, code: ExitOK, outHas: "-body-file FILE"},
		{name: "stdin", stdin: "x\n<!-- roadmap:record v1\nimplement.group: 3\n-->", args: []string{"--body-file", "-"}, code: ExitOK, out: "implement.group  3\n"},
		{name: "stdin, bad body", stdin: "x\n<!-- roadmap:record v1\n", args: []string{"--body-file", "-"}, code: ExitUsage, err: "-:2: the record block has no closing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.stdin, append([]string{"record", "show"}, tc.args...)...)
			if code != tc.code {
				t.Errorf("exit code = %d, want %d (stderr %q)", code, tc.code, stderr)
			}
			if tc.outHas != "" {
				if !strings.Contains(stdout, tc.outHas) {
					t.Errorf("stdout = %q, want it to contain %q", stdout, tc.outHas)
				}
			} else if stdout != tc.out {
				t.Errorf("stdout = %q, want %q", stdout, tc.out)
			}
			if !strings.Contains(stderr, tc.err) {
				t.Errorf("stderr = %q, want it to contain %q", stderr, tc.err)
			}
		})
	}
}

// TestRecordShowNeverPanics: any body gives exit 0 or 2, never a crash.
func TestRecordShowNeverPanics(t *testing.T) {
	bodies := []string{
		"",
		"\x00\xff\xfe<!-- roadmap:record v1\n\xff: \xfe\n-->",
		"<!-- roadmap:record v1\n-->\n<!-- roadmap:record v1\n-->",
		"<!-- roadmap:record v1\nimplement.trace: {\"a\":\n-->",
		"```\n<!-- roadmap:record v1\n",
		strings.Repeat("<!-- roadmap:record v1\n", 1000),
		"<!-- roadmap:record v1\r\nimplement.group: 99999999999999999999\r\n-->",
	}
	for i, body := range bodies {
		for _, format := range [][]string{nil, {"--json"}} {
			code, _, stderr := runCLI(t, body, append([]string{"record", "show", "--body-file", "-"}, format...)...)
			if code != ExitOK && code != ExitUsage {
				t.Errorf("body %d %v: exit code %d, stderr %q", i, format, code, stderr)
			}
		}
	}
}
