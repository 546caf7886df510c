package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// RemoteAction is one `uses: owner/repo[/path]@ref` found in a workflow or an
// action file.
type RemoteAction struct {
	Uses string // as written, e.g. "actions/upload-artifact@ea16…"
	Repo string // "actions/upload-artifact"
	Path string // directory of action.yml inside the repository, "" for the root
	Ref  string
}

// Key is the owner/repo@ref form act's --local-repository matches on.
func (a RemoteAction) Key() string { return a.Repo + "@" + a.Ref }

// IsWorkflow reports whether a is a remote reusable workflow (a job's
// `uses: owner/repo/.github/workflows/f.yml@ref`) rather than an action.
func (a RemoteAction) IsWorkflow() bool { return strings.HasPrefix(a.Path, ".github/workflows/") }

// usesLine matches a `uses:` key, as a step key, a list item or a job key.
var usesLine = regexp.MustCompile(`(?m)^[ \t]*(?:-[ \t]+)?uses:[ \t]*["']?([^"'\s#]+)`)

// ParseUses returns the remote actions a workflow or action file refers to,
// in order of appearance. Local actions (./...) are not remote. A docker://
// action is an error: act cannot run it on the host.
func ParseUses(name string, text []byte) ([]RemoteAction, error) {
	var out []RemoteAction
	for _, m := range usesLine.FindAllSubmatch(text, -1) {
		uses := string(m[1])
		switch {
		case strings.HasPrefix(uses, "./"):
			continue
		case strings.HasPrefix(uses, "docker://"):
			return nil, fmt.Errorf("%s: %s: docker actions cannot run under act on the host", name, uses)
		}
		ref, ok := parseRemote(uses)
		if !ok {
			return nil, fmt.Errorf("%s: %q is not owner/repo[/path]@ref", name, uses)
		}
		out = append(out, ref)
	}
	return out, nil
}

func parseRemote(uses string) (RemoteAction, bool) {
	spec, ref, ok := strings.Cut(uses, "@")
	if !ok || ref == "" {
		return RemoteAction{}, false
	}
	parts := strings.Split(spec, "/")
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return RemoteAction{}, false
	}
	return RemoteAction{
		Uses: uses,
		Repo: parts[0] + "/" + parts[1],
		Path: strings.Join(parts[2:], "/"),
		Ref:  ref,
	}, true
}

// FindRemoteActions scans the workflows (.github/workflows) and the action
// files (action.yml or action.yaml anywhere outside testdata and .git) of the
// repository at root. Each distinct `uses:` appears once, sorted.
func FindRemoteActions(root string) ([]RemoteAction, error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		inWorkflows := filepath.Dir(rel) == filepath.Join(".github", "workflows")
		yaml := strings.HasSuffix(rel, ".yml") || strings.HasSuffix(rel, ".yaml")
		if (inWorkflows && yaml) || d.Name() == "action.yml" || d.Name() == "action.yaml" {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("find workflows and actions under %s: %w", root, err)
	}
	seen := map[string]RemoteAction{}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		rel, _ := filepath.Rel(root, f)
		refs, err := ParseUses(rel, text)
		if err != nil {
			return nil, err
		}
		for _, r := range refs {
			seen[r.Uses] = r
		}
	}
	out := make([]RemoteAction, 0, len(seen))
	for _, r := range seen {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Uses < out[j].Uses })
	return out, nil
}

// stubAction is the action.yml every stand-in gets. It never runs when the
// step is guarded with `if: env.ACT != 'true'`; when a guard is missing it
// fails the step and says why.
const stubAction = `name: e2e stand-in
description: Stands in for a remote action that act cannot fetch offline.
runs:
  using: composite
  steps:
    - shell: bash
      run: |
        echo "::error::%[1]s is a remote action and cannot be fetched under act; guard the step with if: env.ACT != 'true' (docs/e2e.md)"
        exit 1
`

// checkoutAction stands in for actions/checkout where act does not skip it:
// a checkout of another repository (the reusable workflows check out roadmap
// at the commit the caller pinned, docs/install.md). It clones
// $ROADMAP_E2E_REPOS/<repository>.git, a bare repository the scenario lays
// out, at ref (a branch, a tag or a commit) into the workspace's path, as
// the real action does; a repository the scenario has not laid out fails
// the step and says so. act skips a checkout of the repository under test
// itself (the workspace is that repository already).
const checkoutAction = `name: e2e stand-in for actions/checkout
description: Clones a repository the e2e laid out under ROADMAP_E2E_REPOS.
inputs:
  repository: {description: owner/name, default: ""}
  ref: {description: a branch, tag or commit, default: ""}
  path: {description: where under the workspace, default: ""}
  fetch-depth: {description: ignored, default: "1"}
  persist-credentials: {description: ignored, default: "false"}
  sparse-checkout: {description: ignored, default: ""}
runs:
  using: composite
  steps:
    - shell: bash
      env:
        REPOSITORY: ${{ inputs.repository }}
        REF: ${{ inputs.ref }}
        DEST: ${{ inputs.path }}
      run: |
        set -euo pipefail
        src="${ROADMAP_E2E_REPOS:-}/$REPOSITORY.git"
        if [ -z "${ROADMAP_E2E_REPOS:-}" ] || [ -z "$REPOSITORY" ] || [ ! -d "$src" ]; then
          echo "::error::actions/checkout of '$REPOSITORY': the e2e laid out no such repository under ROADMAP_E2E_REPOS (docs/e2e.md)"
          exit 1
        fi
        case "$DEST" in /*|*..*) echo "::error::actions/checkout: path '$DEST' leaves the workspace"; exit 1;; esac
        dest="$GITHUB_WORKSPACE/$DEST"
        rm -rf "$dest"
        git clone --quiet --no-checkout "$src" "$dest"
        git -C "$dest" checkout --quiet --detach "${REF:-HEAD}"
        echo "actions/checkout (e2e stand-in): $REPOSITORY at $(git -C "$dest" rev-parse HEAD) into ${DEST:-.}"
`

// WriteStubs writes a stand-in repository under dir for each owner/repo@ref
// in actions, with an action.yml at every path used, and returns the
// --local-repository mapping (owner/repo@ref → directory) for act. A stand-in
// cannot play a reusable workflow: those are an error.
func WriteStubs(dir string, actions []RemoteAction) (map[string]string, error) {
	repos := map[string]string{}
	for _, a := range actions {
		if a.IsWorkflow() {
			return nil, fmt.Errorf("remote reusable workflow %s: map its repository to a local directory (Run.LocalRepositories)", a.Uses)
		}
		root, ok := repos[a.Key()]
		if !ok {
			root = filepath.Join(dir, fmt.Sprintf("%03d", len(repos)))
			repos[a.Key()] = root
		}
		actionDir := filepath.Join(root, filepath.FromSlash(a.Path))
		if err := os.MkdirAll(actionDir, 0o755); err != nil {
			return nil, fmt.Errorf("stand-in for %s: %w", a.Uses, err)
		}
		body := fmt.Sprintf(stubAction, a.Repo+"/"+a.Path)
		switch {
		case a.Repo == "actions/checkout" && a.Path == "":
			body = checkoutAction
		case a.Path == "":
			body = fmt.Sprintf(stubAction, a.Repo)
		}
		if err := os.WriteFile(filepath.Join(actionDir, "action.yml"), []byte(body), 0o644); err != nil {
			return nil, fmt.Errorf("stand-in for %s: %w", a.Uses, err)
		}
	}
	return repos, nil
}
