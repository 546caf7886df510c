package scripts_test

import (
	"os"
	"os/exec"
	"path/filepath"
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
`

// TestReleaseNotes holds the release notes to CHANGELOG.md: release.yml publishes what
// scripts/release.sh extracts, and refuses a tag the changelog does not describe.
func TestReleaseNotes(t *testing.T) {
	for _, tc := range []struct{ name, tag, want string }{
		{"a release's section, up to the next heading", "v2.0.0", "### Added\n\n- the thing"},
		{"a pre-release's own section", "v2.0.0-rc.1", "- the candidate"},
		{"the last section, to the end", "v1.0.0", "- the first"},
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
