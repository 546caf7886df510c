package realcase

import (
	"fmt"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/policy"
)

// The Debian form of a Python case: how source.json names the source
// package and its two upstream tarballs, and the pytest command hidden.json
// may give.

var (
	debSourceRe  = lazyRegexp(`^[a-z0-9][a-z0-9+.-]{1,99}$`)
	debVersionRe = lazyRegexp(`^(?:[0-9]{1,5}:)?[0-9][A-Za-z0-9.+~]{0,99}-[A-Za-z0-9.+~]{1,50}$`)
	sha256Re     = lazyRegexp(`^[0-9a-f]{64}$`)
	// OrigExtRe is the ending of an upstream tarball's name.
	OrigExtRe    = lazyRegexp(`\.orig\.tar\.(gz|xz|bz2)$`)
	pytestNameRe = lazyRegexp(`^[A-Za-z_][A-Za-z0-9_]*(\[[^\s\]]{1,200}\])?$`)
)

// checkDebian checks the Debian form of source.json: a source package
// name, two Debian versions (base before fix), each tarball's name as the
// pool names a source's upstream tarball at that version, and sha256 sums.
func (s Source) checkDebian() error {
	if s.Language != "python" {
		return fmt.Errorf("debian_source is set on a %s case: Go cases come from the module proxy", s.Language)
	}
	if !debSourceRe().MatchString(s.DebianSource) {
		return fmt.Errorf("debian_source %q is not a Debian source package name", s.DebianSource)
	}
	for _, v := range []struct{ name, version, orig, sum string }{
		{"base", s.BaseVersion, s.BaseOrig, s.BaseSHA256},
		{"fix", s.FixVersion, s.FixOrig, s.FixSHA256},
	} {
		if !debVersionRe().MatchString(v.version) {
			return fmt.Errorf("%s_version %q is not a Debian version of a packaged upstream release (upstream-revision)", v.name, v.version)
		}
		up := upstreamVersion(v.version)
		if ext := OrigExtRe().FindString(v.orig); ext == "" || v.orig != s.DebianSource+"_"+up+ext {
			return fmt.Errorf("%s_orig %q is not %s_%s.orig.tar.{gz,xz,bz2}, the upstream tarball of %s", v.name, v.orig, s.DebianSource, up, v.version)
		}
		if !sha256Re().MatchString(v.sum) {
			return fmt.Errorf("%s_sha256 %q is not a sha256 in lower-case hex", v.name, v.sum)
		}
	}
	if upstreamVersion(s.BaseVersion) == upstreamVersion(s.FixVersion) {
		return fmt.Errorf("base_version %s and fix_version %s are the same upstream release", s.BaseVersion, s.FixVersion)
	}
	return nil
}

// upstreamVersion is a Debian version less its epoch and revision.
func upstreamVersion(v string) string {
	if _, after, ok := strings.Cut(v, ":"); ok {
		v = after
	}
	if i := strings.LastIndex(v, "-"); i >= 0 {
		v = v[:i]
	}
	return v
}

// checkPytestID refuses a test name that is not a pytest node id of a
// test file: "path/test_x.py::test_name" or "…::Class::test_name".
func checkPytestID(t string) error {
	parts := strings.Split(t, "::")
	if len(t) > 1024 || len(parts) < 2 || len(parts) > 3 || !CleanRel(parts[0]) || !strings.HasSuffix(parts[0], ".py") {
		return fmt.Errorf("%q is not a pytest test (path/test_x.py::test_name)", t)
	}
	for _, p := range parts[1:] {
		if !pytestNameRe().MatchString(p) {
			return fmt.Errorf("%q is not a pytest test: %q is not a test name", t, p)
		}
	}
	return nil
}

// PytestArgv is the hidden command of a Python case split into words:
// `python3 -m pytest`, flags that say how much it prints (-q, -v, -rA) or
// which tests run (-k EXPR, --tb=…, -x), and test paths or node ids inside
// the tree, run without a shell. No plugin (-p), no config override (-o,
// -c), nothing that writes a file (--junitxml…).
func (h Hidden) PytestArgv() ([]string, error) {
	argv, err := policy.Split(h.Command)
	if err != nil {
		return nil, fmt.Errorf("command %q: %w", h.Command, err)
	}
	bad := func(why string) ([]string, error) {
		return nil, fmt.Errorf("command %q is not `python3 -m pytest [-q] [-k EXPR] [PATH[::TEST]…]`: %s", h.Command, why)
	}
	if len(argv) < 3 || argv[0] != "python3" || argv[1] != "-m" || argv[2] != "pytest" {
		return bad("it must start python3 -m pytest")
	}
	for i := 3; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "-q" || a == "-v" || a == "-x" || a == "-rA" || a == "--tb=short" || a == "--tb=no" || a == "--tb=line":
		case a == "-k" && i+1 < len(argv):
			i++
		case strings.HasPrefix(a, "-"):
			return bad(fmt.Sprintf("the flag %s is not one a hidden command takes (-q, -v, -x, -rA, -k EXPR, --tb=short|no|line)", a))
		default:
			p, _, _ := strings.Cut(a, "::")
			if !CleanRel(p) {
				return bad(fmt.Sprintf("%q is not a path inside the tree", a))
			}
			if strings.Contains(a, "::") {
				if err := checkPytestID(a); err != nil {
					return bad(err.Error())
				}
			}
		}
	}
	return argv, nil
}
