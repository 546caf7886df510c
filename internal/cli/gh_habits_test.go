package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/dashboard"
	"github.com/roadmap-dev/roadmap/internal/githubfake"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// The gh CLI's habits that issue 50 (item 6) found missing: one error
// prefix, GH_REPO, --jq, EXAMPLES in every verb's help.

// commandPaths is every command a person can type a flag to: the root,
// each verb of the table, each parent of two-word verbs, and cobra's own
// help and completion.
func commandPaths() [][]string {
	paths := [][]string{nil, {"help"}, {"completion", "bash"}}
	parents := map[string]bool{}
	for _, v := range verbs() {
		words := strings.Fields(v.name)
		paths = append(paths, words)
		if len(words) == 2 && !parents[words[0]] {
			parents[words[0]] = true
			paths = append(paths, words[:1])
		}
	}
	return paths
}

// TestOneErrorPrefix: a bad flag, long or short, on any command prints
// lines that each start with one prefix naming the command ("roadmap dev:
// …", "roadmap: …" for the root), never "roadmap: roadmap dev: …", and
// exits 2.
func TestOneErrorPrefix(t *testing.T) {
	for _, path := range commandPaths() {
		for _, bad := range []string{"--no-such-flag", "-Z"} {
			args := append(append([]string{}, path...), bad)
			var out, errb bytes.Buffer
			env := newEnv(args, nil, strings.NewReader(""), &out, &errb)
			env.ghAuthToken = noGHLogin
			code := run(context.Background(), env)
			if code != ExitUsage {
				t.Errorf("roadmap %s: exit %d, want %d\nstderr: %s", strings.Join(args, " "), code, ExitUsage, errb.String())
			}
			prefix := "roadmap: "
			if len(path) > 0 {
				prefix = "roadmap " + strings.Join(path, " ") + ": "
			}
			stderr := strings.TrimSuffix(errb.String(), "\n")
			if stderr == "" {
				t.Errorf("roadmap %s: nothing on stderr", strings.Join(args, " "))
				continue
			}
			for _, line := range strings.Split(stderr, "\n") {
				rest, ok := strings.CutPrefix(line, prefix)
				if !ok || strings.HasPrefix(rest, "roadmap") || strings.Contains(line, "roadmap: roadmap") {
					t.Errorf("roadmap %s: stderr line %q does not start with one %q", strings.Join(args, " "), line, prefix)
				}
			}
		}
	}
}

// TestOneErrorPrefixErrorf: a message that already carries the prefix (an
// error that came back through a layer that added it) is printed with it
// once.
func TestOneErrorPrefixErrorf(t *testing.T) {
	for _, tt := range []struct{ verb, msg, want string }{
		{"", "roadmap: unknown flag: --x", "roadmap: unknown flag: --x\n"},
		{"explain", "roadmap explain: get issue 3: 404", "roadmap explain: get issue 3: 404\n"},
		{"explain", "roadmap: get issue 3: 404", "roadmap explain: get issue 3: 404\n"},
		{"explain", "explain: get issue 3: 404", "roadmap explain: get issue 3: 404\n"},
		{"explain", "get issue 3: 404", "roadmap explain: get issue 3: 404\n"},
	} {
		var errb bytes.Buffer
		env := &Env{Vars: map[string]string{}, Stderr: &errb, verb: tt.verb}
		env.Errorf("%s", tt.msg)
		if errb.String() != tt.want {
			t.Errorf("verb %q, Errorf(%q) printed %q, want %q", tt.verb, tt.msg, errb.String(), tt.want)
		}
	}
}

// TestGHRepoEnv: GH_REPO, the gh CLI's variable, names the repository when
// neither -R nor GITHUB_REPOSITORY does, and comes before the origin
// remote; it may carry the host roadmap talks to; one it cannot read is a
// usage error naming it, unless -R or GITHUB_REPOSITORY make it moot.
func TestGHRepoEnv(t *testing.T) {
	w := newExplainWorld(t) // the fake serves acme/widgets
	n := strconv.Itoa(w.item(blockComment("implement.result: ready")))
	clone := t.TempDir() // its origin names another repository
	for _, args := range [][]string{{"init", "--quiet", clone}, {"-C", clone, "remote", "add", "origin", "git@github.com:someone/else.git"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %q: %v\n%s", args, err, out)
		}
	}
	base := []string{w.environ[0], w.environ[1], "PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "GITHUB_WORKSPACE=" + clone} // token, API; no GITHUB_REPOSITORY
	tests := []struct {
		name    string
		args    []string
		environ []string
		code    int
		stdout  string
		stderr  string
	}{
		{"GH_REPO names it", []string{"explain", n}, []string{"GH_REPO=acme/widgets"}, ExitOK, "result: ready", ""},
		{"GH_REPO comes before the origin remote", []string{"wake", "--dry-run", "--json"}, []string{"GH_REPO=acme/widgets"}, ExitOK, `"dispatched": 0`, ""},
		{"the origin remote without GH_REPO", []string{"explain", n}, nil, ExitUsage, "", "someone/else"},
		{"GH_REPO with the host", []string{"explain", n}, []string{"GH_REPO=github.com/acme/widgets"}, ExitOK, "result: ready", ""},
		{"GH_REPO with GITHUB_SERVER_URL's host", []string{"explain", n}, []string{"GH_REPO=ghe.example.test/acme/widgets", "GITHUB_SERVER_URL=https://ghe.example.test"}, ExitOK, "result: ready", ""},
		{"GH_REPO with another host", []string{"explain", n}, []string{"GH_REPO=ghe.example.test/acme/widgets"}, ExitUsage, "",
			`roadmap explain: GH_REPO "ghe.example.test/acme/widgets" names the host ghe.example.test, but roadmap talks to github.com`},
		{"GH_REPO that is not a repository", []string{"explain", n}, []string{"GH_REPO=widgets"}, ExitUsage, "", `roadmap explain: GH_REPO "widgets" is not [HOST/]OWNER/REPO`},
		{"-R comes before GH_REPO", []string{"explain", n, "-R", "acme/widgets"}, []string{"GH_REPO=someone/else"}, ExitOK, "result: ready", ""},
		{"-R makes a bad GH_REPO moot", []string{"explain", n, "-R", "acme/widgets"}, []string{"GH_REPO=widgets"}, ExitOK, "result: ready", ""},
		{"GITHUB_REPOSITORY comes before GH_REPO", []string{"explain", n}, []string{"GITHUB_REPOSITORY=acme/widgets", "GH_REPO=someone/else"}, ExitOK, "result: ready", ""},
		{"GH_REPO names it for metrics too", []string{"metrics", "--json"}, []string{"GH_REPO=acme/widgets"}, ExitOK, `"requests"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := roadmapCLI(t, append(append([]string(nil), base...), tt.environ...), tt.args...)
			if code != tt.code || !strings.Contains(out, tt.stdout) || !strings.Contains(errOut, tt.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q on stdout, %q on stderr", code, out, errOut, tt.code, tt.stdout, tt.stderr)
			}
		})
	}
}

// TestJQ: --jq on every verb with --json, as the gh CLI has it: it turns
// --json on, prints a string raw and any other value as compact JSON, says
// a bad expression in one line and exits 2, cannot read the environment,
// and leaves the runner's workflow commands on stdout alone.
func TestJQ(t *testing.T) {
	t.Run("every verb with --json takes --jq", func(t *testing.T) {
		n := 0
		for _, v := range verbs() {
			fs := verbFlags(v)
			if fs == nil || fs.Lookup("json") == nil {
				continue
			}
			n++
			f := fs.Lookup("jq")
			if f == nil || f.Hidden || f.Value.Type() != "string" {
				t.Errorf("roadmap %s has --json but no --jq", v.name)
				continue
			}
			if f.Shorthand != "q" && fs.ShorthandLookup("q") == f {
				t.Errorf("roadmap %s --jq has the shorthand %q", v.name, f.Shorthand)
			}
		}
		if n < 15 {
			t.Errorf("only %d verbs have --json; the walk found too few to mean anything", n)
		}
	})

	w := newExplainWorld(t)
	n := w.item(blockComment("implement.result: ready"))
	body := filepath.Join(t.TempDir(), "body.md")
	if err := os.WriteFile(body, []byte("text\n\n<!-- roadmap:record v1\nimplement.result: ready\nimplement.group: 2\n-->\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		code    int
		stdout  string // exactly
		stderr  string // in stderr, which is one line
		noToken bool
	}{
		{name: "a string prints raw", args: []string{"version", "--jq", ".version"}, stdout: Version + "\n"},
		{name: "-q is --jq", args: []string{"version", "-q", ".version"}, stdout: Version + "\n"},
		{name: "--jq implies --json", args: []string{"record", "show", "--body-file", body, "--jq", ".keys"},
			stdout: `{"implement.group":2,"implement.result":"ready"}` + "\n"},
		{name: "with --json too, several outputs a line each", args: []string{"record", "show", "--body-file", body, "--json", "--jq", `.keys["implement.group"], .unknown, (.keys | keys[])`},
			stdout: "2\n[]\nimplement.group\nimplement.result\n"},
		{name: "a verb that reads GitHub", args: []string{"explain", strconv.Itoa(n), "--jq", `"#\(.issue) \(.title)"`},
			stdout: "#" + strconv.Itoa(n) + " Add greetings\n"},
		{name: "a bad expression exits 2 before the verb runs", args: []string{"explain", strconv.Itoa(n), "--jq", ".result | ["}, code: ExitUsage,
			stderr: `roadmap explain: --jq ".result | [": not a jq expression: unexpected EOF at byte 11`},
		{name: "an expression that does not fit the output exits 2", args: []string{"version", "--jq", ".version | tonumber"}, code: ExitUsage,
			stderr: `roadmap version: --jq: tonumber cannot be applied to "` + Version + `"`},
		{name: "the environment is out of reach", args: []string{"version", "--jq", "[env, $ENV]"}, stdout: "[{},{}]\n", noToken: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := roadmapCLI(t, w.environ, tt.args...)
			if code != tt.code || out != tt.stdout || !strings.Contains(errOut, tt.stderr) {
				t.Errorf("roadmap %s: exit %d, stdout %q, stderr %q; want %d, %q, %q in stderr", strings.Join(tt.args, " "), code, out, errOut, tt.code, tt.stdout, tt.stderr)
			}
			if strings.Count(strings.TrimSuffix(errOut, "\n"), "\n") != 0 {
				t.Errorf("stderr is not one line: %q", errOut)
			}
			if strings.Contains(out+errOut, explainToken) {
				t.Errorf("the token is in the output")
			}
		})
	}
}

// TestJQStream: the filter reads whatever way the verb writes: a value in
// pieces, NDJSON, several values on a line, brackets inside strings, a last
// value without its newline; workflow commands between values pass
// through in order, and output that is not JSON is an internal failure.
func TestJQStream(t *testing.T) {
	run := func(expr string, pieces ...string) (string, string, int) {
		var out, errb bytes.Buffer
		env := &Env{Vars: map[string]string{}, Stdout: &out, Stderr: &errb, verb: "console"}
		fs := newFlags(env, "console")
		fs.Bool("json", false, "print JSON")
		if code, ok := parseFlags(fs, []string{"--jq", expr}); !ok {
			t.Fatalf("parse --jq %q: exit %d, %s", expr, code, errb.String())
		}
		if !fs.Lookup("json").Changed {
			t.Errorf("--jq did not turn --json on")
		}
		for _, p := range pieces {
			env.Stdout.Write([]byte(p))
		}
		code := env.jq.finish(env, ExitOK)
		return out.String(), errb.String(), code
	}
	out, errOut, code := run(`if type == "object" then .a else length end`,
		"::add-mask::s3cret\n{\n  \"a\": 1,\n", "  \"b\": \"}]{[\\\"\"\n}\n",
		`{"a":"two"}`+"\n", `{"a":3}{"a":4}`+"\n", "::notice::between\n", "[1,\n2]")
	if want := "::add-mask::s3cret\n1\ntwo\n3\n4\n::notice::between\n2\n"; out != want || code != ExitOK || errOut != "" {
		t.Errorf("stdout %q, stderr %q, exit %d; want %q, nothing, 0", out, errOut, code, want)
	}
	out, errOut, code = run(".", "{\"a\":1}\n", "plain text\n", "{\"a\":2}\n")
	if out != `{"a":1}`+"\n" || code != ExitInternal || !strings.HasPrefix(errOut, "roadmap console: --jq: the output is not JSON") {
		t.Errorf("text on stdout: stdout %q, stderr %q, exit %d; want the first value, a failure, 3", out, errOut, code)
	}
	out, errOut, code = run(".", "{\"a\":\n")
	if out != "" || code != ExitInternal || !strings.Contains(errOut, "ends inside a value") {
		t.Errorf("a cut value: stdout %q, stderr %q, exit %d", out, errOut, code)
	}
}

// TestHelpHasExamples walks every verb: its help (-h) has an EXAMPLES
// section with at least one command line of that verb, and every command
// line there parses as shell and its flags parse with the verb's own flag
// set, so an example cannot name a flag the verb lacks.
func TestHelpHasExamples(t *testing.T) {
	for _, v := range verbs() {
		words := strings.Fields(v.name)
		code, out, errOut := roadmapCLI(t, nil, append(words, "-h")...)
		if code != ExitOK {
			t.Errorf("roadmap %s -h: exit %d, stderr %q", v.name, code, errOut)
			continue
		}
		_, section, ok := strings.Cut(out, "\nEXAMPLES\n")
		if !ok {
			t.Errorf("roadmap %s -h has no EXAMPLES section:\n%s", v.name, out)
			continue
		}
		section, _, _ = strings.Cut(section, "\n\n")
		own := 0
		for _, line := range strings.Split(section, "\n") {
			if strings.HasPrefix(line, "  # ") {
				continue
			}
			cmdline, ok := strings.CutPrefix(line, "  $ ")
			if !ok {
				t.Errorf("roadmap %s: EXAMPLES line %q is neither \"  $ COMMAND\" nor \"  # note\"", v.name, line)
				continue
			}
			for _, args := range exampleCalls(t, cmdline) {
				verb, rest := exampleVerb(args)
				if verb.name == "" {
					t.Errorf("roadmap %s: example %q runs roadmap with no verb", v.name, cmdline)
					continue
				}
				if verb.name == v.name {
					own++
				}
				fs := verbFlags(verb)
				if err := fs.Parse(longDashes(fs, rest)); err != nil {
					t.Errorf("roadmap %s: example %q: %v", v.name, cmdline, err)
				}
			}
		}
		if own == 0 {
			t.Errorf("roadmap %s: no example runs roadmap %s:\n%s", v.name, v.name, section)
		}
	}
}

// exampleCalls parses an example as shell and returns the arguments of
// each call of roadmap in it (a pipeline may hold other commands).
func exampleCalls(t *testing.T, cmdline string) [][]string {
	t.Helper()
	f, err := syntax.NewParser().Parse(strings.NewReader(cmdline), "")
	if err != nil {
		t.Errorf("example %q is not a shell command line: %v", cmdline, err)
		return nil
	}
	var calls [][]string
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		var args []string
		for _, w := range call.Args {
			s, err := expand.Literal(&expand.Config{Env: expand.ListEnviron("HOME=/home/me", "MY_KEY=sk-example-key-0000")}, w)
			if err != nil {
				t.Errorf("example %q: %v", cmdline, err)
				return false
			}
			args = append(args, s)
		}
		if args[0] == "roadmap" {
			calls = append(calls, args[1:])
		}
		return true
	})
	return calls
}

// exampleVerb finds the verb of the table that args name, two words
// before one, and the arguments after it.
func exampleVerb(args []string) (verb, []string) {
	for _, n := range []int{2, 1} {
		if len(args) < n {
			continue
		}
		name := strings.Join(args[:n], " ")
		for _, v := range verbs() {
			if v.name == name {
				return v, args[n:]
			}
		}
	}
	return verb{}, nil
}

// writesAt is stdout that notes, when a line holding mark is written, how
// many requests other than reads the fake had seen by then.
type writesAt struct {
	bytes.Buffer
	fake   *githubfake.Fake
	mark   string
	writes int // -1 until mark is written
}

func (w *writesAt) Write(p []byte) (int, error) {
	if w.writes < 0 && strings.Contains(string(p), w.mark) {
		w.writes = 0
		for _, r := range w.fake.Requests() {
			if r.Method != "GET" {
				w.writes++
			}
		}
	}
	return w.Buffer.Write(p)
}

// TestInitSaysFirst: roadmap init names what it will create on GitHub (the
// labels the repository lacks, the dashboard issue) before its first write
// there; a run with nothing to create and a dry run do not say it; its help
// says what it creates and shows --dry-run.
func TestInitSaysFirst(t *testing.T) {
	r := newInitRepo(t, map[string]string{"go.mod": "module example.com/widgets\n"})
	environ := []string{"GITHUB_TOKEN=" + explainToken, "GITHUB_API_URL=" + r.srv.URL}
	const mark = "on GitHub, in acme/widgets, this makes now: "
	initCLI := func(args ...string) *writesAt {
		t.Helper()
		out := &writesAt{fake: r.fake, mark: mark, writes: -1}
		var errb bytes.Buffer
		if code := Main(context.Background(), append([]string{"init", "-R", "acme/widgets", "-C", r.dir}, args...), environ, strings.NewReader(""), out, &errb); code != ExitOK {
			t.Fatalf("roadmap init %v: exit %d\n%s%s", args, code, out.String(), errb.String())
		}
		return out
	}
	if out := initCLI("--dry-run"); out.writes >= 0 {
		t.Errorf("--dry-run says it makes things now:\n%s", out.String())
	}
	out := initCLI()
	first, _, _ := strings.Cut(out.String(), "\n")
	if out.writes != 0 || !strings.HasPrefix(first, "roadmap init: "+mark) {
		t.Fatalf("init's first line is %q (%d writes before it); want it to start %q before any write", first, out.writes, mark)
	}
	for _, want := range []string{" label(s) (roadmap:stage, roadmap:implement,", dashboard.Label, `the dashboard issue "` + dashboard.Title + `"`, "roadmap init --dry-run"} {
		if !strings.Contains(first, want) {
			t.Errorf("the first line lacks %q: %s", want, first)
		}
	}
	if again := initCLI(); again.writes >= 0 {
		t.Errorf("a second run, with nothing to create, says it makes things:\n%s", again.String())
	}
	code, help, _ := roadmapCLI(t, nil, "init", "-h")
	for _, want := range []string{"on GitHub it creates", "the labels roadmap uses", "the dashboard issue", "$ roadmap init --dry-run"} {
		if code != ExitOK || !strings.Contains(help, want) {
			t.Errorf("roadmap init -h (exit %d) lacks %q:\n%s", code, want, help)
		}
	}
}
