package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/tracker"
)

// trackerOptions are `roadmap tracker status`'s arguments, parsed.
type trackerOptions struct {
	Issue int
	JSON  bool
}

// runTrackerStatus is `roadmap tracker status ISSUE [-R OWNER/REPO]
// [--json]`: is the tracker complete? The check is internal/tracker's; this
// file reads the command line and names the exit: 0 complete, 1 while a
// child is open (or the issue has no children), 2 on bad input (an issue
// GitHub does not have included), 3 when GitHub fails, 4 without a login.
func runTrackerStatus(ctx context.Context, env *Env, args []string) int {
	return trackerCmd(ctx, env.factory(), args, trackerRun)
}

// trackerCmd parses tracker status's arguments into its options, then calls runF.
func trackerCmd(ctx context.Context, f *Factory, args []string, runF func(context.Context, *Factory, *trackerOptions) int) int {
	env, o := f.env, &trackerOptions{}
	fs := newFlags(env, "tracker status")
	fs.BoolVar(&o.JSON, "json", false, "print one JSON object")
	repoFlag(fs, env)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	var ok bool
	if o.Issue, ok = issueArg(env, fs.Args(), "usage: roadmap tracker status ISSUE [-R OWNER/REPO] [--json]"); !ok {
		return ExitUsage
	}
	return runF(ctx, f, o)
}

// trackerRun checks the tracker and prints what it found.
func trackerRun(ctx context.Context, f *Factory, o *trackerOptions) int {
	env := f.env
	gh, err := f.GitHub()
	if err != nil {
		env.Errorf("%v", err)
		return ExitUsage
	}
	masker := f.Masker()
	res, err := tracker.Check(ctx, gh, o.Issue)
	if err != nil {
		env.Errorf("%s", masker.Mask(err.Error()))
		if errors.Is(err, github.ErrNotFound) {
			return ExitUsage
		}
		return ExitInternal
	}
	// Titles are anyone's text: the output passes the masker, so a token
	// pasted into one never reaches stdout.
	var out bytes.Buffer
	if o.JSON {
		enc := json.NewEncoder(&out)
		enc.SetIndent("", "  ")
		err = enc.Encode(res)
	} else {
		err = tracker.Print(&out, res)
	}
	if err == nil {
		_, err = io.WriteString(env.Stdout, masker.Mask(out.String()))
	}
	if err != nil {
		env.Errorf("write: %v", err)
		return ExitInternal
	}
	if !res.Complete {
		return ExitFindings
	}
	return ExitOK
}
