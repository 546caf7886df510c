package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// The verbs' flags. Each verb parses its own flag set (pflag, the flag
// package cobra is built on): flags may come before, between and after the
// positional arguments, `--` ends them, and a single-dash long flag (`-json`,
// `-issue 3`, as Go's flag package took them and old workflows still write)
// is read as its double-dash form. A flag has one name on every verb that
// takes it; an old name is a hidden alias (flagAliases) that still works and
// says on stderr which name replaced it.

// flagAlias is an old name of a verb's flag, kept so that workflows and
// scripts written for it go on working.
type flagAlias struct {
	verb string // the verb ("ci fail-to-pass")
	old  string // the old name, without dashes
	name string // the flag's name now
}

// flagAliases are the old names. docs/cli.md ("One name per flag") lists
// them; actions/report/action.yml and actions/wake/action.yml still pass
// --day-usd.
var flagAliases = []flagAlias{
	{"report", "day-usd", "day-budget-usd"},
	{"wake", "day-usd", "day-budget-usd"},
	{"init", "dir", "workdir"},
	{"ci fail-to-pass", "C", "workdir"}, // -C is the shorthand; this keeps --C
	{"plan validate", "issue", "body-file"},
	{"eval implement", "fixtures", "golden"},
}

// newFlags returns a flag set for the verb name. It prints nothing itself:
// parseFlags writes the verb's help on -h and one line on a bad flag.
func newFlags(env *Env, name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet("roadmap "+name, pflag.ContinueOnError)
	fs.SetOutput(flagSink{env: env, name: name})
	fs.Usage = func() {}
	fs.SetInterspersed(true)
	return fs
}

// flagSink is a flag set's output: it swallows what the flag package prints
// (the error, the usage, its deprecation line) and carries the verb's Env to
// parseFlags, which says each of those its own way.
type flagSink struct {
	env  *Env
	name string
}

func (flagSink) Write(p []byte) (int, error) { return len(p), nil }

// parseFlags parses args and maps a parse failure to an exit code. ok is false
// when the verb should return code at once: -h prints the verb's help on
// stdout and exits 0; a bad flag prints one line naming the verb and
// pointing at --help, and exits 2. An old flag name works and adds one line
// on stderr naming the new one.
//
// When the Env only collects flag sets (verbFlags), parseFlags hands the
// verb's set over and stops the verb before it does anything.
func parseFlags(fs *pflag.FlagSet, args []string) (code int, ok bool) {
	sink, _ := fs.Output().(flagSink)
	addAliases(fs, sink.name)
	addJQ(fs)
	if sink.env != nil && sink.env.collect != nil {
		sink.env.collect(fs)
		return ExitOK, false
	}
	// The flag package calls Usage on -h and on a bad flag; parseFlags
	// says both its own way, so a verb's Usage stays for the verb's own calls.
	usage := fs.Usage
	fs.Usage = func() {}
	err := fs.Parse(longDashes(fs, args))
	fs.Usage = usage
	if err == nil {
		fs.Visit(func(f *pflag.Flag) {
			if f.Deprecated == "" {
				return
			}
			for _, a := range flagAliases {
				if a.verb == sink.name && a.old == f.Name {
					fs.Lookup(a.name).Changed = true
				}
			}
			if sink.env != nil {
				sink.env.Errorf("--%s is an old name: %s", f.Name, f.Deprecated)
			}
		})
		if sink.env != nil {
			return startJQ(sink.env, fs)
		}
		return ExitOK, true
	}
	if errors.Is(err, pflag.ErrHelp) {
		if sink.env != nil {
			verbHelp(sink.env.Stdout, sink.name, fs)
		}
		return ExitOK, false
	}
	if sink.env != nil {
		sink.env.Errorf("%v (see 'roadmap %s --help')", err, sink.name)
	}
	return ExitUsage, false
}

// addAliases adds the verb's old flag names to fs: each is hidden, shares
// its flag's value and is marked deprecated with the name to use.
func addAliases(fs *pflag.FlagSet, verb string) {
	for _, a := range flagAliases {
		if a.verb != verb || fs.Lookup(a.old) != nil {
			continue
		}
		f := fs.Lookup(a.name)
		if f == nil {
			panic(fmt.Sprintf("flag alias --%s of roadmap %s names no flag --%s", a.old, verb, a.name))
		}
		fs.AddFlag(&pflag.Flag{Name: a.old, Usage: "the old name of --" + a.name, Value: f.Value,
			DefValue: f.DefValue, NoOptDefVal: f.NoOptDefVal, Hidden: true, Deprecated: "use --" + a.name})
	}
}

// longDashes returns args with each single-dash long flag ("-json",
// "-issue=3") written with two dashes, so the flag set reads it as Go's
// flag package did. It leaves alone what is not a flag: the value of a flag
// that takes one ("--secret -x"), "-" (standard input), everything after
// "--", and a shorthand with its value or a bundle of them ("-R", "-Racme/x",
// "-h").
func longDashes(fs *pflag.FlagSet, args []string) []string {
	out := append([]string(nil), args...)
	takesValue := func(f *pflag.Flag, inline bool) bool { return f != nil && !inline && f.NoOptDefVal == "" }
	value := false
	for i, a := range out {
		switch {
		case value:
			value = false
		case a == "--":
			return out
		case len(a) < 2 || a[0] != '-':
		case a[1] == '-':
			name, _, inline := strings.Cut(a[2:], "=")
			value = takesValue(fs.Lookup(name), inline)
		default:
			name, _, inline := strings.Cut(a[1:], "=")
			if len(name) == 1 {
				value = takesValue(fs.ShorthandLookup(name), inline)
				continue
			}
			if f := fs.Lookup(name); f != nil || fs.ShorthandLookup(name[:1]) == nil {
				// A long flag, or no flag at all: the error then names it
				// whole ("unknown flag: --verbose"), not its first letter.
				out[i] = "-" + a
				value = takesValue(f, inline)
			}
		}
	}
	return out
}

// verbFlags returns the flag set verb v defines, without running it: the
// verb is called with an Env that only collects (parseFlags stops it), on a
// context already cancelled, so nothing it might start could run. nil for a
// verb that defines no flag set.
func verbFlags(v verb) *pflag.FlagSet {
	var got *pflag.FlagSet
	env := &Env{Vars: map[string]string{}, Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard,
		verb: v.name, collect: func(fs *pflag.FlagSet) { got = fs }}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v.run(ctx, env, nil)
	return got
}

// verbHelp writes a verb's help: its summary, its usage, what it does that
// a person should know first (help.go), its flags and its examples.
func verbHelp(w io.Writer, name string, fs *pflag.FlagSet) {
	summary := ""
	for _, v := range verbs() {
		if v.name == name {
			summary = v.summary
		}
	}
	fmt.Fprintf(w, "roadmap %s: %s\n\nusage: roadmap %s [flags]\n", name, summary, name)
	writeVerbAbout(w, name)
	if fs.HasAvailableFlags() {
		fmt.Fprintf(w, "\nflags (before or after the arguments; -flag is --flag):\n%s", fs.FlagUsages())
	}
	writeVerbExamples(w, name)
	fmt.Fprintf(w, "\n%s\n", exitCodesLine)
}
