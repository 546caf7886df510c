package realset

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/roadmap-dev/roadmap/internal/eval/realcase"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/policy"
)

// Options say how the go command runs.
type Options struct {
	// Env is the go command's environment (GOPROXY, GOMODCACHE, GOFLAGS,
	// GONOSUMDB…); nil is this process's. GOFLAGS gets -mod=mod, and
	// GOWORK is off.
	Env []string
	// Go is the go command (default "go", looked up in Env's PATH).
	Go string
	// TempDir holds the scratch module and the check's trees ("" is the
	// system's).
	TempDir string
	// DebianMirror is the Debian archive a Python case's tarballs come
	// from ("" is $ROADMAP_DEBIAN_MIRROR, else apt's configuration: Mirror).
	DebianMirror string
	// AptDir is where apt's configuration is read ("" is /etc/apt).
	AptDir string
	// HTTPClient fetches from the archive (nil is http.DefaultClient).
	HTTPClient *http.Client
	// Python runs a Python case's hidden tests ("" is $ROADMAP_PYTHON,
	// else python3). Inside the boundary it must be readable: a system
	// Python (/usr/bin/python3), not one under a HOME.
	Python string
	// Isolate opens the isolation boundary on a work tree, dir, that Check
	// runs the case's hidden tests behind: they are a third party's code,
	// as much an attacker's as the model's. The command line opens it as
	// every Job opens its own (job.OpenBoundary, as the configuration's
	// `isolation` says). nil, or an error, and Check runs no test.
	Isolate func(ctx context.Context, dir string) (Boundary, error)
}

// Boundary is an open isolation boundary (*sandbox.Boundary is one).
type Boundary interface {
	// Confine makes cmd run inside: as the boundary's own user, in its
	// namespaces, under Landlock (policy.Jail).
	policy.Jail
	// Env is the environment a command inside gets: an allow-list of the
	// runner's, with HOME, TMPDIR and the Go build cache the boundary's own
	// and no download (GOPROXY=off).
	Env() []string
	// Close gives the work tree back and removes the boundary's HOME.
	Close() error
}

// Result is what Materialize laid out.
type Result struct {
	Case *realcase.Case
	// RepoFiles and HiddenFiles count the files written to repo/ (the
	// plan's included) and hidden/.
	RepoFiles   int
	HiddenFiles int
}

// Materialize gives the case in caseDir its code: the module at
// base_version becomes repo/ (files only, writable), the plan/<id>/ of an
// implement case repo/openspec/changes/<id>/, and hidden.json's files at
// fix_version hidden/. Both zips come from `go mod download -json`, and
// each must have the sum source.json names, by the go command's word and
// by this package's own hash of the zip it reads. Earlier repo/ and hidden/
// are replaced, only once the new ones are complete.
func Materialize(ctx context.Context, caseDir string, o Options) (*Result, error) {
	c, err := realcase.Load(caseDir)
	if err != nil {
		return nil, err
	}
	if !c.HasCode() {
		return nil, fmt.Errorf("source.json names no module and no Debian source: a %s case is metadata only", c.Source.Language)
	}
	base, err := o.code(ctx, c, false)
	if err != nil {
		return nil, err
	}
	var fix *moduleZip
	if c.Hidden != nil {
		if fix, err = o.code(ctx, c, true); err != nil {
			return nil, err
		}
	}

	work, err := os.MkdirTemp(caseDir, ".materialize-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	res := &Result{Case: c}
	repo := filepath.Join(work, "repo")
	for name, data := range base.files {
		if err := writeFile(repo, name, data); err != nil {
			return nil, err
		}
		res.RepoFiles++
	}
	if c.PlanID != "" {
		n, err := copyPlan(caseDir, c.PlanID, filepath.Join(repo, filepath.FromSlash(plan.ChangesDir), c.PlanID))
		if err != nil {
			return nil, err
		}
		res.RepoFiles += n
	}
	hidden := filepath.Join(work, "hidden")
	if err := os.Mkdir(hidden, 0o755); err != nil {
		return nil, err
	}
	if c.Hidden != nil {
		for _, f := range c.Hidden.Files {
			data, ok := fix.files[f]
			if !ok {
				return nil, fmt.Errorf("hidden.json: %s is not a file of %s", f, fixName(c))
			}
			if err := writeFile(hidden, f, data); err != nil {
				return nil, err
			}
			res.HiddenFiles++
		}
	}
	for _, d := range []string{"repo", "hidden"} {
		if err := os.RemoveAll(filepath.Join(caseDir, d)); err != nil {
			return nil, fmt.Errorf("replace %s/: %w", d, err)
		}
		if err := os.Rename(filepath.Join(work, d), filepath.Join(caseDir, d)); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// code is the case's files at base_version (fix false) or fix_version:
// the module's zip from the module proxy, or the Debian source's upstream
// tarball from the archive's pool.
func (o Options) code(ctx context.Context, c *realcase.Case, fix bool) (*moduleZip, error) {
	s := c.Source
	switch {
	case c.HasDebian() && fix:
		return o.fetchOrig(ctx, s.DebianSource, s.FixOrig, s.FixSHA256)
	case c.HasDebian():
		return o.fetchOrig(ctx, s.DebianSource, s.BaseOrig, s.BaseSHA256)
	case fix:
		return o.download(ctx, s.Module, s.FixVersion, s.FixSum)
	}
	return o.download(ctx, s.Module, s.BaseVersion, s.BaseSum)
}

// fixName is the case's code at fix_version: module@version, or the Debian
// source's tarball.
func fixName(c *realcase.Case) string {
	if c.HasDebian() {
		return c.Source.FixOrig + " (Debian source " + c.Source.DebianSource + " " + c.Source.FixVersion + ")"
	}
	return c.Source.Module + "@" + c.Source.FixVersion
}

// moduleZip is a module version's files, slash path (relative to the
// module root) to content.
type moduleZip struct {
	files map[string][]byte
}

// downloadJSON is what `go mod download -json` prints of one module.
type downloadJSON struct {
	Path    string
	Version string
	Error   string
	Zip     string
	Sum     string
}

// download runs `go mod download -json module@version` in a scratch
// module, refuses a sum other than want, and reads the zip.
func (o Options) download(ctx context.Context, module, version, want string) (*moduleZip, error) {
	scratch, err := os.MkdirTemp(o.TempDir, "roadmap-eval-fetch-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	if err := os.WriteFile(filepath.Join(scratch, "go.mod"), []byte("module roadmap-eval-fetch\n\ngo 1.21\n"), 0o644); err != nil {
		return nil, err
	}
	at := module + "@" + version
	cmd := exec.CommandContext(ctx, o.goCmd(), "mod", "download", "-json", at)
	cmd.Dir, cmd.Env = scratch, o.environ()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &limitedBuffer{b: &stdout, n: 1 << 20}, &limitedBuffer{b: &stderr, n: 64 << 10}
	runErr := cmd.Run()
	var d downloadJSON
	if err := json.Unmarshal(stdout.Bytes(), &d); err != nil {
		if runErr != nil {
			return nil, fmt.Errorf("go mod download %s: %v: %s", at, runErr, strings.TrimSpace(stderr.String()))
		}
		return nil, fmt.Errorf("go mod download %s: its -json output does not parse: %w", at, err)
	}
	switch {
	case d.Error != "":
		return nil, fmt.Errorf("go mod download %s: %s", at, d.Error)
	case runErr != nil:
		return nil, fmt.Errorf("go mod download %s: %v: %s", at, runErr, strings.TrimSpace(stderr.String()))
	case d.Path != module || d.Version != version:
		return nil, fmt.Errorf("go mod download %s gave %s@%s", at, d.Path, d.Version)
	case d.Sum != want:
		return nil, fmt.Errorf("%s: the module proxy's zip has the sum %s, not %s as source.json says: refused", at, d.Sum, want)
	case d.Zip == "":
		return nil, fmt.Errorf("go mod download %s names no zip", at)
	}
	z, sum, err := readModuleZip(d.Zip, at)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", at, err)
	}
	if sum != want {
		return nil, fmt.Errorf("%s: the zip in the module cache hashes to %s, not %s: refused", at, sum, want)
	}
	return z, nil
}

func (o Options) goCmd() string {
	if o.Go != "" {
		return o.Go
	}
	return "go"
}

// environ is o.Env (nil: this process's) as goEnv makes it: the go
// command's environment outside the boundary, where it downloads.
func (o Options) environ() []string {
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	return goEnv(env)
}

// goEnv is env with GOFLAGS's -mod set to mod and GOWORK off.
func goEnv(env []string) []string {
	var out []string
	flags := []string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "GOFLAGS":
			for _, f := range strings.Fields(v) {
				if !strings.HasPrefix(f, "-mod=") && !strings.HasPrefix(f, "--mod=") {
					flags = append(flags, f)
				}
			}
		case "GOWORK":
		default:
			out = append(out, kv)
		}
	}
	return append(out, "GOFLAGS="+strings.Join(append(flags, "-mod=mod"), " "), "GOWORK=off")
}

// readModuleZip reads a module zip: every file under module@version/, each
// path clean, each file regular and bounded, with the h1: hash of the zip
// as golang.org/x/mod/sumdb/dirhash.HashZip computes it.
func readModuleZip(name, at string) (*moduleZip, string, error) {
	zr, err := zip.OpenReader(name)
	if err != nil {
		return nil, "", fmt.Errorf("open the module zip: %w", err)
	}
	defer zr.Close()
	if len(zr.File) > realcase.MaxZipFiles {
		return nil, "", fmt.Errorf("the module zip holds more than %d files", realcase.MaxZipFiles)
	}
	prefix := at + "/"
	z := &moduleZip{files: map[string][]byte{}}
	type entry struct {
		name string
		sum  [32]byte
	}
	var entries []entry
	var total int64
	for _, f := range zr.File {
		if strings.Contains(f.Name, "\n") {
			return nil, "", fmt.Errorf("the module zip has a file name with a newline")
		}
		rel, ok := strings.CutPrefix(f.Name, prefix)
		if !ok {
			return nil, "", fmt.Errorf("the module zip's %q is not under %s", f.Name, prefix)
		}
		isDir := strings.HasSuffix(rel, "/")
		if !isDir && (!realcase.CleanRel(rel) || !f.Mode().IsRegular()) {
			return nil, "", fmt.Errorf("the module zip's %q is not a regular file at a clean path", f.Name)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, "", fmt.Errorf("read the module zip's %s: %w", rel, err)
		}
		data, err := io.ReadAll(io.LimitReader(rc, realcase.MaxFileBytes+1))
		rc.Close()
		if err != nil {
			return nil, "", fmt.Errorf("read the module zip's %s: %w", rel, err)
		}
		if len(data) > realcase.MaxFileBytes {
			return nil, "", fmt.Errorf("the module's %s is larger than %d bytes (the eval reads no larger file)", rel, realcase.MaxFileBytes)
		}
		if total += int64(len(data)); total > realcase.MaxZipBytes {
			return nil, "", fmt.Errorf("the module's files are larger than %d bytes", realcase.MaxZipBytes)
		}
		entries = append(entries, entry{f.Name, sha256.Sum256(data)})
		if isDir {
			continue
		}
		if _, dup := z.files[rel]; dup {
			return nil, "", fmt.Errorf("the module zip holds %s twice", rel)
		}
		z.files[rel] = data
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	h := sha256.New()
	for _, e := range entries {
		fmt.Fprintf(h, "%x  %s\n", e.sum, e.name)
	}
	return z, "h1:" + base64.StdEncoding.EncodeToString(h.Sum(nil)), nil
}

// writeFile writes data to root/name (a clean slash path), creating the
// directories on the way; the file is new (never a symlink's target).
func writeFile(root, name string, data []byte) error {
	if !realcase.CleanRel(name) {
		return fmt.Errorf("%q is not a clean slash path", name)
	}
	p := filepath.Join(root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// copyPlan copies caseDir/plan/<id>/ to dst, regular files only, through
// no symlink.
func copyPlan(caseDir, id, dst string) (int, error) {
	root, err := os.OpenRoot(caseDir)
	if err != nil {
		return 0, err
	}
	defer root.Close()
	n := 0
	src := "plan/" + id
	err = fs.WalkDir(root.FS(), src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file (a plan is plain files)", p)
		}
		if n++; n > realcase.MaxPlanFiles {
			return fmt.Errorf("plan/%s holds more than %d files", id, realcase.MaxPlanFiles)
		}
		data, err := realcase.ReadLimited(root, p, realcase.MaxPlanFile)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		return writeFile(dst, strings.TrimPrefix(p, src+"/"), data)
	})
	if err != nil {
		return 0, fmt.Errorf("copy the plan: %w", err)
	}
	return n, nil
}

// limitedBuffer keeps the first n bytes written to it and drops the rest.
type limitedBuffer struct {
	b *bytes.Buffer
	n int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// errNoHidden is a case whose fix has no hidden tests to check.
var errNoHidden = errors.New("no hidden.json: nothing to check")

// errNoBoundary is Check with no way to open an isolation boundary.
var errNoBoundary = errors.New("the hidden tests are a third party's code and run only behind an isolation boundary, and none was given (Options.Isolate): nothing was run")
