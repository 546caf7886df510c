package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/roadmap-dev/roadmap/internal/adopt"
	"github.com/roadmap-dev/roadmap/internal/claims"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/dashboard"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/policy"
)

// initRepo is a sample repository on the fake GitHub that roadmap init runs
// in: its work tree holds files, the fake holds acme/widgets.
type initRepo struct {
	t    *testing.T
	dir  string
	fake *githubfake.Fake
	srv  *httptest.Server
}

func newInitRepo(t *testing.T, files map[string]string) *initRepo {
	t.Helper()
	fake := githubfake.New(githubfake.Options{Token: explainToken, Owner: "acme", Repo: "widgets", DefaultBranch: "main"})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	for p, text := range files {
		path := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &initRepo{t: t, dir: dir, fake: fake, srv: srv}
}

// run runs roadmap init in the repository; it returns stdout and stderr.
func (r *initRepo) run(args ...string) (string, string) {
	r.t.Helper()
	environ := []string{"GITHUB_TOKEN=" + explainToken, "GITHUB_API_URL=" + r.srv.URL, "GITHUB_SERVER_URL=https://github.example"}
	var out, errb bytes.Buffer
	code := Main(context.Background(), append([]string{"init", "-R", "acme/widgets", "--dir", r.dir, "--ref", "v1.2.3"}, args...), environ, strings.NewReader(""), &out, &errb)
	if code != ExitOK {
		r.t.Fatalf("roadmap init %v: exit %d\n%s%s", args, code, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

// json runs roadmap init --json and decodes its stdout, which must be that
// one object and nothing else.
func (r *initRepo) json(args ...string) initJSON {
	r.t.Helper()
	out, _ := r.run(append([]string{"--json"}, args...)...)
	var got initJSON
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		r.t.Fatalf("roadmap init --json: stdout is not the documented object: %v\n%s", err, out)
	}
	if _, err := dec.Token(); err != io.EOF {
		r.t.Fatalf("roadmap init --json: stdout holds more than one object:\n%s", out)
	}
	return got
}

func (r *initRepo) read(path string) string {
	r.t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, filepath.FromSlash(path)))
	if err != nil {
		r.t.Fatalf("init did not write %s: %v", path, err)
	}
	return string(b)
}

// labels are the repository's labels on the fake, name to description.
func (r *initRepo) labels() map[string]string {
	r.t.Helper()
	req, _ := http.NewRequest("GET", r.srv.URL+"/repos/acme/widgets/labels?per_page=100", nil)
	req.Header.Set("Authorization", "Bearer "+explainToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer res.Body.Close()
	var ls []struct{ Name, Description string }
	if err := json.NewDecoder(res.Body).Decode(&ls); err != nil {
		r.t.Fatal(err)
	}
	out := map[string]string{}
	for _, l := range ls {
		out[l.Name] = l.Description
	}
	return out
}

// initJSON is the object docs/cli.md documents for roadmap init --json,
// written out here so a renamed or dropped field fails the test.
type initJSON struct {
	Repository string `json:"repository"`
	DryRun     bool   `json:"dry_run"`
	Language   struct {
		Name       string   `json:"name"`
		Manager    string   `json:"manager"`
		DetectedBy string   `json:"detected_by"`
		Checks     []string `json:"checks"`
	} `json:"language"`
	CI struct {
		Workflows    []string `json:"workflows"`
		Dispatchable []string `json:"dispatchable"`
	} `json:"ci"`
	Files []struct {
		Path   string `json:"path"`
		Status string `json:"status"`
	} `json:"files"`
	Labels []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Status      string `json:"status"`
	} `json:"labels"`
	ToDo     []string `json:"todo"`
	Changed  bool     `json:"changed"`
	Provider string   `json:"provider"`
	Secret   string   `json:"secret"`
	Settings struct {
		DefaultBranch   string `json:"default_branch"`
		WorkflowDefault string `json:"workflow_default_permissions"`
		CanApprove      bool   `json:"can_approve_pull_requests"`
		PermissionsRead bool   `json:"permissions_read"`
		Private         bool   `json:"private"`
	} `json:"settings"`
	Dashboard struct {
		Number int    `json:"number"`
		Status string `json:"status"`
	} `json:"dashboard"`
}

// initWrites are the files roadmap init writes for a language with setup
// steps (the JSON test's Node repository): the project's setup action last.
var initWrites = []string{adopt.CallerPath, adopt.ChecksPath, adopt.WakePath, adopt.ConfigPath, adopt.SetupPath}

// lintInit runs the pinned actionlint (the Makefile's, v1.7.12: the
// go.mod's actionlint package predates the models permission) over every
// workflow init wrote.
func lintInit(t *testing.T, dir string) {
	t.Helper()
	actionlint(t, dir)
}

// TestInitLanguages: in a Go, a Python, a Node (npm, pnpm, yarn) and a Rust
// repository, init detects the language and its package manager, writes
// the checks commands for it (which the configured shell policy allows) and
// a checks workflow whose setup steps install that toolchain and the
// dependencies, all of which actionlint accepts.
func TestInitLanguages(t *testing.T) {
	for _, tc := range []struct {
		name    string
		files   map[string]string
		lang    string
		manager string
		by      string
		checks  []string
		setup   []string // what the checks workflow must hold
		absent  []string // what it must not
	}{
		{
			name:  "go",
			files: map[string]string{"go.mod": "module example.com/widgets\n\ngo 1.24\n", "main.go": "package main\n\nfunc main() {}\n"},
			lang:  "go", manager: "go", by: "go.mod",
			checks: []string{"go vet ./...", "go test ./..."},
			setup:  []string{"uses: roadmap-dev/roadmap/.github/workflows/roadmap-checks.yml@v1.2.3"},
			absent: []string{"setup-python", "setup-node", "rustup"},
		},
		{
			name:  "python pyproject",
			files: map[string]string{"pyproject.toml": "[project]\nname = \"widgets\"\nversion = \"0.1.0\"\n", "widgets/__init__.py": ""},
			lang:  "python", manager: "pip", by: "pyproject.toml",
			checks: []string{"python3 -m pytest -q"},
			setup:  []string{"uses: actions/setup-python@", `python-version: "3.x"`, "python -m pip install -e .", "python -m pip install pytest==8.4.2", "uses: roadmap-dev/roadmap/actions/checks@v1.2.3"},
			absent: []string{"setup-go", "roadmap-checks.yml@", "requirements.txt"},
		},
		{
			name:  "python requirements",
			files: map[string]string{"requirements.txt": "requests==2.32.3\n", ".python-version": "3.12\n", "app.py": "print('hi')\n"},
			lang:  "python", manager: "pip", by: "requirements.txt",
			checks: []string{"python3 -m pytest -q"},
			setup:  []string{"python-version-file: .python-version", "python -m pip install -r requirements.txt"},
			absent: []string{"pip install -e ."},
		},
		{
			name:  "python setup.cfg",
			files: map[string]string{"setup.cfg": "[metadata]\nname = widgets\n"},
			lang:  "python", manager: "pip", by: "setup.cfg",
			checks: []string{"python3 -m pytest -q"},
			setup:  []string{"python -m pip install -e ."},
		},
		{
			name:  "node npm",
			files: map[string]string{"package.json": `{"name":"widgets","scripts":{"test":"node --test"}}`, "package-lock.json": `{"lockfileVersion":3}`, ".nvmrc": "22\n"},
			lang:  "node", manager: "npm", by: "package.json",
			checks: []string{"npm test"},
			setup:  []string{"uses: actions/setup-node@", "node-version-file: .nvmrc", "cache: npm", "run: npm ci"},
			absent: []string{"setup-go", "setup-python", "--global"},
		},
		{
			name:  "node pnpm",
			files: map[string]string{"package.json": `{"name":"widgets"}`, "pnpm-lock.yaml": "lockfileVersion: '9.0'\n"},
			lang:  "node", manager: "pnpm", by: "package.json",
			checks: []string{"pnpm test"},
			setup:  []string{"npm install --global pnpm", "node-version: lts/*", "cache: pnpm", "run: pnpm install --frozen-lockfile"},
			absent: []string{"npm ci"},
		},
		{
			name:  "node yarn",
			files: map[string]string{"package.json": `{"name":"widgets"}`, "yarn.lock": "# yarn lockfile v1\n"},
			lang:  "node", manager: "yarn", by: "package.json",
			checks: []string{"yarn test"},
			setup:  []string{"cache: yarn", "run: yarn install --frozen-lockfile"},
		},
		{
			name:  "rust",
			files: map[string]string{"Cargo.toml": "[package]\nname = \"widgets\"\nversion = \"0.1.0\"\nedition = \"2021\"\n", "src/lib.rs": ""},
			lang:  "rust", manager: "cargo", by: "Cargo.toml",
			checks: []string{"cargo build --offline", "cargo test --offline"},
			setup:  []string{"rustup toolchain install stable", "run: cargo fetch", "uses: roadmap-dev/roadmap/actions/checks@v1.2.3"},
			absent: []string{"setup-go", "setup-node"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newInitRepo(t, tc.files)
			got := r.json()
			if got.Language.Name != tc.lang || got.Language.Manager != tc.manager || got.Language.DetectedBy != tc.by {
				t.Errorf("language = %s (%s, from %s), want %s (%s, from %s)", got.Language.Name, got.Language.Manager, got.Language.DetectedBy, tc.lang, tc.manager, tc.by)
			}
			cfg, err := config.LoadExplicit(filepath.Join(r.dir, adopt.ConfigPath))
			if err != nil {
				t.Fatalf("the configuration init wrote does not load: %v", err)
			}
			// The quality before ready is on for every language: a change
			// test strength cannot measure (Rust without cargo-mutants) says
			// "not measured" and claims no score (docs/strength.md).
			if !cfg.Review.Enabled || !cfg.Implement.TestStrength {
				t.Errorf("review.enabled %v, implement.test_strength %v; want both on", cfg.Review.Enabled, cfg.Implement.TestStrength)
			}
			if diff := cmp.Diff(tc.checks, cfg.Checks.Commands); diff != "" {
				t.Errorf("checks.commands (-want +got):\n%s", diff)
			}
			pol := policy.Default()
			if cfg.Policy.Kind != 0 {
				if pol, err = policy.ParseNode(&cfg.Policy); err != nil {
					t.Fatalf("the configuration's policy: %v", err)
				}
			}
			for _, c := range cfg.Checks.Commands {
				if err := pol.Check(strings.Fields(c)); err != nil {
					t.Errorf("the configured policy refuses the check %q: %v", c, err)
				}
			}
			checks := r.read(adopt.ChecksPath)
			for _, s := range tc.setup {
				if !strings.Contains(checks, s) {
					t.Errorf("the checks workflow lacks %q:\n%s", s, checks)
				}
			}
			for _, s := range tc.absent {
				if strings.Contains(checks, s) {
					t.Errorf("the checks workflow holds %q, not for %s:\n%s", s, tc.lang, checks)
				}
			}
			// A language with setup steps gets them as the project's setup
			// action too, which the caller names for stage and implement,
			// and the to-do says to check it.
			checkSetupAction(t, r, tc.lang != "go", tc.setup)
			named := slices.ContainsFunc(got.ToDo, func(s string) bool { return strings.Contains(s, adopt.SetupPath) })
			if want := tc.lang != "go"; named != want {
				t.Errorf("the to-do names %s: %v, want %v:\n%s", adopt.SetupPath, named, want, strings.Join(got.ToDo, "\n"))
			}
			lintInit(t, r.dir)
		})
	}

	t.Run("a Python project's files are not a Go project's", func(t *testing.T) {
		goRepo := newInitRepo(t, map[string]string{"go.mod": "module example.com/w\n"})
		pyRepo := newInitRepo(t, map[string]string{"pyproject.toml": "[project]\nname = \"w\"\n"})
		goRepo.run()
		pyRepo.run()
		for _, p := range []string{adopt.ChecksPath, adopt.ConfigPath} {
			if goRepo.read(p) == pyRepo.read(p) {
				t.Errorf("init wrote the same %s for a Go and a Python project", p)
			}
		}
	})

	t.Run("no language found", func(t *testing.T) {
		r := newInitRepo(t, map[string]string{"README.md": "hello\n"})
		got := r.json()
		if got.Language.Name != "" || len(got.Language.Checks) != 0 {
			t.Errorf("language = %+v, want none in a repository with only a README", got.Language)
		}
		lintInit(t, r.dir)
	})
}

// TestInitLeadsToStage: init's last step is to label an issue roadmap:stage,
// the labels say what each does, and the CI choice for roadmap's pushes is
// in the to-do with the one setting init can make: implement.ci_workflows
// from the repository's own CI workflows that have on: workflow_dispatch.
func TestInitLeadsToStage(t *testing.T) {
	l := config.Default().Labels
	goMod := "module example.com/widgets\n"

	t.Run("the last step labels an issue for stage", func(t *testing.T) {
		r := newInitRepo(t, map[string]string{"go.mod": goMod})
		out, _ := r.run()
		got := r.json().ToDo
		if len(got) == 0 {
			t.Fatal("init printed no to-do")
		}
		last := got[len(got)-1]
		if !strings.HasPrefix(last, "Label an issue "+l.Stage+":") {
			t.Errorf("the last step = %q, want it to label an issue %s", last, l.Stage)
		}
		if strings.Contains(last, "Write a plan under openspec") {
			t.Errorf("the last step still asks a person to write the plan: %q", last)
		}
		if !strings.Contains(out, "Label an issue "+l.Stage) {
			t.Errorf("the printed to-do does not end with the stage label:\n%s", out)
		}
		// The caller init wrote runs stage on that label.
		if caller := r.read(adopt.CallerPath); !strings.Contains(caller, "github.event.label.name == '"+l.Stage+"') && 'stage'") {
			t.Errorf("the caller does not run stage on %s", l.Stage)
		}
	})

	t.Run("labels say what they do", func(t *testing.T) {
		r := newInitRepo(t, map[string]string{"go.mod": goMod})
		r.run()
		have := r.labels()
		for name, words := range map[string][]string{
			l.Stage:      {"write a plan", "draft PR"},
			l.Implement:  {"plan", "PR for review"},
			l.NeedsInput: {"question"},
			l.Stop:       {"stops"},
		} {
			d, ok := have[name]
			if !ok {
				t.Errorf("label %s not created", name)
				continue
			}
			for _, w := range words {
				if !strings.Contains(d, w) {
					t.Errorf("label %s: description %q does not say %q", name, d, w)
				}
			}
			if len(d) > 100 {
				t.Errorf("label %s: description is %d characters, over GitHub's 100", name, len(d))
			}
		}
		if strings.Contains(have[l.Stage], "goes back") {
			t.Errorf("the stage label still reads as a return: %q", have[l.Stage])
		}
	})

	ci := func(on string) string {
		return "name: ci\non:\n" + on + "permissions: {}\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ok\n"
	}
	for _, tc := range []struct {
		name      string
		files     map[string]string
		want      []string // implement.ci_workflows
		todo      []string // what the CI step says
		todoNot   []string
		configNot string
	}{
		{
			name: "a dispatchable CI workflow is named",
			files: map[string]string{
				".github/workflows/ci.yml":      ci("  push:\n  pull_request:\n  workflow_dispatch:\n"),
				".github/workflows/lint.yaml":   ci("  pull_request:\n"),
				".github/workflows/release.yml": ci("  workflow_dispatch:\n"),
			},
			want: []string{"ci.yml"},
			todo: []string{"init named ci.yml", "implement.ci_workflows", "ROADMAP_PUSH_TOKEN", "GitHub App", "CI runs twice"},
		},
		{
			name:  "the list form of on:",
			files: map[string]string{".github/workflows/test.yml": ci("  [push, workflow_dispatch]\n")},
			want:  []string{"test.yml"},
			todo:  []string{"init named test.yml"},
		},
		{
			name:      "CI with no dispatch",
			files:     map[string]string{".github/workflows/ci.yml": ci("  push:\n")},
			todo:      []string{"add workflow_dispatch to the on: of ci.yml", "ROADMAP_PUSH_TOKEN", "GitHub App", "implement.ready_without_ci: true"},
			todoNot:   []string{"init named"},
			configNot: "ci_workflows",
		},
		{
			name:      "no CI at all",
			todo:      []string{"no CI workflow", "implement.ready_without_ci: true", "ROADMAP_PUSH_TOKEN"},
			configNot: "ci_workflows",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"go.mod": goMod}
			for k, v := range tc.files {
				files[k] = v
			}
			r := newInitRepo(t, files)
			got := r.json()
			cfg, err := config.LoadExplicit(filepath.Join(r.dir, adopt.ConfigPath))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, cfg.Implement.CIWorkflows); diff != "" {
				t.Errorf("implement.ci_workflows (-want +got):\n%s", diff)
			}
			if tc.configNot != "" && strings.Contains(r.read(adopt.ConfigPath), tc.configNot) {
				t.Errorf("the configuration mentions %s:\n%s", tc.configNot, r.read(adopt.ConfigPath))
			}
			i := slices.IndexFunc(got.ToDo, func(s string) bool { return strings.HasPrefix(s, "CI on roadmap's pushes") })
			if i < 0 {
				t.Fatalf("the to-do has no CI step:\n%s", strings.Join(got.ToDo, "\n"))
			}
			if i != len(got.ToDo)-2 {
				t.Errorf("the CI step is step %d of %d, want it just before the stage label", i+1, len(got.ToDo))
			}
			// Short steps, the choices a list (issue 50: it was one sentence
			// of up to 790 characters).
			choices := 0
			for _, l := range strings.Split(got.ToDo[i], "\n") {
				// Printed under "  N. ", each line stays under 100 characters.
				if n := utf8.RuneCountInString(l); n > 94 {
					t.Errorf("a line of the CI step has %d characters, want at most 94: %q", n, l)
				}
				if strings.HasPrefix(l, "- ") {
					choices++
				}
			}
			if choices < 2 {
				t.Errorf("the CI step lists %d choices, want them as a list of at least two:\n%s", choices, got.ToDo[i])
			}
			for _, w := range tc.todo {
				if !strings.Contains(got.ToDo[i], w) {
					t.Errorf("the CI step does not say %q: %s", w, got.ToDo[i])
				}
			}
			for _, w := range tc.todoNot {
				if strings.Contains(got.ToDo[i], w) {
					t.Errorf("the CI step says %q: %s", w, got.ToDo[i])
				}
			}
			lintInit(t, r.dir)
		})
	}
}

// TestInitJSON: --json prints one object with stable field names on stdout,
// the progress lines on stderr; a second run reports every file unchanged
// and every label there, changes nothing and sends no write.
func TestInitJSON(t *testing.T) {
	r := newInitRepo(t, map[string]string{"package.json": `{"name":"widgets"}`, "package-lock.json": "{}"})
	l := config.Default().Labels
	wantLabels := []string{l.Stage, l.Implement, l.NeedsInput, l.Stopped, l.Stop, l.Waiting, l.Blocked, l.Tracker, dashboard.Label, claims.Label, claims.WaitedLabel}

	t.Run("dry run", func(t *testing.T) {
		labelsBefore := len(r.labels())
		got := r.json("--dry-run")
		if !got.DryRun || !got.Changed {
			t.Errorf("dry_run %v, changed %v; want both true", got.DryRun, got.Changed)
		}
		for _, f := range got.Files {
			if f.Status != adopt.Written {
				t.Errorf("--dry-run: %s is %q, want %q (what a run would do)", f.Path, f.Status, adopt.Written)
			}
			if _, err := os.Stat(filepath.Join(r.dir, f.Path)); err == nil {
				t.Errorf("--dry-run wrote %s", f.Path)
			}
		}
		if len(r.labels()) != labelsBefore {
			t.Errorf("--dry-run created labels: %v", r.labels())
		}
	})

	t.Run("first run", func(t *testing.T) {
		out, errs := r.run("--json")
		if !strings.Contains(errs, "write "+adopt.CallerPath) {
			t.Errorf("--json: the progress lines are not on stderr:\n%s", errs)
		}
		if strings.Contains(out, "roadmap init:") {
			t.Errorf("--json: stdout holds the progress lines:\n%s", out)
		}
		var first initJSON
		if err := json.Unmarshal([]byte(out), &first); err != nil {
			t.Fatal(err)
		}
		if first.Repository != "acme/widgets" || first.DryRun || !first.Changed || first.Settings.DefaultBranch != "main" {
			t.Errorf("repository %q, dry_run %v, changed %v, default_branch %q", first.Repository, first.DryRun, first.Changed, first.Settings.DefaultBranch)
		}
		if first.Language.Name != "node" || first.Language.Manager != "npm" {
			t.Errorf("language = %+v, want node with npm", first.Language)
		}
		var paths []string
		for _, f := range first.Files {
			paths = append(paths, f.Path)
			if f.Status != adopt.Written {
				t.Errorf("%s is %q, want %q", f.Path, f.Status, adopt.Written)
			}
		}
		if diff := cmp.Diff(initWrites, paths); diff != "" {
			t.Errorf("files (-want +got):\n%s", diff)
		}
		var names []string
		for _, lb := range first.Labels {
			names = append(names, lb.Name)
			if lb.Status != adopt.Created || lb.Description == "" {
				t.Errorf("label %s: status %q, description %q; want created, with a description", lb.Name, lb.Status, lb.Description)
			}
		}
		if diff := cmp.Diff(wantLabels, names); diff != "" {
			t.Errorf("labels (-want +got):\n%s", diff)
		}
		if len(first.ToDo) < 3 || !strings.HasPrefix(first.ToDo[len(first.ToDo)-1], "Label an issue "+l.Stage) {
			t.Errorf("todo = %q, want it to end with the stage label", first.ToDo)
		}
	})

	t.Run("the object is the documented one", func(t *testing.T) {
		doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
		if err != nil {
			t.Fatal(err)
		}
		sec := string(doc)
		if i := strings.Index(sec, "## `roadmap init`"); i >= 0 {
			sec = sec[i:]
		} else {
			t.Fatal("docs/cli.md has no `roadmap init` section")
		}
		start := strings.Index(sec, "```json\n")
		end := strings.Index(sec[start+1:], "\n```")
		if start < 0 || end < 0 {
			t.Fatal("docs/cli.md's `roadmap init` section has no JSON example")
		}
		example := sec[start+len("```json\n") : start+1+end]
		example = strings.ReplaceAll(example, "…", "")
		var documented map[string]any
		if err := json.Unmarshal([]byte(example), &documented); err != nil {
			t.Fatalf("docs/cli.md's init JSON example does not parse: %v\n%s", err, example)
		}
		out, _ := r.run("--json", "--dry-run")
		var printed map[string]any
		if err := json.Unmarshal([]byte(out), &printed); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(jsonShape(documented), jsonShape(printed)); diff != "" {
			t.Errorf("the fields roadmap init --json prints and the ones docs/cli.md documents differ (-documented +printed):\n%s", diff)
		}
	})

	t.Run("second run changes nothing", func(t *testing.T) {
		before := map[string]string{}
		for _, p := range initWrites {
			before[p] = r.read(p)
		}
		r.fake.ResetLog()
		got := r.json()
		if got.Changed {
			t.Error("a second run says it changed something")
		}
		for _, f := range got.Files {
			if f.Status != adopt.Unchanged {
				t.Errorf("a second run: %s is %q, want %q", f.Path, f.Status, adopt.Unchanged)
			}
		}
		for _, lb := range got.Labels {
			if lb.Status != adopt.Exists {
				t.Errorf("a second run: label %s is %q, want %q", lb.Name, lb.Status, adopt.Exists)
			}
		}
		for _, s := range got.ToDo {
			if strings.HasPrefix(s, "Commit and push") {
				t.Errorf("a second run asks to commit files it did not write: %q", s)
			}
		}
		for _, req := range r.fake.Requests() {
			if req.Method != "GET" {
				t.Errorf("a second run sent %s %s", req.Method, req.Path)
			}
		}
		for _, p := range initWrites {
			if r.read(p) != before[p] {
				t.Errorf("a second run changed %s", p)
			}
		}
	})
}

// jsonShape is a decoded JSON value's field names, nested: what a script
// reading it depends on, without the values.
func jsonShape(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			out[k] = jsonShape(x)
		}
		return out
	case []any:
		// A list's shape is its objects' fields; a list of strings (or an
		// empty one) has none.
		if len(v) == 0 {
			return []any{}
		}
		if _, ok := v[0].(map[string]any); !ok {
			return []any{}
		}
		return []any{jsonShape(v[0])}
	default:
		return nil
	}
}

// checkSetupAction: with want, init wrote the project's setup as a
// composite action holding the setup steps (those not about the checks
// workflow itself), every run step with its shell, and the caller passes it
// as the setup input of both jobs that call roadmap.yml; without, neither.
func checkSetupAction(t *testing.T, r *initRepo, want bool, steps []string) {
	t.Helper()
	caller := r.read(adopt.CallerPath)
	if n := strings.Count(caller, "setup: "+adopt.SetupDir+"\n"); want && n != 2 || !want && n != 0 {
		t.Errorf("the caller passes setup: %s %d times, want %d:\n%s", adopt.SetupDir, n, map[bool]int{true: 2}[want], caller)
	}
	b, err := os.ReadFile(filepath.Join(r.dir, adopt.SetupPath))
	if !want {
		if err == nil {
			t.Errorf("init wrote %s for a language with no setup steps", adopt.SetupPath)
		}
		return
	}
	if err != nil {
		t.Fatalf("init wrote no %s: %v", adopt.SetupPath, err)
	}
	var action struct {
		Runs struct {
			Using string `yaml:"using"`
			Steps []struct {
				Uses  string `yaml:"uses"`
				Run   string `yaml:"run"`
				Shell string `yaml:"shell"`
			} `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(b, &action); err != nil {
		t.Fatalf("%s does not parse: %v\n%s", adopt.SetupPath, err, b)
	}
	if action.Runs.Using != "composite" || len(action.Runs.Steps) == 0 {
		t.Errorf("%s is not a composite action with steps:\n%s", adopt.SetupPath, b)
	}
	for i, s := range action.Runs.Steps {
		if s.Run != "" && s.Shell != "bash" {
			t.Errorf("%s: step %d runs %q with no shell (a composite action's run step needs one)", adopt.SetupPath, i, s.Run)
		}
		if s.Run == "" && s.Uses == "" {
			t.Errorf("%s: step %d neither runs nor uses anything", adopt.SetupPath, i)
		}
	}
	for _, s := range steps {
		if strings.HasPrefix(s, "uses: roadmap-dev/roadmap/") {
			continue // the checks workflow's own step
		}
		if !strings.Contains(string(b), s) {
			t.Errorf("%s lacks the setup step %q:\n%s", adopt.SetupPath, s, b)
		}
	}
}
