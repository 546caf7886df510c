package scripts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// notes runs scripts/release.sh TAG in a directory holding changelog as CHANGELOG.md and
// returns the notes it wrote ("" when it wrote none), its exit code and its log.
func notes(t *testing.T, changelog, tag string) (string, bool, int, string) {
	t.Helper()
	script, err := filepath.Abs("release.sh")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	write(t, filepath.Join(root, "CHANGELOG.md"), changelog)
	file := filepath.Join(root, "dist", "notes.md")
	cmd := exec.Command("bash", script, tag, file)
	cmd.Dir = root
	log, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("run release.sh: %v", err)
		}
		code = ee.ExitCode()
	}
	b, err := os.ReadFile(file)
	return string(b), err == nil, code, string(log)
}

const changelog = `# Changelog

## [Unreleased]

- not yet

## [2.0.0] - 2026-12-01

### Added

- the thing

## [2.0.0-rc.1] - 2026-11-20

- the candidate

## [1.1.0] - 2026-11-10

## [1.0.0] - 2026-11-01

- the first

[Unreleased]: https://github.com/o/r/compare/v2.0.0...HEAD
[2.0.0]: https://github.com/o/r/compare/v1.1.0...v2.0.0
`

// TestReleaseNotes holds the release notes to CHANGELOG.md: release.yml publishes what
// scripts/release.sh extracts, and refuses a tag the changelog does not describe.
func TestReleaseNotes(t *testing.T) {
	for _, tc := range []struct{ name, tag, want string }{
		{"a release's section, up to the next heading", "v2.0.0", "### Added\n\n- the thing"},
		{"a pre-release's own section", "v2.0.0-rc.1", "- the candidate"},
		{"the last section, to the link lines", "v1.0.0", "- the first"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, code, log := notes(t, changelog, tc.tag)
			if code != 0 || !ok {
				t.Fatalf("exit %d, notes written %v\n%s", code, ok, log)
			}
			if strings.TrimSpace(got) != tc.want {
				t.Errorf("notes = %q, want %q", got, tc.want)
			}
		})
	}
	for _, tc := range []struct{ name, tag, says string }{
		{"a tag without a changelog section is refused", "v2.0.1", "CHANGELOG.md has no section '## [2.0.1]'"},
		{"a section that says nothing is refused", "v1.1.0", "CHANGELOG.md has no section '## [1.1.0]'"},
		{"a pre-release is not its release", "v1.0.0-rc.1", "CHANGELOG.md has no section '## [1.0.0-rc.1]'"},
		{"Unreleased is no tag", "Unreleased", "is not a version tag"},
		{"a tag without its v", "2.0.0", "is not a version tag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, code, log := notes(t, changelog, tc.tag)
			if code == 0 || !strings.Contains(log, tc.says) {
				t.Errorf("exit %d, want a refusal saying %q:\n%s", code, tc.says, log)
			}
			if ok {
				t.Errorf("a refused tag left notes %q for the release to publish", got)
			}
		})
	}
}

var (
	versionHeading = regexp.MustCompile(`^## \[(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\] - (\d{4}-\d{2}-\d{2})$`)
	linkLine       = regexp.MustCompile(`^\[([^]]+)\]: (\S+)$`)
)

// TestChangelogVersions holds the repository's own CHANGELOG.md to what the release workflow
// and a reader need: `## [Unreleased]` first, then
// each version's `## [X.Y.Z] - YYYY-MM-DD` section, newest first, each with notes
// scripts/release.sh extracts; and at the bottom a link line for Unreleased (the newest
// version's tag compared with HEAD) and one for every version (its release's page). `make
// release-check` runs it beside the snapshot, so a tag is never pushed without its notes.
func TestChangelogVersions(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	var headings, versions []string
	links := map[string]string{}
	for _, l := range lines {
		if strings.HasPrefix(l, "## ") {
			headings = append(headings, l)
			if m := versionHeading.FindStringSubmatch(l); m != nil {
				versions = append(versions, m[1])
			}
		}
		if m := linkLine.FindStringSubmatch(l); m != nil {
			links[m[1]] = m[2]
		}
	}
	if len(headings) == 0 || headings[0] != "## [Unreleased]" {
		t.Fatalf("CHANGELOG.md's first section is %q, want ## [Unreleased]", headings)
	}
	if len(versions) != len(headings)-1 {
		t.Errorf("CHANGELOG.md has sections that are neither Unreleased nor ## [X.Y.Z] - YYYY-MM-DD: %q", headings)
	}
	if len(versions) == 0 {
		t.Fatal("CHANGELOG.md has no version section: nothing to release")
	}
	const repo = "https://github.com/roadmap-dev/roadmap"
	if want := repo + "/compare/v" + versions[0] + "...HEAD"; links["Unreleased"] != want {
		t.Errorf("the Unreleased link is %q, want %q", links["Unreleased"], want)
	}
	for i, v := range versions {
		if i > 0 && !older(versions[i], versions[i-1]) {
			t.Errorf("CHANGELOG.md: %s is below %s, want the newest first", v, versions[i-1])
		}
		if want := repo + "/releases/tag/v" + v; links[v] != want {
			t.Errorf("the link line of %s is %q, want %q", v, links[v], want)
		}
		got, ok, code, log := notes(t, string(raw), "v"+v)
		if code != 0 || !ok || strings.Contains(got, "]: http") {
			t.Errorf("the notes of v%s: exit %d, written %v, or they hold the link lines\n%s%s", v, code, ok, log, got)
		}
	}
	if len(links) != len(versions)+1 {
		t.Errorf("CHANGELOG.md has %d link lines for %d versions and Unreleased: %v", len(links), len(versions), links)
	}
}

// older: version a is below b (X.Y.Z numerically; a pre-release is below its release).
func older(a, b string) bool {
	num := func(v string) ([3]int, string) {
		core, pre, _ := strings.Cut(v, "-")
		var n [3]int
		for i, p := range strings.SplitN(core, ".", 3) {
			n[i], _ = strconv.Atoi(p)
		}
		return n, pre
	}
	na, pa := num(a)
	nb, pb := num(b)
	if na != nb {
		return na[0] < nb[0] || na[0] == nb[0] && (na[1] < nb[1] || na[1] == nb[1] && na[2] < nb[2])
	}
	return pa != "" && (pb == "" || pa < pb)
}

// roadmapUses is a roadmap-dev/roadmap reference in a workflow: the ref after its `@`.
var roadmapUses = regexp.MustCompile(`uses:\s*roadmap-dev/roadmap/\S*@(\S+)`)

// TestExamplesNameTheRelease holds docs/examples to the newest release in CHANGELOG.md: every
// roadmap-dev/roadmap reference names its tag (`@v0.1.0`), so a person who copies an example
// gets a ref that resolves once that release is published, never `@v1`, a tag that exists
// only from 1.0.0 (a 0.y.z release moves no major tag). A release that adds a version section
// without moving the examples to it fails here, in `make release-check` and in CI.
func TestExamplesNameTheRelease(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	newest := ""
	for _, l := range strings.Split(string(raw), "\n") {
		if m := versionHeading.FindStringSubmatch(l); m != nil {
			newest = "v" + m[1]
			break
		}
	}
	if newest == "" {
		t.Fatal("CHANGELOG.md has no version section")
	}
	files, err := filepath.Glob(filepath.Join("..", "docs", "examples", "*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("docs/examples: %v (%d workflows)", err, len(files))
	}
	refs := 0
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(text), "\n") {
			m := roadmapUses.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			refs++
			if m[1] != newest {
				t.Errorf("%s:%d names roadmap at @%s, want the newest release's tag @%s (CHANGELOG.md)", filepath.Base(f), i+1, m[1], newest)
			}
		}
	}
	if refs == 0 {
		t.Error("no example names roadmap-dev/roadmap: the test reads nothing")
	}
}
