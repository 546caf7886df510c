package failure

import (
	"errors"
	"strings"
	"testing"
)

// TestGitOutOfDiskspace: git says a full disk in words of its own ("write
// error. Out of diskspace", not ENOSPC's), in an error from a git command
// of the Job and in a log; both are the machine's full disk, which a fresh
// runner continues, not an unknown stop.
func TestGitOutOfDiskspace(t *testing.T) {
	const git = "fatal: sha1 file '/home/runner/work/app/app/.git/index.lock' write error. Out of diskspace"
	err := errors.New("undo the agent's changes to the plan: status: git status --porcelain=v1 -z: exit status 128: " + git)
	if c := ClassifyError(err); c != Killed {
		t.Errorf("ClassifyError = %s, want killed", c)
	}
	for _, in := range []Input{{Err: err}, {Log: strings.NewReader(git + "\n##[error]Process completed with exit code 128.\n")}} {
		if v := Classify(in); v.Class != Killed || v.Reason != ReasonDiskFull {
			t.Errorf("Classify(%+v) = %s/%s (%q), want killed/disk_full", in, v.Class, v.Reason, v.Evidence)
		}
	}
}
