package claims_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/claims"
	"github.com/roadmap-dev/roadmap/internal/plan"
	theworld "github.com/roadmap-dev/roadmap/internal/world"
)

// TestClaimUnitsFromSymbols: a task that names only a symbol (`Backoff()`,
// `Client.Retry`) claims the package that declares it, read from the
// repository by the gates' source index; a symbol only a test file or
// testdata declares, and one no file declares, claim nothing; the paths the
// tasks name are claimed as before.
func TestClaimUnitsFromSymbols(t *testing.T) {
	root := t.TempDir()
	if err := theworld.WriteFiles(root, map[string]string{
		"go.mod":                     "module example.com/m\n\ngo 1.22\n",
		"retry/backoff.go":           "package retry\n\n// Backoff is the wait before attempt n.\nfunc Backoff(n int) int { return n * n }\n",
		"client/client.go":           "package client\n\ntype Client struct{}\n\nfunc (c *Client) Retry() error { return nil }\n",
		"client/client_test.go":      "package client\n\nfunc OnlyInATest() {}\n",
		"client/testdata/fixture.go": "package fixture\n\nfunc InTestdata() {}\n",
		"docs/guide.md":              "# Guide\n",
	}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "openspec", "changes", "c")
	if err := theworld.WriteFiles(dir, map[string]string{"proposal.md": "# c\n", "tasks.md": `## 1. Retries

- [ ] 1.1 Cap the wait ` + "`Backoff()`" + ` returns at a minute; verify: ` + "`go test ./retry`" + `
- [ ] 1.2 Make ` + "`Client.Retry`" + ` use it, and ` + "`OnlyInATest`" + `, ` + "`InTestdata`" + ` and ` + "`NoSuchThing()`" + ` stay; verify: ` + "`go vet ./...`" + `
- [ ] 1.3 Document it in ` + "`docs/guide.md`" + `; verify: ` + "`grep -q minute docs/guide.md`" + `
`}); err != nil {
		t.Fatal(err)
	}
	change, err := plan.LoadChange(dir)
	if err != nil {
		t.Fatal(err)
	}
	byPaths, err := claims.Units(change)
	if err != nil {
		t.Fatal(err)
	}
	got, err := claims.UnitsIn(root, change)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"client", "docs/guide.md", "retry"}; !cmp.Equal(got, want) {
		t.Errorf("UnitsIn = %q, want %q (the paths' units %q)", got, want, byPaths)
	}
	for _, u := range byPaths {
		if u == "client" {
			t.Errorf("the paths alone claimed %q: the test would not show the symbols' part", u)
		}
	}
}
