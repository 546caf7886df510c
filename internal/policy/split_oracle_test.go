package policy

import (
	"errors"
	"fmt"
	"strings"
)

// handSplit is the hand-written splitter Split used before it parsed with
// mvdan.cc/sh. It stays as the oracle of FuzzSplitNoLooser: Split accepts
// nothing that it refused, so adopting the parser made the policy no looser.
func handSplit(cmd string) ([]string, error) {
	cmd = strings.TrimSpace(cmd)
	var (
		words  []string
		cur    strings.Builder
		inWord bool
		// first is the source text of the first word: NAME=value is an
		// assignment only when the name was written unquoted.
		first      string
		firstStart = -1
	)
	refuse := func(what string) error {
		return &Refusal{Rule: "shell syntax", Reason: what + "; commands run without a shell: one program and its arguments"}
	}
	if strings.IndexByte(cmd, 0) >= 0 {
		return nil, refuse("a NUL byte cannot be passed to a program")
	}
	for i := 0; i < len(cmd); {
		c := cmd[i]
		if firstStart < 0 && c != ' ' && c != '\t' {
			firstStart = i
		}
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				if len(words) == 0 {
					first = cmd[firstStart:i]
				}
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
			i++
		case c == '\n' || c == '\r':
			return nil, refuse("a newline separates commands; run one command at a time")
		case c == '\'':
			j := strings.IndexByte(cmd[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("split command: unclosed single quote")
			}
			cur.WriteString(cmd[i+1 : i+1+j])
			inWord = true
			i += j + 2
		case c == '"':
			inWord = true
			i++
			closed := false
			for i < len(cmd) {
				d := cmd[i]
				if d == '"' {
					closed = true
					i++
					break
				}
				if d == '\\' && i+1 < len(cmd) && strings.IndexByte("\"\\$`\n", cmd[i+1]) >= 0 {
					if cmd[i+1] != '\n' {
						cur.WriteByte(cmd[i+1])
					}
					i += 2
					continue
				}
				switch d {
				case '$':
					return nil, refuse("$ inside double quotes would expand a variable; use single quotes for a literal $")
				case '`':
					return nil, refuse("backticks would substitute a command")
				}
				cur.WriteByte(d)
				i++
			}
			if !closed {
				return nil, errors.New("split command: unclosed double quote")
			}
		case c == '\\':
			if i+1 >= len(cmd) {
				return nil, errors.New("split command: trailing backslash")
			}
			switch cmd[i+1] {
			case '\n':
				// line continuation
			default:
				cur.WriteByte(cmd[i+1])
				inWord = true
			}
			i += 2
		case c == '|':
			return nil, refuse("pipes (|) are not supported")
		case c == '&':
			return nil, refuse("& and && (background, chaining) are not supported")
		case c == ';':
			return nil, refuse("; (several commands) is not supported")
		case c == '<' || c == '>':
			return nil, refuse("redirections (< >) are not supported; output comes back to you, files are written with write_file")
		case c == '(' || c == ')':
			return nil, refuse("subshells ( ) are not supported")
		case c == '`':
			return nil, refuse("backticks would substitute a command")
		case c == '$':
			return nil, refuse("$ would expand a variable or substitute a command; use single quotes for a literal $")
		case c == '*' || c == '?' || c == '[':
			return nil, refuse(fmt.Sprintf("%q is a glob and nothing expands it; quote it if the program should see it literally, or name the files", string(c)))
		case (c == '~' || c == '#') && !inWord:
			if c == '~' {
				return nil, refuse("~ is not expanded; use a path relative to the workspace")
			}
			return nil, refuse("# would start a comment; leave comments out")
		default:
			cur.WriteByte(c)
			inWord = true
			i++
		}
	}
	if inWord {
		if len(words) == 0 {
			first = cmd[firstStart:]
		}
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, &Refusal{Rule: "empty", Reason: "no command given"}
	}
	if isAssignment(first) {
		return nil, refuse(fmt.Sprintf("%q sets an environment variable; assignments before a command are not supported", words[0]))
	}
	return words, nil
}

func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
