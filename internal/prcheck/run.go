package prcheck

import (
	"context"
	"fmt"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/policy"
)

// runGroup runs the group's verify commands at the head, in task order,
// stopping at the first that does not pass.
func (j *job) runGroup(ctx context.Context, r checks.Runner, ws string, g plan.Group) (Group, error) {
	defer j.section("roadmap checks: group %d: %s", g.Number, g.Title)()
	cg := Group{Number: g.Number, Title: g.Title, Passed: true, Commands: []Command{}, FailToPass: F2P{Status: F2PNone}}
	if len(g.FailToPass()) > 0 {
		cg.FailToPass.Status = F2PNotChecked
	}
	for _, cmd := range g.VerifyCommands() {
		if !cg.Passed {
			cg.Commands = append(cg.Commands, Command{Command: cmd})
			continue
		}
		c, log, why, err := j.runOne(ctx, r, ws, cmd)
		if err != nil {
			return cg, err
		}
		cg.Commands = append(cg.Commands, c)
		if !c.Passed {
			cg.Passed, cg.Log, cg.failed, cg.why = false, log, cmd, why
		}
	}
	j.Logf("group %d: %s", g.Number, passWord(cg.Passed))
	return cg, nil
}

// runConfigured runs the configuration's checks.commands (or those detected
// for the tree) once.
func (j *job) runConfigured(ctx context.Context, r checks.Runner, ws string) (Configured, error) {
	if len(j.checkCommands) > 0 {
		defer j.section("roadmap checks: checks.commands")()
	}
	cc := Configured{Passed: true, Commands: []Command{}}
	for _, cmd := range j.checkCommands {
		if !cc.Passed {
			cc.Commands = append(cc.Commands, Command{Command: cmd})
			continue
		}
		c, log, why, err := j.runOne(ctx, r, ws, cmd)
		if err != nil {
			return cc, err
		}
		cc.Commands = append(cc.Commands, c)
		if !c.Passed {
			cc.Passed, cc.Log, cc.failed, cc.why = false, log, cmd, why
		}
	}
	if len(cc.Commands) > 0 {
		j.Logf("configured checks: %s", passWord(cc.Passed))
	}
	return cc, nil
}

// runOne runs one command at the head (or takes its earlier result). A
// command the policy refuses, that does not split or cannot start is a failed
// check, not an internal failure: the plan names a command that cannot pass.
// The error is for a run that could not finish (the context ended).
func (j *job) runOne(ctx context.Context, r checks.Runner, ws, cmd string) (c Command, log, why string, err error) {
	cmd = strings.TrimSpace(cmd)
	hr, seen := j.results[cmd]
	if !seen {
		hr.rep, err = checks.Run(ctx, r, policy.Split, ws, []string{cmd}, j.opts)
		if err != nil {
			if ctx.Err() != nil {
				return c, "", "", err
			}
			hr.err = j.Masker.Mask(err.Error())
			hr.rep = checks.Report{FailedCommand: cmd, ExitCode: -1, Log: "$ " + j.Masker.Mask(cmd) + "\n[" + hr.err + "]",
				Results: []checks.CommandResult{{Command: cmd, Expect: checks.ExpectPass, ExitCode: -1}}}
		}
		j.results[cmd] = hr
	}
	rep := hr.rep
	c.Error = hr.err
	c.Command, c.Ran, c.Passed = cmd, true, rep.Passed
	if len(rep.Results) > 0 {
		res := rep.Results[0]
		c.ExitCode, c.DurationMS, c.TimedOut = res.ExitCode, res.Duration.Milliseconds(), res.TimedOut
	}
	switch {
	case c.Passed:
	case c.Error != "":
		why = "could not run: " + c.Error
	case c.TimedOut:
		why = "timed out"
	default:
		why = fmt.Sprintf("exited %d", c.ExitCode)
	}
	if !c.Passed {
		j.Logf("%s\n%s", j.Masker.Mask(cmd+" "+why), rep.Log)
	}
	return c, rep.Log, why, nil
}

// section opens a section of the job log (stderr) and returns its closer.
// Only roadmap's own lines open or close one: commands' output and plan
// text reach the log through Logf, made plain.
func (j *job) section(format string, args ...any) func() {
	if j.Stderr == nil {
		return func() {}
	}
	fmt.Fprintln(j.Stderr, actionsio.Group(j.Masker.Mask(fmt.Sprintf(format, args...))))
	return func() { fmt.Fprintln(j.Stderr, actionsio.EndGroup) }
}
