package prcheck

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/sandbox"
)

// finish writes the outputs, annotations, summary and status; the error is
// the status write's.
func (j *job) finish(ctx context.Context, res *Result) error {
	passedGroups := 0
	res.Passed = res.Configured.Passed
	for _, g := range res.Groups {
		if g.Passed {
			passedGroups++
			continue
		}
		res.Passed = false
		if res.FailedGroup == 0 {
			res.FailedGroup, res.FailedCommand = g.Number, g.failed
			res.Description = fmt.Sprintf("group %d: %s %s", g.Number, g.failed, g.why)
		}
		file, line, msg := j.annotation(g)
		j.IO.Error(file, line, j.Masker.Mask(msg))
	}
	if !res.Configured.Passed {
		if res.FailedCommand == "" {
			res.FailedCommand = res.Configured.failed
			res.Description = fmt.Sprintf("checks.commands: %s %s", res.Configured.failed, res.Configured.why)
		}
		file, line := j.relPath(j.ConfigPath), 0
		if _, err := os.Stat(j.ConfigPath); err != nil {
			file = ""
		}
		j.IO.Error(file, line, j.Masker.Mask(fmt.Sprintf("checks.commands: %s %s", res.Configured.failed, res.Configured.why)))
	}
	if f, n, ok := firstFailing(res.Findings); ok {
		// The plan comes first: a group's failure may be the plan's fault.
		res.Passed = false
		res.Description = planDescription(f, n)
	}
	if res.Passed {
		res.Description = fmt.Sprintf("%d of %d groups pass", passedGroups, len(res.Groups))
		for _, g := range res.Groups {
			if g.FailToPass.Status == F2PNotChecked {
				res.Description += " (fail-to-pass not checked)"
				break
			}
		}
	}
	res.Description = j.Masker.Mask(res.Description)
	for _, o := range [][2]string{
		{"passed", strconv.FormatBool(res.Passed)},
		{"failed_group", groupOutput(res.FailedGroup)},
		{"failed_command", j.Masker.Mask(res.FailedCommand)},
	} {
		if err := j.IO.SetOutput(o[0], o[1]); err != nil {
			j.Logf("set output %s: %v", o[0], err)
		}
	}
	if err := j.IO.AddSummary(j.summary(res)); err != nil {
		j.Logf("step summary: %v", err)
	}
	state := "success"
	if !res.Passed {
		state = "failure"
	}
	err := j.setStatus(ctx, state, res.Description)
	j.Logf("%s: %s", passWord(res.Passed), res.Description)
	return err
}

// annotation places a failed group's finding on the task that names the
// failing command.
func (j *job) annotation(g Group) (file string, line int, msg string) {
	pg, _ := j.change.Tasks.Group(g.Number)
	line, where := pg.Line, fmt.Sprintf("group %d", g.Number)
	// The task the command must pass for; for a fail-to-pass failure, the
	// `fails` task that wrote it to fail.
	wantFails := g.FailToPass.Status == F2PFailed
	var first *plan.Task
	for i := range pg.Tasks {
		t := &pg.Tasks[i]
		if t.Verify == g.failed && (first == nil || t.Fails == wantFails && first.Fails != wantFails) {
			first = t
		}
	}
	if first != nil {
		line, where = first.Line, fmt.Sprintf("group %d task %s", g.Number, first.ID)
	}
	return j.tasksRel, line, fmt.Sprintf("%s: %s %s", where, g.failed, g.why)
}

// planDescription is the status's description for a plan validation that
// fails: the first failing finding, where it is and why.
func planDescription(first plan.Finding, n int) string {
	if n == 1 {
		return "plan: " + first.String()
	}
	return fmt.Sprintf("plan, %d findings: %s", n, first)
}

// writeFindings is the plan validation's table in the summary.
func writeFindings(b *strings.Builder, fs []plan.Finding) {
	if len(fs) == 0 {
		b.WriteString("Plan validation (`openspec validate --strict` and roadmap's rules): no findings.\n\n")
		return
	}
	b.WriteString("Plan validation (`openspec validate --strict` and roadmap's rules):\n\n| Level | Where | Rule | Finding |\n| --- | --- | --- | --- |\n")
	for _, f := range fs {
		level := string(f.Level)
		switch f.Level {
		case plan.LevelError:
			level = "❌ " + level
		case plan.LevelWarning:
			level = "⚠️ " + level
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", mdCell(level), mdCode(fmt.Sprintf("%s:%d", f.File, f.Line)), mdCode(f.Rule), mdCell(f.Message))
	}
	b.WriteString("\n")
}

func groupOutput(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// summary is the step summary: one row per command and fail-to-pass check,
// then the log of each failure.
func (j *job) summary(res *Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## roadmap checks · `%s` · %s\n\n", short(res.SHA), passWord(res.Passed))
	fmt.Fprintf(&b, "Plan `%s`: %s.\n\n", res.Plan, mdCell(res.Description))
	if res.Isolation != "isolated" {
		fmt.Fprintf(&b, "> [!WARNING]\n> %s\n\n", sandbox.NotIsolatedWarning)
	}
	writeFindings(&b, res.Findings)
	b.WriteString("| Group | Command | Result | Time |\n| --- | --- | --- | --- |\n")
	row := func(who string, c Command, why string) {
		result := "✅ exit 0"
		switch {
		case !c.Ran:
			result = "not run"
		case !c.Passed:
			result = "❌ " + why
		}
		t := ""
		switch {
		case !c.Ran:
		case c.DurationMS < 1000:
			t = fmt.Sprintf("%d ms", c.DurationMS)
		default:
			t = fmt.Sprintf("%.1f s", float64(c.DurationMS)/1000)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdCell(who), mdCode(c.Command), mdCell(result), t)
	}
	for _, g := range res.Groups {
		who := fmt.Sprintf("%d. %s", g.Number, g.Title)
		for _, c := range g.Commands {
			why := ""
			if c.Command == g.failed {
				why = g.why
			}
			row(who, c, why)
		}
		f := g.FailToPass
		switch f.Status {
		case F2PHeld, F2PFailed:
			for _, e := range f.Commands {
				result := fmt.Sprintf("✅ failed before the change (exit %d)", e.BeforeExitCode)
				if !e.Held {
					result = "❌ passed before the change"
				}
				fmt.Fprintf(&b, "| %s | fail-to-pass %s | %s | |\n", mdCell(who), mdCode(e.Command), mdCell(result))
			}
		case F2PNotChecked:
			fmt.Fprintf(&b, "| %s | fail-to-pass | not checked: %s | |\n", mdCell(who), mdCell(f.Reason))
		}
	}
	for _, c := range res.Configured.Commands {
		why := ""
		if c.Command == res.Configured.failed {
			why = res.Configured.why
		}
		row("checks.commands", c, why)
	}
	b.WriteString("\n")
	for _, g := range res.Groups {
		if g.Log != "" {
			writeLog(&b, fmt.Sprintf("group %d: %s", g.Number, g.failed), g.Log)
		}
	}
	if res.Configured.Log != "" {
		writeLog(&b, "checks.commands: "+res.Configured.failed, res.Configured.Log)
	}
	return b.String()
}

func writeLog(b *strings.Builder, title, log string) {
	fence := "```"
	for strings.Contains(log, fence) {
		fence += "`"
	}
	fmt.Fprintf(b, "<details><summary>%s</summary>\n\n%stext\n%s\n%s\n\n</details>\n\n", mdCell(title), fence, log, fence)
}

// mdCell makes text safe inside a table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "<", "&lt;")
	return s
}

// mdCode is s as a code span in a table cell.
func mdCode(s string) string {
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return fence + pad + strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "|", `\|`) + pad + fence
}

func passWord(ok bool) string {
	if ok {
		return "passed"
	}
	return "failed"
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// inWorkdir resolves a path given relative to the workspace.
func (j *job) inWorkdir(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	// At the PR's last commit the change may be archived already (implement
	// archives it before the watch): read it where OpenSpec moved it.
	if archived, ok := plan.Archived(j.Dir, p); ok {
		p = archived
	}
	return filepath.Join(j.Dir, filepath.FromSlash(p))
}

// relPath is p relative to the repository top, with forward slashes, as
// annotations want it; p itself when it is outside.
func (j *job) relPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	top := j.repoTop
	if top == "" {
		top = j.Dir
	}
	if real, err := filepath.EvalSymlinks(top); err == nil {
		top = real
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(dir, filepath.Base(abs))
	}
	rel, err := filepath.Rel(top, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return p
	}
	return filepath.ToSlash(rel)
}
