package githubfake

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles expr on first use: a package-level regexp compiled at
// init costs every roadmap invocation (`roadmap version` included), and most
// of them never match one.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
