package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/itchyny/gojq"
	"github.com/spf13/pflag"
)

// --jq EXPRESSION, as the gh CLI has it: every verb with --json also takes
// --jq (-q), which turns --json on and filters what the verb prints
// through a jq expression (gojq, jq's language in Go). Each JSON value on
// stdout (one object, or NDJSON's one a line) is the filter's input; each
// output prints on a line of its own, a string raw (as `jq -r` and gh do),
// any other value as compact JSON. A line that starts with "::" between
// values is a workflow command for the runner (::add-mask:: among them) and
// passes through untouched: no JSON text starts a line with "::".
//
// The expression cannot read the environment ($ENV and env are empty): it
// filters what the verb printed, already masked, and nothing else.

// addJQ adds --jq to a flag set that has --json, with -q as its shorthand
// unless the verb uses -q for something else.
func addJQ(fs *pflag.FlagSet) {
	if fs.Lookup("json") == nil || fs.Lookup("jq") != nil {
		return
	}
	short := "q"
	if fs.ShorthandLookup(short) != nil {
		short = ""
	}
	fs.StringP("jq", short, "", "filter the JSON output with a jq `EXPRESSION` (implies --json; strings print raw)")
}

// startJQ runs after a verb's flags are parsed: with --jq set it compiles
// the expression, turns --json on, and puts the filter between the verb
// and stdout (runVerb ends it). ok is false when the expression does not
// compile: the error is said and code is ExitUsage.
func startJQ(env *Env, fs *pflag.FlagSet) (code int, ok bool) {
	f := fs.Lookup("jq")
	if f == nil || !f.Changed {
		return ExitOK, true
	}
	expr := f.Value.String()
	q, err := gojq.Parse(expr)
	if err == nil {
		var c *gojq.Code
		if c, err = gojq.Compile(q, gojq.WithEnvironLoader(func() []string { return nil })); err == nil {
			if err := fs.Set("json", "true"); err != nil {
				env.Errorf("--jq: turn --json on: %v", err)
				return ExitInternal, false
			}
			env.jq = &jqWriter{ctx: env.ctx, out: env.Stdout, code: c}
			env.Stdout = env.jq
			return ExitOK, true
		}
	}
	env.Errorf("--jq %q: %v", expr, jqError(err))
	return ExitUsage, false
}

// jqError is gojq's error as one line; a parse error also says where in
// the expression it is.
func jqError(err error) string {
	var pe *gojq.ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("not a jq expression: %v at byte %d", pe, pe.Offset)
	}
	return err.Error()
}

// jqWriter is stdout while --jq filters it. It reads whole lines, hands
// each complete JSON value to the filter, and writes what the filter gives
// to out.
type jqWriter struct {
	ctx  context.Context
	out  io.Writer
	code *gojq.Code

	line    []byte // the line not yet ended
	pending []byte // the JSON text of a value not yet ended

	// The scan of pending: depth of brackets, inside a string, after a
	// backslash, whether a value has begun.
	depth            int
	inString, escape bool
	started          bool

	err    error // the first failure; everything after it is dropped
	failed int   // the exit code of err
}

func (w *jqWriter) Write(p []byte) (int, error) {
	w.line = append(w.line, p...)
	for {
		i := bytes.IndexByte(w.line, '\n')
		if i < 0 {
			break
		}
		w.takeLine(w.line[:i+1])
		w.line = append(w.line[:0], w.line[i+1:]...)
	}
	return len(p), nil
}

// takeLine passes a workflow command through, or adds the line to the
// value being read and filters it once it ends.
func (w *jqWriter) takeLine(l []byte) {
	if w.err != nil {
		return
	}
	if !w.started && bytes.HasPrefix(l, []byte("::")) {
		w.write(l)
		return
	}
	w.pending = append(w.pending, l...)
	for _, c := range l {
		w.scan(c)
	}
	if w.started && w.depth == 0 && !w.inString {
		w.filterPending()
	}
}

// scan follows the JSON text a byte at a time, so a value's end is known
// without decoding it again for every line.
func (w *jqWriter) scan(c byte) {
	switch {
	case w.inString && w.escape:
		w.escape = false
	case w.inString && c == '\\':
		w.escape = true
	case w.inString && c == '"':
		w.inString = false
	case w.inString:
	case c == '"':
		w.inString, w.started = true, true
	case c == '{' || c == '[':
		w.depth++
		w.started = true
	case c == '}' || c == ']':
		w.depth--
	case c == ' ' || c == '\t' || c == '\r' || c == '\n':
	default:
		w.started = true
	}
}

// filterPending decodes the values pending holds (several on a line of
// NDJSON written at once) and filters each.
func (w *jqWriter) filterPending() {
	dec := json.NewDecoder(bytes.NewReader(w.pending))
	dec.UseNumber()
	for w.err == nil {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			w.fail(ExitInternal, fmt.Errorf("the output is not JSON: %v", err))
			break
		}
		w.filter(v)
	}
	w.pending, w.started, w.depth = w.pending[:0], false, 0
}

// filter runs the expression on one value and prints its outputs.
func (w *jqWriter) filter(v any) {
	ctx := w.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	iter := w.code.RunWithContext(ctx, v)
	for {
		out, ok := iter.Next()
		if !ok {
			return
		}
		if err, isErr := out.(error); isErr {
			var halt *gojq.HaltError
			if errors.As(err, &halt) && halt.Value() == nil {
				return // halt: no more output, no error
			}
			w.fail(ExitUsage, err)
			return
		}
		if s, isString := out.(string); isString {
			w.write([]byte(s + "\n"))
			continue
		}
		data, err := gojq.Marshal(out)
		if err != nil {
			w.fail(ExitInternal, err)
			return
		}
		w.write(append(data, '\n'))
	}
}

func (w *jqWriter) write(p []byte) {
	if _, err := w.out.Write(p); err != nil {
		w.fail(ExitInternal, fmt.Errorf("write: %v", err))
	}
}

func (w *jqWriter) fail(code int, err error) {
	if w.err == nil {
		w.err, w.failed = err, code
	}
}

// finish filters what is left (a last line without its newline), says a
// failure of the filter once, and returns the verb's exit code: a filter
// that failed makes it at least the failure's (2 when the expression did
// not fit the output, 3 when the output was not JSON).
func (w *jqWriter) finish(env *Env, code int) int {
	if len(w.line) > 0 {
		w.takeLine(w.line)
		w.line = nil
	}
	if w.err == nil && len(bytes.TrimSpace(w.pending)) > 0 {
		w.fail(ExitInternal, errors.New("the output is not JSON: it ends inside a value"))
	}
	if w.err == nil {
		return code
	}
	env.Errorf("--jq: %v", w.err)
	return max(code, w.failed)
}
