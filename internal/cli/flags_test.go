package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// roadmapCLI runs the roadmap command line args with environ and returns its exit
// code, stdout and stderr.
func roadmapCLI(t *testing.T, environ []string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, environ, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// TestCLIFlagsAnywhere: a verb's flags may stand before, between or after
// its positional arguments, with one dash or two; `--` ends them; a flag's
// value and a shorthand are never taken for a long flag.
func TestCLIFlagsAnywhere(t *testing.T) {
	plan := filepath.Join(openspecCases, "no-shall") // one WARNING: exit 1
	body := records("valid.md")
	issueBody := filepath.Join(t.TempDir(), "issue.md")
	if err := os.WriteFile(issueBody, []byte("## Acceptance criteria\n\n- [ ] Every response carries the remaining quota\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	same := []struct {
		name  string
		code  int
		lines [][]string // each the same command line, its flags elsewhere
	}{
		{"plan validate", ExitFindings, [][]string{
			{"plan", "validate", "--json", plan},
			{"plan", "validate", plan, "--json"},
			{"plan", "validate", plan, "-json"},
			{"plan", "validate", "-json=true", plan},
		}},
		{"plan validate with a valued flag", ExitFindings, [][]string{
			{"plan", "validate", "--body-file", issueBody, filepath.Join(openspecCases, "valid-added"), "--json"},
			{"plan", "validate", filepath.Join(openspecCases, "valid-added"), "-body-file", issueBody, "-json"},
			{"plan", "validate", "--json", filepath.Join(openspecCases, "valid-added"), "--body-file=" + issueBody},
		}},
		{"record show", ExitOK, [][]string{
			{"record", "show", "--body-file", body, "--json"},
			{"record", "show", "--json", "--body-file", body},
			{"record", "show", "-json", "-body-file", body},
			{"record", "show", "-body-file=" + body, "--json"},
		}},
		{"classify", ExitOK, [][]string{
			{"classify", "--log", "-", "--json", "--conclusion", "cancelled"},
			{"classify", "-json", "-conclusion", "cancelled", "-log", "-"},
		}},
	}
	for _, tt := range same {
		t.Run(tt.name, func(t *testing.T) {
			var first, firstErr string
			for i, line := range tt.lines {
				code, out, errOut := roadmapCLI(t, nil, line...)
				if code != tt.code {
					t.Fatalf("roadmap %q: exit %d, want %d; stderr %s", line, code, tt.code, errOut)
				}
				if !json.Valid([]byte(out)) {
					t.Fatalf("roadmap %q: stdout is not JSON:\n%s", line, out)
				}
				if i == 0 {
					first, firstErr = out, errOut
					continue
				}
				if out != first {
					t.Errorf("roadmap %q printed\n%s\nwant what %q printed\n%s", line, out, tt.lines[0], first)
				}
				if errOut != firstErr {
					t.Errorf("roadmap %q: stderr %q, want %q as for %q", line, errOut, firstErr, tt.lines[0])
				}
			}
		})
	}

	// After `--` nothing is a flag, one dash or two.
	code, out, errOut := roadmapCLI(t, nil, "plan", "validate", "--", "-json")
	if code != ExitUsage || strings.HasPrefix(strings.TrimSpace(out), "{") || !strings.Contains(errOut, "-json") {
		t.Errorf("plan validate -- -json: exit %d, stdout %q, stderr %q; want 2 with -json read as the directory", code, out, errOut)
	}
	code, _, errOut = roadmapCLI(t, nil, "explain", "--", "--trace")
	if code != ExitUsage || !strings.Contains(errOut, `"--trace" is not an issue number`) {
		t.Errorf("explain -- --trace: exit %d, stderr %q; want --trace read as the issue", code, errOut)
	}

	// Help and a wrong flag keep their documented forms, with the flags in any place.
	for _, help := range [][]string{{"plan", "validate", plan, "--help"}, {"plan", "validate", "-h", plan}, {"stage", "-help"}} {
		code, out, errOut := roadmapCLI(t, nil, help...)
		if code != ExitOK || !strings.Contains(out, "usage: roadmap "+help[0]) || errOut != "" {
			t.Errorf("roadmap %q: exit %d, stdout %q, stderr %q; want the help on stdout and 0", help, code, out, errOut)
		}
	}
	for _, bad := range [][]string{{"plan", "validate", plan, "--jsn"}, {"plan", "validate", "-jsn", plan}} {
		code, out, errOut := roadmapCLI(t, nil, bad...)
		want := "roadmap plan validate: unknown flag: --jsn (see 'roadmap plan validate --help')\n"
		if code != ExitUsage || out != "" || errOut != want {
			t.Errorf("roadmap %q: exit %d, stdout %q, stderr %q; want 2 and %q", bad, code, out, errOut, want)
		}
	}

	// The rewriting itself: values, shorthands, "-" and "--" are left alone.
	fs := newFlags(&Env{Vars: map[string]string{}, Stderr: &bytes.Buffer{}}, "test")
	fs.String("secret", "", "")
	fs.Bool("json", false, "")
	fs.StringP("workdir", "C", "", "")
	fs.BoolP("verbose", "v", false, "")
	for _, tt := range []struct{ in, want []string }{
		{[]string{"-json", "x"}, []string{"--json", "x"}},
		{[]string{"-secret", "-json"}, []string{"--secret", "-json"}},
		{[]string{"--secret", "-json", "-json"}, []string{"--secret", "-json", "--json"}},
		{[]string{"-secret=-json", "-json"}, []string{"--secret=-json", "--json"}},
		{[]string{"-C", "-json", "-Cdir", "-vC", "d"}, []string{"-C", "-json", "-Cdir", "-vC", "d"}},
		{[]string{"-", "-json"}, []string{"-", "--json"}},
		{[]string{"-json", "--", "-json", "-secret"}, []string{"--json", "--", "-json", "-secret"}},
		{[]string{"-nosuch"}, []string{"--nosuch"}},
	} {
		if got := longDashes(fs, tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("longDashes(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// canonicalFlags are the flag names the verbs share, each with what its
// help says it means: a flag whose help says one of these meanings has the
// name beside it, on every verb.
var canonicalFlags = []struct {
	name    string
	meaning *regexp.Regexp
}{
	{"day-budget-usd", regexp.MustCompile(`day's budget in USD`)},
	{"budget-usd", regexp.MustCompile(`item's budget in USD`)},
	{"dashboard", regexp.MustCompile(`issue holding the day('s spend)? ledger`)},
	{"config", regexp.MustCompile(`^(the )?configuration file`)},
	{"workdir", regexp.MustCompile(`repository('s)? (checkout|work tree)`)},
	{"body-file", regexp.MustCompile(`issue body`)},
	{"golden", regexp.MustCompile(`golden set`)},
	{"repo", regexp.MustCompile(`OWNER/REPO`)},
	{"trace-file", regexp.MustCompile(`JSONL trace`)},
	{"record-comment", regexp.MustCompile(`record comment id`)},
	{"run-id", regexp.MustCompile(`^the workflow run`)},
	{"workflow", regexp.MustCompile(`workflow file`)},
	{"keep", regexp.MustCompile(`^leave the`)},
	{"json", regexp.MustCompile(`^print .*(JSON|\{)`)},
}

// TestFlagNamesConsistent walks every verb's flag set: a meaning has one
// name (canonicalFlags), a name has one type on every verb, no old name is
// shown, and every old name is a hidden alias of its flag that still works.
func TestFlagNamesConsistent(t *testing.T) {
	types := map[string]string{}    // flag name → its value type
	typeFrom := map[string]string{} // flag name → the verb that set types[name]
	sets := map[string]*pflag.FlagSet{}
	for _, v := range verbs() {
		fs := verbFlags(v)
		if fs == nil {
			t.Errorf("roadmap %s: no flag set", v.name)
			continue
		}
		sets[v.name] = fs
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			for _, c := range canonicalFlags {
				if c.meaning.MatchString(f.Usage) && f.Name != c.name {
					t.Errorf("roadmap %s --%s (%q) means what --%s means elsewhere: name it --%s", v.name, f.Name, f.Usage, c.name, c.name)
				}
			}
			if typ, ok := types[f.Name]; ok && typ != f.Value.Type() {
				t.Errorf("roadmap %s --%s is a %s, but roadmap %s --%s is a %s", v.name, f.Name, f.Value.Type(), typeFrom[f.Name], f.Name, typ)
			} else if !ok {
				types[f.Name], typeFrom[f.Name] = f.Value.Type(), v.name
			}
			if f.Name == "repo" && f.Shorthand != "R" || f.Name == "workdir" && f.Shorthand != "C" {
				t.Errorf("roadmap %s --%s has the shorthand %q", v.name, f.Name, f.Shorthand)
			}
			for _, a := range flagAliases {
				if a.verb == v.name && f.Name == a.old {
					t.Errorf("roadmap %s shows --%s, an old name of --%s", v.name, a.old, a.name)
				}
			}
		})
	}

	values := map[string]string{"float64": "2.5", "string": "some/where", "int": "7"}
	for _, a := range flagAliases {
		t.Run(a.verb+" --"+a.old, func(t *testing.T) {
			fs := sets[a.verb]
			if fs == nil {
				t.Fatalf("no verb %q", a.verb)
			}
			old, now := fs.Lookup(a.old), fs.Lookup(a.name)
			if old == nil || now == nil {
				t.Fatalf("--%s or --%s is not a flag of roadmap %s", a.old, a.name, a.verb)
			}
			if !old.Hidden || !strings.Contains(old.Deprecated, "--"+a.name) {
				t.Errorf("--%s: hidden %v, deprecated %q; want hidden and pointing at --%s", a.old, old.Hidden, old.Deprecated, a.name)
			}
			if strings.Contains(fs.FlagUsages(), "--"+a.old+" ") {
				t.Errorf("roadmap %s's help shows --%s:\n%s", a.verb, a.old, fs.FlagUsages())
			}
			value := values[now.Value.Type()]
			if value == "" {
				t.Fatalf("no test value for a %s", now.Value.Type())
			}
			forms := [][]string{{"--" + a.old, value}, {"--" + a.old + "=" + value}}
			if len(a.old) > 1 {
				forms = append(forms, []string{"-" + a.old, value}) // one letter after one dash is a shorthand
			}
			for _, args := range forms {
				// A fresh set for each parse: the verb's own, collected again.
				fs := verbFlags(verbNamed(t, a.verb))
				var stderr bytes.Buffer
				sink := fs.Output().(flagSink)
				sink.env = &Env{Vars: map[string]string{}, Stdout: &bytes.Buffer{}, Stderr: &stderr, verb: a.verb}
				fs.SetOutput(sink)
				if code, ok := parseFlags(fs, args); !ok {
					t.Fatalf("%q: exit %d, stderr %q", args, code, stderr.String())
				}
				now := fs.Lookup(a.name)
				if got := now.Value.String(); got != value || !now.Changed {
					t.Errorf("%q: --%s = %q (changed %v), want %q", args, a.name, got, now.Changed, value)
				}
				want := "roadmap " + a.verb + ": --" + a.old + " is an old name: use --" + a.name + "\n"
				if stderr.String() != want {
					t.Errorf("%q: stderr %q, want %q", args, stderr.String(), want)
				}
			}
		})
	}

	// An old name end to end: the same result, the note on stderr, stdout
	// still one JSON object.
	issue := filepath.Join(t.TempDir(), "issue.md")
	if err := os.WriteFile(issue, []byte("## Acceptance criteria\n\n- [ ] Every response carries the remaining quota\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(openspecCases, "valid-added")
	codeNew, outNew, _ := roadmapCLI(t, nil, "plan", "validate", dir, "--body-file", issue, "--json")
	codeOld, outOld, errOld := roadmapCLI(t, nil, "plan", "validate", dir, "--issue", issue, "--json")
	if codeNew != ExitFindings || codeOld != codeNew || outOld != outNew || !json.Valid([]byte(outOld)) {
		t.Errorf("--issue: exit %d, stdout\n%s\nwant what --body-file gave: exit %d\n%s", codeOld, outOld, codeNew, outNew)
	}
	if !strings.HasPrefix(errOld, "roadmap plan validate: --issue is an old name: use --body-file\n") {
		t.Errorf("--issue: stderr %q", errOld)
	}
}

// TestFlagCompletion: the shell completion offers each verb's flags, old
// names left out, and `roadmap completion SHELL` still prints a script.
func TestFlagCompletion(t *testing.T) {
	tests := []struct {
		args      []string
		want, not []string
	}{
		{[]string{"__complete", "stage", "--"}, []string{"--issue", "--day-budget-usd", "--workdir", "--json", "--rounds"}, []string{"--day-usd"}},
		{[]string{"__complete", "report", "--day"}, []string{"--day-budget-usd"}, []string{"--day-usd"}},
		{[]string{"__complete", "plan", "validate", "DIR", "--"}, []string{"--json", "--body-file", "--openspec"}, []string{"--issue"}},
		{[]string{"__complete", "explain", "12", "-"}, []string{"-R", "--repo", "--trace"}, nil},
		{[]string{"__complete", "init", "--"}, []string{"--workdir", "--dry-run"}, []string{"--dir"}},
	}
	for _, tt := range tests {
		code, out, errOut := roadmapCLI(t, nil, tt.args...)
		if code != ExitOK {
			t.Errorf("roadmap %q: exit %d, stderr %s", tt.args, code, errOut)
		}
		var got []string
		for _, l := range strings.Split(out, "\n") {
			name, _, _ := strings.Cut(l, "\t")
			got = append(got, name)
		}
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("roadmap %q offers %q, want %s among them", tt.args, got, w)
			}
		}
		for _, n := range tt.not {
			if slices.Contains(got, n) {
				t.Errorf("roadmap %q offers %s, an old name", tt.args, n)
			}
		}
	}
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		if code, out, _ := roadmapCLI(t, nil, "completion", sh); code != ExitOK || !strings.Contains(out, "roadmap") {
			t.Errorf("completion %s: exit %d, %d bytes", sh, code, len(out))
		}
	}
}
