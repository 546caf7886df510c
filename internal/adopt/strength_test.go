package adopt

import (
	"regexp"
	"strings"
	"testing"
)

// TestStrengthToolPinned: every tool init's setup installs for test
// strength is installed at its version, never the latest: the setup of its
// language has the pinned line, and no setup line of any language installs
// the tool without the pin.
func TestStrengthToolPinned(t *testing.T) {
	toolchains := map[string]Toolchain{
		"go": goToolchain(), "rust": rustToolchain(false), "rust-pinned": rustToolchain(true),
		"python": pythonToolchain("pyproject.toml", true, false), "python-reqs": pythonToolchain("requirements.txt", true, true),
		"node": nodeToolchain("package-lock.json", ""), "node-pnpm": nodeToolchain("pnpm-lock.yaml", ".nvmrc"),
		"node-yarn": nodeToolchain("yarn.lock", ""), "node-no-lock": nodeToolchain("", ""),
	}
	version := regexp.MustCompile(`^[0-9]+(\.[0-9]+)+$`)
	if len(strengthTools["python"]) == 0 {
		t.Fatal("no strength tool for Python: pytest runs its mutants")
	}
	if len(strengthTools["node"]) == 0 {
		t.Fatal("no strength tool for JavaScript: StrykerJS's instrumenter makes its mutants")
	}
	for lang, tools := range strengthTools {
		for _, tool := range tools {
			if !version.MatchString(tool.Version) {
				t.Errorf("%s: %s has version %q, not a release number", lang, tool.Name, tool.Version)
			}
			if !strings.Contains(tool.Install, tool.Name+"=="+tool.Version) && !strings.Contains(tool.Install, tool.Name+"@"+tool.Version) &&
				!strings.Contains(tool.Install, "--version "+tool.Version) {
				t.Errorf("%s: %s's install line %q does not name its version %s", lang, tool.Name, tool.Install, tool.Version)
			}
			for name, tc := range toolchains {
				if strings.HasPrefix(name, lang) && tc.Language == lang && !strings.Contains(tc.setup, tool.Install) {
					t.Errorf("%s: the setup does not install %s pinned (%q):\n%s", name, tool.Name, tool.Install, tc.setup)
				}
				// Any install of the tool's name not followed by its pin.
				// (A name may start with @: the word boundary is a blank or a quote.)
				unpinned := regexp.MustCompile(`(?m)\binstall\b.*(^|[\s"'])` + regexp.QuoteMeta(tool.Name) + `([^=@\w-]|$)`)
				for _, line := range strings.Split(tc.setup, "\n") {
					if unpinned.MatchString(line) && !strings.Contains(line, tool.Install) {
						t.Errorf("%s: the setup installs %s unpinned: %q", name, tool.Name, strings.TrimSpace(line))
					}
				}
			}
		}
	}
}
