package policy

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Split turns a command string into argv the way a POSIX shell reads one
// simple command: blanks separate words, single quotes keep text literally,
// double quotes keep text but honour \" \\ \$ \` and backslash-newline, and a
// backslash outside quotes escapes the next character.
//
// The string is parsed by a real shell grammar (mvdan.cc/sh), and only a
// single simple command made of plain words is accepted. There is no shell
// behind it, so everything a shell would interpret beyond that is refused
// with a *Refusal rather than passed on literally where a model would not
// expect it: pipes, redirections, ; & && || and newlines between commands,
// subshells and groups, keywords, backticks and $ expansions, unquoted globs,
// a word-leading ~ or #, ! and NAME=value prefixes. Unbalanced quotes and a
// trailing backslash are a plain error.
func Split(cmd string) ([]string, error) {
	cmd = strings.TrimSpace(cmd)
	if strings.IndexByte(cmd, 0) >= 0 {
		return nil, refuseShell("a NUL byte cannot be passed to a program")
	}
	if cmd == "" {
		return nil, &Refusal{Rule: "empty", Reason: "no command given"}
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX), syntax.KeepComments(true)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		var perr syntax.ParseError
		if errors.As(err, &perr) && strings.Contains(perr.Text, "without closing quote") {
			if strings.Contains(perr.Text, "`'`") {
				return nil, errors.New("split command: unclosed single quote")
			}
			return nil, errors.New("split command: unclosed double quote")
		}
		return nil, refuseShell(fmt.Sprintf("%v is not one simple command", err))
	}
	call, err := simpleCommand(f)
	if err != nil {
		return nil, err
	}
	// What lies between the words must be blanks or line continuations; the
	// checks above name the usual reasons, this one catches the rest.
	prev := uint(0)
	for _, w := range call.Args {
		if err := checkGap(cmd[prev:w.Pos().Offset()]); err != nil {
			return nil, err
		}
		prev = w.End().Offset()
	}
	if err := checkGap(cmd[prev:]); err != nil {
		return nil, err
	}
	words := make([]string, 0, len(call.Args))
	for _, w := range call.Args {
		s, err := wordText(w)
		if err != nil {
			return nil, err
		}
		words = append(words, s)
	}
	return words, nil
}

func refuseShell(what string) error {
	return &Refusal{Rule: "shell syntax", Reason: what + "; commands run without a shell: one program and its arguments"}
}

// simpleCommand returns the one plain command in f, or the refusal that says
// which shell construct it holds instead.
func simpleCommand(f *syntax.File) (*syntax.CallExpr, error) {
	if len(f.Last) > 0 {
		return nil, refuseShell("# would start a comment; leave comments out")
	}
	if len(f.Stmts) != 1 {
		if len(f.Stmts) > 1 && f.Stmts[0].Semicolon.IsValid() {
			return nil, refuseShell("; (several commands) is not supported")
		}
		return nil, refuseShell("a newline separates commands; run one command at a time")
	}
	st := f.Stmts[0]
	switch {
	case len(st.Comments) > 0:
		return nil, refuseShell("# would start a comment; leave comments out")
	case st.Background || st.Coprocess:
		return nil, refuseShell("& and && (background, chaining) are not supported")
	case st.Semicolon.IsValid():
		return nil, refuseShell("; (several commands) is not supported")
	case len(st.Redirs) > 0:
		return nil, refuseShell("redirections (< >) are not supported; output comes back to you, files are written with write_file")
	case st.Negated:
		return nil, refuseShell("! would negate the exit status")
	}
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		if len(c.Assigns) > 0 {
			a := c.Assigns[0]
			return nil, refuseShell(fmt.Sprintf("%q sets an environment variable; assignments before a command are not supported", a.Name.Value+"="))
		}
		if len(c.Args) == 0 {
			return nil, &Refusal{Rule: "empty", Reason: "no command given"}
		}
		return c, nil
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			return nil, refuseShell("pipes (|) are not supported")
		}
		return nil, refuseShell("&& and || (chaining) are not supported")
	case *syntax.Subshell:
		return nil, refuseShell("subshells ( ) are not supported")
	case *syntax.Block:
		return nil, refuseShell("{ } groups are not supported")
	default:
		return nil, refuseShell("shell keywords (if, for, while, case, functions) are not supported")
	}
}

func checkGap(gap string) error {
	if rest := strings.Trim(strings.ReplaceAll(gap, "\\\n", ""), " \t"); rest != "" {
		return refuseShell(fmt.Sprintf("%q between words is shell syntax", rest))
	}
	return nil
}

// wordText is the argument a shell would pass for w, given that nothing in it
// may expand: only literal text, single quotes and double quotes holding
// literal text are accepted.
func wordText(w *syntax.Word) (string, error) {
	var b strings.Builder
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if err := unescape(&b, p.Value, i == 0, false); err != nil {
				return "", err
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", refuseShell("$ would expand a variable or substitute a command; use single quotes for a literal $")
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", refuseShell("$ would expand a variable or substitute a command; use single quotes for a literal $")
			}
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return "", refuseShell("$ inside double quotes would expand a variable; use single quotes for a literal $")
				}
				if err := unescape(&b, lit.Value, false, true); err != nil {
					return "", err
				}
			}
		case *syntax.CmdSubst:
			return "", refuseShell("backticks and $( ) would substitute a command")
		default:
			return "", refuseShell("$ would expand a variable or substitute a command; use single quotes for a literal $")
		}
	}
	return b.String(), nil
}

// unescape writes the literal text of s, as the parser left it (backslashes
// and most line continuations in place), and refuses what a shell would
// expand.
// Inside double quotes only \" \\ \$ and \` are escapes.
func unescape(b *strings.Builder, s string, wordStart, quoted bool) error {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' {
			if i+1 >= len(s) {
				return errors.New("split command: trailing backslash")
			}
			if s[i+1] == '\n' {
				// a line continuation the parser left in a literal
				i++
				continue
			}
			if !quoted || strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
				i++
				c = s[i]
			}
			b.WriteByte(c)
			continue
		}
		switch {
		case c == '$':
			if quoted {
				return refuseShell("$ inside double quotes would expand a variable; use single quotes for a literal $")
			}
			return refuseShell("$ would expand a variable or substitute a command; use single quotes for a literal $")
		case c == '`':
			return refuseShell("backticks would substitute a command")
		case quoted:
		case c == '*' || c == '?' || c == '[':
			return refuseShell(fmt.Sprintf("%q is a glob and nothing expands it; quote it if the program should see it literally, or name the files", string(c)))
		case c == '~' && wordStart && i == 0:
			return refuseShell("~ is not expanded; use a path relative to the workspace")
		}
		b.WriteByte(c)
	}
	return nil
}

// Quote returns w as one shell word that Split reads back unchanged.
func Quote(w string) string {
	if w != "" && strings.IndexFunc(w, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:,+@%", r))
	}) < 0 {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}
