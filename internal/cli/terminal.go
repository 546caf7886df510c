package cli

import (
	"bytes"
	"io"
	"os"
	"strings"
	"sync"
	"unicode"

	"github.com/mattn/go-isatty"
)

// Output for a person at a terminal. In a job log the runner reads the
// workflow commands roadmap prints (::group::, ::notice::, ::error
// file=…::, ::add-mask::); at a terminal they are noise, and ::add-mask::
// would show the very value it hides. So when stdout or stderr is a terminal
// and the process is not an Actions step, each line that is a workflow
// command is rendered for a person (termLine) and every other line is left
// as it is. Off a terminal, or with GITHUB_ACTIONS=true, output is
// byte for byte what the runner expects. NO_COLOR (https://no-color.org)
// and TERM=dumb turn the colour off.

// isTerminal reports whether w is a terminal: an *os.File on a tty.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// terminalOutput wraps env's stdout and stderr for a terminal where they
// are one, and returns the function that writes out what they still hold.
func (e *Env) terminalOutput() (flush func()) {
	if e.Getenv("GITHUB_ACTIONS") == "true" {
		return func() {}
	}
	color := e.color()
	var ws []*termWriter
	for _, w := range []*io.Writer{&e.Stdout, &e.Stderr} {
		if isTerminal(*w) {
			tw := &termWriter{w: *w, color: color}
			*w = tw
			ws = append(ws, tw)
		}
	}
	return func() {
		for _, tw := range ws {
			tw.Flush()
		}
	}
}

// color reports whether a terminal's output may be coloured: not with
// NO_COLOR set to anything, nor on TERM=dumb.
func (e *Env) color() bool {
	return e.Getenv("NO_COLOR") == "" && e.Getenv("TERM") != "dumb"
}

// termRenderer returns the rendering of one log line for stdout when it is
// a terminal (the demo renders its Jobs' logs with it), nil when it is not.
func (e *Env) termRenderer() func(string) (string, bool) {
	tw, ok := e.Stdout.(*termWriter)
	if !ok {
		return nil
	}
	return func(line string) (string, bool) { return termLine(line, tw.color) }
}

// termWriter renders a terminal's output line by line (termLine); a line
// is held until its newline arrives or Flush.
type termWriter struct {
	w     io.Writer
	color bool
	mu    sync.Mutex
	buf   []byte
}

func (t *termWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	for {
		i := bytes.IndexByte(t.buf, '\n')
		if i < 0 {
			break
		}
		line := string(t.buf[:i])
		t.buf = t.buf[i+1:]
		if err := t.emit(line, true); err != nil {
			return len(p), err
		}
	}
	return len(p), nil
}

// Flush writes a last line that has no newline.
func (t *termWriter) Flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.buf) > 0 {
		t.emit(string(t.buf), false)
		t.buf = nil
	}
}

func (t *termWriter) emit(line string, newline bool) error {
	out, keep := termLine(line, t.color)
	if !keep {
		return nil
	}
	if newline {
		out += "\n"
	}
	_, err := io.WriteString(t.w, out)
	return err
}

// ANSI styles of the rendered commands.
const (
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
	ansiDim    = "\x1b[2m"
	ansiReset  = "\x1b[0m"
)

// termLine renders one line for a terminal. A workflow command becomes
// what it means to a person: ::group::T a heading "▸ T", ::notice::,
// ::warning:: and ::error:: "notice: …" (with "file:line: " and the title
// when given); ::endgroup::, ::add-mask:: (whose value is a secret),
// ::stop-commands:: and the value-carrying commands print nothing (keep is
// false). Any other line is returned unchanged. color adds ANSI styles.
func termLine(line string, color bool) (out string, keep bool) {
	rest := strings.TrimLeftFunc(line, unicode.IsSpace)
	if !strings.HasPrefix(rest, "::") {
		return line, true
	}
	lead := line[:len(line)-len(rest)]
	head, msg, ok := strings.Cut(rest[2:], "::")
	if !ok {
		return line, true
	}
	name, params, _ := strings.Cut(head, " ")
	style := func(code, s string) string {
		if !color {
			return s
		}
		return code + s + ansiReset
	}
	switch strings.ToLower(name) {
	case "group":
		return lead + style(ansiBold, "▸ "+indentLines(unescapeData(msg), lead+"  ")), true
	case "endgroup", "add-mask", "stop-commands", "echo", "add-matcher", "remove-matcher",
		"set-output", "save-state", "set-env", "add-path":
		return "", false
	case "error", "warning", "notice", "debug":
		level := strings.ToLower(name)
		code := map[string]string{"error": ansiRed, "warning": ansiYellow, "notice": ansiCyan, "debug": ansiDim}[level]
		where, title := commandPlace(params)
		text := unescapeData(msg)
		if title != "" {
			text = title + ": " + text
		}
		return lead + style(code, level+":") + " " + where + indentLines(text, lead+"  "), true
	}
	return line, true // not a command roadmap prints, nor one the runner knows
}

// commandPlace reads an annotation's parameters (file=a.go,line=3,title=T)
// as "a.go:3: " and the title.
func commandPlace(params string) (where, title string) {
	var file, line, col string
	for _, kv := range strings.Split(params, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		v = unescapeProperty(v)
		switch k {
		case "file":
			file = v
		case "line":
			line = v
		case "col":
			col = v
		case "title":
			title = v
		}
	}
	if file == "" {
		return "", title
	}
	where = file
	if line != "" {
		where += ":" + line
		if col != "" {
			where += ":" + col
		}
	}
	return where + ": ", title
}

// unescapeData undoes the runner's escaping of command data.
func unescapeData(s string) string {
	return strings.NewReplacer("%0D", "", "%0A", "\n", "%25", "%").Replace(s)
}

// unescapeProperty undoes the escaping of a command's property value.
func unescapeProperty(s string) string {
	return strings.NewReplacer("%0D", "", "%0A", " ", "%3A", ":", "%2C", ",", "%25", "%").Replace(s)
}

// indentLines puts indent before each line of s after the first.
func indentLines(s, indent string) string {
	return strings.ReplaceAll(s, "\n", "\n"+indent)
}
