package f2p

import "strings"

// IsTestFile reports whether a repository path is a test by the common
// conventions (docs/implement.md lists them): a directory named test, tests,
// __tests__, testdata, spec or specs; a name ending _test.EXT or _spec.EXT,
// starting test_, holding .test. or .spec., or whose stem ends in Test or
// Tests. It is the rule `roadmap checks` and implement's fail-to-pass apply.
func IsTestFile(p string) bool {
	parts := strings.Split(p, "/")
	for _, d := range parts[:len(parts)-1] {
		switch d {
		case "test", "tests", "__tests__", "testdata", "spec", "specs":
			return true
		}
	}
	name := parts[len(parts)-1]
	stem := name
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		stem = name[:i]
	}
	return strings.HasSuffix(stem, "_test") || strings.HasSuffix(stem, "_spec") ||
		strings.HasPrefix(name, "test_") || strings.Contains(name, ".test.") || strings.Contains(name, ".spec.") ||
		(stem != name && (strings.HasSuffix(stem, "Test") || strings.HasSuffix(stem, "Tests")))
}
