package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/demo"
	"github.com/roadmap-dev/roadmap/internal/demo/demotest"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/sandbox/sandboxtest"
	"github.com/roadmap-dev/roadmap/internal/world"
)

// roadmap try plays whole items (a stage Job, an implement Job, two
// reports) on scratch checkouts: the tests run in `make jobs-test`, beside
// the e2e, not in make test's unit phase.

// realToken is the token of the fake that stands for the real GitHub in
// the Go play: it must reach that fake, and nothing else.
const realToken = "ghp_tryRealUserToken000000000000000000000"

// jobEnvVar, set in roadmap try's environment, names a folder where each
// stage and implement Job it starts (this test binary as roadmap) leaves
// its environment (dumpJobEnv): TestTryNeverWritesRemote reads what the
// Jobs were given.
const jobEnvVar = "ROADMAP_CLI_TEST_JOB_ENV"

// dumpJobEnv writes the environment of this process, when it is a stage
// or implement Job and jobEnvVar names a folder, into that folder.
func dumpJobEnv() {
	dir := os.Getenv(jobEnvVar)
	if dir == "" || len(os.Args) < 2 || os.Args[1] != "stage" && os.Args[1] != "implement" {
		return
	}
	name := fmt.Sprintf("%s-%d.env", os.Args[1], os.Getpid())
	os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(os.Environ(), "\n")), 0o600)
}

// tryPlay is one play of roadmap try on a scratch checkout.
type tryPlay struct {
	checkout, origin, keep string
	jobEnv                 string // the Jobs' environments (jobEnvVar)
	record                 string // what --record wrote
	stdout, stderr         string
	code                   int
	sum                    struct {
		demo.Summary
		Checkout    string `json:"checkout"`
		Head        string `json:"head"`
		CI          string `json:"ci"`
		StepSummary string `json:"step_summary"`
		Timeline    string `json:"timeline"`
	}
	// before and after are every file of the checkout (its .git
	// included) and of its origin, before and after the play.
	before, after map[string]string
	// real is the fake standing for the real GitHub (the Go play reads its
	// issue with -R OWNER/REPO --issue N).
	real *githubfake.Fake
	// model is the configured model's server of a play without --replay
	// (the Python play): what it served, and the requests without its key.
	model          *llm.Replay
	modelNoKey     int
	modelRequested int
}

// modelKey is the key of the Python play's configured model, an
// OpenAI-compatible server that refuses a request without it.
const modelKey = "sk-tryTestModelKey000000000000000000"

// The Go play is shared: TestTryOwnRepository reads its item,
// TestTryNeverWritesRemote what it left untouched.
var goTry struct {
	once sync.Once
	play *tryPlay
	err  error
}

// playGoTry is the package's one play of try on the Go sample, its issue
// read from a fake standing for the real GitHub.
func playGoTry(t *testing.T) *tryPlay {
	t.Helper()
	if testing.Short() {
		t.Skip("roadmap try plays a whole item (-short)")
	}
	goTry.once.Do(func() {
		goTry.play, goTry.err = playTry(t, demo.GoSample(), true, false)
	})
	if goTry.err != nil {
		t.Fatalf("the Go play of roadmap try: %v", goTry.err)
	}
	return goTry.play
}

// playTry lays the sample s out as a user's checkout (a real git repository
// with an origin, a local bare repository) with its own configuration and
// recorded exchanges, and runs roadmap try on it to its end. With fromGitHub
// the issue is read by -R OWNER/REPO --issue N from a fake standing for the
// real GitHub; else from --issue-file. With configured, the recorded
// exchanges are not passed as --replay: they are served by an
// OpenAI-compatible server the checkout's configuration names, whose key
// is in try's environment (modelKey), as a person's own model would be.
func playTry(t *testing.T, s demo.Sample, fromGitHub, configured bool) (*tryPlay, error) {
	bin, err := roadmapBinary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "roadmap-cli-test-try-")
	if err != nil {
		return nil, err
	}
	sharedDirs = append(sharedDirs, dir)
	p := &tryPlay{checkout: filepath.Join(dir, "checkout"), origin: filepath.Join(dir, "origin.git"), keep: filepath.Join(dir, "kept")}
	fixtures := filepath.Join(dir, "fixtures")
	if err := os.MkdirAll(fixtures, 0o755); err != nil {
		return nil, err
	}
	if err := s.WriteIssueFixtures(fixtures); err != nil {
		return nil, err
	}
	models := "models:\n  - provider: github-models\n    name: openai/gpt-4o-mini\n"
	pytest, _ := sandboxtest.PytestPath()
	environ := append(demoEnviron(), "PATH="+pytest)
	if configured {
		srv, err := p.modelServer(fixtures)
		if err != nil {
			return nil, err
		}
		defer srv.Close()
		models = "models:\n  - provider: openai-compatible\n    name: local-model\n    base_url: " + srv.URL + "/v1\n    api_key_env: TRY_TEST_MODEL_KEY\n" +
			"prices:\n  local-model: {input: 0.15, output: 0.60}\n"
		environ = append(environ, "TRY_TEST_MODEL_KEY="+modelKey)
	}
	if err := userCheckout(s, models, p.checkout, p.origin); err != nil {
		return nil, err
	}
	p.jobEnv = filepath.Join(dir, "job-env")
	if err := os.MkdirAll(p.jobEnv, 0o755); err != nil {
		return nil, err
	}
	environ = append(environ, jobEnvVar+"="+p.jobEnv)
	p.record = filepath.Join(dir, "recorded")
	args := []string{"try", "-C", p.checkout, "--record", p.record, "--keep", p.keep, "--json", "--verbose"}
	if !configured {
		args = append(args, "--replay", fixtures)
	}
	if fromGitHub {
		p.real = githubfake.New(githubfake.Options{Token: realToken, Owner: "acme", Repo: "widgets"})
		srv := httptest.NewServer(p.real)
		defer srv.Close()
		p.real.CreateIssue(githubfake.Issue{Title: "an older issue", Author: "someone"})
		n := p.real.CreateIssue(githubfake.Issue{Title: s.Title, Body: s.Body, Author: "maintainer"})
		args = append(args, "-R", "acme/widgets", "--issue", strconv.Itoa(n))
		environ = append(environ, "GH_TOKEN="+realToken, "GITHUB_API_URL="+srv.URL)
	} else {
		issue := filepath.Join(dir, "issue.md")
		if err := os.WriteFile(issue, []byte("# "+s.Title+"\n\n"+s.Body), 0o644); err != nil {
			return nil, err
		}
		args = append(args, "--issue-file", issue)
	}
	if p.before, err = snapshot(p.checkout, p.origin); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = environ
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	p.stdout, p.stderr, p.code = stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
	if p.after, err = snapshot(p.checkout, p.origin); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(stdout.Bytes(), &p.sum); err != nil {
		return nil, fmt.Errorf("roadmap try: %v; stdout is not its summary (%v):\n%s\n%s", runErr, err, p.stdout, p.stderr)
	}
	return p, nil
}

// modelServer serves the recorded exchanges in fixtures as an
// OpenAI-compatible model that answers only requests bearing modelKey.
func (p *tryPlay) modelServer(fixtures string) (*httptest.Server, error) {
	r, err := llm.LoadReplay(fixtures)
	if err != nil {
		return nil, err
	}
	p.model = r
	var mu sync.Mutex
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		p.modelRequested++
		ok := req.Header.Get("Authorization") == "Bearer "+modelKey
		if !ok {
			p.modelNoKey++
		}
		mu.Unlock()
		if !ok {
			http.Error(w, `{"error":{"message":"no key"}}`, http.StatusUnauthorized)
			return
		}
		r.ServeHTTP(w, req)
	})), nil
}

// userCheckout makes dir a user's checkout of the sample s as a person
// files its issue: its files (no plan), a .github/roadmap.yml naming models
// (YAML at the top level) and the sample's checks, an executable script and a symbolic link,
// one commit, an origin (a local bare repository) it was pushed to, and a
// hook that fails any commit made in it.
func userCheckout(s demo.Sample, models, dir, origin string) error {
	files, err := s.IssueFiles()
	if err != nil {
		return err
	}
	files[demo.ConfigPath] = models + s.Checks
	files["scripts/check.sh"] = "#!/bin/sh\nexit 0\n"
	if err := world.WriteFiles(dir, files); err != nil {
		return err
	}
	if err := os.Chmod(filepath.Join(dir, "scripts", "check.sh"), 0o755); err != nil {
		return err
	}
	if err := os.Symlink("README.md", filepath.Join(dir, "README.link")); err != nil {
		return err
	}
	env := world.GitEnv()
	for _, args := range [][]string{{"init", "-q", "-b", "trunk", dir}, {"-C", dir, "add", "-A"},
		{"-C", dir, "commit", "-q", "-m", "the user's own history"}, {"init", "-q", "--bare", origin},
		{"-C", dir, "remote", "add", "origin", origin}, {"-C", dir, "push", "-q", "origin", "trunk"}} {
		if _, err := world.Git(env, ".", args...); err != nil {
			return err
		}
	}
	// Uncommitted work that try must neither copy nor touch.
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not committed\n"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\necho 'a commit in the user checkout' >&2\nexit 1\n"), 0o755)
}

// snapshot is every file under the dirs: its mode and content's hash, or
// its link's target.
func snapshot(dirs ...string) (map[string]string, error) {
	files := map[string]string{}
	for _, root := range dirs {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			switch {
			case info.Mode()&fs.ModeSymlink != 0:
				target, err := os.Readlink(p)
				if err != nil {
					return err
				}
				files[p] = "link " + target
			case info.IsDir():
				files[p] = info.Mode().String()
			default:
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				files[p] = fmt.Sprintf("%s %x", info.Mode(), sha256.Sum256(data))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

// TestTryOwnRepository: roadmap try plays an item to a ready PR on a
// user's own checkout, a scratch Go repository and a scratch Python one,
// each with its own configuration and recorded exchanges (the Go play
// replays them with --replay; the Python play's configuration names an
// OpenAI-compatible model serving them, whose key only try's environment
// holds, so it plays try's own-models path): the remote's
// main is the checkout's committed tree at HEAD (its executable bit and
// symbolic link too, its uncommitted file not), the stage Job plans, one
// implement Job runs to its end (no kill), the Job's checks ran locally,
// the CI status says it was not run, and --keep leaves what `roadmap
// explain --state` reads.
func TestTryOwnRepository(t *testing.T) {
	if testing.Short() {
		t.Skip("roadmap try plays whole items (-short)")
	}
	t.Run("go", func(t *testing.T) { checkTryPlay(t, playGoTry(t)) })
	t.Run("python", func(t *testing.T) {
		sandboxtest.PytestPATH(t, "the Python play (its checks run pytest)")
		p, err := playTry(t, demotest.PythonSample(), false, true)
		if err != nil {
			t.Fatalf("the Python play of roadmap try: %v", err)
		}
		checkTryPlay(t, p)
	})
}

func checkTryPlay(t *testing.T, p *tryPlay) {
	t.Helper()
	sum := &p.sum
	if p.code != ExitOK || sum.Result != record.ResultReady || sum.PR == 0 {
		t.Fatalf("roadmap try: exit %d, result %q, PR %d; want 0, ready and a PR\n%s", p.code, sum.Result, sum.PR, p.stderr)
	}
	if sum.Stage.Result != "staged" || sum.Stage.Plan != demo.PlanDir {
		t.Errorf("stage = %+v, want the plan staged in %s", sum.Stage, demo.PlanDir)
	}
	if len(sum.Jobs) != 1 || sum.Jobs[0].Result != record.ResultReady || sum.Kill.Class != "" {
		t.Errorf("jobs = %+v, kill = %+v; want one implement Job ready, none killed", sum.Jobs, sum.Kill)
	}
	served := sum.Recorded
	if p.model != nil {
		// The configured model: its key reached every request.
		st := p.model.Stats()
		served = record.Spend{TokensIn: st.TokensIn, TokensOut: st.TokensOut, ModelCalls: st.Calls}
		if p.modelNoKey != 0 || p.modelRequested == 0 {
			t.Errorf("the configured model got %d requests, %d of them without its key", p.modelRequested, p.modelNoKey)
		}
	}
	if served.ModelCalls == 0 || sum.Spend.TokensIn != served.TokensIn || sum.Spend.TokensOut != served.TokensOut || sum.Spend.ModelCalls != served.ModelCalls {
		t.Errorf("record spend %+v != what the model served %+v", sum.Spend, served)
	}
	if !strings.Contains(p.stderr, "isolated: model-written commands run as uid") {
		t.Errorf("no Job said it ran its checks behind the isolation boundary:\n%s", p.stderr)
	}
	// The remote's main is the checkout's committed tree, modes and links
	// included; the uncommitted file is not in it.
	want, err := world.Git(nil, p.checkout, "rev-parse", "HEAD^{tree}")
	if err != nil {
		t.Fatal(err)
	}
	remote := filepath.Join(p.keep, "remote.git")
	got, err := world.Git(nil, remote, "rev-parse", "main^{tree}")
	if err != nil || got != want {
		t.Errorf("the remote's main tree is %s (%v), want the checkout's HEAD tree %s", got, err, want)
	}
	if sum.Head == "" || sum.Checkout != p.checkout {
		t.Errorf("checkout %q at %q, want %s at its HEAD", sum.Checkout, sum.Head, p.checkout)
	}
	// The CI was not run, and says so: on the PR's head and in the output.
	head, err := world.Git(nil, remote, "rev-parse", "refs/heads/"+branchOf(t, remote))
	if err != nil {
		t.Fatal(err)
	}
	var state struct {
		Statuses []struct {
			SHA, Context, State, Description string
		} `json:"statuses"`
	}
	data, err := os.ReadFile(filepath.Join(p.keep, "github-state.json"))
	if err == nil {
		err = json.Unmarshal(data, &state)
	}
	if err != nil {
		t.Fatalf("the kept fake GitHub state: %v", err)
	}
	ci := ""
	for _, st := range state.Statuses {
		if st.SHA == head && st.Context == "ci/test" {
			ci = st.Description
		}
	}
	if !strings.HasPrefix(ci, "not run: ") || !strings.HasPrefix(sum.CI, "not run: ") {
		t.Errorf("the head's CI status %q and the summary's CI %q do not say the CI was not run", ci, sum.CI)
	}
	// --keep leaves what explain reads, and the timeline.
	bin, _ := roadmapBinary()
	out, err := exec.Command(bin, "explain", strconv.Itoa(sum.Issue), "--state", p.keep).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ready") {
		t.Errorf("roadmap explain %d --state %s: %v\n%s", sum.Issue, p.keep, err, out)
	}
	if _, err := os.Stat(sum.Timeline); err != nil {
		t.Errorf("the timeline: %v", err)
	}
	// --record wrote every model call of the Jobs as fixtures a later
	// --replay loads.
	convs, err := llm.LoadFixtures(p.record)
	turns := 0
	for _, c := range convs {
		turns += len(c.Turns)
	}
	if err != nil || turns != served.ModelCalls {
		t.Errorf("--record %s: %d conversations, %d turns (%v); want the %d model calls made", p.record, len(convs), turns, err, served.ModelCalls)
	}
}

// branchOf is the one work branch on the remote.
func branchOf(t *testing.T, remote string) string {
	t.Helper()
	out, err := world.Git(nil, remote, "for-each-ref", "--format=%(refname:short)", "refs/heads/roadmap/")
	if err != nil || len(strings.Fields(out)) != 1 {
		t.Fatalf("work branches on the remote: %q (%v), want one", out, err)
	}
	return out
}

// TestTryNeverWritesRemote: the Go play of roadmap try wrote nothing to
// the user's checkout (its refs, index, work tree, configuration and hooks:
// every file, .git included, is as it was) nor to its origin; it read its
// issue from the GitHub of -R OWNER/REPO --issue N with GET requests only,
// and the token it read with appears in no file it kept, in nothing the
// model was sent, and in no Job's environment.
func TestTryNeverWritesRemote(t *testing.T) {
	p := playGoTry(t)
	if p.code != ExitOK {
		t.Fatalf("roadmap try: exit %d\n%s", p.code, p.stderr)
	}
	for path, was := range p.before {
		if now, ok := p.after[path]; !ok {
			t.Errorf("%s was removed", path)
		} else if now != was {
			t.Errorf("%s changed: %s → %s", path, was, now)
		}
	}
	for path := range p.after {
		if _, ok := p.before[path]; !ok {
			t.Errorf("%s was made", path)
		}
	}
	reqs := p.real.Requests()
	if len(reqs) == 0 {
		t.Errorf("no request reached the GitHub of -R: the issue was not read from it")
	}
	for _, r := range reqs {
		if r.Method != "GET" {
			t.Errorf("%s %s reached the GitHub of -R; want GET only", r.Method, r.Path)
		}
	}
	// Every file kept (the fake's state, traces, logs, the step summary)
	// and every exchange with the model (--record wrote what it was sent).
	for _, dir := range []string{p.keep, p.record} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if bytes.Contains(data, []byte(realToken)) {
				t.Errorf("the caller's GitHub token is in %s", path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if strings.Contains(p.stdout+p.stderr, realToken) {
		t.Errorf("the caller's GitHub token is in try's output")
	}
	// Nor did it reach a Job: each stage and implement Job's environment.
	envs, err := filepath.Glob(filepath.Join(p.jobEnv, "*.env"))
	if err != nil || len(envs) < 2 {
		t.Fatalf("the Jobs' environments: %q (%v), want the stage Job's and the implement Job's at least", envs, err)
	}
	for _, f := range envs {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(realToken)) {
			t.Errorf("the caller's GitHub token reached a Job: %s", filepath.Base(f))
		}
	}
}
