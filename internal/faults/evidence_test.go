package faults

import (
	"context"
	"strings"
	"testing"
)

// TestRecoveryNeedsEvidence: a recovery branch counts only from the event
// the product writes when it takes it. With the GitHub transport's retries
// off, the 5xx histories whose recovery is a retry must fail the suite; with
// them on, the same histories pass and count the branch. Of seed 1's 5xx
// histories it plays the cover (one of each recovery branch they reach, of
// each kind, chosen by a fixed key), not every one twice: the claim is about
// the branch, which the cover always holds.
func TestRecoveryNeedsEvidence(t *testing.T) {
	if testing.Short() {
		t.Skip("plays the 5xx histories twice over")
	}
	for _, noRetry := range []bool{true, false} {
		s, err := Run(context.Background(), Options{Seeds: 1, Only: "github_5xx", Dir: t.TempDir(), NoGitHubRetry: noRetry,
			Cover: true, Key: "TestRecoveryNeedsEvidence"})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		s.Print(&b)
		t.Logf("retries off %v:\n%s", noRetry, b.String())
		if s.Histories == 0 {
			t.Fatal("no 5xx history was played")
		}
		if noRetry {
			if len(s.Violations) == 0 {
				t.Errorf("with the retries off the suite found no violation; it must (the retry histories claim a branch nobody took)")
			}
			continue
		}
		if len(s.Violations) != 0 {
			t.Errorf("with the retries on: %d violations, want 0", len(s.Violations))
		}
		if s.Branches["retry"] == 0 {
			t.Errorf("with the retries on no history reached the retry branch: %v", s.Branches)
		}
	}
}
