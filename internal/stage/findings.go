package stage

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/roadmap-dev/roadmap/internal/text"

	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
)

// RuleVerifier names the verifier's objections among the findings.
const RuleVerifier = "roadmap/verifier"

// Bounds on what the verifier's verdict can make of findings.
const (
	maxObjections      = 20
	maxObjectionLength = 500
)

// ParseObjections reads the verifier's verdict: one objection per line as
// FILE:LINE: message, or "none". A line in another form is still an
// objection, placed on fallback line 1. The verdict is model output: it is
// read defensively and bounded.
func ParseObjections(verdict, fallback string) []plan.Finding {
	v := strings.TrimSpace(verdict)
	if v == "" || isNone(v) {
		return nil
	}
	var out []plan.Finding
	for _, line := range strings.Split(v, "\n") {
		line = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "-*•"))
		if line == "" || isNone(line) {
			continue
		}
		if len(out) == maxObjections {
			break
		}
		line = clean(line, maxObjectionLength)
		f := plan.Finding{Level: plan.LevelError, Rule: RuleVerifier, File: fallback, Line: 1, Message: line, Ours: true}
		if file, n, msg, ok := splitLocation(line); ok {
			f.File, f.Line, f.Message = file, n, msg
		}
		out = append(out, f)
	}
	return out
}

func isNone(s string) bool {
	s = strings.ToLower(strings.TrimRight(strings.TrimSpace(s), ".!"))
	return s == "none" || s == "no objections" || s == "n/a"
}

// splitLocation splits "FILE:LINE: message". FILE must look like a
// repository path: no spaces, not absolute, no "..".
func splitLocation(line string) (file string, n int, msg string, ok bool) {
	i := strings.Index(line, ":")
	if i <= 0 {
		return "", 0, "", false
	}
	file = line[:i]
	rest := line[i+1:]
	j := strings.Index(rest, ":")
	if j <= 0 {
		return "", 0, "", false
	}
	num, err := strconv.Atoi(strings.TrimSpace(rest[:j]))
	if err != nil || num < 1 || num > 1_000_000 {
		return "", 0, "", false
	}
	if strings.ContainsAny(file, " \t") || strings.HasPrefix(file, "/") || strings.Contains(file, "..") || len(file) > 300 {
		return "", 0, "", false
	}
	msg = strings.TrimSpace(rest[j+1:])
	if msg == "" {
		return "", 0, "", false
	}
	return file, num, msg, true
}

// clean keeps printable text, cut to max bytes on a rune boundary.
func clean(s string, max int) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func failing(fs []plan.Finding) bool { return countFailing(fs) > 0 }

func countFailing(fs []plan.Finding) int {
	n := 0
	for _, f := range fs {
		if f.Fails() {
			n++
		}
	}
	return n
}

// findingsText is the findings as the record and the planner read them:
// one per line, FILE:LINE: rule: message, failing ones first.
func findingsText(fs []plan.Finding) string {
	var b strings.Builder
	for _, pass := range []bool{true, false} {
		for _, f := range fs {
			if f.Fails() == pass {
				fmt.Fprintf(&b, "%s [%s]\n", text.OneLine(f.String()), f.Level)
			}
		}
	}
	return strings.TrimSpace(b.String())
}

// parseFindings reads stage.findings back (a resumed Job's last round).
func parseFindings(rec *record.Record) []plan.Finding {
	text, _ := rec.StageFindings()
	var out []plan.Finding
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		level := plan.LevelError
		if k := strings.LastIndex(line, " ["); k > 0 && strings.HasSuffix(line, "]") {
			switch plan.Level(line[k+2 : len(line)-1]) {
			case plan.LevelWarning:
				level = plan.LevelWarning
			case plan.LevelInfo:
				level = plan.LevelInfo
			}
			line = line[:k]
		}
		f := plan.Finding{Level: level, Rule: "roadmap/stage", Line: 1, Message: line, Ours: true}
		if file, n, msg, ok := splitLocation(line); ok {
			f.File, f.Line, f.Message = file, n, msg
			if rule, m, ok := strings.Cut(msg, ": "); ok && !strings.ContainsAny(rule, " \t") {
				f.Rule, f.Message = rule, m
			}
		}
		out = append(out, f)
	}
	return out
}

// findingNotes are the findings as the record comment shows them to a person.
func findingNotes(fs []plan.Finding) []string {
	var notes []string
	for _, f := range fs {
		if f.Fails() && len(notes) < 10 {
			notes = append(notes, "plan finding: "+text.OneLine(f.String()))
		}
	}
	if n := countFailing(fs); n > len(notes) {
		notes = append(notes, fmt.Sprintf("and %d more findings (stage.findings)", n-len(notes)))
	}
	return notes
}

// prComment is the draft PR's stage comment: the rounds and the findings of
// the last one. The findings are the model's text and the verifier's: the
// comment is masked and neutralised below its marker line, so none of it
// mentions anyone, holds HTML, an image or an outside link, or reads as a
// workflow command.
func (r *runner) prComment() string {
	var b strings.Builder
	fmt.Fprintf(&b, "**roadmap stage** · the plan `%s` for #%d passed the plan gates and the verifier", r.dir, r.o.Issue)
	fmt.Fprintf(&b, " after %d round%s", r.rounds, plural(r.rounds))
	if r.amend {
		fmt.Fprintf(&b, ", amended from group %d", r.amendFrom)
	}
	b.WriteString(".\n\n")
	if len(r.findings) == 0 {
		b.WriteString("The last round had no findings.\n")
	} else {
		b.WriteString("| level | where | rule | finding |\n|---|---|---|---|\n")
		for _, f := range r.findings {
			fmt.Fprintf(&b, "| %s | `%s:%d` | %s | %s |\n", f.Level, cell(f.File), f.Line, cell(f.Rule), cell(f.Message))
		}
	}
	if r.o.IsolationNote != "" {
		b.WriteString("\n> [!WARNING]\n> " + r.o.IsolationNote + "\n")
	}
	b.WriteString("\nApprove this draft, or label the issue `roadmap:implement`, to start implement on the plan.\n")
	return r.o.Marker + "\n" + redact.NeutraliseIn(r.o.Mask(b.String()), r.o.GitHub.ServerHost(), r.o.GitHub.FullName())
}

func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(text.OneLine(s), "|", "\\|"), "`", "'")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
