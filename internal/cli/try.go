package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/demo"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
	txt "github.com/roadmap-dev/roadmap/internal/text"
)

// tryOptions are `roadmap try`'s flags, parsed.
type tryOptions struct {
	Dir       string // the user's checkout
	IssueFile string
	Issue     int
	Replay    string
	Record    string
	Keep      string
	JSON      bool
	Verbose   bool
}

// runTry is `roadmap try`: the demo's life of an item (internal/demo) on
// the user's own checkout, against the fake GitHub and a scratch bare
// remote. The checkout is only read; the issue may be read from GitHub
// (GET only), with a token that stays in this process.
func runTry(ctx context.Context, env *Env, args []string) int {
	return tryCmd(ctx, env.factory(), args, tryVerbRun)
}

// tryCmd parses try's flags into its options, then calls runF.
func tryCmd(ctx context.Context, f *Factory, args []string, runF func(context.Context, *Factory, *tryOptions) int) int {
	env, o := f.env, &tryOptions{}
	fs := newFlags(env, "try")
	fs.StringVarP(&o.Dir, "workdir", "C", ".", "the repository checkout `DIR` whose committed tree at HEAD the item runs on (only read)")
	fs.StringVar(&o.IssueFile, "issue-file", "", "the issue as a `FILE`: its first line (or a \"# \" heading) is the title, the rest the body")
	fs.IntVar(&o.Issue, "issue", 0, "read issue `N` from GitHub (read-only) instead of --issue-file")
	repoFlagUsage(fs, env, "the repository `OWNER/REPO` --issue is read from (default: $GITHUB_REPOSITORY, else $GH_REPO, else the checkout's origin)")
	fs.StringVar(&o.Replay, "replay", "", "answer the model's calls from the recorded exchanges in `DIR` instead of the configured models")
	fs.StringVar(&o.Record, "record", "", "write every model exchange of the stage and implement Jobs to `DIR` as replay fixtures (replay them with --replay DIR)")
	fs.StringVar(&o.Keep, "keep", "", "leave everything (fake GitHub state, remote, workspaces, traces, the step summary, a timeline) in `DIR`")
	fs.BoolVar(&o.JSON, "json", false, "print the final state as one JSON object")
	fs.BoolVar(&o.Verbose, "verbose", false, "print the Jobs' and report's own log lines under the steps")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if pos := fs.Args(); len(pos) > 0 {
		env.Errorf("unexpected argument %q (see 'roadmap try --help')", pos[0])
		return ExitUsage
	}
	return runF(ctx, f, o)
}

// tryVerbRun reads the checkout, the issue and the model, then plays the
// item.
func tryVerbRun(ctx context.Context, f *Factory, o *tryOptions) int {
	env := f.env
	if code := tryPaths(env, o); code != ExitOK {
		return code
	}
	t, extraEnv, code := tryItem(ctx, f, o)
	if code != ExitOK {
		return code
	}
	self, err := os.Executable()
	if err != nil {
		env.Errorf("find the roadmap binary: %v", err)
		return ExitInternal
	}
	progress := env.Stdout
	if o.JSON {
		progress = env.Stderr
	}
	tryHeader(progress, t, o)
	start := time.Now()
	do := demo.Options{
		Dir:      o.Keep,
		Progress: progress,
		ExtraEnv: extraEnv,
		World:    t.World,
		NoKill:   true,
		Command: func(ctx context.Context, args []string) *exec.Cmd {
			if o.Record != "" && len(args) > 0 && (args[0] == "stage" || args[0] == "implement") {
				args = append(args, "--record", o.Record)
			}
			return exec.CommandContext(ctx, self, args...)
		},
	}
	if !o.JSON {
		do.Render = env.termRenderer()
	}
	if o.Verbose {
		do.Log = progress
	}
	kept, err := keepSummary(o.Keep, &do)
	if err != nil {
		env.Errorf("%v", err)
		return ExitInternal
	}
	sum, err := demo.Run(ctx, do)
	if err != nil {
		if o.Verbose {
			env.Errorf("%v", err)
		} else {
			env.Errorf("%v (the Jobs' own lines say more: run again with --verbose)", err)
		}
		return ExitInternal
	}
	if o.Keep == "" {
		sum.Dir = ""
	} else if code := tryTimeline(env, o.Keep, sum.Issue, &kept); code != ExitOK {
		return code
	}
	return tryOutput(env, t, sum, kept, o, start)
}

// tryPaths makes --keep and --record absolute (the Jobs and the world's
// git run in other folders) and refuses a --keep folder that is not empty.
func tryPaths(env *Env, o *tryOptions) int {
	for _, p := range []*string{&o.Keep, &o.Record} {
		if *p == "" {
			continue
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			env.Errorf("%s: %v", *p, err)
			return ExitUsage
		}
		*p = abs
	}
	if ents, err := os.ReadDir(o.Keep); o.Keep != "" && err == nil && len(ents) > 0 {
		env.Errorf("--keep %s is not empty: pass a new folder", o.Keep)
		return ExitUsage
	}
	return ExitOK
}

// tryHeader says what is about to be played, and what try does not do.
func tryHeader(w io.Writer, t demo.Try, o *tryOptions) {
	model := "the replay of " + o.Replay
	if t.Replay == nil {
		model = "the models of " + demo.ConfigPath
	}
	fmt.Fprintf(w, "roadmap try: issue %q on %s at %.12s, locally: a fake GitHub, a scratch remote, %s\n",
		t.Title, t.Checkout.Dir, t.Checkout.Head, model)
	fmt.Fprintln(w, "your checkout and its remotes are only read; your CI is not run (its status is played)")
	if t.Checkout.Submodules > 0 {
		fmt.Fprintf(w, "left out: %d submodule(s) (try copies the repository's own files)\n", t.Checkout.Submodules)
	}
}

// tryItem is the item o describes: the checkout, the issue, the model; and
// what the Jobs' environment needs beyond the world's (a GitHub Models key).
func tryItem(ctx context.Context, f *Factory, o *tryOptions) (demo.Try, []string, int) {
	env := f.env
	var t demo.Try
	switch {
	case o.IssueFile == "" && o.Issue == 0:
		env.Errorf("no issue: pass --issue-file FILE, or --issue N (with -R OWNER/REPO) to read one from GitHub")
		return t, nil, ExitUsage
	case o.IssueFile != "" && o.Issue != 0:
		env.Errorf("--issue-file and --issue name two issues: pass one")
		return t, nil, ExitUsage
	case o.Issue < 0:
		env.Errorf("--issue %d is not an issue number", o.Issue)
		return t, nil, ExitUsage
	}
	dir, err := filepath.Abs(o.Dir)
	if err == nil {
		t.Checkout, err = demo.ReadCheckout(ctx, dir)
	}
	if err != nil {
		env.Errorf("%v", err)
		return t, nil, ExitUsage
	}
	if _, err := t.Config(); err != nil {
		env.Errorf("the repository's configuration: %v", err)
		return t, nil, ExitUsage
	}
	t.Owner, t.Repo = "local", filepath.Base(t.Checkout.Dir)
	if o.IssueFile != "" {
		if t.Title, t.Body, err = readTryIssue(o.IssueFile); err != nil {
			env.Errorf("%v", err)
			return t, nil, ExitUsage
		}
	} else if code := tryFetchIssue(ctx, f, o.Issue, &t); code != ExitOK {
		return t, nil, code
	}
	extra, code := tryModel(f, o, &t)
	return t, extra, code
}

// tryFetchIssue reads issue n from GitHub: one GET, with the caller's
// token, which stays in this process (the Jobs get the fake's).
func tryFetchIssue(ctx context.Context, f *Factory, n int, t *demo.Try) int {
	env := f.env
	env.repoDir = t.Checkout.Dir
	gh, err := f.GitHub()
	if err != nil {
		env.Errorf("read issue %d: %v", n, err)
		return ExitUsage
	}
	is, err := gh.Issue(ctx, n)
	if err != nil {
		env.Errorf("read issue %d: %v", n, err)
		return exitFor(err)
	}
	if strings.TrimSpace(is.Title) == "" {
		env.Errorf("issue %d has no title", n)
		return ExitUsage
	}
	t.Title, t.Body, t.Author = is.Title, is.Body, is.Author
	if r, _ := env.repository(); r != "" {
		t.Owner, t.Repo, _ = strings.Cut(r, "/")
	}
	return ExitOK
}

// tryModel is the item's model: the replay of --replay, else the models
// the repository's configuration names, each with its key in the
// environment; an error saying what to pass when there is neither.
func tryModel(f *Factory, o *tryOptions, t *demo.Try) ([]string, int) {
	env := f.env
	if o.Replay != "" {
		r, err := llm.LoadReplay(o.Replay)
		if err != nil {
			env.Errorf("--replay %s: %v", o.Replay, err)
			return nil, ExitUsage
		}
		t.Replay = r
		return nil, ExitOK
	}
	if _, ok := t.Checkout.Files[demo.ConfigPath]; !ok {
		env.Errorf("no model: pass --replay DIR (recorded model exchanges), or commit a %s that names your models (roadmap init writes one)", demo.ConfigPath)
		return nil, ExitUsage
	}
	cfg, _ := t.Config()
	if len(cfg.Models) == 0 {
		env.Errorf("no model: %s names none; pass --replay DIR or name your models there", demo.ConfigPath)
		return nil, ExitUsage
	}
	var extra []string
	if t.NeedsModelsToken() {
		token := f.userToken()
		if token == "" {
			env.Errorf("no model key: %s names GitHub Models, whose key is a GitHub token: set GH_TOKEN or GITHUB_TOKEN, or pass --replay DIR", demo.ConfigPath)
			return nil, ExitUsage
		}
		extra = append(extra, demo.ModelsTokenEnv+"="+token)
	}
	// The keys go to the Jobs by name: this process's own environment has
	// lost every credential-looking variable (Protect), and a Job's is the
	// world's plus these.
	for _, m := range cfg.Models {
		key := demo.ModelKeyEnv(m)
		if key == "" || key == "GITHUB_TOKEN" {
			continue
		}
		v := env.Getenv(key)
		if v == "" {
			env.Errorf("no model key: the model %s (%s) reads its key from %s, which is unset; set it or pass --replay DIR", m.Name, m.Provider, key)
			return nil, ExitUsage
		}
		extra = append(extra, key+"="+v)
	}
	return extra, ExitOK
}

// readTryIssue reads an issue from path: its first non-empty line is the
// title (a "# " heading's mark dropped), the rest the body.
func readTryIssue(path string) (title, body string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", "", fmt.Errorf("--issue-file: %w", err)
	}
	text := strings.TrimLeft(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	first, rest, _ := strings.Cut(text, "\n")
	title = strings.TrimSpace(first)
	if h, ok := strings.CutPrefix(title, "#"); ok && !strings.HasPrefix(h, "#") {
		title = strings.TrimSpace(h)
	}
	if title == "" {
		return "", "", fmt.Errorf("--issue-file %s: no title: its first line (or a \"# \" heading) is the issue's title, the rest its body", path)
	}
	if len(title) > 256 {
		return "", "", fmt.Errorf("--issue-file %s: the title (its first line) is %d characters, GitHub allows 256: put the rest in the body, after a line break", path, len(title))
	}
	return title, strings.TrimSpace(rest) + "\n", nil
}

// tryTimeline writes the Jobs' timeline (Mermaid) from their traces in keep.
func tryTimeline(env *Env, keep string, issue int, kept *keptFiles) int {
	traces, err := readTraces(keep)
	if err == nil && len(traces) == 0 {
		err = errors.New("the Jobs left no trace")
	}
	if err != nil {
		env.Errorf("the timeline: %v", err)
		return ExitInternal
	}
	kept.Timeline = filepath.Join(keep, demoTimeline)
	md := timelineMarkdown(fmt.Sprintf("roadmap try, the Jobs of issue #%d", issue), traces)
	if err := os.WriteFile(kept.Timeline, []byte(md), 0o644); err != nil {
		env.Errorf("%v", err)
		return ExitInternal
	}
	return ExitOK
}

// trySummary is what `roadmap try --json` prints: the demo's summary, the
// kept files, and what was tried on.
type trySummary struct {
	*demo.Summary
	keptFiles
	Checkout string `json:"checkout"`
	Head     string `json:"head"`
	// CI says the repository's CI was not run: its status was played.
	CI string `json:"ci"`
}

// tryOutput prints the final state, and says whether the item ended ready.
func tryOutput(env *Env, t demo.Try, sum *demo.Summary, kept keptFiles, o *tryOptions, start time.Time) int {
	if o.JSON {
		if code := env.JSON(trySummary{sum, kept, t.Checkout.Dir, t.Checkout.Head, demo.TryCI}); code != ExitOK {
			return code
		}
	} else {
		w := env.Stdout
		fmt.Fprintf(w, "\nissue #%d → %s, PR #%d (on the fake GitHub), in %.1fs\n", sum.Issue, sum.Result, sum.PR, time.Since(start).Seconds())
		fmt.Fprintf(w, "stage: %s after %d round(s), plan %s\n", sum.Stage.Result, sum.Stage.Rounds, sum.Stage.Plan)
		fmt.Fprintf(w, "spend: %d tokens in, %d out, %s, %d model calls\n", sum.Spend.TokensIn, sum.Spend.TokensOut, txt.USD(sum.Spend.USD), sum.Spend.ModelCalls)
		fmt.Fprintf(w, "CI: %s\n", demo.TryCI)
		if o.Keep == "" {
			fmt.Fprintln(w, "to look at the PR, the branch and the traces, run it again with --keep DIR")
		} else {
			fmt.Fprintf(w, "\nkept in %s:\n", o.Keep)
			fmt.Fprintf(w, "  roadmap explain %d --state %s   what ran, what it cost\n", sum.Issue, o.Keep)
			fmt.Fprintf(w, "  git -C %s log --oneline --all   the branch and its commits\n", filepath.Join(o.Keep, "remote.git"))
			fmt.Fprintf(w, "  %s   the timeline of the Jobs\n", kept.Timeline)
		}
	}
	if sum.Result != record.ResultReady || t.Replay != nil && !sum.SpendMatches() {
		env.Errorf("the item ended %s (spend matches the replay: %v)", sum.Result, sum.SpendMatches())
		return ExitFindings
	}
	return ExitOK
}
