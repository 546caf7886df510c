package policy

import (
	"path"
	"strings"
)

// Option syntaxes a row can declare in its `options` field. The syntax says
// how the program reads its arguments, so that a form such as "-O" or
// "--output" is refused in every spelling the program accepts, not only the
// one written in the table.
const (
	// SyntaxWords (the default) matches option words as written: for
	// programs whose single-dash options are whole words (find -exec,
	// env -i) or whose parser is none of the others.
	SyntaxWords = ""
	// SyntaxGNU is getopt_long, as git and the GNU tools read options:
	// single-letter options bundle (-iO is -i -O), a short option's value
	// may be glued (-ofile, -uofile), and a long option may be abbreviated
	// to any unambiguous beginning (--open for --open-files-in-pager), with
	// its value after "=" or in the next word.
	SyntaxGNU = "gnu"
	// SyntaxGo is Go's flag package, as the go command reads flags: -name
	// and --name are the same flag, with its value after "=" or in the next
	// word; there are no bundles and no abbreviations.
	SyntaxGo = "go"
)

var syntaxes = []string{SyntaxWords, SyntaxGNU, SyntaxGo}

// argOpt is one option argument as the row's program would read it.
type argOpt struct {
	raw  string // the word as written: "-iOvim", "--open=vim"
	name string // the word before "=": "-iOvim", "--open"
	// long is set for a GNU "--name" word.
	long bool
	// shorts holds a GNU bundle's option letters, up to and including a
	// letter that takes a value ("-iOvim": "iOvim", "-ne/api": "ne").
	shorts string
	// glued holds what a program could read as a value glued to one of the
	// bundle's letters: every rest of the word after a letter that is not
	// a known value option ("-uo.git/config": "o.git/config", ".git/config").
	glued []string
	// goName is a Go flag's name without dashes or value ("exec").
	goName string
}

// parseArgs reads args as the row's program would, for matching forms: the
// positional words in order and the options. A value that follows one of the
// row's Values options (separately, or glued to a GNU short option) is
// neither: git grep -e -c searches for "-c"; it does not set configuration.
func (r *Row) parseArgs(args []string) (pos []string, opts []argOpt) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(pos, args[i+1:]...), opts
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		o := argOpt{raw: a}
		o.name, _, _ = strings.Cut(a, "=")
		takesNext := false
		switch r.Options {
		case SyntaxGNU:
			if strings.HasPrefix(a, "--") {
				o.long = true
				takesNext = o.name == a && r.isValue(a)
				break
			}
			letters := a[1:]
			for j := 0; j < len(letters); j++ {
				o.shorts += letters[j : j+1]
				if r.isValue("-" + letters[j:j+1]) {
					takesNext = j == len(letters)-1
					break
				}
				if rest := letters[j+1:]; rest != "" {
					o.glued = append(o.glued, rest)
				}
			}
		case SyntaxGo:
			o.goName = goFlagName(o.name)
			takesNext = o.name == a && r.isValue("-"+o.goName)
		default:
			takesNext = r.isValue(a)
		}
		opts = append(opts, o)
		if takesNext {
			i++
		}
	}
	return pos, opts
}

// isValue reports whether opt is one of the row's Values options. In a Go
// row -name and --name are one flag.
func (r *Row) isValue(opt string) bool {
	for _, v := range r.Values {
		if v == opt || r.Options == SyntaxGo && goFlagName(v) == goFlagName(opt) {
			return true
		}
	}
	return false
}

// goFlagName is a Go flag word's name: "--exec=sh" → "exec".
func goFlagName(w string) string {
	w, _, _ = strings.Cut(w, "=")
	if strings.HasPrefix(w, "--") {
		return w[2:]
	}
	return strings.TrimPrefix(w, "-")
}

// matchForm reports whether a form matches the arguments. Positional words of
// the form must match the leading positional arguments in order; option words
// (leading "-") must each match some option, as matchOption says.
func (r *Row) matchForm(form string, args []string) bool {
	var want, wantOpts []string
	for _, w := range strings.Fields(form) {
		if strings.HasPrefix(w, "-") {
			wantOpts = append(wantOpts, w)
		} else {
			want = append(want, w)
		}
	}
	pos, opts := r.parseArgs(args)
	if len(want) > len(pos) {
		return false
	}
	for i, w := range want {
		if ok, _ := path.Match(w, pos[i]); !ok {
			return false
		}
	}
	for _, w := range wantOpts {
		found := false
		for _, o := range opts {
			if r.matchOption(w, o) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// matchOption reports whether the option word w of a form matches the option
// o. In every syntax w matches as a glob against the word as written and
// against its name before "=". In a GNU row, "-X" (or "-X*") also matches
// the letter X anywhere in a bundle, and "--name" (or "--name*") also matches
// every abbreviation of it; in a Go row, "-name" (or "-name*") matches the
// flag name whether written with one dash or two.
func (r *Row) matchOption(w string, o argOpt) bool {
	raw, name := o.raw, o.name
	if r.Options == SyntaxGo && strings.HasPrefix(raw, "--") {
		// One spelling for the glob as well: --exec0 is -exec0.
		raw, name = raw[1:], name[1:]
	}
	if ok, _ := path.Match(w, raw); ok {
		return true
	}
	if ok, _ := path.Match(w, name); ok {
		return true
	}
	base := strings.TrimSuffix(w, "*")
	if base == "" || strings.ContainsAny(base, "*?[\\=") {
		return false
	}
	switch r.Options {
	case SyntaxGNU:
		if strings.HasPrefix(base, "--") {
			// --n is an abbreviation of --name when it begins it. An
			// ambiguous beginning is refused as well: the program would
			// refuse it too, or pick an option the table cannot know.
			return o.long && len(o.name) > 2 && strings.HasPrefix(base, o.name)
		}
		if len(base) == 2 {
			return strings.Contains(o.shorts, base[1:])
		}
	case SyntaxGo:
		return o.goName != "" && o.goName == goFlagName(base)
	}
	return false
}

// gluedPath returns the first value glued to a short option in args that
// names a path the policy refuses whatever the workspace: one with a ".."
// element, one inside .git, or an absolute path other than /dev/null. The
// program would open it as a file; Run checks separate words and
// --name=value values against the workspace, which a glued value escapes.
func (r *Row) gluedPath(args []string) (arg, why string) {
	if r.Options != SyntaxGNU {
		return "", ""
	}
	_, opts := r.parseArgs(args)
	for _, o := range opts {
		for _, v := range o.glued {
			if why := unsafePathWord(v); why != "" {
				return o.raw, why
			}
		}
	}
	return "", ""
}

// unsafePathWord says why a word, read as a path, is refused without looking
// at the filesystem, or "".
func unsafePathWord(v string) string {
	if v == "/dev/null" {
		return ""
	}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "\\") {
		return "is an absolute path; name paths from the workspace root, as a separate argument"
	}
	for _, el := range strings.FieldsFunc(v, func(r rune) bool { return r == '/' || r == '\\' }) {
		switch {
		case el == "..":
			return "has a \"..\" element; name paths from the workspace root without .."
		case strings.EqualFold(el, ".git"):
			return "is inside .git, which tools do not touch"
		}
	}
	return ""
}
