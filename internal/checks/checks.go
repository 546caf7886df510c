package checks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Result is what one process did. It has the fields of policy.Result.
type Result struct {
	ExitCode int // -1 when a signal ended the process
	Output   string
	Duration time.Duration
	TimedOut bool
}

// Runner runs argv in dir. A non-zero exit is a Result, not an error.
type Runner interface {
	Run(ctx context.Context, dir string, argv []string) (Result, error)
}

// Splitter turns a command line into argv, without a shell (policy.Split).
type Splitter func(string) ([]string, error)

// DefaultLogLimit is how many characters of a failing command's output
// Report.Log keeps, from the end.
const DefaultLogLimit = 4000

// Options tune a run. The zero value is usable.
type Options struct {
	// Mask is applied to a command's output before any of it is kept, so the
	// Log never holds a secret a check printed. nil keeps the output as is.
	Mask func(string) string
	// LogLimit bounds Report.Log in characters (runes); <= 0 means DefaultLogLimit.
	LogLimit int
	// Timeout bounds each command; 0 leaves it to the Runner (the policy row's
	// timeout). A command that runs out of time failed; it is not an error.
	Timeout time.Duration
}

// Expect is the exit a command must have for its check to hold.
type Expect string

const (
	ExpectPass Expect = "pass" // exit 0
	ExpectFail Expect = "fail" // non-zero exit or a timeout: the fail half of fail-to-pass
)

// CommandResult is how one command ended.
type CommandResult struct {
	Command  string        `json:"command"`
	Expect   Expect        `json:"expect"`
	ExitCode int           `json:"exit_code"`
	Duration time.Duration `json:"duration_ns"`
	TimedOut bool          `json:"timed_out,omitempty"`
	Held     bool          `json:"held"` // the exit was the one Expect asks for
}

// Report is the outcome of a run of checks.
type Report struct {
	Passed  bool            `json:"passed"`
	Results []CommandResult `json:"results"`
	// FailedCommand, ExitCode and Log describe the first command whose check
	// did not hold; they are empty when Passed.
	FailedCommand string `json:"failed_command,omitempty"`
	ExitCode      int    `json:"exit_code,omitempty"`
	// Log is the masked tail of FailedCommand's output, at most LogLimit
	// characters, headed by the command and ended by how it exited.
	Log string `json:"log,omitempty"`
}

// Run runs cmds in order (each once; blank ones skipped) and stops at the
// first that does not exit 0. This is the check at a group's end: every
// verify command, the `fails` ones included, and the configured commands.
func Run(ctx context.Context, r Runner, split Splitter, dir string, cmds []string, opts Options) (Report, error) {
	return run(ctx, r, split, dir, cmds, ExpectPass, true, opts)
}

// RunFailing runs each of cmds (a group's `fails` commands) and checks that it
// fails: the before half of fail-to-pass. It runs them all, so the Report
// holds a before result for each; Passed means every one failed. Call it on
// the tree the group's change has not reached — in practice the tree where
// the failing test exists but the behaviour it tests does not (the group's
// test task done, its code tasks not). Whether the group's fail-to-pass
// held is internal/f2p's to judge (f2p.Judge), from this Report and the
// group's checks after its change.
func RunFailing(ctx context.Context, r Runner, split Splitter, dir string, cmds []string, opts Options) (Report, error) {
	return run(ctx, r, split, dir, cmds, ExpectFail, false, opts)
}

func run(ctx context.Context, r Runner, split Splitter, dir string, cmds []string, expect Expect, failFast bool, opts Options) (Report, error) {
	rep := Report{Passed: true}
	seen := map[string]bool{}
	for _, cmd := range cmds {
		cmd = strings.TrimSpace(cmd)
		if cmd == "" || seen[cmd] {
			continue
		}
		seen[cmd] = true
		argv, err := split(cmd)
		if err != nil {
			rep.Passed = false
			return rep, fmt.Errorf("check %q: split: %w", cmd, err)
		}
		if len(argv) == 0 {
			rep.Passed = false
			return rep, fmt.Errorf("check %q: no program", cmd)
		}
		res, err := runOne(ctx, r, dir, argv, opts.Timeout)
		if err != nil {
			rep.Passed = false
			return rep, fmt.Errorf("check %q: %w", cmd, err)
		}
		cr := CommandResult{Command: cmd, Expect: expect, ExitCode: res.ExitCode, Duration: res.Duration, TimedOut: res.TimedOut}
		ok := res.ExitCode == 0 && !res.TimedOut
		cr.Held = ok == (expect == ExpectPass)
		rep.Results = append(rep.Results, cr)
		if cr.Held {
			continue
		}
		if rep.Passed {
			rep.Passed = false
			rep.FailedCommand = cmd
			rep.ExitCode = res.ExitCode
			rep.Log = formatLog(cmd, res, expect, opts)
		}
		if failFast {
			break
		}
	}
	return rep, nil
}

func runOne(ctx context.Context, r Runner, dir string, argv []string, timeout time.Duration) (Result, error) {
	if timeout <= 0 {
		return r.Run(ctx, dir, argv)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	res, err := r.Run(cctx, dir, argv)
	if ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		// Our own bound ran out, not the caller's: a failed check.
		if err != nil {
			res = Result{ExitCode: -1, Output: res.Output, Duration: time.Since(start)}
		}
		res.TimedOut = true
		return res, nil
	}
	return res, err
}

// formatLog is the Log of a failing command: "$ command", the tail of its
// masked output, and how it ended, within the limit.
func formatLog(cmd string, res Result, expect Expect, opts Options) string {
	limit := opts.LogLimit
	if limit <= 0 {
		limit = DefaultLogLimit
	}
	mask := opts.Mask
	if mask == nil {
		mask = func(s string) string { return s }
	}
	var end string
	switch {
	case res.TimedOut:
		end = fmt.Sprintf("[timed out after %s]", res.Duration.Round(time.Millisecond))
	case expect == ExpectFail:
		end = "[exit 0: this command must fail before the group's change]"
	default:
		end = fmt.Sprintf("[exit %d]", res.ExitCode)
	}
	head := mask("$ "+cmd) + "\n"
	out := mask(res.Output)
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	room := limit - utf8.RuneCountInString(head) - utf8.RuneCountInString(end)
	if n := utf8.RuneCountInString(out); n > room {
		cut := "[… output cut]\n"
		keep := room - utf8.RuneCountInString(cut)
		if keep < 0 {
			return tail(head+out+end, limit)
		}
		out = cut + tail(out, keep)
	}
	return head + out + end
}

// tail returns the last n runes of s.
func tail(s string, n int) string {
	if n <= 0 {
		return ""
	}
	count := 0
	for i := len(s); i > 0; {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
		count++
		if count == n {
			return s[i:]
		}
	}
	return s
}
