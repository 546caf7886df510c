package adopt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/github"
)

// GitHub is what init asks of the API.
type GitHub interface {
	Repository(ctx context.Context) (github.Repository, error)
	WorkflowPermissions(ctx context.Context) (github.WorkflowPermissions, error)
	LabelNames(ctx context.Context) ([]string, error)
	CreateLabel(ctx context.Context, name, color, description string) error
}

// Options is one run of init.
type Options struct {
	// Dir is the repository's work tree.
	Dir    string
	GitHub GitHub
	// Repository is "owner/repo"; Server is the web root (https://github.com).
	Repository, Server string
	// Ref is what the written workflows pin roadmap's reusable workflows to
	// (a release tag, v1, or a commit SHA).
	Ref    string
	DryRun bool
	Out    io.Writer
}

// Result says what init did (or, dry, would do).
type Result struct {
	Written  []string // files written
	Kept     []string // files that exist with other content, left as they are
	Labels   []string // labels created
	ToDo     []string // what a person must still do, in order
	Changed  bool
	Settings Settings
}

// Settings is what init read of the repository's settings.
type Settings struct {
	DefaultBranch string
	// WorkflowDefault and CanApprove are "" and false when they could not
	// be read (the token lacks administration read); Read says which.
	WorkflowDefault string
	CanApprove      bool
	PermissionsRead bool
	Private         bool
}

// label is a label init creates; its name comes from the configuration's
// defaults (config.Default().Labels), the one place label names live.
type label struct{ name, color, description string }

func labels() []label {
	l := config.Default().Labels
	return []label{
		{l.Implement, "0e8a16", "roadmap: implement this issue"},
		{l.Stage, "1d76db", "roadmap: the plan goes back to stage"},
		{l.NeedsInput, "fbca04", "roadmap: a question waits for a person's answer"},
		{l.Stopped, "b60205", "roadmap: stopped; the stop comment says why"},
		{l.Stop, "5319e7", "roadmap: a person stops this item for good (/roadmap retry restarts it)"},
		{l.Waiting, "c5def5", "roadmap: waiting for the day's budget; roadmap wake dispatches it"},
	}
}

// Run sets the repository up.
func Run(ctx context.Context, o Options) (Result, error) {
	var res Result
	repo, err := o.GitHub.Repository(ctx)
	if err != nil {
		return res, err
	}
	res.Settings.DefaultBranch, res.Settings.Private = repo.DefaultBranch, repo.Private
	if wp, err := o.GitHub.WorkflowPermissions(ctx); err == nil {
		res.Settings.WorkflowDefault, res.Settings.CanApprove, res.Settings.PermissionsRead = wp.Default, wp.CanApprove, true
	} else {
		var auth *github.AuthError
		if !errors.As(err, &auth) && !errors.Is(err, github.ErrNotFound) {
			return res, err
		}
	}
	verb := func(s string) string {
		if o.DryRun {
			return "would " + s
		}
		return s
	}
	fmt.Fprintf(o.Out, "roadmap init: %s (default branch %s)\n", o.Repository, res.Settings.DefaultBranch)

	for _, f := range files(o.Ref, res.Settings.DefaultBranch) {
		path := filepath.Join(o.Dir, filepath.FromSlash(f.path))
		old, err := os.ReadFile(path)
		switch {
		case err == nil && bytes.Equal(old, []byte(f.text)):
			continue
		case err == nil:
			res.Kept = append(res.Kept, f.path)
			fmt.Fprintf(o.Out, "  keep %s: it exists with other content; compare it with `roadmap init --dry-run`\n", f.path)
			continue
		case !errors.Is(err, os.ErrNotExist):
			return res, fmt.Errorf("read %s: %w", f.path, err)
		}
		res.Written = append(res.Written, f.path)
		res.Changed = true
		fmt.Fprintf(o.Out, "  %s %s\n", verb("write"), f.path)
		if o.DryRun {
			for _, l := range strings.SplitAfter(strings.TrimSuffix(f.text, "\n"), "\n") {
				fmt.Fprintf(o.Out, "    | %s", strings.TrimSuffix(l, "\n")+"\n")
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return res, err
		}
		if err := os.WriteFile(path, []byte(f.text), 0o644); err != nil {
			return res, fmt.Errorf("write %s: %w", f.path, err)
		}
	}

	have, err := o.GitHub.LabelNames(ctx)
	if err != nil {
		return res, err
	}
	for _, l := range labels() {
		if slices.ContainsFunc(have, func(h string) bool { return strings.EqualFold(h, l.name) }) {
			continue
		}
		res.Labels = append(res.Labels, l.name)
		res.Changed = true
		fmt.Fprintf(o.Out, "  %s label %s\n", verb("create"), l.name)
		if !o.DryRun {
			if err := o.GitHub.CreateLabel(ctx, l.name, l.color, l.description); err != nil {
				return res, err
			}
		}
	}
	if !res.Changed {
		fmt.Fprintln(o.Out, "  nothing to change: the files and labels are in place")
	}

	res.ToDo = toDo(o, res)
	if len(res.ToDo) > 0 {
		fmt.Fprintln(o.Out, "\nWhat you must still do, in order:")
		for i, s := range res.ToDo {
			fmt.Fprintf(o.Out, "  %d. %s\n", i+1, s)
		}
	}
	return res, nil
}

// toDo lists, in order, what a person must still do.
func toDo(o Options, res Result) []string {
	settings := strings.TrimSuffix(o.Server, "/") + "/" + o.Repository + "/settings/actions"
	var out []string
	switch {
	case !res.Settings.PermissionsRead:
		out = append(out, "Check that \"Allow GitHub Actions to create and approve pull requests\" is on (the token could not read it): "+settings+" (Workflow permissions)")
	case !res.Settings.CanApprove:
		out = append(out, "Turn on \"Allow GitHub Actions to create and approve pull requests\", or roadmap cannot open its pull request: "+settings+" (Workflow permissions)")
	}
	if res.Settings.Private {
		out = append(out, "This repository is private: draft pull requests on private repositories need a paid plan (GitHub Pro, Team or Enterprise)")
	}
	if len(res.Written) > 0 {
		paths := strings.Join(res.Written, " ")
		if o.DryRun {
			out = append(out, "Run `roadmap init` without --dry-run, then commit and push "+paths+" to "+res.Settings.DefaultBranch)
		} else {
			out = append(out, "Commit and push the files to "+res.Settings.DefaultBranch+": git add "+paths+" && git commit -m 'Set up roadmap' && git push")
		}
	}
	if len(res.Kept) > 0 {
		out = append(out, "Compare the files init left as they are with what it would write: "+strings.Join(res.Kept, ", "))
	}
	out = append(out, "Write a plan under openspec/changes/<id>, then label an issue "+config.Default().Labels.Implement+" (docs/install.md, \"The plan\")")
	return out
}
