package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/adopt"
)

const (
	releaseSHA = "0123456789abcdef0123456789abcdef01234567"
	otherSHA   = "89abcdef0123456789abcdef0123456789abcdef"
)

// vcsInfo is the build information Go stamps in a `go build` from a git
// checkout: its pseudo-version or tag, the commit, and whether the tree had
// changes.
func vcsInfo(version, revision string, modified bool) *debug.BuildInfo {
	info := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/roadmap-dev/roadmap", Version: version}}
	if revision != "" {
		m := "false"
		if modified {
			m = "true"
		}
		info.Settings = []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: revision}, {Key: "vcs.modified", Value: m}}
	}
	return info
}

// TestVersionNamesRelease: `roadmap version` names the version and the
// commit the binary was built from: GoReleaser's and make build's ldflags
// first, else what Go stamped in a build from a checkout; "dev" only when
// nothing is known. --json says the same.
func TestVersionNamesRelease(t *testing.T) {
	for _, tc := range []struct {
		name            string
		version, commit string // the ldflags; "dev" and "" when unset
		info            *debug.BuildInfo
		want            Build
		text            string
	}{
		{"a release (GoReleaser's ldflags)", "v0.1.0", releaseSHA, vcsInfo("(devel)", "", false),
			Build{Version: "v0.1.0", Commit: releaseSHA, Go: "go1.26.8"}, "v0.1.0 (" + releaseSHA + ") go1.26.8"},
		{"make build past a tag (git describe)", "v0.1.0-3-g0123456", releaseSHA, vcsInfo("(devel)", "", false),
			Build{Version: "v0.1.0-3-g0123456", Commit: releaseSHA, Go: "go1.26.8"}, "v0.1.0-3-g0123456 (" + releaseSHA + ") go1.26.8"},
		{"go build in a checkout: Go's stamp", "dev", "", vcsInfo("v0.1.1-0.20261207191552-0123456789ab", releaseSHA, false),
			Build{Version: "v0.1.1-0.20261207191552-0123456789ab", Commit: releaseSHA, Go: "go1.26.8"}, "v0.1.1-0.20261207191552-0123456789ab (" + releaseSHA + ") go1.26.8"},
		{"go build of a tree with changes", "dev", "", vcsInfo("v0.1.0+dirty", releaseSHA, true),
			Build{Version: "v0.1.0+dirty", Commit: releaseSHA, Modified: true, Go: "go1.26.8"}, "v0.1.0+dirty (" + releaseSHA + ", modified) go1.26.8"},
		{"the ldflags' commit is not the stamp's", "dev", otherSHA, vcsInfo("(devel)", releaseSHA, true),
			Build{Version: "unreleased", Commit: otherSHA, Go: "go1.26.8"}, "unreleased (" + otherSHA + ") go1.26.8"},
		{"the install script's build: only the commit", "dev", releaseSHA, vcsInfo("(devel)", "", false),
			Build{Version: "unreleased", Commit: releaseSHA, Go: "go1.26.8"}, "unreleased (" + releaseSHA + ") go1.26.8"},
		{"go install ...@v0.1.0: the module's version", "dev", "", vcsInfo("v0.1.0", "", false),
			Build{Version: "v0.1.0", Go: "go1.26.8"}, "v0.1.0 go1.26.8"},
		{"nothing known", "dev", "", vcsInfo("(devel)", "", false),
			Build{Version: "dev", Go: "go1.26.8"}, "dev go1.26.8"},
		{"no build information", "dev", "", nil, Build{Version: "dev"}, "dev"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := buildFrom(tc.version, tc.commit, tc.info)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("buildFrom (-want +got):\n%s", d)
			}
			if got.String() != tc.text {
				t.Errorf("String() = %q, want %q", got.String(), tc.text)
			}
		})
	}

	// The verb prints a Build as text and as JSON.
	release := Build{Version: "v0.1.0", Commit: releaseSHA, Go: "go1.26.8"}
	run := func(asJSON bool) string {
		t.Helper()
		var out, errb bytes.Buffer
		env := newEnv(nil, nil, strings.NewReader(""), &out, &errb)
		if code := printVersion(env, release, asJSON); code != ExitOK {
			t.Fatalf("roadmap version: exit %d\n%s", code, errb.String())
		}
		return out.String()
	}
	if got, want := run(false), "roadmap v0.1.0 ("+releaseSHA+") go1.26.8\n"; got != want {
		t.Errorf("roadmap version printed %q, want %q", got, want)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(run(true)), &got); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]any{"version": "v0.1.0", "commit": releaseSHA, "go": "go1.26.8"}, got); d != "" {
		t.Errorf("roadmap version --json (-want +got):\n%s", d)
	}
}

// roadmapUses is a uses: line of roadmap's reusable workflows and actions,
// with what follows its @.
var roadmapUses = regexp.MustCompile(`(?m)uses: roadmap-dev/roadmap/\S+@(.*)$`)

// TestInitPinsBuildCommit: init writes every roadmap uses: line at the
// commit the running roadmap was built from, commented with its version; a
// release's pin needs no word in the to-do, any other build's says what
// was pinned and why; a build that names no commit pins main and says so;
// never v1 or another tag that may not exist. --ref still wins.
func TestInitPinsBuildCommit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build Build
		args  []string
		pin   string // what follows every roadmap uses: line's @
		todo  []string
	}{
		{name: "a tagged release pins its tag's commit", build: Build{Version: "v0.1.0", Commit: releaseSHA},
			pin: releaseSHA + " # v0.1.0"},
		{name: "an untagged build pins its commit and says so", build: Build{Version: "v0.1.0-3-g89abcde", Commit: otherSHA},
			pin: otherSHA + " # v0.1.0-3-g89abcde", todo: []string{"pin roadmap at commit " + otherSHA, "not a tagged release", "--ref"}},
		{name: "a release tag built from a changed tree is not the release", build: Build{Version: "v0.1.0", Commit: releaseSHA, Modified: true},
			pin: releaseSHA + " # v0.1.0", todo: []string{"pin roadmap at commit " + releaseSHA, "local changes", "--ref"}},
		{name: "a build that knows only its commit", build: Build{Version: "unreleased", Commit: otherSHA},
			pin: otherSHA + " # unreleased", todo: []string{"pin roadmap at commit " + otherSHA}},
		{name: "go install ...@v0.1.0 pins the tag it was served, and says how to pin its commit", build: Build{Version: "v0.1.0"},
			pin: "v0.1.0", todo: []string{"at the tag v0.1.0", "names no commit", "Pinning a release by SHA"}},
		{name: "a build that names nothing follows main and says so", build: Build{Version: "dev"},
			pin: "main # dev", todo: []string{"names no commit", "--ref"}},
		{name: "--ref as given", build: Build{Version: "v0.1.0", Commit: releaseSHA}, args: []string{"--ref", otherSHA},
			pin: otherSHA},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newInitRepo(t, map[string]string{"go.mod": "module example.com/widgets\n\ngo 1.26\n"})
			environ := []string{"GITHUB_TOKEN=" + explainToken, "GITHUB_API_URL=" + r.srv.URL, "GITHUB_SERVER_URL=https://github.example"}
			var out, errb bytes.Buffer
			env := newEnv(nil, environ, strings.NewReader(""), &out, &errb)
			f := env.factory()
			f.Build = func() Build { return tc.build }
			args := append([]string{"-R", "acme/widgets", "--dir", r.dir, "--eval-workflow", "--json"}, tc.args...)
			if code := initCmd(context.Background(), f, args, initRun); code != ExitOK {
				t.Fatalf("roadmap init: exit %d\n%s", code, errb.String())
			}
			var res adopt.Result
			if err := json.Unmarshal(out.Bytes(), &res); err != nil {
				t.Fatalf("roadmap init --json: %v\n%s", err, out.String())
			}

			// Every roadmap uses: line of every file written.
			n := 0
			for _, file := range res.Files {
				text, err := os.ReadFile(filepath.Join(r.dir, filepath.FromSlash(file.Path)))
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range roadmapUses.FindAllStringSubmatch(string(text), -1) {
					n++
					if m[1] != tc.pin {
						t.Errorf("%s: %q, want @%s", file.Path, m[0], tc.pin)
					}
				}
				if strings.Contains(string(text), "@v1") {
					t.Errorf("%s names roadmap at v1, a tag that may not exist:\n%s", file.Path, text)
				}
			}
			// The caller's four, the checks', the wake's and the eval workflow's two.
			if n < 8 {
				t.Errorf("init wrote %d roadmap uses: lines, want every one of at least 8", n)
			}
			cfg, err := os.ReadFile(filepath.Join(r.dir, adopt.ConfigPath))
			if ref, _, _ := strings.Cut(tc.pin, " "); err != nil || !strings.Contains(string(cfg), adopt.SchemaURL(ref)) {
				t.Errorf("the configuration does not name the schema at %s (%v):\n%s", ref, err, cfg)
			}

			// The to-do's pin step: before the commit, only when not a release's.
			i := -1
			for j, s := range res.ToDo {
				if strings.HasPrefix(s, "The workflows pin roadmap") {
					i = j
				}
			}
			switch {
			case len(tc.todo) == 0 && i >= 0:
				t.Errorf("the to-do speaks of the pin of a release: %q", res.ToDo[i])
			case len(tc.todo) > 0 && i < 0:
				t.Errorf("the to-do does not say what was pinned:\n%s", strings.Join(res.ToDo, "\n"))
			case i >= 0:
				for _, w := range tc.todo {
					if !strings.Contains(res.ToDo[i], w) {
						t.Errorf("the to-do's pin step does not say %q: %s", w, res.ToDo[i])
					}
				}
				if i+1 >= len(res.ToDo) || !strings.HasPrefix(res.ToDo[i+1], "Commit and push") {
					t.Errorf("the pin step is not just before the commit:\n%s", strings.Join(res.ToDo, "\n"))
				}
			}
		})
	}
}
