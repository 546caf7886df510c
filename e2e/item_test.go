//go:build unix

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/adopt"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/dashboard"
	"github.com/roadmap-dev/roadmap/internal/demo"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// What the scenarios share: the demo's item (a sample repository with a
// three-group plan, a labelled issue, the fake GitHub and the replay model on
// loopback) made into a user's repository that calls this project's
// reusable workflow, and act runs of that caller.

const (
	// callerWorkflow is where the user's repository holds the example
	// caller (docs/examples/roadmap-caller.yml), unless itemOptions.Caller
	// names another example.
	callerWorkflow = ".github/workflows/roadmap-caller.yml"
	// exampleTag is the release the examples name in their
	// roadmap-dev/roadmap references (the newest in CHANGELOG.md:
	// scripts' TestExamplesNameTheRelease holds them to it).
	exampleTag = "v0.1.0"
	// roadmapRef is how the example caller refers to this project; act maps
	// it to a snapshot of the source tree with --local-repository.
	roadmapRef = "roadmap-dev/roadmap@" + exampleTag
	marker     = "<!-- roadmap:implement -->"
)

// item is one issue's life under act.
type item struct {
	t      *testing.T
	act    *Act
	w      *demo.World
	caller *Repo // the user's repository: the sample, the caller workflow, the configuration
	// workflow is the caller workflow's path in the user's repository.
	workflow string
	// local maps more owner/repo@ref to directories for act: stand-ins
	// that do what the caller's own setup actions would (itemOptions.Caller).
	local map[string]string
	// roadmap is the snapshot of this project the caller's
	// roadmap-dev/roadmap references resolve to; tag (roadmapRef's tag,
	// exampleTag) is the directory act maps that tag to, roadmap unless the
	// scenario moved the tag (itemOptions.Pinned).
	roadmap, tag string
	// repos is ROADMAP_E2E_REPOS: the bare repositories the checkout
	// stand-in clones (roadmap-dev/roadmap.git, which the reusable
	// workflows check out at the commit the OIDC token names).
	repos  string
	apiURL string
	start  time.Time
	// dashboard is the dashboard issue the caller names.
	dashboard int

	mu     sync.Mutex
	seen   int // requests of the fake's log already booked
	phases []phase
	// staged counts the model calls the stage run made: the replay
	// server's count before implement's first call.
	staged int
	// booked is the spend of the calls a killed Job's log shows booked and
	// never settled (on the wire when it was killed): report counts them at
	// their booking, so the record holds them beyond what was served.
	booked record.Spend
	// persons are the logins of the people acting in the scenario: their
	// requests are not the item's.
	persons map[string]bool
	// pushToken is the token roadmap pushes with (ROADMAP_PUSH_TOKEN), for
	// the fake's push events; "" is the workflow's GITHUB_TOKEN.
	pushToken string
	// model is the proxy in front of the replay model: its latency, and
	// the hold a scenario may put on some calls.
	model *slowModel
	// implementEnds are when each run at once with others (goRun) saw its
	// implement job (or stage job, stageRuns) end, by the run's name: its
	// requests before are that job's, after report's (tokenCounts).
	implementEnds map[string]time.Time
	// stageRuns are the runs at once with others (goRun) whose Job is a
	// stage Job, by the run's name: their requests before its end are
	// stage's, not implement's (tokenCounts).
	stageRuns map[string]bool
	// runVerbs are the verbs of runs with no implement job, by the run's
	// name: every request of such a run is that verb's (the caller's
	// unblock job runs wake), not split at an implement job's end.
	runVerbs map[string]string
}

// phase is the counted GitHub requests (304s and log blobs are free) made
// while one job ran.
type phase struct {
	name string
	n    int // counted: not a free 304
	api  int // every REST and GraphQL request, 304s too
	// dash are the counted requests on the dashboard issue (its body, the
	// day ledger's and the alerts' comments): the repository's operations,
	// held to their own bound (maxDashboardRequests), not the item's.
	dash int
}

// maxDashboardRequests bounds one job's counted requests on the dashboard
// issue: keeping the body (a read and a write, docs/dashboard.md), booking
// the Job's spend in the day ledger (a list and a post) and the day check
// before a continuation (a list).
const maxDashboardRequests = 5

type itemOptions struct {
	// Latency is added to every model call.
	Latency time.Duration
	// WatchTimeout bounds the watch of the PR checks within one Job.
	WatchTimeout time.Duration
	// Implement holds more lines of the configuration's implement mapping
	// (each indented two spaces).
	Implement string
	// NoReview turns the review before ready off (review.enabled: false):
	// for a world whose recordings hold no reviewer's answers (the trio's),
	// as the review is on by default.
	NoReview bool
	// FromIssue starts from an issue with no plan: stage writes it.
	FromIssue bool
	// Caller is the example caller under docs/examples the user's
	// repository holds, by file name; "" is roadmap-caller.yml. It is
	// committed as .github/workflows/<Caller>.
	Caller string
	// Local maps remote actions the caller uses (owner/repo@ref) to
	// stand-ins that act runs in their place.
	Local map[string]string
	// NoPushToken runs the caller without the ROADMAP_PUSH_TOKEN secret:
	// roadmap pushes with the workflow's GITHUB_TOKEN, whose pushes start no
	// workflow run, so no CI runs on them. With it (the default) roadmap
	// pushes with a GitHub App's installation token, as a repository whose
	// CI runs on roadmap's pushes has it set.
	NoPushToken bool
	// Files are more files of the user's repository (a CI workflow).
	Files map[string]string
	// World lays the item out instead of demo.NewWorld (or, with
	// FromIssue, demo.NewIssueWorld).
	World func(ctx context.Context, dir string, latency time.Duration) (*demo.World, error)
	// Pinned pins the caller by SHA: its roadmap-dev/roadmap references
	// name the snapshot's commit instead of exampleTag, and the tag moves on to a later
	// commit whose scripts fail, so a run that used the tag anywhere fails.
	Pinned bool
}

// movedTag is what every script of the moved exampleTag says before it fails.
const movedTag = "the moving tag ran, not the pinned commit"

// appPushToken is the GitHub App installation token the scenarios pass as
// ROADMAP_PUSH_TOKEN; the fake knows it as the App's.
const appPushToken = "ghs_roadmapE2EAppInstallationToken000000"

// secrets are the caller's secrets: the workflow's token (the run's own
// when it has one, else the world's), and the push token unless the
// scenario runs without one.
func (it *item) secrets(token string) map[string]string {
	if token == "" {
		token = demo.Token
	}
	s := map[string]string{"GITHUB_TOKEN": token}
	if it.pushToken != "" {
		s["ROADMAP_PUSH_TOKEN"] = it.pushToken
	}
	return s
}

// newItem lays out the item and the user's repository.
func newItem(t *testing.T, act *Act, o itemOptions) *item {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	it := &item{t: t, act: act, start: time.Now(), workflow: callerWorkflow, local: o.Local}
	if !o.NoPushToken {
		it.pushToken = appPushToken
	}
	if o.Caller != "" {
		it.workflow = ".github/workflows/" + o.Caller
	}
	if err := os.MkdirAll(filepath.Join(dir, "world"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The model's latency is the proxy's below, not the world's: the proxy
	// reads a request whole before it waits, so it sees a Job that is killed
	// while it waits and serves nothing to it.
	newWorld := demo.NewWorld
	if o.FromIssue {
		newWorld = demo.NewIssueWorld
	}
	if o.World != nil {
		newWorld = o.World
	}
	w, err := newWorld(ctx, filepath.Join(dir, "world"), 0)
	if err != nil {
		t.Fatalf("the demo's world: %v", err)
	}
	t.Cleanup(w.Close)
	it.w = w
	if it.pushToken != "" {
		w.Fake.AddIdentity(it.pushToken, githubfake.Identity{Login: "roadmap-e2e[bot]", Kind: githubfake.AppToken})
	}
	for _, kv := range w.Env(0, "") {
		if v, ok := strings.CutPrefix(kv, "GITHUB_API_URL="); ok {
			it.apiURL = v
		}
	}
	// The world's own configuration names the replay model's address.
	demoCfg, err := w.Config()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(demoCfg)
	if err != nil {
		t.Fatalf("the demo's configuration: %v", err)
	}
	if it.apiURL == "" || len(cfg.Models) == 0 || cfg.Models[0].BaseURL == "" {
		t.Fatalf("the demo's world gives no GitHub (%q) or model address", it.apiURL)
	}
	model, err := url.Parse(cfg.Models[0].BaseURL)
	if err != nil {
		t.Fatal(err)
	}
	it.model = &slowModel{upstream: model.Scheme + "://" + model.Host, latency: o.Latency}
	proxy := httptest.NewServer(it.model)
	t.Cleanup(proxy.Close)
	modelURL := proxy.URL + model.Path

	snap, err := PrepareRepo(ctx, repoRoot(t), filepath.Join(dir, "roadmap"), "roadmap-dev/roadmap")
	if err != nil {
		t.Fatal(err)
	}
	it.roadmap, it.tag = snap.Dir, snap.Dir
	// GitHub's side of the caller's `uses:`: the fake names the called
	// workflow's commit in the OIDC token from these refs, and the
	// reusable workflows check roadmap out at it from ROADMAP_E2E_REPOS.
	it.repos = filepath.Join(dir, "repos")
	if err := os.MkdirAll(filepath.Join(it.repos, "roadmap-dev"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(snap.Remote, filepath.Join(it.repos, "roadmap-dev", "roadmap.git")); err != nil {
		t.Fatal(err)
	}
	refs := map[string]string{"refs/heads/main": snap.SHA, "refs/tags/" + exampleTag: snap.SHA}
	if o.Pinned {
		it.tag, refs["refs/tags/"+exampleTag] = moveTag(t, snap, filepath.Join(dir, "roadmap-"+exampleTag))
		it.local = maps.Clone(it.local)
		if it.local == nil {
			it.local = map[string]string{}
		}
		it.local["roadmap-dev/roadmap@"+snap.SHA] = snap.Dir
	}
	w.Fake.SetCalledRepository("roadmap-dev/roadmap", refs)

	// The user's repository: the sample as the world pushed it, plus the
	// example caller (unchanged: its roadmap-dev/roadmap references are
	// mapped by act) and a configuration for the replay model.
	seed := filepath.Join(w.Dir, "seed")
	caller, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "examples", filepath.Base(it.workflow)))
	if err != nil {
		t.Fatal(err)
	}
	if o.Pinned {
		// As docs/install.md pins it: every roadmap reference at one commit.
		pinned := strings.ReplaceAll(string(caller), "@"+exampleTag+"\n", "@"+snap.SHA+" # "+exampleTag+"\n")
		if pinned == string(caller) {
			t.Fatalf("the example caller %s has no roadmap-dev/roadmap reference at %s to pin", it.workflow, exampleTag)
		}
		caller = []byte(pinned)
	}
	// The dashboard issue, as roadmap init opens it and names it in the
	// caller: the example's placeholder number becomes this one. (The
	// examples that name none keep no dashboard and no day budget.)
	named := string(caller)
	if strings.Contains(named, "dashboard: 1 ") {
		it.dashboard = w.Fake.CreateIssue(githubfake.Issue{Title: dashboard.Title, Labels: []string{dashboard.Label}, Author: "alice"})
		named = strings.ReplaceAll(named, "dashboard: 1 ", fmt.Sprintf("dashboard: %d ", it.dashboard))
	}
	files := map[string]string{
		it.workflow: named,
		config.DefaultPath: fmt.Sprintf(`# The e2e's configuration: the demo's recorded model exchanges, served on loopback.
models:
  - provider: openai-compatible
    name: demo-model
    base_url: %s
prices:
  demo-model: {input: 0.15, output: 0.60}
checks:
  commands: ["go vet ./..."]
implement:
  poll_interval: 1s
  watch_timeout: %s
  repair_rounds: 2
%s`, modelURL, o.WatchTimeout, o.Implement),
	}
	if o.NoReview {
		files[config.DefaultPath] += "review:\n  enabled: false\n"
	}
	for name, body := range o.Files {
		files[name] = body
	}
	// The other workflows from docs/examples (the wake workflow) name the
	// dashboard by the same placeholder: init writes the same number.
	for name, body := range files {
		if strings.HasPrefix(name, ".github/workflows/") && strings.Contains(body, "dashboard: 1 ") {
			if it.dashboard == 0 {
				it.dashboard = w.Fake.CreateIssue(githubfake.Issue{Title: dashboard.Title, Labels: []string{dashboard.Label}, Author: "alice"})
			}
			files[name] = strings.ReplaceAll(body, "dashboard: 1 ", fmt.Sprintf("dashboard: %d ", it.dashboard))
		}
	}
	for name, body := range files {
		p := filepath.Join(seed, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"-C", seed, "add", "--all"},
		{"-C", seed, "commit", "--quiet", "--no-verify", "--message", "roadmap: the caller workflow and its configuration"},
		{"-C", seed, "push", "--quiet", "origin", "main"},
	} {
		if _, err := git(ctx, args...); err != nil {
			t.Fatalf("the user's repository: %v", err)
		}
	}
	sha, err := git(ctx, "-C", seed, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	it.caller = &Repo{Dir: seed, Remote: w.Remote, Name: demo.Owner + "/" + demo.Repo, SHA: strings.TrimSpace(sha)}
	if o.FromIssue {
		it.logf("issue #%d with no plan in %s (bare remote %s); fake GitHub %s", w.Issue, it.caller.Name, w.Remote, it.apiURL)
	} else if o.World != nil {
		it.logf("issue #%d with a staged plan in %s (bare remote %s); fake GitHub %s", w.Issue, it.caller.Name, w.Remote, it.apiURL)
	} else {
		it.logf("issue #%d with a 3-group plan in %s (bare remote %s); fake GitHub %s", w.Issue, it.caller.Name, w.Remote, it.apiURL)
	}
	it.book("setup")
	return it
}

func (it *item) logf(format string, args ...any) {
	it.t.Helper()
	it.t.Logf("%6.1fs ▸ %s", time.Since(it.start).Seconds(), fmt.Sprintf(format, args...))
}

// book counts the requests since the last booking under name.
func (it *item) book(name string) {
	it.mu.Lock()
	defer it.mu.Unlock()
	log := it.w.Fake.Requests()
	n, api, dash := 0, 0, 0
	dashComments := map[string]bool{}
	if it.dashboard > 0 {
		for _, c := range it.w.Fake.Comments(it.dashboard) {
			dashComments[strconv.FormatInt(c.ID, 10)] = true
		}
	}
	// The job's verb, for "run 1: implement", "stage: stage", …
	_, verb, _ := strings.Cut(name, ": ")
	known := slices.Contains(adopt.Verbs(), verb)
	for _, r := range log[it.seen:] {
		if it.persons[r.Login] {
			continue // a person's own request (a label, a comment, a review): not the item's
		}
		// Each request a job made is one its verb's permissions table
		// (internal/adopt) has: the workflows' permissions are checked
		// against that table.
		if known && r.Endpoint != "" && !notAPI(r.Path) && !adopt.Allows(verb, r.Endpoint) {
			it.t.Errorf("the %s job called %s, which internal/adopt's table of %s's calls lacks: add it with the permission it needs", verb, r.Endpoint, verb)
		}
		// Counted: REST and GraphQL requests that are not a free 304.
		if notAPI(r.Path) {
			continue
		}
		api++
		switch {
		case r.Status == http.StatusNotModified:
		case it.onDashboard(r.Path, dashComments):
			dash++
		default:
			n++
		}
	}
	it.seen = len(log)
	it.phases = append(it.phases, phase{name: name, n: n, api: api, dash: dash})
}

// onDashboard reports whether an API path is the dashboard issue's: the
// issue, its comments, or one of its comments (by id).
func (it *item) onDashboard(path string, comments map[string]bool) bool {
	if it.dashboard <= 0 {
		return false
	}
	_, rest, ok := strings.Cut(path, "/issues/")
	if !ok {
		return false
	}
	n := strconv.Itoa(it.dashboard)
	if id, ok := strings.CutPrefix(rest, "comments/"); ok {
		return comments[id]
	}
	return rest == n || rest == n+"/comments"
}

// notAPI reports whether path is none of GitHub's API: the job-log blobs,
// git's own protocol (the install script's ls-remote) and the Actions OIDC
// token service (the pin job's) spend no rate limit and need no permission
// of internal/adopt's table.
func notAPI(path string) bool {
	return strings.HasPrefix(path, "/_logs/") || strings.HasPrefix(path, "/_services/token/") || isGitProtocol(path) || isReleaseDownload(path)
}

// isReleaseDownload reports whether path is a release asset's download from
// the web server (OWNER/REPO/releases/download/TAG/FILE), as the actions'
// install script fetches a release it is pinned to (the examples name a
// release's tag): no token, no REST request. The fake has no release, so
// the script builds roadmap from the action's source, as it would on a
// platform the release lacks.
func isReleaseDownload(path string) bool {
	owner, rest, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	_, rest, _ = strings.Cut(rest, "/")
	return owner != "" && strings.HasPrefix(rest, "releases/download/")
}

// isGitProtocol reports whether path is git's smart HTTP protocol.
func isGitProtocol(path string) bool {
	return strings.Contains(path, ".git/info/refs") || strings.HasSuffix(path, "/git-upload-pack") || strings.HasSuffix(path, "/git-receive-pack")
}

// requests prints the counted requests by phase and returns the total.
func (it *item) requests() int {
	it.mu.Lock()
	defer it.mu.Unlock()
	total, dash := 0, 0
	var b strings.Builder
	fmt.Fprintf(&b, "  %-32s %4s %9s\n", "", "item", "dashboard")
	for _, p := range it.phases {
		fmt.Fprintf(&b, "  %-32s %4d %9d\n", p.name, p.n, p.dash)
		total += p.n
		dash += p.dash
		if p.dash > maxDashboardRequests {
			it.t.Errorf("%s made %d counted requests on the dashboard issue, want at most %d", p.name, p.dash, maxDashboardRequests)
		}
	}
	fmt.Fprintf(&b, "  %-32s %4d %9d", "total", total, dash)
	it.t.Logf("counted GitHub requests by phase:\n%s", b.String())
	var eps []string
	for ep, n := range it.w.Fake.CountByEndpoint() {
		eps = append(eps, fmt.Sprintf("  %3d %s", n, ep))
	}
	slices.Sort(eps)
	it.t.Logf("requests by endpoint (every status):\n%s", strings.Join(eps, "\n"))
	return total
}

// trigger is what starts one act run of the caller.
type trigger struct {
	name    string // for progress and the request phases
	event   string
	payload map[string]any
	inputs  map[string]string
	runID   int64  // GITHUB_RUN_ID: the fake's run, so report can find it
	actor   string // github.actor: who caused the event ("" is act's default)
	// workflow is the workflow file the run is of, under .github/workflows
	// ("" is the caller).
	workflow string
	// token is the run's GITHUB_TOKEN ("" is the world's, demo.Token): a
	// run at once with another has its own (runToken), so their requests
	// are told apart.
	token string
	// unbooked leaves the run's requests out of the phases (book): a run
	// at once with another cannot be booked by time; the scenario counts
	// its requests by its token (tokenCounts).
	unbooked bool
}

// actRun is one finished act run of the caller.
type actRun struct {
	*Result
	artifacts string // ROADMAP_E2E_ARTIFACTS: what the guarded uploads would have uploaded
}

// job returns act's name for the called workflow's job ("…/implement").
func (r *actRun) job(name string) string {
	for k := range r.Jobs {
		if strings.HasSuffix(k, "/"+name) {
			return k
		}
	}
	return ""
}

// run runs the caller once. during, if set, runs while act does.
func (it *item) run(tr trigger, during func(ctx context.Context, s *Started)) *actRun {
	t := it.t
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 12*time.Minute)
	defer cancel()
	artifacts := t.TempDir()
	workflow := it.workflow
	if tr.workflow != "" {
		workflow = ".github/workflows/" + tr.workflow
	}
	it.logf("%s: act %s on %s (run %d)", tr.name, tr.event, filepath.Base(workflow), tr.runID)
	s, err := it.act.Start(ctx, Run{
		Repo:              it.caller,
		Workflow:          workflow,
		Event:             tr.event,
		Payload:           tr.payload,
		Inputs:            tr.inputs,
		Actor:             tr.actor,
		APIURL:            it.apiURL,
		Env:               it.runEnv(tr.runID, artifacts),
		Secrets:           it.secrets(tr.token),
		LocalRepositories: it.localRepositories(),
		Scratch:           t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}

	// Book the stage or implement job's requests apart from report's:
	// report starts with a build of the binary, so the first of its requests
	// comes well after act logs the first job's result.
	booked := make(chan struct{})
	var bookedJob atomic.Bool
	go func() {
		defer close(booked)
		if tr.unbooked {
			return
		}
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			snap := &actRun{Result: s.Snapshot()}
			for _, name := range []string{"implement", "stage"} {
				if j := snap.job(name); j != "" {
					it.logf("%s: the %s job ended: %s", tr.name, name, snap.Jobs[j])
					it.book(tr.name + ": " + name)
					bookedJob.Store(true)
					return
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	done := make(chan struct{})
	if during != nil {
		go func() {
			defer close(done)
			during(ctx, s)
		}()
	} else {
		close(done)
	}
	res, err := s.Wait()
	cancel()
	<-booked
	<-done
	if err != nil {
		t.Fatalf("%s: %v\nact log:\n%s", tr.name, err, parseLog(s.Output()).Log)
	}
	r := &actRun{Result: res, artifacts: artifacts}
	// What came after the first job's end is report's: stage and implement
	// runs both have a report job. A run whose first job's end was never
	// seen (act failed before it) books everything to that job.
	switch {
	case tr.unbooked:
	case !bookedJob.Load() && r.job("stage") != "":
		it.book(tr.name + ": stage")
	case !bookedJob.Load() && r.job("answer") != "":
		it.book(tr.name + ": report") // the caller's answer job runs report
	case !bookedJob.Load() && r.job("wake") != "":
		it.book(tr.name + ": wake")
	case !bookedJob.Load():
		it.book(tr.name + ": implement")
	case r.job("report") != "":
		it.book(tr.name + ": report")
	default:
		it.book(tr.name + ": after")
	}
	it.logf("%s: act exited %d after %s; jobs %v", tr.name, res.ExitCode, res.Elapsed.Round(100*time.Millisecond), res.Jobs)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s: act log:\n%s", tr.name, res.Log)
		}
	})
	return r
}

// runEnv is a run's base environment: its id, where the guarded uploads
// go, the bare repositories the checkout stand-in clones, and what the
// runner gives a job for its OIDC token (on GitHub, only a job granted
// id-token: write; act gives every job the variables, and the fake refuses
// the token to a caller that does not grant it).
func (it *item) runEnv(runID int64, artifacts string) map[string]string {
	u, err := url.Parse(it.apiURL)
	if err != nil {
		it.t.Fatal(err)
	}
	path, token := it.w.Fake.IDTokenRequest(runID)
	return map[string]string{
		"GITHUB_RUN_ID":                  strconv.FormatInt(runID, 10),
		"ROADMAP_E2E_ARTIFACTS":          artifacts,
		"ROADMAP_E2E_REPOS":              it.repos,
		"ACTIONS_ID_TOKEN_REQUEST_URL":   u.Scheme + "://" + u.Host + path,
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN": token,
	}
}

// moveTag makes exampleTag a later commit of snap than the one the scenario pins,
// in a worktree at dir, whose scripts all fail saying movedTag: a run that
// took anything of roadmap from the tag fails. The tag is pushed to snap's
// remote, where the checkout stand-in would find it. It returns the
// worktree and the tag's commit.
func moveTag(t *testing.T, snap *Repo, dir string) (string, string) {
	t.Helper()
	ctx := t.Context()
	if _, err := git(ctx, "-C", snap.Dir, "worktree", "add", "--quiet", "--detach", dir, snap.SHA); err != nil {
		t.Fatal(err)
	}
	scripts, err := filepath.Glob(filepath.Join(dir, "scripts", "*.sh"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("the moved tag's scripts: %v (%d found)", err, len(scripts))
	}
	for _, f := range scripts {
		body := "#!/usr/bin/env bash\necho \"::error::" + movedTag + " (" + filepath.Base(f) + ")\"\nexit 1\n"
		if err := os.WriteFile(f, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"-C", dir, "commit", "--quiet", "--no-verify", "--all", "--message", exampleTag + " moves on"},
		{"-C", dir, "tag", "--force", exampleTag},
		{"-C", dir, "push", "--quiet", "--force", "origin", exampleTag},
	} {
		if _, err := git(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
	sha, err := git(ctx, "-C", dir, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	return dir, strings.TrimSpace(sha)
}

// localRepositories is act's --local-repository mapping: this project for
// the caller's roadmap-dev/roadmap references, and the stand-ins.
func (it *item) localRepositories() map[string]string {
	m := map[string]string{roadmapRef: it.tag}
	for k, v := range it.local {
		m[k] = v
	}
	return m
}

// stage runs the caller on the roadmap:stage label: one stage Job, to a
// draft PR holding the plan, and report after it, which for a staged plan
// only books the stage Job's spend in the day ledger (none without one).
func (it *item) stage(by *person) {
	t := it.t
	t.Helper()
	by.label(it.w.Issue, "roadmap:stage")
	r := it.nextRun("stage", it.workflowFile(), "issues", nil).actRun
	if got := r.Jobs[r.job("stage")]; got != "success" || r.ExitCode != 0 {
		t.Fatalf("the stage run: job %q, act exit %d (jobs %v)", got, r.ExitCode, r.Jobs)
	}
	if got := r.Jobs[r.job("report")]; got != "success" {
		t.Errorf("the stage run's report job = %q, want success (jobs %v)", got, r.Jobs)
	}
	if r.job("implement") != "" { // act lists no job its if: skipped
		t.Errorf("the stage run ran the implement job too (jobs %v)", r.Jobs)
	}
	// With no dashboard a staged plan asks GitHub nothing. With one, the
	// stage Job's spend is booked in the day ledger: the record read for
	// its line, then the ledger's list and post on the dashboard issue.
	switch last := it.phases[len(it.phases)-1]; {
	case last.name != "stage: report":
		t.Errorf("the stage run's last phase is %q, want stage: report", last.name)
	case it.dashboard == 0 && last.api != 0:
		t.Errorf("the stage run's report made %d GitHub requests, want none (a staged plan needs no action)", last.api)
	case it.dashboard > 0 && (last.n > 1 || last.dash > 2):
		t.Errorf("the stage run's report made %d requests for the item and %d on the dashboard, want at most the record's read and the ledger's list and post", last.n, last.dash)
	}
	rec := it.record()
	if st, _ := rec.StageState(); st != "staged" {
		t.Fatalf("after stage stage.state = %q, want staged:\n%s", st, recordText(rec))
	}
	pr, _ := rec.StagePR()
	if is, ok := it.w.Fake.Issue(pr); !ok || is.Pull == nil || !is.Pull.Draft {
		t.Fatalf("stage.pr #%d is not a draft PR", pr)
	}
	it.staged = it.w.Replay.Stats().Calls
	it.logf("stage: the plan %s in draft PR #%d after %d model calls", it.w.Branch(), pr, it.staged)
}

// continuation is the run report dispatched: the caller's workflow_dispatch
// with the dispatch's inputs, as GitHub would start it.
func (it *item) continuation(name string, d githubfake.Dispatch) trigger {
	t := it.t
	t.Helper()
	if d.Workflow != filepath.Base(it.workflow) || d.Ref != "main" && d.Ref != "refs/heads/main" {
		t.Fatalf("report dispatched %s on %s, want %s on main", d.Workflow, d.Ref, filepath.Base(it.workflow))
	}
	inputs := map[string]string{}
	for k, v := range d.Inputs {
		inputs[k] = fmt.Sprint(v)
	}
	return trigger{name: name, event: "workflow_dispatch", inputs: inputs, runID: d.RunID}
}

// record reads the issue record as the fake holds it: roadmap's record
// comment (the oldest comment by its identity with a record block).
func (it *item) record() *record.Record {
	it.t.Helper()
	return it.recordOf(it.w.Issue)
}

// recordOf reads issue n's record as the fake holds it.
func (it *item) recordOf(n int) *record.Record {
	it.t.Helper()
	for _, c := range it.w.Fake.Comments(n) {
		if c.Author != github.DefaultIdentity || !record.HasBlock(c.Body) {
			continue
		}
		rec, err := record.Parse(c.Body)
		if err != nil {
			it.t.Fatalf("the issue record: %v\n%s", err, c.Body)
		}
		return rec
	}
	it.t.Fatalf("issue #%d has no record comment", n)
	return nil
}

// recordCommentID is the record comment's id, which report hands to a
// continuation (the record-comment input).
func (it *item) recordCommentID() string {
	it.t.Helper()
	for _, c := range it.w.Fake.Comments(it.w.Issue) {
		if c.Author == github.DefaultIdentity && record.HasBlock(c.Body) {
			return fmt.Sprint(c.ID)
		}
	}
	it.t.Fatalf("issue #%d has no record comment", it.w.Issue)
	return ""
}

// ci plays the user's repository CI: every head pushed to the work branch
// gets a ci/test status in the state set last, until the test ends.
type ci struct {
	mu    sync.Mutex
	state string
	// branches are the work branches whose heads get the status.
	branches []string
}

// playCI starts the repository's CI in state, on the item's work branch.
func (it *item) playCI(state string) *ci { return it.playCIOn(state, it.w.Branch()) }

// playCIOn starts the repository's CI in state, on each of branches.
func (it *item) playCIOn(state string, branches ...string) *ci {
	c := &ci{state: state, branches: branches}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.play(ctx, it)
	}()
	it.t.Cleanup(func() {
		stop()
		<-done
	})
	return c
}

func (c *ci) set(state string) {
	c.mu.Lock()
	c.state = state
	c.mu.Unlock()
}

func (c *ci) play(ctx context.Context, it *item) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for _, branch := range c.branches {
			// The remote's ref files, read with no process (ten times a
			// second for the whole scenario).
			sha := it.w.RemoteHead(branch)
			if sha == "" {
				continue
			}
			c.mu.Lock()
			want := c.state
			c.mu.Unlock()
			sts := it.w.Fake.Statuses(sha)
			if n := len(sts); n == 0 || sts[n-1].State != want {
				it.w.Fake.AddStatus(sha, "ci/test", want, "the repository's CI: "+want)
			}
		}
	}
}

// checkSpend compares the record's spend with the exchanges the replay
// model served, every Job included.
func (it *item) checkSpend(rec *record.Record) {
	t := it.t
	t.Helper()
	spend, ok := rec.Spend()
	if !ok {
		t.Fatalf("the record has no implement.spend:\n%s", recordText(rec))
	}
	st := it.w.Replay.Stats()
	got := record.Spend{TokensIn: spend.TokensIn, TokensOut: spend.TokensOut, ModelCalls: spend.ModelCalls}
	want := record.Spend{TokensIn: st.TokensIn + it.booked.TokensIn, TokensOut: st.TokensOut + it.booked.TokensOut,
		ModelCalls: st.Calls + it.booked.ModelCalls}
	if got != want {
		t.Errorf("record implement.spend = %+v, want the sum of the %d exchanges served and the bookings of the calls killed on the wire (%+v): %+v",
			spend, st.Calls, it.booked, want)
	}
	if n := rec.SpendEstimated(); n != it.booked.ModelCalls {
		t.Errorf("implement.spend_estimated = %d, want the %d calls killed on the wire", n, it.booked.ModelCalls)
	}
	if st.Errors != 0 || st.Requests != st.Calls {
		t.Errorf("replay model: %d requests, %d served, %d errors; want every request served", st.Requests, st.Calls, st.Errors)
	}
	it.logf("spend: record %d tokens in, %d out, %d calls, $%.6f = served %d in, %d out, %d calls",
		spend.TokensIn, spend.TokensOut, spend.ModelCalls, spend.USD, st.TokensIn, st.TokensOut, st.Calls)
}

// checkMarkerComment wants exactly one marker comment on the item's PR, the
// PR out of draft and roadmap/implement green on its head.
func (it *item) checkReadyPR(pr int) { it.checkReadyPROf(pr, "add-greetings") }

// checkReadyPROf is checkReadyPR for the item whose plan is change.
func (it *item) checkReadyPROf(pr int, change string) {
	t := it.t
	t.Helper()
	is, ok := it.w.Fake.Issue(pr)
	if !ok || is.Pull == nil {
		t.Fatalf("the record's stage.pr #%d is no pull request", pr)
	}
	if is.Pull.Draft {
		t.Errorf("PR #%d is still a draft", pr)
	}
	state := ""
	for _, st := range it.w.Fake.Statuses(is.Pull.HeadSHA) {
		if st.Context == "roadmap/implement" {
			state = st.State
		}
	}
	if state != "success" {
		t.Errorf("status roadmap/implement on the PR head %s = %q, want success", is.Pull.HeadSHA, state)
	}
	n := 0
	for _, c := range it.w.Fake.Comments(pr) {
		if strings.Contains(c.Body, marker) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("PR #%d has %d comments with %s, want 1", pr, n, marker)
	}
	// The PR's last commit is the OpenSpec archive of the plan.
	ctx := t.Context()
	msg, err := git(ctx, "--git-dir", it.w.Remote, "log", "-1", "--format=%B", is.Pull.HeadSHA)
	if err != nil || !strings.Contains(msg, "Roadmap-Archive: "+change) {
		t.Errorf("the PR's last commit %s is not the archive of %s (%v):\n%s", is.Pull.HeadSHA, change, err, msg)
	}
	tree, err := git(ctx, "--git-dir", it.w.Remote, "ls-tree", "-r", "--name-only", is.Pull.HeadSHA)
	if err != nil || !strings.Contains(tree, "openspec/changes/archive/") || strings.Contains(tree, "openspec/changes/"+change+"/") {
		t.Errorf("the PR head's tree does not hold the archived change (%v):\n%s", err, tree)
	}
}

// checkTrace reads what the guarded upload would have uploaded: one JSONL
// trace of Job job, its events in order, with the model calls it made.
func (it *item) checkTrace(r *actRun, job, calls int, killed bool) {
	t := it.t
	t.Helper()
	files, err := filepath.Glob(filepath.Join(r.artifacts, "trace", "*.jsonl"))
	if err != nil || len(files) != 1 {
		t.Errorf("trace kept for the e2e: %v (%v), want one file under %s/trace", files, err, r.artifacts)
		return
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	events, err := trace.ReadJSONL(f)
	if err != nil {
		t.Errorf("trace %s is not valid JSONL: %v", filepath.Base(files[0]), err)
		return
	}
	modelCalls := 0
	for i, e := range events {
		if e.Job != job {
			t.Errorf("trace event %d is of Job %d, want %d: %+v", i, e.Job, job, e)
		}
		if i > 0 && e.Seq <= events[i-1].Seq {
			t.Errorf("trace event %d has seq %d after %d", i, e.Seq, events[i-1].Seq)
		}
		if e.Type == trace.TypeModelCall {
			modelCalls++
		}
	}
	switch {
	case len(events) == 0 || events[0].Phase != trace.PhaseJobStarted:
		t.Errorf("trace of Job %d: %d events, want job_started first", job, len(events))
	case events[len(events)-1].Phase.End() == killed:
		t.Errorf("trace of Job %d ends with %+v; want the Job's end last, unless it was killed", job, events[len(events)-1])
	}
	if modelCalls != calls {
		t.Errorf("trace of Job %d has %d model calls, want %d", job, modelCalls, calls)
	}
	it.logf("trace %s: %d events, %d model calls", filepath.Base(files[0]), len(events), modelCalls)
}

// wantJobs checks act's job results and exit code.
func (it *item) wantJobs(r *actRun, implement, report string) {
	t := it.t
	t.Helper()
	if got := r.Jobs[r.job("implement")]; got != implement {
		t.Errorf("implement job = %q, want %s (jobs %v)", got, implement, r.Jobs)
	}
	if got := r.Jobs[r.job("report")]; got != report {
		t.Errorf("report job = %q, want %s (jobs %v)", got, report, r.Jobs)
	}
	wantExit := 0
	if implement != "success" || report != "success" {
		wantExit = 1
	}
	if r.ExitCode != wantExit {
		t.Errorf("act exit code = %d, want %d", r.ExitCode, wantExit)
	}
}

// stamp prefixes each line with a runner's timestamp, as a job log has it.
func stamp(log string, now time.Time) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(log, "\n") {
		if l != "" {
			b.WriteString(now.UTC().Format("2006-01-02T15:04:05.0000000Z") + " " + l)
		}
	}
	return b.String()
}

// recordText is the record's keys and values, one a line, for a failure.
func recordText(rec *record.Record) string {
	var b strings.Builder
	for _, k := range rec.Keys() {
		raw, _ := rec.Raw(k)
		if len(raw) > 160 {
			raw = raw[:160] + "…"
		}
		fmt.Fprintf(&b, "%s: %s\n", k, raw)
	}
	return b.String()
}

// implementJob is act's name for the implement job, once it has logged a step.
func implementJob(r *Result) string {
	for _, s := range r.Steps {
		if strings.HasSuffix(s.Job, "/implement") {
			return s.Job
		}
	}
	return ""
}

// implementStep is the step id of the process that runs the Job: the step
// `run` of the implement action, used by the workflow's step `implement`.
const implementStep = "implement/run"

// killInGroup SIGKILLs the implement step's process (the roadmap binary the
// step execs) once the Job has made its first model call in group, while
// the next call waits out the model's latency. It returns the calls the
// Job made, each with its spend line in the step's output; 0 when it could
// not kill (the test has failed then).
func (it *item) killInGroup(ctx context.Context, s *Started, group int) int {
	t := it.t
	deadline := time.Now().Add(4 * time.Minute)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
		snap := s.Snapshot()
		job := implementJob(snap)
		if job == "" {
			continue
		}
		if res, ok := snap.Jobs[job]; ok {
			t.Errorf("the implement job ended (%s) before it reached group %d", res, group)
			return 0
		}
		spend, err := trace.ParseSpendLines(strings.NewReader(snap.StepOutput(job, implementStep)))
		if err != nil {
			t.Errorf("spend lines: %v", err)
			return 0
		}
		n := len(spend.Entries)
		if n == 0 || spend.Entries[n-1].Group < group || it.w.Replay.Stats().Calls-it.staged != n {
			continue
		}
		procs, err := s.StepProcesses()
		if err != nil {
			t.Error(err)
			return 0
		}
		i := slices.IndexFunc(procs, func(p Process) bool { return p.Comm == "roadmap" })
		if i < 0 {
			t.Errorf("no roadmap process among act's step processes %+v: the action must exec it", procs)
			return 0
		}
		if err := syscall.Kill(procs[i].PID, syscall.SIGKILL); err != nil {
			t.Errorf("kill the implement step %d: %v", procs[i].PID, err)
			return 0
		}
		if served := it.w.Replay.Stats().Calls - it.staged; served != n {
			t.Errorf("a model call was served between the check and the kill (%d served, %d in the log): make the latency longer", served, n)
		}
		it.logf("SIGKILL the implement step (pid %d) in group %d after %d model calls, the next one on the wire", procs[i].PID, group, n)
		return n
	}
	t.Errorf("the implement Job reached no model call in group %d:\n%s", group, s.Snapshot().Log)
	return 0
}

// seedKilledJob gives the fake GitHub the run's implement job as GitHub
// would keep it: completed, failed, its log the killed step's output
// followed by the runner's line for a process killed with SIGKILL. It waits
// for act to log the step's end, so the output is complete.
func (it *item) seedKilledJob(ctx context.Context, s *Started, runID int64) {
	t := it.t
	for ctx.Err() == nil {
		snap := s.Snapshot()
		job := implementJob(snap)
		ended := slices.ContainsFunc(snap.Steps, func(st StepResult) bool {
			return st.Job == job && st.ID == implementStep && st.Result != ""
		})
		if !ended {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		log := snap.StepOutput(job, implementStep) + "##[error]Process completed with exit code 137.\n"
		if lines, err := trace.ParseSpendLines(strings.NewReader(log)); err == nil {
			settled := map[int]bool{}
			for _, e := range lines.Entries {
				settled[e.Call] = true
			}
			for _, b := range lines.Booked {
				if !settled[b.Call] {
					it.booked = it.booked.Add(record.Spend{TokensIn: b.TokensIn, TokensOut: b.TokensOut, USD: b.USD, ModelCalls: 1})
				}
			}
		}
		_, err := it.w.Fake.AddJob(runID, githubfake.Job{
			Name: "roadmap / implement", Status: "completed", Conclusion: "failure", Log: stamp(log, time.Now()),
			Steps: []githubfake.Step{
				{Name: "Set up job", Status: "completed", Conclusion: "success"},
				{Name: "Run roadmap-dev/roadmap/actions/implement@" + exampleTag, Status: "completed", Conclusion: "failure"},
			},
		})
		if err != nil {
			t.Errorf("seed the killed job: %v", err)
			return
		}
		it.logf("the fake GitHub has the killed job's log:\n%s", log)
		return
	}
}

// slowModel stands in front of the replay model with a hosted model's
// latency. It reads each request whole before it waits: an HTTP server sees
// a client go away only once the request body is read, so a Job killed
// while it waits for an answer is served nothing, as it would receive
// nothing, and the replay's tally holds only exchanges a Job received.
type slowModel struct {
	upstream string
	latency  time.Duration

	mu sync.Mutex
	// hold, when set, sees each chat request's body after the latency and
	// returns when the model may answer it: a model as slow as a scenario
	// needs it to be on some calls. It must return when ctx is done.
	hold func(ctx context.Context, body []byte)
}

// setHold sets the hold on the chat requests (nil: none).
func (m *slowModel) setHold(f func(ctx context.Context, body []byte)) {
	m.mu.Lock()
	m.hold = f
	m.mu.Unlock()
}

func (m *slowModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	if strings.HasSuffix(r.URL.Path, "/chat/completions") {
		select {
		case <-time.After(m.latency):
		case <-r.Context().Done():
			return
		}
		m.mu.Lock()
		hold := m.hold
		m.mu.Unlock()
		if hold != nil {
			hold(r.Context(), body)
			if r.Context().Err() != nil {
				return
			}
		}
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, m.upstream+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}
