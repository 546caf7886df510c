package implement_test

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"maps"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/record"
	theworld "github.com/roadmap-dev/roadmap/internal/world"
)

const (
	token   = "ghs_implementtesttoken0000000000000000"
	owner   = "acme"
	repo    = "widgets"
	planDir = theworld.SamplePlanDir
)

var t0 = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)

// world is one item (internal/world's sample): a fake GitHub over HTTP, a
// bare remote holding the sample repository with its plan, and the issue
// whose record the Jobs share.
type world struct {
	t      *testing.T
	base   *theworld.World
	dir    string
	remote string
	fake   *githubfake.Fake
	clock  *githubfake.ManualClock
	issue  int
	groups int
	jobs   int
}

// gitEnv isolates git from the host's configuration.
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

func newWorld(t *testing.T, groups int, body string) *world {
	t.Helper()
	return newWorldWith(t, groups, body, nil)
}

// newWorldWith is newWorld with more of the world's options set by with
// (the replay model server, say).
func newWorldWith(t *testing.T, groups int, body string, with func(*theworld.Options)) *world {
	t.Helper()
	if body == "" {
		body = "Add greetings.\n\n<!-- roadmap:record v1\nstage.plan: " + planDir + "\n-->\n"
	}
	// The record a test gives is roadmap's record comment (as the stage
	// phase leaves it); the issue body keeps the person's text only.
	text, rc := body, ""
	if i := strings.Index(body, "<!-- roadmap:record v1"); i >= 0 && record.HasBlock(body) {
		text, rc = body[:i], "**roadmap** · staged\n\n"+body[i:]
	}
	o := theworld.Options{Dir: t.TempDir(), Owner: owner, Repo: repo, Token: token, Start: t0,
		Files: theworld.SampleRepo(groups), Issue: &githubfake.Issue{Title: "Add greetings", Body: text, Author: "alice"},
		RecordComment: rc, ModelPrice: llm.Price{Input: 1, Output: 10}, NoGitUpkeep: true}
	if with != nil {
		with(&o)
	}
	tw, err := theworld.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tw.Close)
	return &world{t: t, base: tw, dir: tw.Dir, remote: tw.Remote, fake: tw.Fake, clock: tw.Clock, issue: tw.Issue, groups: groups}
}

// newWorldFiles is newWorld with files (slash-separated path to content)
// laid over the sample repository before it is seeded: a plan of the test's
// own, a file its checks read. They are in the seed commit; a commit on main
// after the seed would cost a clone, a commit and a push.
func newWorldFiles(t *testing.T, groups int, body string, files map[string]string) *world {
	t.Helper()
	return newWorldWith(t, groups, body, func(o *theworld.Options) { maps.Copy(o.Files, files) })
}

// recordComment returns the record comment as the fake holds it: the oldest
// comment by roadmap's identity with a record block.
func (w *world) recordComment() (githubfake.Comment, bool) { return w.base.RecordComment() }

// conversations are the recorded model exchanges of every group: write the
// file, then finish. Each call costs 1,000 tokens in and 100 out.
func (w *world) conversations() []*llm.Conversation {
	convs, err := theworld.SampleConversations(w.groups)
	if err != nil {
		w.t.Fatal(err)
	}
	return convs
}

// job is one Job's parts; tweak its Options before run.
type job struct {
	w       *world
	opts    implement.Options
	log     bytes.Buffer
	outputs map[string]string
	checks  *countingRunner
	model   *spyModel
	gh      *github.Client
	ws      string
}

// countingRunner counts the scoped check commands that ran.
type countingRunner struct {
	checks.Runner
	mu   sync.Mutex
	cmds []string
}

func (c *countingRunner) Run(ctx context.Context, dir string, argv []string) (checks.Result, error) {
	c.mu.Lock()
	c.cmds = append(c.cmds, strings.Join(argv, " "))
	c.mu.Unlock()
	return c.Runner.Run(ctx, dir, argv)
}

// RunEnv counts too, and passes the extra environment (less parallelism
// after an oom) to the runner under it.
func (c *countingRunner) RunEnv(ctx context.Context, dir string, argv, extra []string) (checks.Result, error) {
	c.mu.Lock()
	c.cmds = append(c.cmds, strings.Join(argv, " "))
	c.mu.Unlock()
	er, ok := c.Runner.(interface {
		RunEnv(context.Context, string, []string, []string) (checks.Result, error)
	})
	if !ok {
		return checks.Result{}, fmt.Errorf("the check runner %T cannot set the environment", c.Runner)
	}
	return er.RunEnv(ctx, dir, argv, extra)
}

// spyModel remembers every request it passed on; Before runs before each
// call with the call's number (from 1).
type spyModel = theworld.Spy

// newJob clones the remote into a fresh workspace (a new runner) and wires a Job.
func (w *world) newJob(convs []*llm.Conversation) *job {
	t := w.t
	w.jobs++
	fixtures := filepath.Join(w.dir, fmt.Sprintf("fixtures-%d", w.jobs))
	files := map[string]string{}
	for _, c := range convs {
		data, err := llm.MarshalConversation(c)
		if err != nil {
			t.Fatal(err)
		}
		files[c.Name+".json"] = string(data)
	}
	if err := theworld.WriteFiles(fixtures, files); err != nil {
		t.Fatal(err)
	}
	k, spy, err := w.base.OpenJob(context.Background(), implement.Phase(), fmt.Sprintf("job-%d", w.jobs), fixtures, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	j := &job{w: w, outputs: map[string]string{}, gh: k.GitHub, ws: k.Repo.Dir, model: spy}
	j.checks = &countingRunner{Runner: k.CheckRunner}
	j.opts = implement.Options{
		Options:      k.JobOptions(),
		Models:       k.Tiers,
		CheckRunner:  j.checks,
		Split:        policy.Split,
		RepairRounds: 2,
		PollInterval: 30 * time.Second,
		WatchTimeout: 10 * time.Minute,
	}
	o := &j.opts.Options
	o.RunID, o.Log, o.SetOutput = int64(100+w.jobs), &j.log, func(k, v string) { j.outputs[k] = v }
	return j
}

func (j *job) run() implement.Result {
	j.w.t.Helper()
	res, err := implement.Run(context.Background(), j.opts)
	if err != nil {
		j.w.t.Fatalf("implement.Run: %v\nlog:\n%s", err, j.log.String())
	}
	return res
}

// record returns the issue's record as the fake holds it: the record comment.
func (w *world) record() *record.Record {
	w.t.Helper()
	c, ok := w.recordComment()
	if !ok {
		w.t.Fatal("the issue has no record comment")
	}
	r, err := record.Parse(c.Body)
	if err != nil {
		w.t.Fatalf("parse record: %v\n%s", err, c.Body)
	}
	return r
}

// patches returns the bodies of every write of an issue comment the fake
// received (the record comment's create and edits), in order.
func (w *world) patches() []string {
	var out []string
	for _, r := range w.fake.Requests() {
		if (r.Endpoint == "PATCH /repos/{owner}/{repo}/issues/comments/{id}" ||
			r.Endpoint == "POST /repos/{owner}/{repo}/issues/{n}/comments") && strings.Contains(r.Body, "roadmap:record") {
			out = append(out, r.Body)
		}
		if r.Endpoint == "PATCH /repos/{owner}/{repo}/issues/{n}" {
			w.t.Errorf("the issue was written (PATCH %s): roadmap never writes the issue", r.Path)
		}
	}
	return out
}

// lastPatchHasResult checks the Job's last record write holds its typed result.
func lastPatchHasResult(t *testing.T, w *world, want record.Result) {
	t.Helper()
	p := w.patches()
	if len(p) == 0 {
		t.Fatal("no record write")
	}
	last := p[len(p)-1]
	if !strings.Contains(last, "implement.result: "+string(want)) {
		t.Errorf("last record write lacks implement.result: %s:\n%s", want, last)
	}
	for i, earlier := range p[:len(p)-1] {
		if strings.Contains(earlier, "implement.result:") {
			t.Errorf("write %d of %d already holds a result; the result is the last mark:\n%s", i+1, len(p), earlier)
		}
	}
}

// runWithGreenCI runs the Job while a "CI" marks the pushed head green
// whenever the Job waits.
func (j *job) runWithGreenCI() implement.Result {
	j.w.t.Helper()
	j.opts.Clock = ciClock{ManualClock: j.w.clock, w: j.w, state: "success"}
	return j.run()
}

// runWithCIRunning runs the Job while the PR's CI stays pending.
func (j *job) runWithCIRunning() implement.Result {
	j.w.t.Helper()
	j.opts.Clock = ciClock{ManualClock: j.w.clock, w: j.w, state: "pending"}
	return j.run()
}

// ciClock plays CI: whenever the Job waits, the pushed head gets a status
// in state (once).
type ciClock struct {
	*githubfake.ManualClock
	w     *world
	state string
	// own, when set, is roadmap's own failing status from an earlier Job,
	// put on the head before the CI's.
	own string
}

func (c ciClock) Sleep(ctx context.Context, d time.Duration) error {
	cmd := exec.Command("git", "rev-parse", "refs/heads/roadmap/"+fmt.Sprint(c.w.issue)+"-add-greetings")
	cmd.Dir = c.w.remote
	if out, err := cmd.Output(); err == nil {
		sha := strings.TrimSpace(string(out))
		if len(c.w.fake.Statuses(sha)) == 0 {
			if c.own != "" {
				c.w.fake.AddStatus(sha, c.own, "failure", "stopped: checks_failed (an earlier Job)")
			}
			c.w.fake.AddStatus(sha, "ci/test", c.state, "CI")
		}
	}
	return c.ManualClock.Sleep(ctx, d)
}

// wholeJobEntries are the harness's entry points that run a whole Job: the
// world's newJob wires one, the job's run functions run it, and
// implement.Run is what they call (a child process calls it too).
var wholeJobEntries = []string{"newJob", "run", "runWithGreenCI", "runWithCIRunning", "implement.Run"}

// maxWholeJobFiles is issue 45's bound on the test files that run a whole
// Job: each concern's tests in one file, not a file a test.
const maxWholeJobFiles = 12

// TestWholeJobTestFiles: at most maxWholeJobFiles of the package's test
// files call an entry point of wholeJobEntries (a method call, or
// implement.Run), outside the entry points' own definitions. A test of one
// concern goes beside that concern's others, not into a file of its own.
func TestWholeJobTestFiles(t *testing.T) {
	paths, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	entry := map[string]bool{}
	for _, e := range wholeJobEntries {
		entry[e] = true
	}
	defined := map[string]bool{}
	var files []string
	fset := gotoken.NewFileSet()
	for _, p := range paths {
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		calls := false
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && entry[fd.Name.Name] {
				// The harness itself: its entry points call each other.
				defined[fd.Name.Name] = true
				continue
			}
			ast.Inspect(d, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return !calls
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
					name := sel.Sel.Name
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "implement" {
						name = "implement." + name
					}
					calls = calls || entry[name]
				}
				return !calls
			})
		}
		if calls {
			files = append(files, p)
		}
	}
	for _, e := range wholeJobEntries {
		if !strings.Contains(e, ".") && !defined[e] {
			t.Errorf("the harness defines no %s: wholeJobEntries no longer names its entry points", e)
		}
	}
	if len(files) == 0 {
		t.Fatal("no test file runs a whole Job: wholeJobEntries no longer names the harness's entry points")
	}
	if len(files) > maxWholeJobFiles {
		t.Errorf("%d test files run a whole Job, want at most %d (put a test beside its concern's): %s",
			len(files), maxWholeJobFiles, strings.Join(files, ", "))
	}
	t.Logf("%d test files run a whole Job: %s", len(files), strings.Join(files, ", "))
}
