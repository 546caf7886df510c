package policy

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/policy.md's generated block")

// TestPolicyDoc keeps the default table shown in docs/policy.md equal to the
// one the code reads. Regenerate with -update.
func TestPolicyDoc(t *testing.T) {
	const begin, end = "<!-- BEGIN GENERATED default.yaml -->\n", "<!-- END GENERATED default.yaml -->"
	path := filepath.Join("..", "..", "docs", "policy.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no generated block (%q … %q)", path, begin, end)
	}
	want := "```yaml\n" + string(DefaultYAML()) + "```\n"
	got := doc[i+len(begin) : j]
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s shows a default table that differs from default.yaml; run go test ./internal/policy -run TestPolicyDoc -update", path)
}
