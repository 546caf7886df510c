package prcheck

import "testing"

func TestIsTestFile(t *testing.T) {
	for p, want := range map[string]bool{
		"internal/webhook/backoff_test.go": true,
		"tests/expect.txt":                 true,
		"pkg/testdata/in.json":             true,
		"src/__tests__/a.js":               true,
		"app/foo.test.ts":                  true,
		"app/foo.spec.js":                  true,
		"test_backoff.py":                  true,
		"backoff_spec.rb":                  true,
		"src/main/BackoffTest.java":        true,
		"BackoffTests.cs":                  true,
		"internal/webhook/backoff.go":      false,
		"contest.go":                       false,
		"latest/notes.md":                  false,
		"Test":                             false,
		"docs/testing.md":                  false,
	} {
		if got := isTestFile(p); got != want {
			t.Errorf("isTestFile(%q) = %v, want %v", p, got, want)
		}
	}
}
