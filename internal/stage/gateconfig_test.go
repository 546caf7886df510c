package stage

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/gates"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/plan"
)

// The stage's gates take the configured verify forms (configuration
// gates.*), so a plan for a repository on another runner is not sent back
// for its verify commands.
func TestStageGatesVerifyForms(t *testing.T) {
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(filepath.Join("..", "..", "testdata", "openspec", "valid-added"))); err != nil {
		t.Fatal(err)
	}
	const id = "add-rate-limit-headers"
	tasks := "## 1. Build\n\n- [ ] 1.1 Make the change described in the proposal; verify: `bazel test //api:all`\n"
	if err := os.WriteFile(filepath.Join(plan.ChangeDir(root, id), "tasks.md"), []byte(tasks), 0o644); err != nil {
		t.Fatal(err)
	}
	refused := func(cfg gates.Config) bool {
		t.Helper()
		o := &Options{GateConfig: cfg}
		fs, err := o.defaultGates(context.Background(), GateInput{Issue: github.Issue{Number: 1}, Root: root, ChangeID: id})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			if f.Rule == gates.RulePrefix+gates.VerifyForm && strings.Contains(f.Message, "bazel test") {
				return true
			}
		}
		return false
	}
	if !refused(gates.Config{}) {
		t.Error("the default forms took `bazel test`")
	}
	if refused(gates.Config{ExtraVerifyForms: []string{"bazel test"}}) {
		t.Error("gates.extra_verify_forms [bazel test]: the verify command is still refused")
	}
}
