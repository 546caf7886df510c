package demo

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/world"
)

//go:embed all:testdata/demo
var sample embed.FS

// The sample item. The token is the fake's own: it opens nothing real.
const (
	Owner = "roadmap-dev"
	Repo  = "greet"
	Token = "ghs_demoFakeGitHubToken0000000000000000"
	// PushToken is what roadmap pushes with (ROADMAP_PUSH_TOKEN): the fake
	// knows it as a GitHub App's token, so the repository's CI, which the
	// demo plays (PlayCI), runs on roadmap's pushes as GitHub would start it.
	PushToken = "ghs_demoFakePushToken00000000000000000000"
	// PlanDir is the sample plans' folder in their repositories.
	PlanDir = "openspec/changes/add-greetings"
)

// World is the item's surroundings (the fake GitHub and the replay model on
// loopback, the bare remote, and the issue), with the demo's hooks on the
// model's requests.
type World struct {
	*world.World

	// onCall, when set, sees every chat request before the model answers it
	// (the demo kills a Job while its call is in flight).
	mu     sync.Mutex
	onCall func(firstUser string, turn int)
	onBody func(body []byte)

	// item is the sample the world holds: its language's checks.
	item Sample
	// config, when set, is the Job's configuration in place of the
	// sample's (roadmap try's: the user's repository's own, made local).
	config func(w *World) ([]byte, error)
}

// Sample is one sample item: its repository and fixtures in FS, the issue a
// person files, and what the configuration and the repository's CI say in
// its language. The product's demo plays GoSample; the test-only samples
// (internal/demo/demotest) bring their own FS.
type Sample struct {
	// FS holds Root/repo (the repository's files) and Root/fixtures (the
	// recorded model exchanges).
	FS   fs.FS
	Root string
	// Title and Body are the issue as a person files it; Seed is the seed
	// commit's message.
	Title, Body, Seed string
	// Reads is the file the stage planner and verifier read first; Finish
	// the stage planner's summary.
	Reads, Finish string
	// Acceptance is the stage verifier's acceptance map of the sample plan
	// (the verdict's JSON array): the group that meets each criterion.
	Acceptance string
	// Checks is the configuration's checks (and a policy row when the
	// language's runner needs one), YAML at the top level.
	Checks string
	// CI is the description of the passing status PlayCI gives.
	CI string
}

// goItem is the demo's item: a Go package.
var goItem = Sample{FS: sample, Root: "testdata/demo", Title: "Add greetings", Body: issueBody,
	Seed: "greet: an empty package and a plan", Reads: "greet.go", Finish: "wrote the plan: Hello, Goodbye, the README",
	Acceptance: `[{"criterion": 1, "group": 1, "reason": "group 1 tests and implements Hello greeting by name"},` +
		`{"criterion": 2, "group": 2, "reason": "group 2 tests and implements Goodbye"},` +
		`{"criterion": 3, "group": 3, "reason": "group 3 documents Hello and Goodbye in the README"}]`,
	Checks: "checks:\n  commands: [\"go vet ./...\"]\n", CI: "go test ./... passed"}

// GoSample is the demo's own item, a Go package, for the test-only worlds
// built on it (internal/demo/demotest).
func GoSample() Sample { return goItem }

// OnModelRequest sets a hook that sees the whole body of each chat request
// (what left the Job for the model).
func (w *World) OnModelRequest(f func(body []byte)) {
	w.mu.Lock()
	w.onBody = f
	w.mu.Unlock()
}

// OnModelCall sets a hook that sees each chat request's first user message
// and turn before the model server answers it.
func (w *World) OnModelCall(f func(firstUser string, turn int)) {
	w.mu.Lock()
	w.onCall = f
	w.mu.Unlock()
}

// modelRequest shows a chat request to the hooks set now.
func (w *World) modelRequest(body []byte) {
	w.mu.Lock()
	hook, bodyHook := w.onCall, w.onBody
	w.mu.Unlock()
	if bodyHook != nil {
		bodyHook(body)
	}
	if hook != nil {
		hook(firstUserAndTurn(body))
	}
}

// NewWorld lays the item out under dir and starts the servers. The plan is
// already staged: committed on main and named in the record comment.
func NewWorld(ctx context.Context, dir string, latency time.Duration) (*World, error) {
	return NewSampleWorld(ctx, dir, latency, goItem, true, nil)
}

// NewIssueWorld lays out the item as a person files it: an issue with no
// plan, labelled roadmap:stage. The replay model's planner writes the sample
// plan (stage's planner and verifier fixtures are made from its files).
func NewIssueWorld(ctx context.Context, dir string, latency time.Duration) (*World, error) {
	return NewSampleWorld(ctx, dir, latency, goItem, false, nil)
}

// NewSampleWorld lays out the sample item s: staged, its plan committed and
// named in the record comment (NewWorld), or not, an issue the replay
// model's planner writes the plan for (NewIssueWorld). more, when set,
// writes more fixtures (given the repository's files and the fixtures
// directory) before they load: the hook of the test-only worlds.
func NewSampleWorld(ctx context.Context, dir string, latency time.Duration, s Sample, staged bool, more func(files map[string]string, fixtures string) error) (*World, error) {
	files, err := SampleFiles(s.FS, s.Root+"/repo")
	if err != nil {
		return nil, err
	}
	fixtures := filepath.Join(dir, "fixtures")
	if staged {
		fixtureFiles, err := SampleFiles(s.FS, s.Root+"/fixtures")
		if err != nil {
			return nil, err
		}
		if err := world.WriteFiles(fixtures, fixtureFiles); err != nil {
			return nil, err
		}
	}
	labels := config.Default().Labels
	issue := &githubfake.Issue{Title: s.Title, Body: s.Body, Author: "maintainer", Labels: []string{labels.Stage}}
	// The stage phase left the plan in the record comment, written as
	// roadmap's identity.
	record := "**roadmap** · staged: planned\n\n<!-- roadmap:record v1\nstage.plan: " + PlanDir + "\nstage.state: staged\n-->"
	if staged {
		issue.Body = "Callers need a greeting and a farewell; see the plan in `" + PlanDir + "`.\n"
		issue.Labels = []string{labels.Implement}
	} else {
		// The plan leaves the repository and becomes what the planner writes.
		if files, err = s.IssueFiles(); err != nil {
			return nil, err
		}
		if err := s.WriteIssueFixtures(fixtures); err != nil {
			return nil, err
		}
		record = ""
	}
	if more != nil {
		if err := more(files, fixtures); err != nil {
			return nil, err
		}
	}
	replay, err := llm.LoadReplay(fixtures)
	if err != nil {
		return nil, fmt.Errorf("load the recorded exchanges: %w", err)
	}
	return NewWorldFrom(world.Options{Dir: dir, Owner: Owner, Repo: Repo, Token: Token, PushToken: PushToken,
		Files: files, SeedMessage: s.Seed, Issue: issue, RecordComment: record,
		Replay: replay, ModelLatency: latency}, s)
}

// IssueFiles are s's repository as a person files its issue: without the
// plan, which the replay model's planner writes (openspec/ left out).
func (s Sample) IssueFiles() (map[string]string, error) {
	files, err := SampleFiles(s.FS, s.Root+"/repo")
	if err != nil {
		return nil, err
	}
	for name := range files {
		if strings.HasPrefix(name, "openspec/") {
			delete(files, name)
		}
	}
	return files, nil
}

// WriteIssueFixtures writes into dir what the replay model answers s's
// issue with: the sample's recorded exchanges, and the stage planner's and
// verifier's made from the sample plan's files (WritePlannerFixtures).
func (s Sample) WriteIssueFixtures(dir string) error {
	files, err := SampleFiles(s.FS, s.Root+"/repo")
	if err != nil {
		return err
	}
	fixtureFiles, err := SampleFiles(s.FS, s.Root+"/fixtures")
	if err != nil {
		return err
	}
	if err := world.WriteFiles(dir, fixtureFiles); err != nil {
		return err
	}
	plan := map[string]string{}
	for name, text := range files {
		if rel, ok := strings.CutPrefix(name, PlanDir+"/"); ok {
			plan[rel] = text
		}
	}
	return s.WritePlannerFixtures(plan, dir, "stage-planner", "Write the plan for issue", s.Finish)
}

// NewWorldFrom starts the world o describes (world.New) as a World whose
// Config, Checks and PlayCI are the sample s's; o.OnModelRequest is the
// World's own (OnModelCall, OnModelRequest). It is for a world laid out
// otherwise than NewSampleWorld's (demotest's trio of items).
func NewWorldFrom(o world.Options, s Sample) (*World, error) {
	w := &World{item: s}
	o.OnModelRequest = w.modelRequest
	var err error
	if w.World, err = world.New(o); err != nil {
		return nil, err
	}
	return w, nil
}

// firstUserAndTurn reads an OpenAI chat request: its first user message and
// how many assistant messages it holds (the turn).
func firstUserAndTurn(body []byte) (string, int) {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return "", 0
	}
	first, turn := "", 0
	for _, m := range req.Messages {
		switch m.Role {
		case "assistant":
			turn++
		case "user":
			if first == "" {
				var s string
				if json.Unmarshal(m.Content, &s) == nil {
					first = s
				} else {
					first = string(m.Content)
				}
			}
		}
	}
	return first, turn
}

// Config writes the repository configuration a Job runs with: the replay
// model over the OpenAI-compatible API, a short poll for the demo's CI, and
// the quality before ready on (test strength and the review).
func (w *World) Config() (string, error) {
	p := filepath.Join(w.Dir, "roadmap.yml")
	if w.config != nil {
		data, err := w.config(w)
		if err != nil {
			return "", err
		}
		return p, os.WriteFile(p, data, 0o644)
	}
	cfg := fmt.Sprintf(`# The demo's configuration: the recorded model exchanges served on loopback.
models:
  - provider: openai-compatible
    name: demo-model
    base_url: %s
prices:
  demo-model: {input: 0.15, output: 0.60}
%simplement:
  poll_interval: 1s
  watch_timeout: 60s
  repair_rounds: 2
  test_strength: true
  test_strength_floor: 0.6
review:
  enabled: true
`, w.ModelURL(), w.item.Checks)
	return p, os.WriteFile(p, []byte(cfg), 0o644)
}

// Checks is the configuration's checks for the sample's language, with the
// policy row its test runner needs, as YAML at the top level: what Config
// writes between the prices and implement.
func (w *World) Checks() string { return w.item.Checks }

// Env is the environment of a step of the item's workflow run: the machine's
// environment without anything of a real runner or a real token, git kept
// apart from the machine's configuration, and the fakes' addresses.
func (w *World) Env(runID int64, tmp string) []string {
	var env []string
	for _, kv := range world.GitEnv() {
		k, _, _ := strings.Cut(kv, "=")
		// GH_TOKEN (the gh CLI's) and GH_ENTERPRISE_TOKEN are a person's
		// real tokens: a Job on the fakes never gets one.
		if strings.HasPrefix(k, "GITHUB_") || strings.HasPrefix(k, "ACTIONS_") || strings.HasPrefix(k, "RUNNER_") || strings.HasPrefix(k, "INPUT_") ||
			strings.HasPrefix(k, "GH_") {
			continue
		}
		env = append(env, kv)
	}
	owner, repo := w.Repository()
	return append(env, "GITHUB_API_URL="+w.GitHubURL(), "GITHUB_TOKEN="+Token, "ROADMAP_PUSH_TOKEN="+PushToken,
		"GITHUB_REPOSITORY="+owner+"/"+repo, fmt.Sprintf("GITHUB_RUN_ID=%d", runID), "RUNNER_TEMP="+tmp)
}

// PlayCI gives the work branch's head a passing status, as the repository's
// CI would, until ctx is done.
func (w *World) PlayCI(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.PassCI(w.Branch(), w.item.CI)
	}
}

// SampleFiles reads the tree root of fsys into files (slash path to
// content); go.mod.sample becomes go.mod (a go.mod cannot be embedded).
func SampleFiles(fsys fs.FS, root string) (map[string]string, error) {
	files := map[string]string{}
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, root+"/")
		if path.Base(rel) == "go.mod.sample" {
			rel = path.Join(path.Dir(rel), "go.mod")
		}
		files[rel] = string(data)
		return nil
	})
	return files, err
}
