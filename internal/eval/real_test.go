package eval

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/eval/realcase"
	"github.com/roadmap-dev/roadmap/internal/plan"
)

// realSource is a real-world case's source.json: where the case comes from
// and under which licence its files are kept.
type realSource struct {
	Repository  string `json:"repository"`
	Issue       string `json:"issue"`
	Fix         string `json:"fix"`
	Parent      string `json:"parent"`
	Licence     string `json:"licence"`
	LicenceFile string `json:"licence_file"`
	// Language is the repository's language: go or python.
	Language string `json:"language"`
	// A Go case with code names its module and the release pair that
	// isolates the fix, with each zip's sum (realcase.Source).
	Module      string `json:"module"`
	BaseVersion string `json:"base_version"`
	FixVersion  string `json:"fix_version"`
	BaseSum     string `json:"base_sum"`
	FixSum      string `json:"fix_sum"`
	// A Python case with code names its Debian source package, the
	// upstream tarballs of the Debian version pair that isolates the fix,
	// and each tarball's sha256 (realcase.Source).
	DebianSource string `json:"debian_source"`
	BaseOrig     string `json:"base_orig"`
	FixOrig      string `json:"fix_orig"`
	BaseSHA256   string `json:"base_sha256"`
	FixSHA256    string `json:"fix_sha256"`
}

// realSnapshot is a real-world case's snapshot.json: the files repo/ holds,
// each a blob of the parent commit, and for an implement case the files
// hidden/ holds, each a blob of the fix. The files themselves are not
// committed here (third-party code stays out of this repository's history):
// they are fetched by blob from the cited repository when the case runs.
type realSnapshot struct {
	Parent    string     `json:"parent"`
	Repo      []realBlob `json:"repo"`
	RepoBytes int64      `json:"repo_bytes"`
	Fix       string     `json:"fix"`
	Hidden    []realBlob `json:"hidden"`
}

type realBlob struct {
	Path string `json:"path"`
	Blob string `json:"blob"`
}

// realLicences are the licences a real-world case may carry: permissive
// ones, whose terms copying the files into the set with the licence meets.
var realLicences = map[string]bool{
	"MIT": true, "BSD-2-Clause": true, "BSD-3-Clause": true, "Apache-2.0": true, "ISC": true,
}

var (
	realRepo   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$`)
	realSHA    = regexp.MustCompile(`^[0-9a-f]{40}$`)
	realIssue  = regexp.MustCompile(`^https://github\.com/([^/]+/[^/]+)/(issues|pull)/[0-9]+$`)
	realCommit = regexp.MustCompile(`^https://github\.com/([^/]+/[^/]+)/(commit/[0-9a-f]{7,40}|pull/[0-9]+)$`)
)

// realCases lists the case directories of one kind of the real-world set.
func realCases(t *testing.T, kind string) []string {
	t.Helper()
	dir := filepath.Join("..", "..", "testdata", "golden", "real", kind)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("the real-world %s set: %v", kind, err)
	}
	var cases []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			cases = append(cases, filepath.Join(dir, e.Name()))
		}
	}
	return cases
}

// realSnapshotOf reads and checks a case's snapshot.json: the repository at
// the parent commit source.json cites, small, with the files a fix touches.
func realSnapshotOf(t *testing.T, name, dir string, s realSource) realSnapshot {
	t.Helper()
	var snap realSnapshot
	b, err := os.ReadFile(filepath.Join(dir, "snapshot.json"))
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return snap
	}
	if err := strictJSON(b, &snap); err != nil {
		t.Errorf("%s: snapshot.json: %v", name, err)
		return snap
	}
	if snap.Parent != s.Parent {
		t.Errorf("%s: snapshot.json: parent %q is not source.json's %q", name, snap.Parent, s.Parent)
	}
	if len(snap.Repo) == 0 {
		t.Errorf("%s: snapshot.json: repo names no file", name)
	}
	if snap.RepoBytes <= 0 || snap.RepoBytes > 200<<10 {
		t.Errorf("%s: snapshot.json: repo_bytes %d is not above 0 and at most 200 KiB", name, snap.RepoBytes)
	}
	for _, f := range append(append([]realBlob{}, snap.Repo...), snap.Hidden...) {
		if !cleanRel(f.Path) || !realSHA.MatchString(f.Blob) {
			t.Errorf("%s: snapshot.json: %+v is not a path and a blob id", name, f)
		}
	}
	return snap
}

// realModuleCase holds a case with code (a module or a Debian source) to
// the contract beyond what realcase.Load checks (the module path or source
// package, the versions, the sums, the hidden command and tests): an implement case has hidden tests, a plan
// shaped as an OpenSpec change, and expected.json naming the same tests as
// hidden.json.
func realModuleCase(t *testing.T, name, kind, dir string, c *realcase.Case) {
	t.Helper()
	if kind != "implement" {
		return
	}
	if c.Hidden == nil || len(c.Hidden.F2P) == 0 {
		t.Errorf("%s: an implement case with code needs hidden.json with f2p tests", name)
		return
	}
	if c.PlanID == "" {
		t.Errorf("%s: an implement case needs its plan under plan/<change-id>/", name)
	} else {
		pd := filepath.Join(dir, "plan", c.PlanID)
		for _, f := range []string{"proposal.md", "tasks.md"} {
			if !isFile(filepath.Join(pd, f)) {
				t.Errorf("%s: plan/%s has no %s", name, c.PlanID, f)
			}
		}
		if specs, _ := filepath.Glob(filepath.Join(pd, "specs", "*", "spec.md")); len(specs) == 0 {
			t.Errorf("%s: plan/%s has no specs/<capability>/spec.md", name, c.PlanID)
		}
		if b, err := os.ReadFile(filepath.Join(pd, "tasks.md")); err == nil {
			if _, err := plan.Parse(b); err != nil {
				t.Errorf("%s: plan/%s/tasks.md: %v", name, c.PlanID, err)
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	want, err := ParseImplementExpected(b)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	same := func(a, b []string) bool {
		a, b = slices.Clone(a), slices.Clone(b)
		slices.Sort(a)
		slices.Sort(b)
		return slices.Equal(a, b)
	}
	if !same(want.F2P, c.Hidden.F2P) || !same(want.P2P, c.Hidden.P2P) {
		t.Errorf("%s: expected.json (f2p %v, p2p %v) does not name hidden.json's tests (f2p %v, p2p %v)", name, want.F2P, want.P2P, c.Hidden.F2P, c.Hidden.P2P)
	}
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// TestEvalCasesCiteSources holds the real-world set to its word: every case
// says where it comes from (the issue, the fix, the commit before it) and
// under which permissive licence, with the licence's text in the case; the
// hand-written sets say they are hand-written and carry no source.
func TestEvalCasesCiteSources(t *testing.T) {
	minCases := map[string]int{"stage": 1, "implement": 1}
	for _, kind := range []string{"stage", "implement"} {
		cases := realCases(t, kind)
		if len(cases) < minCases[kind] {
			t.Errorf("the real-world %s set has %d cases, want at least %d", kind, len(cases), minCases[kind])
		}
		for _, dir := range cases {
			name := kind + "/" + filepath.Base(dir)
			src, err := os.ReadFile(filepath.Join(dir, "source.json"))
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			var s realSource
			if err := strictJSON(src, &s); err != nil {
				t.Errorf("%s: source.json: %v", name, err)
				continue
			}
			if !realRepo.MatchString(s.Repository) {
				t.Errorf("%s: source.json: repository %q is not owner/name", name, s.Repository)
			}
			if m := realIssue.FindStringSubmatch(s.Issue); m == nil || !strings.EqualFold(m[1], s.Repository) {
				t.Errorf("%s: source.json: issue %q is not an issue of %s on github", name, s.Issue, s.Repository)
			}
			if m := realCommit.FindStringSubmatch(s.Fix); m == nil || !strings.EqualFold(m[1], s.Repository) {
				t.Errorf("%s: source.json: fix %q is not a commit or pull request of %s on github", name, s.Fix, s.Repository)
			}
			if !realSHA.MatchString(s.Parent) {
				t.Errorf("%s: source.json: parent %q is not a commit (40 hex digits)", name, s.Parent)
			}
			if !realLicences[s.Licence] {
				t.Errorf("%s: source.json: licence %q is not one of MIT, BSD-2-Clause, BSD-3-Clause, Apache-2.0, ISC", name, s.Licence)
			}
			if !cleanRel(s.LicenceFile) || !isFile(filepath.Join(dir, filepath.FromSlash(s.LicenceFile))) {
				t.Errorf("%s: source.json: licence_file %q is not a file in the case", name, s.LicenceFile)
			}
			if !isFile(filepath.Join(dir, "issue.md")) {
				t.Errorf("%s: no issue.md", name)
			} else if b, err := os.ReadFile(filepath.Join(dir, "issue.md")); err == nil {
				if _, err := ParseIssue(b); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
			if s.Language != "go" && s.Language != "python" {
				t.Errorf("%s: source.json: language %q is not go or python", name, s.Language)
			}
			// A case with a module gets its code from the module proxy, one
			// with a Debian source from Debian's archive (realset): their
			// fields are checked there, and they need no snapshot.json; one
			// with neither is metadata only and cites its files by blob.
			var snap realSnapshot
			var rc *realcase.Case
			if s.Module != "" && s.Language != "go" || s.DebianSource != "" && s.Language != "python" {
				t.Errorf("%s: source.json: a %s case with module %q and debian_source %q: Go cases name a module, Python cases a Debian source", name, s.Language, s.Module, s.DebianSource)
			}
			if s.Module != "" || s.DebianSource != "" {
				if rc, err = realcase.Load(dir); err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				realModuleCase(t, name, kind, dir, rc)
				if isFile(filepath.Join(dir, "snapshot.json")) {
					snap = realSnapshotOf(t, name, dir, s)
				}
			} else {
				snap = realSnapshotOf(t, name, dir, s)
			}
			switch kind {
			case "stage":
				if b, err := os.ReadFile(filepath.Join(dir, "facts.json")); err != nil {
					t.Errorf("%s: %v", name, err)
				} else {
					var f struct {
						Files     []string `json:"files"`
						MinGroups int      `json:"min_groups"`
						Tests     []string `json:"tests"`
						Avoid     string   `json:"avoid"`
					}
					if err := strictJSON(b, &f); err != nil {
						t.Errorf("%s: facts.json: %v", name, err)
					} else if len(f.Files) == 0 {
						t.Errorf("%s: facts.json names no file the fix touches", name)
					}
					inRepo := map[string]bool{}
					for _, b := range snap.Repo {
						inRepo[b.Path] = true
					}
					for _, p := range f.Files {
						if !cleanRel(p) {
							t.Errorf("%s: facts.json: %q is not a slash path inside the repository", name, p)
						}
						if rc == nil && !inRepo[p] {
							t.Errorf("%s: facts.json: %q is not a file of the snapshot", name, p)
						}
					}
				}
			case "implement":
				b, err := os.ReadFile(filepath.Join(dir, "hidden.json"))
				if err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				var h struct {
					Command string   `json:"command"`
					Files   []string `json:"files"`
					F2P     []string `json:"f2p"`
					P2P     []string `json:"p2p"`
				}
				if err := strictJSON(b, &h); err != nil {
					t.Errorf("%s: hidden.json: %v", name, err)
					continue
				}
				if strings.TrimSpace(h.Command) == "" {
					t.Errorf("%s: hidden.json names no command", name)
				}
				if len(h.Files) == 0 {
					t.Errorf("%s: hidden.json names no file", name)
				}
				if rc != nil && snap.Fix == "" {
					break // the hidden files come from fix_version
				}
				hidden := map[string]bool{}
				for _, b := range snap.Hidden {
					hidden[b.Path] = true
				}
				if !realSHA.MatchString(snap.Fix) || !strings.HasSuffix(s.Fix, "/commit/"+snap.Fix) {
					t.Errorf("%s: snapshot.json: fix %q is not the commit source.json cites", name, snap.Fix)
				}
				for _, f := range h.Files {
					if !cleanRel(f) || !hidden[f] {
						t.Errorf("%s: hidden.json: %q is not a hidden file of snapshot.json", name, f)
					}
				}
			}
		}
	}

	// The hand-written sets are labelled so, and cite nothing.
	for _, set := range []string{"stage", "implement"} {
		dir := filepath.Join("..", "..", "testdata", "golden", set)
		readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
		if err != nil || !strings.Contains(strings.ToLower(string(readme)), "hand-written") {
			t.Errorf("testdata/golden/%s: README.md does not say the set is hand-written (%v)", set, err)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() && isFile(filepath.Join(dir, e.Name(), "source.json")) {
				t.Errorf("testdata/golden/%s/%s: a hand-written case carries a source.json", set, e.Name())
			}
		}
	}
	if !isFile(filepath.Join("..", "..", "testdata", "golden", "real", "README.md")) {
		t.Error("testdata/golden/real: no README.md saying where the cases come from")
	}
}
