package demo

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/world"
)

// What roadmap try plays: the demo's life of an item on a user's own
// checkout. The checkout is read with read-only git commands (rev-parse,
// ls-tree, cat-file), its committed tree at HEAD becomes main on the
// world's bare remote, and the item runs there; nothing is written to the
// checkout, its .git or its remotes.

// ConfigPath is where a repository keeps roadmap's configuration.
const ConfigPath = ".github/roadmap.yml"

// ModelsTokenEnv is the variable a try's Jobs read a GitHub Models key
// from: their GITHUB_TOKEN is the fake GitHub's, so a model that reads its
// key from GITHUB_TOKEN reads it from here in the Job's configuration.
const ModelsTokenEnv = "ROADMAP_TRY_MODELS_TOKEN"

// TryCI is the description of the status try gives the work branch's head
// in place of the repository's CI, which it does not run.
const TryCI = "not run: roadmap try does not run this repository's CI (the Job's own checks ran locally)"

// Checkout is the committed tree at HEAD of a user's git checkout.
type Checkout struct {
	// Dir is the work tree's top; Head the commit copied.
	Dir, Head string
	// Files are the regular files (slash path to content), Executables
	// those of them with the executable bit, Symlinks the links (path to
	// target). Submodules are left out: Submodules counts them.
	Files       map[string]string
	Executables []string
	Symlinks    map[string]string
	Submodules  int
}

// ReadCheckout reads the committed tree at HEAD of the git checkout that
// holds dir. It runs only git commands that read (rev-parse, ls-tree,
// cat-file), with optional locks off, so the checkout's index, refs,
// configuration and work tree are left as they were.
func ReadCheckout(ctx context.Context, dir string) (*Checkout, error) {
	out, err := readGit(ctx, dir, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%s is not a git checkout (pass -C DIR): %w", dir, err)
	}
	top := strings.TrimSpace(string(out))
	head, err := readGit(ctx, top, nil, "rev-parse", "--verify", "-q", "HEAD^{commit}")
	if err != nil {
		return nil, fmt.Errorf("%s has no commit at HEAD: commit what roadmap try should copy", top)
	}
	c := &Checkout{Dir: top, Head: strings.TrimSpace(string(head)), Files: map[string]string{}, Symlinks: map[string]string{}}
	tree, err := readGit(ctx, top, nil, "ls-tree", "-r", "-z", "--full-tree", c.Head)
	if err != nil {
		return nil, err
	}
	type entry struct{ mode, sha, path string }
	var blobs []entry
	for _, rec := range strings.Split(string(tree), "\x00") {
		meta, path, ok := strings.Cut(rec, "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta) // mode type sha
		if len(f) != 3 {
			return nil, fmt.Errorf("git ls-tree: unexpected line %q", rec)
		}
		if f[1] == "commit" {
			c.Submodules++
			continue
		}
		blobs = append(blobs, entry{f[0], f[2], path})
	}
	var in bytes.Buffer
	for _, b := range blobs {
		in.WriteString(b.sha + "\n")
	}
	out, err = readGit(ctx, top, &in, "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	r := bufio.NewReader(bytes.NewReader(out))
	for _, b := range blobs {
		data, err := readBatchObject(r)
		if err != nil {
			return nil, fmt.Errorf("git cat-file %s (%s): %w", b.sha, b.path, err)
		}
		switch b.mode {
		case "120000":
			c.Symlinks[b.path] = string(data)
		case "100755":
			c.Executables = append(c.Executables, b.path)
			c.Files[b.path] = string(data)
		default:
			c.Files[b.path] = string(data)
		}
	}
	return c, nil
}

// readBatchObject reads one object of `git cat-file --batch`'s output:
// "<sha> <type> <size>\n<content>\n".
func readBatchObject(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	f := strings.Fields(line)
	if len(f) != 3 {
		return nil, fmt.Errorf("unexpected header %q", strings.TrimSpace(line))
	}
	size, err := strconv.Atoi(f[2])
	if err != nil {
		return nil, fmt.Errorf("unexpected header %q", strings.TrimSpace(line))
	}
	data := make([]byte, size+1)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, err
	}
	return data[:size], nil
}

// readGit runs a git command that only reads, in dir, and returns its
// stdout. Optional locks are off (GIT_OPTIONAL_LOCKS=0), so git does not
// refresh the checkout's index on its own.
func readGit(ctx context.Context, dir string, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(world.GitEnv(), "GIT_OPTIONAL_LOCKS=0")
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// Try is an item of roadmap try: the user's checkout, the issue, and the
// model (a replay of recorded exchanges, or the configuration's own).
type Try struct {
	Checkout *Checkout
	// Owner and Repo name the repository the fake GitHub serves (the
	// real one's names when known; nothing is sent there).
	Owner, Repo string
	// Title, Body and Author are the issue as filed.
	Title, Body, Author string
	// Replay, when set, is the recorded exchanges the model server answers
	// with, in place of the configuration's models.
	Replay *llm.Replay
}

// Config is the repository's configuration at HEAD (.github/roadmap.yml,
// parsed and checked), the default when it has none.
func (t Try) Config() (*config.Config, error) {
	data, ok := t.Checkout.Files[ConfigPath]
	if !ok {
		return config.Default(), nil
	}
	return config.Parse(ConfigPath, []byte(data))
}

// JobConfig is the repository's configuration with only what the local
// world needs changed: a short poll of the PR's checks, the base branch
// the world's remote has (main), no CI workflow to dispatch (the world has
// none: try plays the CI's status), and, when replaying, the replay model
// at modelURL in place of the models (the review and the verifier then
// take it too). A model that reads its key from GITHUB_TOKEN (GitHub
// Models) reads it from ModelsTokenEnv: the Job's GITHUB_TOKEN is the
// fake's.
func (t Try) JobConfig(modelURL string) ([]byte, error) {
	doc := map[string]any{}
	if data, ok := t.Checkout.Files[ConfigPath]; ok {
		if err := yaml.Unmarshal([]byte(data), &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", ConfigPath, err)
		}
		if doc == nil {
			doc = map[string]any{}
		}
	}
	impl := section(doc, "implement")
	impl["poll_interval"] = "1s"
	impl["base_branch"] = "main"
	impl["ci_workflows"] = []string{}
	if t.Replay != nil {
		doc["models"] = []map[string]any{{"provider": "openai-compatible", "name": "replay", "base_url": modelURL}}
		section(doc, "prices")["replay"] = map[string]float64{"input": 0.15, "output": 0.60}
		delete(section(doc, "review"), "model")
		delete(section(doc, "stage"), "verifier")
	} else {
		cfg, err := t.Config()
		if err != nil {
			return nil, err
		}
		models := make([]map[string]any, 0, len(cfg.Models))
		for _, m := range cfg.Models {
			key := ModelKeyEnv(m)
			if key == "GITHUB_TOKEN" {
				key = ModelsTokenEnv
			}
			row := map[string]any{"provider": m.Provider, "name": m.Name}
			for k, v := range map[string]string{"base_url": m.BaseURL, "api_key_env": key, "fixtures": m.Fixtures} {
				if v != "" {
					row[k] = v
				}
			}
			for k, v := range map[string]int{"input_window": m.InputWindow, "max_output": m.MaxOutput} {
				if v != 0 {
					row[k] = v
				}
			}
			models = append(models, row)
		}
		doc["models"] = models
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	out = append([]byte("# roadmap try: the repository's "+ConfigPath+" with what the local world needs changed.\n"), out...)
	if _, err := config.Parse("the Job's configuration", out); err != nil {
		return nil, err
	}
	return out, nil
}

// ModelKeyEnv is the variable model m reads its key from: its api_key_env,
// else its provider's (internal/llm's defaults); "" when it needs none.
func ModelKeyEnv(m config.Model) string {
	if m.APIKeyEnv != "" {
		return m.APIKeyEnv
	}
	switch m.Provider {
	case "", "github-models":
		return "GITHUB_TOKEN"
	case "openai":
		return "OPENAI_API_KEY"
	case "anthropic":
		return "ANTHROPIC_API_KEY"
	}
	return ""
}

// section is doc's mapping under key, made when missing.
func section(doc map[string]any, key string) map[string]any {
	if m, ok := doc[key].(map[string]any); ok {
		return m
	}
	m := map[string]any{}
	doc[key] = m
	return m
}

// NeedsModelsToken reports whether a model of the configuration reads its
// key from GITHUB_TOKEN (GitHub Models): the Jobs then need ModelsTokenEnv.
func (t Try) NeedsModelsToken() bool {
	if t.Replay != nil {
		return false
	}
	cfg, err := t.Config()
	if err != nil {
		return false
	}
	for _, m := range cfg.Models {
		if ModelKeyEnv(m) == "GITHUB_TOKEN" {
			return true
		}
	}
	return false
}

// World is Options.World for the item: the checkout's tree on main of the
// bare remote, the issue labelled for stage with no plan, the replay model
// when there is one, the Job's configuration JobConfig's, and a CI status
// that says it was not run (TryCI).
func (t Try) World(ctx context.Context, dir string, latency time.Duration) (*World, error) {
	cfg, err := t.Config()
	if err != nil {
		return nil, err
	}
	author := t.Author
	if author == "" {
		author = "maintainer"
	}
	issue := &githubfake.Issue{Title: t.Title, Body: t.Body, Author: author, Labels: []string{cfg.Labels.Stage}}
	c := t.Checkout
	w, err := NewWorldFrom(world.Options{Dir: dir, Owner: t.Owner, Repo: t.Repo, Token: Token, PushToken: PushToken,
		Files: c.Files, Executables: c.Executables, Symlinks: c.Symlinks,
		SeedMessage: "roadmap try: the committed tree of " + c.Head, Issue: issue,
		Replay: t.Replay, ModelLatency: latency}, Sample{Title: t.Title, CI: TryCI})
	if err != nil {
		return nil, err
	}
	w.config = func(w *World) ([]byte, error) { return t.JobConfig(w.ModelURL()) }
	return w, nil
}
