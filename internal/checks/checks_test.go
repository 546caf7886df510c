package checks

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/sandbox/sandboxtest"
)

// fakeRunner answers each command line with a scripted result and records
// what ran.
type fakeRunner struct {
	results map[string]Result
	errs    map[string]error
	block   map[string]bool // wait for the context to end
	calls   []string
}

func (f *fakeRunner) Run(ctx context.Context, dir string, argv []string) (Result, error) {
	cmd := strings.Join(argv, " ")
	f.calls = append(f.calls, cmd)
	if f.block[cmd] {
		<-ctx.Done()
		return Result{ExitCode: -1, Output: "partial\n"}, ctx.Err()
	}
	if err := f.errs[cmd]; err != nil {
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if res, ok := f.results[cmd]; ok {
		return res, nil
	}
	return Result{Output: "ok\n", Duration: time.Millisecond}, nil
}

func split(s string) ([]string, error) {
	if strings.Contains(s, "|") {
		return nil, errors.New("pipes are refused")
	}
	return strings.Fields(s), nil
}

var ignoreDuration = cmpopts.IgnoreFields(CommandResult{}, "Duration")

func TestRunPasses(t *testing.T) {
	f := &fakeRunner{}
	rep, err := Run(context.Background(), f, split, "/ws", []string{"go test ./a", " ", "go vet ./...", "go test ./a"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := Report{Passed: true, Results: []CommandResult{
		{Command: "go test ./a", Expect: ExpectPass, Held: true},
		{Command: "go vet ./...", Expect: ExpectPass, Held: true},
	}}
	if diff := cmp.Diff(want, rep, ignoreDuration); diff != "" {
		t.Errorf("Report (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"go test ./a", "go vet ./..."}, f.calls); diff != "" {
		t.Errorf("commands run (-want +got):\n%s", diff)
	}
}

func TestRunStopsAtFirstFailure(t *testing.T) {
	f := &fakeRunner{results: map[string]Result{
		"go test ./b": {ExitCode: 1, Output: "--- FAIL: TestB (0.00s)\n    b_test.go:9: got 2, want 3\nFAIL\n"},
	}}
	rep, err := Run(context.Background(), f, split, "/ws", []string{"go test ./a", "go test ./b", "go vet ./..."}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed || rep.FailedCommand != "go test ./b" || rep.ExitCode != 1 {
		t.Errorf("Report = %+v, want failed at go test ./b with exit 1", rep)
	}
	want := "$ go test ./b\n--- FAIL: TestB (0.00s)\n    b_test.go:9: got 2, want 3\nFAIL\n[exit 1]"
	if rep.Log != want {
		t.Errorf("Log = %q, want %q", rep.Log, want)
	}
	if diff := cmp.Diff([]string{"go test ./a", "go test ./b"}, f.calls); diff != "" {
		t.Errorf("commands run (-want +got):\n%s", diff)
	}
	if n := len(rep.Results); n != 2 || rep.Results[1].Held {
		t.Errorf("Results = %+v, want two, the second not held", rep.Results)
	}
}

func TestRunLogBoundedMaskedTail(t *testing.T) {
	const secret = "ghs_0123456789abcdefghij0123456789"
	var out strings.Builder
	for i := 0; out.Len() < 20000; i++ {
		out.WriteString("ligne é ✓ of noise\n")
	}
	out.WriteString("token " + secret + " leaked\n")
	out.WriteString("--- FAIL: TestLast\n")
	f := &fakeRunner{results: map[string]Result{"make test": {ExitCode: 2, Output: out.String()}}}
	mask := func(s string) string { return strings.ReplaceAll(s, secret, "***") }
	for _, limit := range []int{0, 4000, 300, 40, 5} {
		rep, err := Run(context.Background(), f, split, "/ws", []string{"make test"}, Options{Mask: mask, LogLimit: limit})
		if err != nil {
			t.Fatal(err)
		}
		want := limit
		if want == 0 {
			want = DefaultLogLimit
		}
		if n := utf8.RuneCountInString(rep.Log); n > want {
			t.Errorf("limit %d: Log has %d characters", limit, n)
		}
		if !utf8.ValidString(rep.Log) {
			t.Errorf("limit %d: Log is not valid UTF-8 (a rune was cut)", limit)
		}
		if strings.Contains(rep.Log, secret) || strings.Contains(rep.Log, "ghs_") {
			t.Errorf("limit %d: Log holds the secret", limit)
		}
		if !strings.HasSuffix(rep.Log, "[exit 2]") && (limit == 0 || limit >= 40) {
			t.Errorf("limit %d: Log does not end with the exit: %q", limit, rep.Log[max(0, len(rep.Log)-40):])
		}
		if limit == 0 || limit >= 300 {
			for _, s := range []string{"$ make test\n", "[… output cut]\n", "token *** leaked\n--- FAIL: TestLast\n"} {
				if !strings.Contains(rep.Log, s) {
					t.Errorf("limit %d: Log lacks %q", limit, s)
				}
			}
		}
	}
}

func TestRunTimeouts(t *testing.T) {
	t.Run("the runner's timeout", func(t *testing.T) {
		f := &fakeRunner{results: map[string]Result{"go test ./slow": {ExitCode: -1, TimedOut: true, Duration: 10 * time.Minute, Output: "panic: test timed out\n"}}}
		rep, err := Run(context.Background(), f, split, "/ws", []string{"go test ./slow"}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Passed || !rep.Results[0].TimedOut || !strings.HasSuffix(rep.Log, "[timed out after 10m0s]") {
			t.Errorf("Report = %+v, want a timed-out failure", rep)
		}
	})
	t.Run("Options.Timeout", func(t *testing.T) {
		f := &fakeRunner{block: map[string]bool{"go test ./hang": true}}
		rep, err := Run(context.Background(), f, split, "/ws", []string{"go test ./hang", "go vet ./..."}, Options{Timeout: 20 * time.Millisecond})
		if err != nil {
			t.Fatalf("a command that ran out of its own time is a failed check, not an error: %v", err)
		}
		if rep.Passed || rep.FailedCommand != "go test ./hang" || !rep.Results[0].TimedOut || !strings.Contains(rep.Log, "partial") {
			t.Errorf("Report = %+v, want go test ./hang timed out with its partial output", rep)
		}
	})
	t.Run("the caller's context", func(t *testing.T) {
		f := &fakeRunner{block: map[string]bool{"go test ./hang": true}}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		_, err := Run(ctx, f, split, "/ws", []string{"go test ./hang"}, Options{Timeout: time.Hour})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want the caller's deadline", err)
		}
	})
}

func TestRunErrors(t *testing.T) {
	refused := errors.New("refused by the shell policy (no row)")
	f := &fakeRunner{errs: map[string]error{"curl x": refused}}
	tests := []struct {
		name string
		cmds []string
		want string
		is   error
	}{
		{"does not split", []string{"go test ./a", "go test | tee x"}, `check "go test | tee x": split: pipes are refused`, nil},
		{"refused", []string{"curl x"}, `check "curl x": refused`, refused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Run(context.Background(), f, split, "/ws", tt.cmds, Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err does not wrap the runner's error")
			}
			if rep.Passed {
				t.Error("Report passed on an error")
			}
		})
	}
}

func TestRunFailing(t *testing.T) {
	f := &fakeRunner{results: map[string]Result{
		"go test ./a -run TestA": {ExitCode: 1, Output: "--- FAIL: TestA\n"},
		"go test ./b -run TestB": {ExitCode: 0, Output: "ok  \tb\t0.01s [no tests to run]\n"},
		"go test ./c -run TestC": {ExitCode: 2, Output: "c_test.go:3: undefined: C\n"},
	}}
	cmds := []string{"go test ./a -run TestA", "go test ./b -run TestB", "go test ./c -run TestC"}
	rep, err := RunFailing(context.Background(), f, split, "/ws", cmds, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := Report{
		Results: []CommandResult{
			{Command: cmds[0], Expect: ExpectFail, ExitCode: 1, Held: true},
			{Command: cmds[1], Expect: ExpectFail, ExitCode: 0, Held: false},
			{Command: cmds[2], Expect: ExpectFail, ExitCode: 2, Held: true},
		},
		FailedCommand: cmds[1],
		Log:           "$ go test ./b -run TestB\nok  \tb\t0.01s [no tests to run]\n[exit 0: this command must fail before the group's change]",
	}
	if diff := cmp.Diff(want, rep, ignoreDuration); diff != "" {
		t.Errorf("Report (-want +got):\n%s", diff)
	}
	if len(f.calls) != 3 {
		t.Errorf("ran %d commands, want all 3 (every before result is recorded)", len(f.calls))
	}
}

// TestFailToPassRealModule runs real `go test` under the shell policy on a
// temporary module: the test fails before the fix and passes after it.
func TestFailToPassRealModule(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	ws := t.TempDir()
	files := map[string]string{
		"go.mod":       "module example.com/calc\n\ngo 1.21\n",
		"calc.go":      "package calc\n\nfunc Add(a, b int) int { return a - b }\n",
		"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sb := policy.NewSandbox(sandboxtest.None(t, ws, os.Environ()), policy.Default(), os.Environ())
	r := SandboxRunner(sb)
	ctx := context.Background()
	const verify = "go test ./... -run TestAdd -count=1"

	before, err := RunFailing(ctx, r, policy.Split, ws, []string{verify}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !before.Passed || before.Results[0].ExitCode == 0 {
		t.Fatalf("before = %+v, want %q to fail on the unfixed code", before, verify)
	}

	red, err := Run(ctx, r, policy.Split, ws, []string{verify, "go vet ./..."}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if red.Passed || !strings.Contains(red.Log, "Add(2, 3) = -1, want 5") || !strings.HasPrefix(red.Log, "$ "+verify+"\n") {
		t.Errorf("red run = %+v, want the failing test's message in the log", red)
	}

	if err := os.WriteFile(filepath.Join(ws, "calc.go"), []byte("package calc\n\nfunc Add(a, b int) int { return a + b }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	after, err := Run(ctx, r, policy.Split, ws, []string{verify, "go vet ./..."}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !after.Passed || len(after.Results) != 2 {
		t.Errorf("after = %+v, want both checks passed", after)
	}

	// A check the policy refuses is an error, not a failed check.
	if _, err := Run(ctx, r, policy.Split, ws, []string{"curl http://127.0.0.1/"}, Options{}); err == nil {
		t.Error("a refused command ran")
	}
	// So is a directory that is not the sandbox's workspace.
	if _, err := Run(ctx, r, policy.Split, t.TempDir(), []string{verify}, Options{}); err == nil {
		t.Error("SandboxRunner ran outside its workspace")
	}
}

func TestPolicyRunner(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	ws := t.TempDir()
	r := PolicyRunner(policy.Default(), sandboxtest.None(t, ws, os.Environ()))
	rep, err := Run(context.Background(), r, policy.Split, ws, []string{"go version"}, Options{})
	if err != nil || !rep.Passed {
		t.Errorf("go version under the policy = %+v, %v", rep, err)
	}
}
