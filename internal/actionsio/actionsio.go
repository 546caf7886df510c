package actionsio

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/sethvargo/go-githubactions"
)

// IO writes to the runner. The zero value is not usable; use New.
type IO struct {
	getenv  func(string) string
	stdout  io.Writer
	action  *githubactions.Action
	mu      sync.Mutex
	outputs map[string]string
}

// New returns an IO that reads the environment through getenv and writes
// workflow commands to stdout.
func New(getenv func(string) string, stdout io.Writer) *IO {
	return &IO{
		getenv:  getenv,
		stdout:  stdout,
		action:  githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(stdout)),
		outputs: map[string]string{},
	}
}

// InActions reports whether the process runs as an Actions step.
func (a *IO) InActions() bool { return a.getenv("GITHUB_ACTIONS") == "true" }

// Input returns the action input name (INPUT_<NAME>), trimmed.
func (a *IO) Input(name string) string {
	key := "INPUT_" + strings.ToUpper(strings.ReplaceAll(name, " ", "_"))
	return strings.TrimSpace(a.getenv(key))
}

// SetOutput records an output and, in Actions, appends it to $GITHUB_OUTPUT with
// a delimiter that does not occur in the value.
func (a *IO) SetOutput(name, value string) error {
	a.mu.Lock()
	a.outputs[name] = value
	a.mu.Unlock()
	path := a.getenv("GITHUB_OUTPUT")
	if path == "" {
		return nil
	}
	return appendFile(path, fileCommand(name, value))
}

// Outputs returns the outputs set so far.
func (a *IO) Outputs() map[string]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]string, len(a.outputs))
	for k, v := range a.outputs {
		out[k] = v
	}
	return out
}

// AddSummary appends Markdown to $GITHUB_STEP_SUMMARY; outside Actions it does nothing.
func (a *IO) AddSummary(markdown string) error {
	path := a.getenv("GITHUB_STEP_SUMMARY")
	if path == "" {
		return nil
	}
	if !strings.HasSuffix(markdown, "\n") {
		markdown += "\n"
	}
	return appendFile(path, markdown)
}

// AddMask tells the runner to mask value in the rest of the job's log. Only in
// Actions: elsewhere the command would print the value it is meant to hide.
func (a *IO) AddMask(value string) {
	if value == "" || !a.InActions() {
		return
	}
	for _, line := range strings.Split(value, "\n") {
		if strings.TrimSpace(line) != "" {
			a.action.AddMask(line)
		}
	}
}

// Error prints an error annotation; file and line may be empty/zero. The
// message is made one plain line (PlainLine).
func (a *IO) Error(file string, line int, msg string) { a.annotate(true, file, line, msg) }

// Warning prints a warning annotation; file and line may be empty/zero.
func (a *IO) Warning(file string, line int, msg string) { a.annotate(false, file, line, msg) }

func (a *IO) annotate(isError bool, file string, line int, msg string) {
	if !a.InActions() {
		return
	}
	fields := map[string]string{}
	if file != "" {
		fields["file"] = file
	}
	if line > 0 {
		fields["line"] = fmt.Sprint(line)
	}
	act := a.action.WithFieldsMap(fields)
	msg = PlainLine(msg) // an annotation is one line of text, whoever wrote it
	if isError {
		act.Errorf("%s", msg)
	} else {
		act.Warningf("%s", msg)
	}
}

// fileCommand renders name<<DELIM\nvalue\nDELIM\n with a fresh random delimiter.
func fileCommand(name, value string) string {
	delim := ""
	for delim == "" || strings.Contains(value, delim) {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			panic(fmt.Sprintf("read random: %v", err))
		}
		delim = "ghadelimiter_" + hex.EncodeToString(b[:])
	}
	return name + "<<" + delim + "\n" + value + "\n" + delim + "\n"
}

func appendFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	if _, err := f.WriteString(s); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
