package github

import (
	"testing"
	"time"
)

// TestTimeout: ROADMAP_GITHUB_TIMEOUT bounds each request; unset is the
// default, and a value a person mistyped is an error that names the
// variable, never a silent default.
func TestTimeout(t *testing.T) {
	for in, want := range map[string]time.Duration{"": DefaultTimeout, " ": DefaultTimeout, "30s": 30 * time.Second, "2m": 2 * time.Minute, "1s": time.Second} {
		if got, err := Timeout(in); err != nil || got != want {
			t.Errorf("Timeout(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"30", "0s", "500ms", "11m", "-5s", "soon"} {
		if got, err := Timeout(in); err == nil {
			t.Errorf("Timeout(%q) = %v, want an error", in, got)
		}
	}
}
