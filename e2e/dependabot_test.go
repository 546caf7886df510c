//go:build unix

package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// dependabotConfig is the part of .github/dependabot.yml that says what is watched.
type dependabotConfig struct {
	Version int `yaml:"version"`
	Updates []struct {
		Ecosystem   string   `yaml:"package-ecosystem"`
		Directory   string   `yaml:"directory"`
		Directories []string `yaml:"directories"`
	} `yaml:"updates"`
}

// dependabotDirs returns, for each ecosystem, the directories its update entries name.
func dependabotDirs(raw []byte) (map[string][]string, error) {
	var cfg dependabotConfig
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		return nil, err
	}
	if cfg.Version != 2 {
		return nil, fmt.Errorf("version %d, want 2", cfg.Version)
	}
	out := map[string][]string{}
	for _, u := range cfg.Updates {
		if u.Directory != "" {
			out[u.Ecosystem] = append(out[u.Ecosystem], u.Directory)
		}
		out[u.Ecosystem] = append(out[u.Ecosystem], u.Directories...)
	}
	return out, nil
}

// covers reports whether one of the entries (a directory, or a glob as `directories`
// allows) names dir ("/" or "/actions/checks").
func covers(entries []string, dir string) bool {
	for _, e := range entries {
		e = "/" + strings.Trim(e, "/")
		if e == dir {
			return true
		}
		if ok, err := path.Match(e, dir); err == nil && ok {
			return true
		}
	}
	return false
}

// dependabotWants walks the repository at root and returns, per ecosystem, the directories
// Dependabot must watch: for github-actions the root for any workflow under
// .github/workflows that uses a remote action, and the directory of each action.yml that
// does (Dependabot reads an action.yml in the directory an entry names); for gomod each
// go.mod's directory; for npm each package.json's. testdata, node_modules and .git hold
// fixtures and copies, not the repository's own dependencies.
func dependabotWants(t *testing.T, root string) map[string][]string {
	t.Helper()
	want := map[string][]string{}
	add := func(eco, dir string) {
		if !slices.Contains(want[eco], dir) {
			want[eco] = append(want[eco], dir)
		}
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "node_modules", ".tools", "bin", "dist":
				return filepath.SkipDir
			}
			return nil
		}
		dir := "/" + path.Dir(rel)
		if dir == "/." {
			dir = "/"
		}
		switch {
		case path.Dir(rel) == ".github/workflows" && (strings.HasSuffix(rel, ".yml") || strings.HasSuffix(rel, ".yaml")),
			d.Name() == "action.yml" || d.Name() == "action.yaml":
			text, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			uses, err := ParseUses(rel, text)
			if err != nil {
				return err
			}
			if len(uses) == 0 {
				return nil
			}
			if strings.HasPrefix(rel, ".github/workflows/") {
				dir = "/" // Dependabot's "/" is where it reads .github/workflows
			}
			add("github-actions", dir)
		case d.Name() == "go.mod":
			add("gomod", dir)
		case d.Name() == "package.json":
			add("npm", dir)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return want
}

// TestDependabotCoversActions holds .github/dependabot.yml to the repository: every
// directory with a workflow or action.yml that pins a remote action has a github-actions
// entry, go.mod's directory a gomod one and tools/npm's package.json an npm one, so no pin
// is left to age unseen (docs/install.md, "Upkeep").
func TestDependabotCoversActions(t *testing.T) {
	root := repoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, ".github", "dependabot.yml"))
	if err != nil {
		t.Fatal(err)
	}
	have, err := dependabotDirs(raw)
	if err != nil {
		t.Fatalf(".github/dependabot.yml: %v", err)
	}
	want := dependabotWants(t, root)
	// The walk itself must find what the repository is known to hold, or an empty walk
	// would pass.
	for eco, dir := range map[string]string{"github-actions": "/actions/checks", "gomod": "/", "npm": "/tools/npm"} {
		if !slices.Contains(want[eco], dir) {
			t.Errorf("the walk found %s directories %v, want %s among them", eco, want[eco], dir)
		}
	}
	if !slices.Contains(want["github-actions"], "/") {
		t.Errorf("the walk found no workflow with a remote action: %v", want["github-actions"])
	}
	for eco, dirs := range want {
		for _, dir := range dirs {
			if !covers(have[eco], dir) {
				t.Errorf(".github/dependabot.yml has no %s entry for %s (entries: %v)", eco, dir, have[eco])
			}
		}
	}
}

func TestDependabotCovers(t *testing.T) {
	for _, tc := range []struct {
		entries []string
		dir     string
		want    bool
	}{
		{[]string{"/"}, "/", true},
		{[]string{"/actions/checks"}, "/actions/checks", true},
		{[]string{"actions/checks/"}, "/actions/checks", true},
		{[]string{"/actions/*"}, "/actions/stage", true},
		{[]string{"/"}, "/actions/stage", false},
		{[]string{"/actions/check"}, "/actions/checks", false},
		{nil, "/", false},
	} {
		if got := covers(tc.entries, tc.dir); got != tc.want {
			t.Errorf("covers(%v, %q) = %v, want %v", tc.entries, tc.dir, got, tc.want)
		}
	}
}
