package claims_test

import (
	"path"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/claims"
)

// FuzzNormalise: a path a model wrote is either refused ("") or clean,
// repository-relative and inside the repository, and reading it again
// changes nothing.
func FuzzNormalise(f *testing.F) {
	for _, s := range []string{"internal/x/y.go", "./a/../b.txt", "../etc/passwd", "/abs", "a\\b", "a/./b/", " x.go ", "a\x00b", ".", "..", "a/../../b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := claims.Normalise(s)
		if n == "" {
			return
		}
		if path.Clean(n) != n || strings.HasPrefix(n, "/") || n == ".." || strings.HasPrefix(n, "../") || n == "." || strings.ContainsAny(n, "\\\x00\n") {
			t.Fatalf("Normalise(%q) = %q: not a clean path inside the repository", s, n)
		}
		if again := claims.Normalise(n); again != n {
			t.Fatalf("Normalise(%q) = %q, again %q", s, n, again)
		}
		u := claims.UnitOf(n)
		if u != n && u != path.Dir(n) {
			t.Fatalf("UnitOf(%q) = %q: neither the path nor its directory", n, u)
		}
		if !strings.HasPrefix(claims.Ref(u), claims.Namespace) || len(claims.Ref(u)) != len(claims.Namespace)+64 {
			t.Fatalf("Ref(%q) = %q", u, claims.Ref(u))
		}
	})
}

// FuzzParseNote: a note anyone can push is read whole or not at all, and a
// note roadmap writes reads back as written.
func FuzzParseNote(f *testing.F) {
	f.Add(`{"issue":3,"run_id":100,"job":1,"unit":"internal/x","since":"2026-11-29T09:00:00Z"}`)
	f.Add(`{"issue":-1}`)
	f.Add(`{"issue":3,"run_id":100,"job":1,"unit":"../x","since":"2026-11-29T09:00:00Z"}`)
	f.Add(`{"issue":3,"run_id":100,"job":1,"unit":"x","since":"2026-11-29T09:00:00Z","extra":1}`)
	f.Add("not json")
	f.Fuzz(func(t *testing.T, s string) {
		h, ok := claims.ParseNote(s)
		if !ok {
			if h != (claims.Holder{}) {
				t.Fatalf("ParseNote(%q) refused but returned %+v", s, h)
			}
			return
		}
		if h.Issue <= 0 || h.RunID < 0 || h.Job < 0 || h.Since.IsZero() || (h.Unit != "." && claims.Normalise(h.Unit) != h.Unit) {
			t.Fatalf("ParseNote(%q) accepted %+v", s, h)
		}
	})
}

func TestParseNoteReadsWhatClaimWrites(t *testing.T) {
	h, ok := claims.ParseNote(`{"issue":3,"run_id":100,"job":2,"unit":"internal/x","since":"2026-11-29T09:00:00Z"}` + "\n")
	want := claims.Holder{Issue: 3, RunID: 100, Job: 2, Unit: "internal/x", Since: time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)}
	if !ok || h != want {
		t.Errorf("ParseNote = %+v, %v; want %+v", h, ok, want)
	}
}
