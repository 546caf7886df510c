package adopt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// CI is what init found of the repository's own CI workflows, for the
// choice of how CI runs on roadmap's pushes (docs/install.md, "CI on
// roadmap's pushes").
type CI struct {
	// Workflows are the repository's workflow files that run on push or
	// pull_request, besides the ones init writes.
	Workflows []string `json:"workflows"`
	// Dispatchable are those of them with on: workflow_dispatch: the ones
	// implement.ci_workflows can name, and init names in the configuration.
	Dispatchable []string `json:"dispatchable"`
}

// DetectCI reads the workflows in the work tree's .github/workflows. A file
// that is not YAML is skipped: it is the repository's, and actionlint's to
// complain about.
func DetectCI(dir string) (CI, error) {
	ci := CI{Workflows: []string{}, Dispatchable: []string{}}
	wdir := filepath.Join(dir, ".github", "workflows")
	entries, err := os.ReadDir(wdir)
	if errors.Is(err, fs.ErrNotExist) {
		return ci, nil
	}
	if err != nil {
		return ci, fmt.Errorf("read the workflows: %w", err)
	}
	ours := map[string]bool{}
	for _, p := range []string{CallerPath, ChecksPath, WakePath} {
		ours[filepath.Base(p)] = true
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || ours[name] || !(strings.HasSuffix(name, ".yml") || strings.HasSuffix(name, ".yaml")) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(wdir, name))
		if err != nil {
			return ci, fmt.Errorf("read workflow %s: %w", name, err)
		}
		var w struct {
			On yaml.Node `yaml:"on"`
		}
		if yaml.Unmarshal(b, &w) != nil {
			continue
		}
		events := triggers(&w.On)
		if !slices.Contains(events, "push") && !slices.Contains(events, "pull_request") {
			continue
		}
		ci.Workflows = append(ci.Workflows, name)
		if slices.Contains(events, "workflow_dispatch") {
			ci.Dispatchable = append(ci.Dispatchable, name)
		}
	}
	return ci, nil
}

// triggers are the event names of a workflow's on:, in any of its three
// forms (a name, a list, a mapping).
func triggers(n *yaml.Node) []string {
	var out []string
	switch n.Kind {
	case yaml.ScalarNode:
		out = append(out, n.Value)
	case yaml.SequenceNode:
		for _, c := range n.Content {
			out = append(out, c.Value)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			out = append(out, n.Content[i].Value)
		}
	}
	return out
}
