package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/tracker"
)

// runTrackerStatus is `roadmap tracker status ISSUE [-R OWNER/REPO]
// [--json]`: is the tracker complete? The check is internal/tracker's; this
// file reads the command line and names the exit: 0 complete, 1 while a
// child is open (or the issue has no children), 2 on bad input (an issue
// GitHub does not have included), 3 when GitHub fails, 4 without a login.
func runTrackerStatus(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "tracker status")
	asJSON := fs.Bool("json", false, "print one JSON object")
	repoFlag(fs, env)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	pos := fs.Args()
	if len(pos) != 1 {
		env.Errorf("usage: roadmap tracker status ISSUE [-R OWNER/REPO] [--json]")
		return ExitUsage
	}
	n, err := strconv.Atoi(strings.TrimPrefix(pos[0], "#"))
	if err != nil || n <= 0 {
		env.Errorf("%q is not an issue number", pos[0])
		return ExitUsage
	}
	masker := env.masker()
	gh, err := env.gitHubClient(masker, time.Time{})
	if err != nil {
		env.Errorf("%v", err)
		return ExitUsage
	}
	res, err := tracker.Check(ctx, gh, n)
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
	if *asJSON {
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
