// Package realcase reads the cases of the real-world eval set
// (testdata/golden/real/{stage,implement}/<case>/): source.json, hidden.json
// and plan/, every path, version, size and sum checked before it is used,
// since a case directory is anyone's. The eval runners read a case here;
// the fetcher that gives a case its code (tools/realset, `roadmap-dev eval
// fetch`) is not part of the roadmap binary.
package realcase

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/nofollow"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"golang.org/x/mod/semver"
)

// Bounds on a case's own files and on what a module may bring.
const (
	maxMetaFile   = 64 << 10 // source.json, hidden.json, expected.json
	MaxPlanFile   = 1 << 20  // one file of plan/<id>/
	MaxPlanFiles  = 100      // files of plan/<id>/
	maxHidden     = 100      // hidden files of one case
	maxTests      = 1000     // f2p and p2p tests of one case
	MaxFileBytes  = 2 << 20  // one file of repo/ or hidden/ (the runners read no larger file)
	MaxZipFiles   = 10000    // files of one module zip
	MaxZipBytes   = 64 << 20 // a module zip's files, uncompressed
	maxModulePath = 500
)

// Source is a case's source.json: where the case comes from, and for a Go
// case with code the module and the release pair that isolates its fix.
type Source struct {
	Repository  string `json:"repository"`
	Issue       string `json:"issue"`
	Fix         string `json:"fix"`
	Parent      string `json:"parent"`
	Licence     string `json:"licence"`
	LicenceFile string `json:"licence_file"`
	Language    string `json:"language"`
	// Module is the module path; empty for a metadata-only case.
	Module string `json:"module,omitempty"`
	// BaseVersion is the last tagged release without the fix (repo/ is the
	// module at it); FixVersion the first with it (hidden/ comes from it).
	BaseVersion string `json:"base_version,omitempty"`
	FixVersion  string `json:"fix_version,omitempty"`
	// BaseSum and FixSum are the h1: sums `go mod download -json` prints.
	BaseSum string `json:"base_sum,omitempty"`
	FixSum  string `json:"fix_sum,omitempty"`
	// DebianSource is the Debian source package whose upstream tarballs
	// (.orig.tar.*) give a Python case its code; BaseVersion and FixVersion
	// are then Debian versions, BaseOrig and FixOrig the tarballs' file
	// names in the archive's pool, BaseSHA256 and FixSHA256 their sha256
	// as the suite's Sources index lists it.
	DebianSource string `json:"debian_source,omitempty"`
	BaseOrig     string `json:"base_orig,omitempty"`
	FixOrig      string `json:"fix_orig,omitempty"`
	BaseSHA256   string `json:"base_sha256,omitempty"`
	FixSHA256    string `json:"fix_sha256,omitempty"`
}

// Hidden is a case's hidden.json: the command that runs the hidden tests,
// their files (at fix_version, relative to the module root) and the tests
// that fail at base_version and pass at fix_version (F2P) or pass at both
// (P2P), named "<package import path>.<TestName>".
type Hidden struct {
	Command string   `json:"command"`
	Files   []string `json:"files"`
	F2P     []string `json:"f2p,omitempty"`
	P2P     []string `json:"p2p,omitempty"`
}

// Case is one case directory, read and checked.
type Case struct {
	Dir    string
	Source Source
	// Hidden is hidden.json; nil when the case has none.
	Hidden *Hidden
	// PlanID is the one change under plan/ ("" when the case has no plan/).
	PlanID string
}

// HasModule reports whether the case gets code from the module proxy.
func (c *Case) HasModule() bool { return c.Source.Module != "" }

// HasDebian reports whether the case gets code from Debian's archive.
func (c *Case) HasDebian() bool { return c.Source.DebianSource != "" }

// HasCode reports whether the case gets code at all (a module or a Debian
// source); one without is metadata only.
func (c *Case) HasCode() bool { return c.HasModule() || c.HasDebian() }

var (
	semverRe   = lazyRegexp(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+incompatible)?$`)
	sumRe      = lazyRegexp(`^h1:[A-Za-z0-9+/]{43}=$`)
	changeIDRe = lazyRegexp(`^[a-z0-9]+(?:-[a-z0-9]+)*$`) // OpenSpec's change id rule
	majorRe    = lazyRegexp(`/v([2-9]|[1-9][0-9]+)$`)
)

// Load reads and checks the case in dir: source.json (the module fields
// all or none, well-formed), hidden.json when present (paths clean, and
// for a case with a module a `go test -json` command and F2P tests of the
// module) and plan/ when present (exactly one change).
func Load(dir string) (*Case, error) {
	c := &Case{Dir: dir}
	src, err := readMeta(dir, "source.json", false)
	if err != nil {
		return nil, err
	}
	if err := StrictJSON(src, &c.Source); err != nil {
		return nil, fmt.Errorf("source.json: %w", err)
	}
	if err := c.Source.check(); err != nil {
		return nil, fmt.Errorf("source.json: %w", err)
	}
	if src, err = readMeta(dir, "hidden.json", true); err != nil {
		return nil, err
	} else if src != nil {
		var h Hidden
		if err := StrictJSON(src, &h); err != nil {
			return nil, fmt.Errorf("hidden.json: %w", err)
		}
		if err := h.check(&c.Source); err != nil {
			return nil, fmt.Errorf("hidden.json: %w", err)
		}
		c.Hidden = &h
	}
	if c.PlanID, err = planID(dir); err != nil {
		return nil, err
	}
	return c, nil
}

func (s Source) check() error {
	if s.Language != "go" && s.Language != "python" {
		return fmt.Errorf("language %q is not go or python", s.Language)
	}
	if s.DebianSource != "" || s.BaseOrig != "" || s.FixOrig != "" || s.BaseSHA256 != "" || s.FixSHA256 != "" {
		if s.Module != "" || s.BaseSum != "" || s.FixSum != "" {
			return errors.New("a case takes its code from a module or from a Debian source, not both")
		}
		return s.checkDebian()
	}
	if s.Module == "" {
		if s.BaseVersion != "" || s.FixVersion != "" || s.BaseSum != "" || s.FixSum != "" {
			return errors.New("base_version, fix_version, base_sum and fix_sum need module")
		}
		return nil
	}
	if s.Language != "go" {
		return fmt.Errorf("module is set on a %s case: only Go cases come from the module proxy", s.Language)
	}
	if err := CheckModulePath(s.Module); err != nil {
		return err
	}
	for _, v := range []struct{ name, v string }{{"base_version", s.BaseVersion}, {"fix_version", s.FixVersion}} {
		if err := checkVersion(s.Module, v.v); err != nil {
			return fmt.Errorf("%s: %w", v.name, err)
		}
	}
	if semver.Compare(s.BaseVersion, s.FixVersion) >= 0 {
		return fmt.Errorf("base_version %s is not before fix_version %s", s.BaseVersion, s.FixVersion)
	}
	for _, v := range []struct{ name, v string }{{"base_sum", s.BaseSum}, {"fix_sum", s.FixSum}} {
		if !sumRe().MatchString(v.v) {
			return fmt.Errorf("%s %q is not an h1: sum as `go mod download -json` prints it", v.name, v.v)
		}
	}
	return nil
}

// CheckModulePath refuses what is not a module path the go command takes:
// slash-separated elements of letters, digits and "-._~", none empty, none
// starting or ending with a dot, the first a lower-case domain name with a
// dot that does not start with a dash.
func CheckModulePath(p string) error {
	if p == "" || len(p) > maxModulePath {
		return fmt.Errorf("module %q is not a module path (1 to %d bytes)", p, maxModulePath)
	}
	elems := strings.Split(p, "/")
	for i, e := range elems {
		ok := e != "" && !strings.HasPrefix(e, ".") && !strings.HasSuffix(e, ".")
		for _, r := range e {
			switch {
			case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.':
			case i > 0 && (r >= 'A' && r <= 'Z' || r == '_' || r == '~'):
			default:
				ok = false
			}
		}
		if i == 0 && (!strings.Contains(e, ".") || strings.HasPrefix(e, "-")) {
			ok = false
		}
		if !ok {
			return fmt.Errorf("module %q is not a module path: element %q", p, e)
		}
	}
	return nil
}

// checkVersion refuses what is not a semantic version the module's path
// allows: vN.x.y for a /vN path (N ≥ 2), v0 or v1 otherwise (or a
// +incompatible major), gopkg.in paths as they come.
func checkVersion(module, v string) error {
	m := semverRe().FindStringSubmatch(v)
	if m == nil {
		return fmt.Errorf("%q is not a semantic version (v1.2.3)", v)
	}
	major, incompatible := m[1], m[6] != ""
	switch mm := majorRe().FindStringSubmatch(module); {
	case strings.HasPrefix(module, "gopkg.in/"):
	case mm != nil && (major != mm[1] || incompatible):
		return fmt.Errorf("%s is not a version of %s (major v%s)", v, module, mm[1])
	case mm == nil && major != "0" && major != "1" && !incompatible:
		return fmt.Errorf("%s is not a version of %s: a v2 or later major needs a /vN path", v, module)
	}
	return nil
}

func (h Hidden) check(src *Source) error {
	module := src.Module
	if len(h.Command) > 1000 {
		return errors.New("command is longer than 1000 characters")
	}
	if len(h.Files) == 0 || len(h.Files) > maxHidden {
		return fmt.Errorf("files must name 1 to %d files", maxHidden)
	}
	seen := map[string]bool{}
	for _, f := range h.Files {
		if !CleanRel(f) {
			return fmt.Errorf("files: %q is not a clean slash path inside the module (no .., not absolute)", f)
		}
		if seen[f] {
			return fmt.Errorf("files: %q twice", f)
		}
		seen[f] = true
	}
	if len(h.F2P)+len(h.P2P) > maxTests {
		return fmt.Errorf("more than %d tests", maxTests)
	}
	for _, t := range append(slices.Clone(h.F2P), h.P2P...) {
		if src.DebianSource != "" {
			if err := checkPytestID(t); err != nil {
				return err
			}
		} else if t == "" || len(t) > 1024 || strings.ContainsAny(t, " \t\n") || !strings.Contains(t, ".") {
			return fmt.Errorf("%q is not a test name (<package import path>.<TestName>)", t)
		}
		if module != "" && !strings.HasPrefix(t, module+".") && !strings.HasPrefix(t, module+"/") {
			return fmt.Errorf("%q is not a test of a package of %s", t, module)
		}
		if slices.Contains(h.F2P, t) && slices.Contains(h.P2P, t) {
			return fmt.Errorf("%q is in both f2p and p2p", t)
		}
	}
	if module == "" && src.DebianSource == "" {
		return nil
	}
	if len(h.F2P) == 0 {
		return errors.New("f2p names no test: a case whose hidden tests show nothing cannot be judged")
	}
	if src.DebianSource != "" {
		_, err := h.PytestArgv()
		return err
	}
	if _, err := h.Argv(); err != nil {
		return err
	}
	return nil
}

// The flags a hidden command may give `go test`: which tests run and how
// long, never a program to run tests under (-exec, -toolexec) or a file to
// write (-o, -coverprofile…).
var (
	testBoolFlags  = map[string]bool{"json": true, "v": true, "short": true, "failfast": true}
	testValueFlags = map[string]bool{"run": true, "skip": true, "count": true, "timeout": true, "tags": true, "parallel": true}
)

// Argv is the hidden command split into words: `go test` with -json, the
// flags above and packages of the module (".", "./dir", "./..."), run
// without a shell.
func (h Hidden) Argv() ([]string, error) {
	argv, err := policy.Split(h.Command)
	if err != nil {
		return nil, fmt.Errorf("command %q: %w", h.Command, err)
	}
	bad := func(why string) ([]string, error) {
		return nil, fmt.Errorf("command %q is not `go test -json [-run RE] [PACKAGE…]`: %s", h.Command, why)
	}
	if len(argv) < 2 || argv[0] != "go" || argv[1] != "test" {
		return bad("its output is read as go test -json")
	}
	hasJSON := false
	for i := 2; i < len(argv); i++ {
		a := argv[i]
		if !strings.HasPrefix(a, "-") {
			if a != "." && a != "./..." && !(strings.HasPrefix(a, "./") && CleanRel(strings.TrimSuffix(strings.TrimPrefix(a, "./"), "/..."))) {
				return bad(fmt.Sprintf("%q is not a package of the module (., ./dir, ./...)", a))
			}
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case testBoolFlags[name] && (!hasValue || value == "true"):
			hasJSON = hasJSON || name == "json"
		case testValueFlags[name] && hasValue:
		case testValueFlags[name] && i+1 < len(argv):
			i++
		default:
			return bad(fmt.Sprintf("the flag %s is not one a hidden command takes (-json, -v, -short, -failfast, -run, -skip, -count, -timeout, -tags, -parallel)", a))
		}
	}
	if !hasJSON {
		return bad("no -json: its output is read as go test -json")
	}
	return argv, nil
}

// planID is the one change directory under dir/plan ("" for no plan/).
func planID(dir string) (string, error) {
	st, err := os.Lstat(filepath.Join(dir, "plan"))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", errors.New("plan is not a directory")
	}
	entries, err := os.ReadDir(filepath.Join(dir, "plan"))
	if err != nil {
		return "", err
	}
	var ids []string
	for _, e := range entries {
		if !e.IsDir() {
			return "", fmt.Errorf("plan/%s: plan/ holds one change directory and nothing else", e.Name())
		}
		ids = append(ids, e.Name())
	}
	if len(ids) != 1 {
		return "", fmt.Errorf("plan/ holds %d changes; a case has exactly one", len(ids))
	}
	if !changeIDRe().MatchString(ids[0]) {
		return "", fmt.Errorf("plan/%s: not a change id (kebab-case)", ids[0])
	}
	return ids[0], nil
}

// CleanRel reports whether p is a clean slash path inside a tree: not
// empty, not absolute, no "..", no backslash, no NUL.
func CleanRel(p string) bool {
	return p != "" && len(p) <= 1024 && !strings.HasPrefix(p, "/") && !strings.ContainsAny(p, "\\\x00\n") &&
		path.Clean(p) == p && p != "." && p != ".." && !strings.HasPrefix(p, "../")
}

// readMeta reads a small file of the case through no symlink; a missing
// optional one is (nil, nil).
func readMeta(dir, name string, optional bool) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open the case: %w", err)
	}
	defer root.Close()
	data, err := ReadLimited(root, name, maxMetaFile)
	if optional && errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return data, nil
}

// ReadLimited reads the regular file name in root, through no symlink, of
// at most limit bytes.
func ReadLimited(root *os.Root, name string, limit int64) ([]byte, error) {
	f, err := nofollow.OpenFile(root, name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return data, nil
}

// StrictJSON decodes one JSON value into v, refusing unknown fields and
// trailing data (the golden sets' files are read this one way).
func StrictJSON(src []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}

// Materialized reports whether caseDir has a repo/ directory (the fetcher,
// tools/realset, lays it out).
func Materialized(caseDir string) bool {
	st, err := os.Lstat(filepath.Join(caseDir, "repo"))
	return err == nil && st.IsDir()
}
