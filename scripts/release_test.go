package scripts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// release runs scripts/release.sh TAG in the module at root, for this
// platform only, and returns the output directory, the exit code and the log.
func release(t *testing.T, root, tag string) (string, int, string) {
	t.Helper()
	script, err := filepath.Abs("release.sh")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "dist")
	cmd := exec.Command("bash", script, tag, out)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "ROADMAP_TARGETS="+runtime.GOOS+"/"+runtime.GOARCH, "SOURCE_DATE_EPOCH=1764547200")
	log, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("run release.sh: %v", err)
		}
		code = ee.ExitCode()
	}
	return out, code, string(log)
}

// TestReleaseScript holds the release build and the install script to one
// format: what release.sh makes, install-roadmap.sh installs.
func TestReleaseScript(t *testing.T) {
	root := sourceRoot(t)
	write(t, filepath.Join(root, "cmd", "roadmap", "main.go"),
		"package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"roadmap from release.sh\") }\n")
	write(t, filepath.Join(root, "LICENSE"), "MIT License\n")
	write(t, filepath.Join(root, "CHANGELOG.md"), "# Changelog\n\n## [Unreleased]\n\n- not yet\n\n## [2.0.0] - 2026-12-01\n\n### Added\n\n- the thing\n\n## [1.0.0] - 2026-11-01\n\n- the first\n")

	t.Run("a tag without a changelog section is refused", func(t *testing.T) {
		_, code, log := release(t, root, "v2.0.1")
		if code == 0 || !strings.Contains(log, "CHANGELOG.md has no section '## [2.0.1]'") {
			t.Errorf("exit %d, want a refusal naming the section:\n%s", code, log)
		}
	})

	out, code, log := release(t, root, "v2.0.0")
	if code != 0 {
		t.Fatalf("release.sh: exit %d\n%s", code, log)
	}
	notes, _ := os.ReadFile(filepath.Join(out, "notes.md"))
	if got := strings.TrimSpace(string(notes)); got != "### Added\n\n- the thing" {
		t.Errorf("notes.md = %q, want the 2.0.0 section only", got)
	}
	time.Sleep(1100 * time.Millisecond) // a later second: file times must not reach the archive
	again, _, log := release(t, root, "v2.0.0")
	a, _ := os.ReadFile(filepath.Join(out, "checksums.txt"))
	b, _ := os.ReadFile(filepath.Join(again, "checksums.txt"))
	if len(a) == 0 || string(a) != string(b) {
		t.Errorf("two builds of one commit differ:\n%s\n%s\n%s", a, b, log)
	}

	bare, _ := tagRepo(t)
	srv := newReleaseServer(t, bare)
	files := map[string][]byte{}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		files[e.Name()], _ = os.ReadFile(filepath.Join(out, e.Name()))
	}
	srv.mu.Lock()
	srv.assets["v2.0.0"] = files
	srv.mu.Unlock()
	in := (&install{root: t.TempDir(), ref: "v2.0.0", cache: t.TempDir(), server: srv.URL}).run(t)
	if in.code != 0 {
		t.Fatalf("install: exit %d\n%s", in.code, in.log)
	}
	if got, want := runBin(t, in.outputs["bin"]), "roadmap from release.sh"; got != want {
		t.Errorf("installed binary prints %q, want %q", got, want)
	}
}
