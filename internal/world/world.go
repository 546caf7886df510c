package world

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
)

// Options say how a world differs from another. Dir, Owner, Repo and Token
// are required; everything else has a plain default.
type Options struct {
	// Dir holds the world: the bare remote (remote.git), the seed clone
	// (seed) and every workspace.
	Dir string
	// Owner and Repo name the one repository the fake serves; Token is the
	// only token it accepts (the fake's own: it opens nothing real).
	Owner, Repo, Token string
	// PushToken, when set, is the token roadmap pushes with
	// (ROADMAP_PUSH_TOKEN), which the fake knows as a GitHub App's
	// installation token: GitHub starts CI on its pushes, so a world whose
	// test plays CI on roadmap's pushes (PassCI) has one. Without it the
	// pushes are GITHUB_TOKEN's, and a Job that finds no CI workflow to
	// dispatch says at once that no CI can run.
	PushToken string
	// Start, when set, starts the world on a manual clock (World.Clock) that
	// the fake and the GitHub clients read; zero runs on real time.
	Start time.Time
	// CommitDate, when set, dates every commit of the world's git
	// (GitEnvAt), so a replayed history has the same shas.
	CommitDate time.Time
	// Files are the sample repository, slash-separated path to content,
	// committed on main and pushed to the remote.
	Files map[string]string
	// Executables are paths of Files committed with the executable bit;
	// Symlinks, slash path to target, are committed as symbolic links (a
	// user's checkout has both: roadmap try copies it).
	Executables []string
	Symlinks    map[string]string
	// SeedMessage is the message of that commit (default "seed").
	SeedMessage string
	// Issue, when set, is filed on the fake; World.Issue is its number.
	Issue *githubfake.Issue
	// RecordComment, when set, is added to the issue as roadmap's identity:
	// the record comment an earlier phase left.
	RecordComment string
	// Replay, when set, is served as the OpenAI-compatible model at
	// World.ModelURL.
	Replay *llm.Replay
	// ModelLatency is added to every chat request the model server answers,
	// as a hosted model takes its time.
	ModelLatency time.Duration
	// OnModelRequest, when set, sees the body of every chat request before
	// the model server answers it.
	OnModelRequest func(body []byte)
	// GitHubTimeout bounds each request of a client from World.GitHub
	// (default 10 s).
	GitHubTimeout time.Duration
	// ModelPrice is what the replay model of a Job on the world (Setup) charges
	// per million tokens, so spend shows.
	ModelPrice llm.Price
	// NoGitUpkeep turns off git's housekeeping in the world: no `gc --auto`
	// after a push is received, no `maintenance run --auto` after a commit.
	// A test's repositories are a few commits that live for seconds, so the
	// housekeeping is two processes a push or a commit that no test looks
	// at. It applies to every git that runs with GitEnv (the world's and a
	// Job's on it, through Setup), as a runner's global git configuration
	// would.
	NoGitUpkeep bool
}

// PushLogin is the login of a world's push token: a GitHub App's bot.
const PushLogin = "roadmap-push[bot]"

// World is one item's surroundings, built by New; Close stops its servers.
type World struct {
	// Dir is Options.Dir; Remote is the bare remote in it, Seed the clone
	// that pushed main.
	Dir, Remote, Seed string
	Fake              *githubfake.Fake
	// Replay is what the model server answers from; a test may swap it
	// between Jobs.
	Replay *llm.Replay
	// Clock is the manual clock of Options.Start (nil on real time).
	Clock *githubfake.ManualClock
	// Masker hides the fake's token, as a Job's log must.
	Masker *redact.Masker
	// Issue is the number of Options.Issue (0 when none was filed).
	Issue int

	o                   Options
	env                 []string
	githubURL, modelURL string
	servers             []*http.Server
}

// New lays the world out under o.Dir and starts its servers: the sample
// repository becomes main on a bare remote, the fake GitHub serves on
// loopback, the issue and its record comment are filed, and the replay model
// serves when there is one.
func New(o Options) (_ *World, err error) {
	if o.Dir == "" || o.Owner == "" || o.Repo == "" || o.Token == "" {
		return nil, fmt.Errorf("a world needs a directory, an owner, a repository and a token")
	}
	if o.SeedMessage == "" {
		o.SeedMessage = "seed"
	}
	if o.GitHubTimeout == 0 {
		o.GitHubTimeout = 10 * time.Second
	}
	w := &World{Dir: o.Dir, Remote: filepath.Join(o.Dir, "remote.git"), Seed: filepath.Join(o.Dir, "seed"), Replay: o.Replay,
		Masker: redact.New(redact.Config{Secrets: []string{o.Token, o.PushToken}}), o: o, env: GitEnv()}
	if !o.CommitDate.IsZero() {
		w.env = GitEnvAt(o.CommitDate)
	}
	if o.NoGitUpkeep {
		if err := w.noUpkeep(); err != nil {
			return nil, err
		}
	}
	if err := w.seed(); err != nil {
		return nil, err
	}
	fo := githubfake.Options{Token: o.Token, Owner: o.Owner, Repo: o.Repo, GitRemote: w.Remote}
	if !o.Start.IsZero() {
		w.Clock = githubfake.NewManualClock(o.Start)
		fo.Clock = w.Clock
	}
	w.Fake = githubfake.New(fo)
	if o.PushToken != "" {
		w.Fake.AddIdentity(o.PushToken, githubfake.Identity{Login: PushLogin, Kind: githubfake.AppToken})
	}
	if o.Issue != nil {
		w.Issue = w.Fake.CreateIssue(*o.Issue)
		if o.RecordComment != "" {
			if _, err := w.Fake.AddComment(w.Issue, github.DefaultIdentity, o.RecordComment); err != nil {
				return nil, fmt.Errorf("add the record comment: %w", err)
			}
		}
	}
	defer func() {
		if err != nil {
			w.Close()
		}
	}()
	if w.githubURL, err = w.serve(w.Fake); err != nil {
		return nil, err
	}
	if o.Replay != nil {
		if w.modelURL, err = w.serve(http.HandlerFunc(w.model)); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// upkeepOff is the global git configuration of a world with NoGitUpkeep.
const upkeepOff = "[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n[receive]\n\tautogc = false\n"

// noUpkeep points the world's git at a global configuration that turns the
// housekeeping off (GIT_CONFIG_GLOBAL, the last of its name in the
// environment, wins over GitEnv's /dev/null).
func (w *World) noUpkeep() error {
	p := filepath.Join(w.Dir, "gitconfig")
	if err := os.MkdirAll(w.Dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(p, []byte(upkeepOff), 0o644); err != nil {
		return fmt.Errorf("write the world's git configuration: %w", err)
	}
	w.env = append(append([]string(nil), w.env...), "GIT_CONFIG_GLOBAL="+p)
	return nil
}

// seed makes the bare remote and pushes the sample repository to its main.
func (w *World) seed() error {
	if _, err := Git(w.env, w.Dir, "init", "-q", "--bare", "-b", "main", w.Remote); err != nil {
		return err
	}
	if err := os.MkdirAll(w.Seed, 0o755); err != nil {
		return err
	}
	if err := WriteFiles(w.Seed, w.o.Files); err != nil {
		return fmt.Errorf("write the sample repository: %w", err)
	}
	if err := w.modes(); err != nil {
		return fmt.Errorf("write the sample repository: %w", err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "--allow-empty", "-m", w.o.SeedMessage},
		{"remote", "add", "origin", w.Remote}, {"push", "-q", "origin", "main"}} {
		if _, err := Git(w.env, w.Seed, args...); err != nil {
			return err
		}
	}
	return nil
}

// modes sets the executable bit of Options.Executables and makes the links
// of Options.Symlinks in the seed clone.
func (w *World) modes() error {
	for _, name := range w.o.Executables {
		if err := os.Chmod(filepath.Join(w.Seed, filepath.FromSlash(name)), 0o755); err != nil {
			return err
		}
	}
	for name, target := range w.o.Symlinks {
		p := filepath.Join(w.Seed, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.Symlink(target, p); err != nil {
			return err
		}
	}
	return nil
}

// WriteFiles writes files (slash-separated path to content) under dir,
// making the directories they need.
func WriteFiles(dir string, files map[string]string) error {
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// serve answers h on a loopback port until Close. A plain http.Server, not
// httptest's: Close must not wait for a request still in flight (the demo
// kills a Job in the middle of its model call) nor print about it.
func (w *World) serve(h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("listen on loopback: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	w.servers = append(w.servers, srv)
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), nil
}

// Close stops the servers.
func (w *World) Close() {
	for _, s := range w.servers {
		s.Close()
	}
}

// Repository is the owner and name of the one repository the fake serves.
func (w *World) Repository() (owner, repo string) { return w.o.Owner, w.o.Repo }

// GitHubURL is the fake GitHub's base URL, without a trailing slash.
func (w *World) GitHubURL() string { return w.githubURL }

// ModelURL is the replay model's OpenAI-compatible base URL ("" when the
// world has no model server).
func (w *World) ModelURL() string {
	if w.modelURL == "" {
		return ""
	}
	return w.modelURL + "/v1"
}

// GitEnv is the environment the world's git runs with: GitEnv, or GitEnvAt
// when Options.CommitDate is set.
func (w *World) GitEnv() []string { return w.env }

// Branch is the issue's work branch, as roadmap names it.
func (w *World) Branch() string {
	if w.o.Issue == nil {
		return ""
	}
	return git.WorkBranch(w.Issue, w.o.Issue.Title)
}

// Workspace clones the remote into Dir/name, as a new runner would.
func (w *World) Workspace(name string) (string, error) {
	ws := filepath.Join(w.Dir, name)
	if _, err := Git(w.env, w.Dir, "clone", "-q", w.Remote, ws); err != nil {
		return "", err
	}
	return ws, nil
}

// RemoteHead is branch's sha on the remote ("" when it has none). The
// worlds' CI players ask it every tick (PassCI), so it reads the bare
// remote's ref files itself, as git does (a loose ref, else packed-refs),
// with no process; a remote in another ref format is asked through git.
func (w *World) RemoteHead(branch string) string {
	if branch == "" {
		return ""
	}
	ref := "refs/heads/" + branch
	if sha, ok := readRef(w.Remote, ref); ok {
		return sha
	}
	sha, err := Git(w.env, w.Remote, "rev-parse", "-q", "--verify", ref)
	if err != nil {
		return ""
	}
	return sha
}

// readRef reads ref of the files-backend repository gitDir: its loose file
// (git replaces it by a rename, so a read sees the old or the new sha),
// else its line in packed-refs. ok is false when the answer needs git: a
// symbolic ref, an unreadable file, another ref format.
func readRef(gitDir, ref string) (sha string, ok bool) {
	if _, err := os.Stat(filepath.Join(gitDir, "reftable")); err == nil {
		return "", false
	}
	data, err := os.ReadFile(filepath.Join(gitDir, filepath.FromSlash(ref)))
	switch {
	case err == nil:
		sha = strings.TrimSpace(string(data))
		return sha, isSHA(sha)
	case !errors.Is(err, fs.ErrNotExist):
		return "", false
	}
	packed, err := os.ReadFile(filepath.Join(gitDir, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", true
	} else if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(packed), "\n") {
		if s, name, found := strings.Cut(line, " "); found && name == ref && isSHA(s) {
			return s, true
		}
	}
	return "", true
}

func isSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// PassCI gives branch's head on the remote a passing status when it has no
// status yet, as the repository's CI would once the head is pushed.
func (w *World) PassCI(branch, description string) {
	if sha := w.RemoteHead(branch); sha != "" && len(w.Fake.Statuses(sha)) == 0 {
		w.Fake.AddStatus(sha, "ci/test", "success", description)
	}
}

// RecordComment is the issue's record comment as the fake holds it: the
// oldest comment by roadmap's identity with a record block.
func (w *World) RecordComment() (githubfake.Comment, bool) {
	for _, c := range w.Fake.Comments(w.Issue) {
		if c.Author == github.DefaultIdentity && record.HasBlock(c.Body) {
			return c, true
		}
	}
	return githubfake.Comment{}, false
}

// GitHub is a client of the fake, as a Job has one, over transport rt: the
// token masked, on the world's clock.
func (w *World) GitHub(rt http.RoundTripper) (*github.Client, error) {
	o := github.Options{BaseURL: w.githubURL + "/", Token: w.o.Token, Owner: w.o.Owner, Repo: w.o.Repo, Masker: w.Masker,
		HTTPClient: &http.Client{Timeout: w.o.GitHubTimeout, Transport: rt}}
	if w.Clock != nil {
		o.Clock = w.Clock
	}
	return github.New(o)
}
