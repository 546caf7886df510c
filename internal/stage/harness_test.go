package stage_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/stage"
	theworld "github.com/roadmap-dev/roadmap/internal/world"
)

const (
	token = "ghs_stagetesttoken00000000000000000000"
	owner = "acme"
	repo  = "widgets"
	// changeDir is where stage puts the plan of the issue titled "Add greetings".
	changeDir = "openspec/changes/add-greetings"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

const issueBody = `The greet package is empty: callers need a greeting.

## Acceptance

- Hello("Ada") returns "Hello, Ada!".
`

// world is one item (internal/world's): a fake GitHub over HTTP, a bare
// remote holding a small Go module, and the issue.
type world struct {
	t      *testing.T
	base   *theworld.World
	dir    string
	remote string
	fake   *githubfake.Fake
	clock  *githubfake.ManualClock
	issue  int
	jobs   int
}

func gitEnv() []string { return theworld.GitEnv() }

// run runs git for a test's own setup; args[0] is "git", as the tests
// write it.
func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := theworld.Git(gitEnv(), dir, args[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func newWorld(t *testing.T) *world {
	t.Helper()
	tw, err := theworld.New(theworld.Options{Dir: t.TempDir(), Owner: owner, Repo: repo, Token: token, Start: t0,
		Files: map[string]string{"go.mod": "module example.com/greet\n\ngo 1.22\n", "greet.go": "// Package greet says hello.\npackage greet\n",
			"README.md": "# greet\n"},
		Issue:      &githubfake.Issue{Title: "Add greetings", Body: issueBody, Author: "alice"},
		ModelPrice: llm.Price{Input: 1, Output: 10}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tw.Close)
	return &world{t: t, base: tw, dir: tw.Dir, remote: tw.Remote, fake: tw.Fake, clock: tw.Clock, issue: tw.Issue}
}

func write(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// spyModel remembers every request; Before runs before each call.
type spyModel = theworld.Spy

// job is one stage Job's parts; tweak opts before run.
type job struct {
	w       *world
	opts    stage.Options
	log     bytes.Buffer
	outputs map[string]string
	model   *spyModel
	ws      string
	trace   bytes.Buffer
}

// newJob clones the remote into a fresh workspace and wires a Job with the
// given conversations (each a JSON fixture).
func (w *world) newJob(convs ...string) *job {
	t := w.t
	w.jobs++
	fixtures := filepath.Join(w.dir, fmt.Sprintf("fixtures-%d", w.jobs))
	for i, c := range convs {
		write(t, fixtures, fmt.Sprintf("%02d.json", i), c)
	}
	j := &job{w: w, outputs: map[string]string{}}
	k, spy, err := w.base.OpenJob(context.Background(), stage.Phase(), fmt.Sprintf("job-%d", w.jobs), fixtures, &j.trace)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	j.ws, j.model = k.Repo.Dir, spy
	j.opts = stage.Options{
		Options: k.JobOptions(),
		Planner: k.Tiers,
		Rounds:  3,
	}
	o := &j.opts.Options
	o.RunID, o.Log, o.SetOutput = int64(200+w.jobs), &j.log, func(k, v string) { j.outputs[k] = v }
	return j
}

func (j *job) run(ctx context.Context) stage.Result {
	j.w.t.Helper()
	res, err := stage.Run(ctx, j.opts)
	if err != nil {
		j.w.t.Fatalf("stage.Run: %v\nlog:\n%s", err, j.log.String())
	}
	return res
}

// record returns the issue's record as the fake holds it.
func (w *world) record() *record.Record {
	w.t.Helper()
	c, ok := w.base.RecordComment()
	if !ok {
		w.t.Fatal("the issue has no record comment")
	}
	r, err := record.Parse(c.Body)
	if err != nil {
		w.t.Fatalf("parse record: %v\n%s", err, c.Body)
	}
	return r
}

func (w *world) recordText() string {
	c, _ := w.base.RecordComment()
	return c.Body
}

// conv renders a hand-written conversation: match is a substring of the
// first user message; each turn is one tool call; every call costs usage.
func conv(comment, match string, calls ...call) string {
	type tc struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	type turn struct {
		Response struct {
			ToolCalls []tc `json:"tool_calls"`
			Usage     struct {
				TokensIn  int `json:"tokens_in"`
				TokensOut int `json:"tokens_out"`
			} `json:"usage"`
		} `json:"response"`
	}
	c := struct {
		Comment     string `json:"comment"`
		Source      string `json:"source"`
		Match       string `json:"match,omitempty"`
		MatchRegexp string `json:"match_regexp,omitempty"`
		Turns       []turn `json:"turns"`
	}{Comment: comment, Source: "hand"}
	if strings.HasPrefix(match, "re:") {
		c.MatchRegexp = strings.TrimPrefix(match, "re:")
	} else {
		c.Match = match
	}
	for _, k := range calls {
		var t turn
		t.Response.ToolCalls = []tc{{Name: k.name, Arguments: k.args}}
		t.Response.Usage.TokensIn, t.Response.Usage.TokensOut = 1000, 100
		c.Turns = append(c.Turns, t)
	}
	data, err := json.Marshal(c)
	if err != nil {
		panic(err)
	}
	return string(data)
}

type call struct {
	name string
	args map[string]any
}

func read(path string) call { return call{"read_file", map[string]any{"path": path}} }
func planFile(path, content string) call {
	return call{"write_plan_file", map[string]any{"path": path, "content": content}}
}
func finish(s string) call  { return call{"finish", map[string]any{"summary": s}} }
func verdict(s string) call { return call{"verdict", map[string]any{"objections": s}} }

// judged is a verdict with an acceptance map (a JSON array of {criterion,
// group, reason}), as the verifier's prompt asks for.
func judged(objections, acceptance string) call {
	return call{"verdict", map[string]any{"objections": objections, "acceptance": acceptance}}
}

// helloMet is the acceptance map of the sound plan for issueBody: its one
// criterion is met by group 1.
const helloMet = `[{"criterion": 1, "group": 1, "reason": "group 1 tests and implements Hello greeting Ada by name"}]`

func writeFile(p, c string) call { return call{"write_file", map[string]any{"path": p, "content": c}} }

const proposal = `# Add greetings

## Why

The greet package is empty: callers need a greeting.

## What Changes

- ` + "`Hello(name)`" + ` returns "Hello, NAME!".
`

const tasks = "## 1. Hello\n\n" +
	"- [ ] 1.1 Add a failing test that Hello greets Ada, in `greet_test.go`; verify: `go test ./... -run TestHello` fails\n" +
	"- [ ] 1.2 Implement `Hello` in `greet.go`; verify: `go test ./... -run TestHello`\n"

const spec = `## ADDED Requirements

### Requirement: Hello greets by name

The greet package SHALL return "Hello, NAME!" from Hello(NAME).

#### Scenario: Ada

- **WHEN** Hello is called with "Ada"
- **THEN** it returns "Hello, Ada!"
`

// soundPlanner investigates, writes a sound plan and finishes.
func soundPlanner(match string) string {
	return conv("planner: investigates and writes a sound plan", match,
		read("greet.go"),
		planFile("proposal.md", proposal),
		planFile("tasks.md", tasks),
		planFile("specs/greetings/spec.md", spec),
		finish("wrote the plan"))
}

func cleanVerifier(match string) string {
	return conv("verifier: finds nothing to object to", match, read("greet.go"), judged("none", helloMet))
}

// openspecCLI is the pinned OpenSpec CLI scripts/npm-tools.sh installs.
func openspecCLI(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("Node.js is not on PATH: validating with the OpenSpec CLI needs it (docs/openspec.md)")
	}
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		dir = filepath.Dir(dir)
	}
	bin := filepath.Join(dir, "tools", "npm", "node_modules", ".bin", "openspec")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the OpenSpec CLI is not installed at %s; run scripts/npm-tools.sh (make unit does)", bin)
	}
	return bin
}
