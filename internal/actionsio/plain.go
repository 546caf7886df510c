package actionsio

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// PlainLine returns s as one line of plain text that the Actions runner
// cannot read as a workflow command, wherever it stands in a printed line.
// roadmap passes every line it prints that holds model or tool text (a
// reason, a question, a plan title, an error, a log excerpt) through it, so
// such text cannot add an annotation, mask or output, stop command
// processing, or forge the typed lines report's log classifier trusts.
//
// The runner reads a line as a command when, after leading white space, it
// starts with "::" (::error::, ::add-mask::, ::stop-commands::, …), and
// when it holds "##[" anywhere (the older ##[error] form). PlainLine:
//   - turns every line break (\r, \n, \v, \f, U+0085, U+2028, U+2029) into a
//     space;
//   - replaces other control characters (escape sequences among them, which
//     the classifier strips and could hide a command behind) and invalid
//     UTF-8 with U+FFFD;
//   - writes "##[" as "## [";
//   - writes a leading "::" as ": :".
//
// Text without any of these is returned unchanged, and PlainLine(PlainLine(s))
// equals PlainLine(s).
func PlainLine(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteRune(utf8.RuneError)
		case isBreak(r):
			b.WriteByte(' ')
		case r != '\t' && unicode.IsControl(r):
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	out := strings.ReplaceAll(b.String(), "##[", "## [")
	if rest := strings.TrimLeftFunc(out, unicode.IsSpace); strings.HasPrefix(rest, "::") {
		lead := len(out) - len(rest)
		out = out[:lead] + ": :" + rest[2:]
	}
	return out
}

// isPlain reports whether PlainLine has nothing to change in s.
func isPlain(s string) bool {
	if !utf8.ValidString(s) || strings.Contains(s, "##[") {
		return false
	}
	for _, r := range s {
		if r != '\t' && (isBreak(r) || unicode.IsControl(r)) {
			return false
		}
	}
	return !strings.HasPrefix(strings.TrimLeftFunc(s, unicode.IsSpace), "::")
}

// isBreak is a character that ends a line for the runner or the log viewer.
func isBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', '\u0085', '\u2028', '\u2029':
		return true
	}
	return false
}

// Command renders the workflow command ::name::message as one line, with
// message made plain and escaped the way the runner unescapes command data,
// so the message is the one annotation it names and nothing more. name is
// roadmap's own (error, warning, notice); it is not checked.
func Command(name, message string) string {
	return "::" + name + "::" + escapeData(PlainLine(message))
}

// escapeData escapes command data as the runner expects: a "%0A" in the
// text must stay text, not become a line break inside the annotation.
func escapeData(s string) string {
	s = strings.ReplaceAll(s, "%", "%25")
	s = strings.ReplaceAll(s, "\r", "%0D")
	return strings.ReplaceAll(s, "\n", "%0A")
}

// EndGroup is the line that closes the job log's current section.
const EndGroup = "::endgroup::"

// Group renders the line that opens a collapsible section of the job log
// titled title (made plain and escaped, like Command). Only roadmap's own
// phases open and close sections: every line that holds model or log text
// goes through PlainLine, so none of it can open or close one.
func Group(title string) string { return Command("group", title) }
