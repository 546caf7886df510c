package ready

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/sandbox/sandboxtest"
	"github.com/roadmap-dev/roadmap/internal/strength"
)

// TestStrengthRustNotInstalled: a group that changed Rust code on a
// machine without cargo-mutants is measured by a real strength.Run over a
// real repository; the run, the record's row and the PR comment each say
// "not measured: cargo-mutants not installed" and claim no score.
func TestStrengthRustNotInstalled(t *testing.T) {
	dir := t.TempDir()
	environ := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "--quiet", "--initial-branch=main")
	write("Cargo.toml", "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n")
	write("src/lib.rs", "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n")
	git("add", "--all")
	git("commit", "--quiet", "-m", "base")
	base := git("rev-parse", "HEAD")
	write("src/lib.rs", "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\npub fn sub(a: i32, b: i32) -> i32 {\n    a - b\n}\n")

	looked := ""
	o := strength.Options{Dir: dir, Base: base, Tests: []string{"cargo test --offline"}, Split: policy.Split, GitEnv: environ,
		Runner: checks.PolicyRunner(policy.Default(), sandboxtest.None(t, dir, environ)),
		LookPath: func(name string) (string, error) {
			if name == strength.CargoMutants {
				looked = name
				return "", exec.ErrNotFound
			}
			return exec.LookPath(name)
		}}
	rep, err := strength.Run(context.Background(), o, strength.DefaultFloor)
	if err != nil {
		t.Fatal(err)
	}
	if looked != strength.CargoMutants {
		t.Errorf("the run never looked for %s", strength.CargoMutants)
	}
	if rep.Generated != 0 || rep.Measured() != 0 || rep.Score != 0 {
		t.Errorf("a score was claimed: %+v", rep)
	}
	if len(rep.NotMeasured) != 1 || rep.NotMeasured[0].Why != "cargo-mutants not installed" || rep.NotMeasured[0].Files[0] != "src/lib.rs" {
		t.Errorf("not measured = %+v", rep.NotMeasured)
	}
	if !strings.Contains(rep.Summary(), "not measured, no score: cargo-mutants not installed (Rust: src/lib.rs)") {
		t.Errorf("summary:\n%s", rep.Summary())
	}

	var s State
	m := s.Strength(1, rep)
	if m.Row.Score != 0 || m.Row.Unmeasured == "" || !strings.HasPrefix(m.Line, "not measured: cargo-mutants not installed") {
		t.Errorf("row %+v, line %q", m.Row, m.Line)
	}
	// The record keeps the row as the PR comment shows it.
	b, err := json.Marshal(s.Rows(nil))
	if err != nil {
		t.Fatal(err)
	}
	var rows []record.GroupStrength
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || !strings.Contains(rows[0].Unmeasured, "cargo-mutants not installed") || rows[0].Score != 0 {
		t.Errorf("record rows %+v", rows)
	}
	comment := s.CommentLines(nil, "abc123")
	if !strings.Contains(comment, "| 1 | — | — | — | — | — | not measured: cargo-mutants not installed (Rust: src/lib.rs) |") {
		t.Errorf("PR comment lacks the not-measured row:\n%s", comment)
	}
}
