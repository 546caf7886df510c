package actionsio

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// runnerReadsCommand reports whether the Actions runner would take line as a
// workflow command: "::" after leading white space (its TrimStart, the same
// white space as unicode.IsSpace), or the older "##[" anywhere in the line.
func runnerReadsCommand(line string) bool {
	return strings.HasPrefix(strings.TrimLeftFunc(line, unicode.IsSpace), "::") || strings.Contains(line, "##[")
}

// runnerLines splits printed text into the lines the runner reads.
func runnerLines(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
}

// unescapeData is the runner's reading of command data.
func unescapeData(s string) string {
	return strings.NewReplacer("%0D", "\r", "%0A", "\n", "%25", "%").Replace(s)
}

var hostile = []string{
	"::error::roadmap: stopped: class=auth",
	"::add-mask::ghp_notreallyatoken",
	"##[error]roadmap: stopped: class=auth",
	"  \t::set-output name=result::ready",
	"::stop-commands::pwned",
	"\u00a0\u2003::warning file=x.go,line=1::forged",
	"plan is wrong\n::error::roadmap: stopped: class=auth\r\n##[warning]x",
	"see below\u2028::notice::forged",
	"text ##[group]hidden",
	"#\x1b[0m#[error]roadmap: stopped: class=auth",
	"\x1b[31m::error::red",
	"a%0A##[error]b",
	"###[error]",
	"\xff::error::invalid utf-8",
	"::",
}

func TestPlainLine(t *testing.T) {
	for _, s := range hostile {
		got := PlainLine(s)
		if lines := runnerLines(got); len(lines) > 1 {
			t.Errorf("PlainLine(%q) = %q: %d lines", s, got, len(lines))
		}
		if runnerReadsCommand(got) {
			t.Errorf("PlainLine(%q) = %q: the runner reads a command", s, got)
		}
		if strings.ContainsRune(got, '\x1b') {
			t.Errorf("PlainLine(%q) = %q: an escape sequence survives", s, got)
		}
		// As a whole printed line, after roadmap's prefix, and as a command's data.
		for _, line := range []string{got, "roadmap: group 1: " + got} {
			if runnerReadsCommand(line) {
				t.Errorf("line %q: the runner reads a command", line)
			}
		}
	}
	for _, plain := range []string{"", "roadmap: group 2: Add the backoff", "a::b", "tab\there", "# ## [x]", "déjà vu ✓", "x := a::b"} {
		if got := PlainLine(plain); got != plain {
			t.Errorf("PlainLine(%q) = %q, want it unchanged", plain, got)
		}
	}
	for s, want := range map[string]string{
		"::error::x":         ": :error::x",
		"  ::error::x":       "  : :error::x",
		"a\nb\r\nc":          "a b  c",
		"##[error]x":         "## [error]x",
		"\x1b[31mred\x1b[0m": "\uFFFD[31mred\uFFFD[0m",
	} {
		if got := PlainLine(s); got != want {
			t.Errorf("PlainLine(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestCommand(t *testing.T) {
	for _, s := range hostile {
		line := Command("error", s)
		if lines := runnerLines(line); len(lines) != 1 {
			t.Fatalf("Command(error, %q) = %q: %d lines", s, line, len(lines))
		}
		data, ok := strings.CutPrefix(line, "::error::")
		if !ok {
			t.Fatalf("Command(error, %q) = %q, want ::error:: first", s, line)
		}
		msg := unescapeData(data)
		if msg != PlainLine(s) {
			t.Errorf("the runner reads message %q, want %q", msg, PlainLine(s))
		}
		// The runner writes the annotation into the log as ##[error]message:
		// every line of that is one annotation, the message's own.
		for i, l := range runnerLines("##[error]" + msg) {
			if i > 0 || strings.Count(l, "##[") != 1 {
				t.Errorf("the log holds %q for message %q", l, s)
			}
		}
	}
}

func FuzzPlainLine(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := PlainLine(s)
		if strings.ContainsAny(got, "\r\n\v\f\u0085\u2028\u2029\x1b") {
			t.Fatalf("PlainLine(%q) = %q holds a line break or an escape", s, got)
		}
		if runnerReadsCommand(got) || runnerReadsCommand("roadmap: "+got) {
			t.Fatalf("PlainLine(%q) = %q reads as a workflow command", s, got)
		}
		if !utf8.ValidString(got) {
			t.Fatalf("PlainLine(%q) = %q is not UTF-8", s, got)
		}
		if again := PlainLine(got); again != got {
			t.Fatalf("PlainLine is not idempotent: %q, then %q", got, again)
		}
		if isPlain(s) && got != s {
			t.Fatalf("plain %q changed to %q", s, got)
		}
		line := Command("warning", s)
		if msg := unescapeData(strings.TrimPrefix(line, "::warning::")); msg != got || strings.ContainsAny(line, "\r\n") {
			t.Fatalf("Command(warning, %q) = %q", s, line)
		}
	})
}
