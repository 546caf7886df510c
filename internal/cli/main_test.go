package cli

import (
	"os"
	"testing"
)

// sharedDirs are folders the package's tests share across test functions
// (the roadmap binary linked once): removed when every test has run.
var sharedDirs []string

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range sharedDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}
