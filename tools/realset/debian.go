package realset

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/roadmap-dev/roadmap/internal/eval/realcase"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// MirrorEnv names the environment variable that overrides the Debian
// archive the materializer reads; without it, the archive is the first one
// the machine's apt configuration names.
const MirrorEnv = "ROADMAP_DEBIAN_MIRROR"

// PythonEnv names the environment variable that picks the Python
// interpreter a hidden pytest command runs under ("python3" otherwise,
// looked up in PATH).
const PythonEnv = "ROADMAP_PYTHON"

const maxOrigBytes = 32 << 20 // one .orig tarball, compressed

// poolDir is where Debian's archive keeps a source package's files.
func poolDir(source string) string {
	prefix := source[:1]
	if strings.HasPrefix(source, "lib") && len(source) > 3 {
		prefix = source[:4]
	}
	return "pool/main/" + prefix + "/" + source
}

// Mirror is the Debian archive's base URL: o.DebianMirror, else
// $ROADMAP_DEBIAN_MIRROR in o's environment, else the first archive the
// machine's apt configuration names (/etc/apt/sources.list.d/*.sources
// "URIs:" lines, then /etc/apt/sources.list "deb" lines), leaving out
// security archives, which hold no upstream tarballs of their own.
func (o Options) Mirror() (string, error) {
	m := o.DebianMirror
	if m == "" {
		env := o.Env
		if env == nil {
			env = os.Environ()
		}
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, MirrorEnv+"="); ok {
				m = v
			}
		}
	}
	if m == "" {
		m = aptMirror(o.aptDir())
	}
	if m == "" {
		return "", fmt.Errorf("no Debian archive: set %s or name one in apt's sources", MirrorEnv)
	}
	u, err := url.Parse(m)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("the Debian archive %q is not an http(s) URL without credentials", m)
	}
	return strings.TrimSuffix(m, "/"), nil
}

func (o Options) aptDir() string {
	if o.AptDir != "" {
		return o.AptDir
	}
	return "/etc/apt"
}

// aptMirror reads the first non-security archive URI of apt's sources.
func aptMirror(dir string) string {
	var cands []string
	if names, err := filepath.Glob(filepath.Join(dir, "sources.list.d", "*.sources")); err == nil {
		for _, n := range names {
			data, err := os.ReadFile(n)
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(data), "\n") {
				if v, ok := strings.CutPrefix(strings.TrimSpace(line), "URIs:"); ok {
					cands = append(cands, strings.Fields(v)...)
				}
			}
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, "sources.list")); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			f := strings.Fields(line)
			if len(f) >= 3 && f[0] == "deb-src" || len(f) >= 3 && f[0] == "deb" {
				u := f[1]
				if strings.HasPrefix(u, "[") { // deb [options] URI suite
					for i := 2; i < len(f); i++ {
						if strings.HasSuffix(f[i-1], "]") {
							u = f[i]
							break
						}
					}
				}
				cands = append(cands, u)
			}
		}
	}
	for _, c := range cands {
		if (strings.HasPrefix(c, "http://") || strings.HasPrefix(c, "https://")) && !strings.Contains(c, "security") {
			return c
		}
	}
	return ""
}

// fetchOrig downloads the source's upstream tarball name from the
// archive's pool, refuses a sha256 other than want, and reads its files.
func (o Options) fetchOrig(ctx context.Context, source, name, want string) (*moduleZip, error) {
	mirror, err := o.Mirror()
	if err != nil {
		return nil, err
	}
	u := mirror + "/" + poolDir(source) + "/" + name
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	client := o.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: the Debian archive answered %s", name, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxOrigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > maxOrigBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, maxOrigBytes)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != want {
		return nil, fmt.Errorf("%s has the sha256 %s, not %s as source.json says: refused", name, got, want)
	}
	z, err := readOrigTar(ctx, name, data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return z, nil
}

// readOrigTar reads an upstream tarball: regular files only (directories
// pass, anything else — a link, a device — is refused), each path clean
// once its one top directory is stripped, bounded in count and size.
func readOrigTar(ctx context.Context, name string, data []byte) (*moduleZip, error) {
	var r io.Reader
	switch ext := realcase.OrigExtRe().FindStringSubmatch(name); {
	case ext == nil:
		return nil, errors.New("not an .orig.tar.{gz,xz,bz2}")
	case ext[1] == "gz":
		gz, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		r = gz
	case ext[1] == "bz2":
		r = bzip2.NewReader(bytes.NewReader(data))
	default: // xz: the standard library has no reader; xz-utils is on every Debian
		cmd := exec.CommandContext(ctx, "xz", "-dc")
		cmd.Stdin = bytes.NewReader(data)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &limitedBuffer{b: &out, n: realcase.MaxZipBytes + 1<<20}, &limitedBuffer{b: &stderr, n: 4 << 10}
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("xz -dc: %v: %s", err, strings.TrimSpace(stderr.String()))
		}
		r = &out
	}
	tr := tar.NewReader(bufio.NewReader(io.LimitReader(r, realcase.MaxZipBytes+1<<20)))
	z := &moduleZip{files: map[string][]byte{}}
	top, n := "", 0
	var total int64
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read the tarball: %w", err)
		}
		if n++; n > realcase.MaxZipFiles {
			return nil, fmt.Errorf("the tarball holds more than %d entries", realcase.MaxZipFiles)
		}
		p := strings.TrimPrefix(h.Name, "./")
		first, rel, _ := strings.Cut(p, "/")
		if top == "" {
			top = first
		}
		if first != top || top == ".." || top == "." {
			return nil, fmt.Errorf("the tarball's %q is not under one top directory", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeXGlobalHeader:
			continue
		case tar.TypeReg:
		default:
			return nil, fmt.Errorf("the tarball's %q is not a regular file (links are refused)", h.Name)
		}
		if !realcase.CleanRel(rel) {
			return nil, fmt.Errorf("the tarball's %q is not at a clean path", h.Name)
		}
		if h.Size > realcase.MaxFileBytes {
			return nil, fmt.Errorf("the tarball's %s is larger than %d bytes (the eval reads no larger file)", rel, realcase.MaxFileBytes)
		}
		if total += h.Size; total > realcase.MaxZipBytes {
			return nil, fmt.Errorf("the tarball's files are larger than %d bytes", realcase.MaxZipBytes)
		}
		body, err := io.ReadAll(io.LimitReader(tr, realcase.MaxFileBytes+1))
		if err != nil {
			return nil, fmt.Errorf("read the tarball's %s: %w", rel, err)
		}
		if _, dup := z.files[rel]; dup {
			return nil, fmt.Errorf("the tarball holds %s twice", rel)
		}
		z.files[rel] = body
	}
	if len(z.files) == 0 {
		return nil, errors.New("the tarball holds no file")
	}
	return z, nil
}

// pytest runs argv (`python3 -m pytest …`) in dir behind b, with -rA and
// no cache added, and reads the summary lines -rA prints ("PASSED
// path::test", "FAILED path::test - …", "ERROR path - …" for a file that
// does not collect). A non-zero exit is the tests' verdict; output naming
// no test is an error.
func (o Options) pytest(ctx context.Context, b Boundary, dir string, argv []string) (map[string]string, error) {
	python := "python3"
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, PythonEnv+"="); ok && v != "" {
			python = v
		}
	}
	if o.Python != "" {
		python = o.Python
	}
	args := append([]string{"-m", "pytest", "-rA", "-p", "no:cacheprovider"}, argv[3:]...)
	cmd := exec.CommandContext(ctx, python, args...)
	cmd.Dir = dir
	// The tests are the package's code: the boundary's environment, an
	// allow-list of the caller's, so no credential of the caller's.
	cmd.Env = append(b.Env(), "PYTHONDONTWRITEBYTECODE=1", "PYTHONPATH="+dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &limitedBuffer{b: &stdout, n: 16 << 20}, &limitedBuffer{b: &stderr, n: 64 << 10}
	b.Confine(cmd)
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	res := parsePytestSummary(stdout.String())
	if len(res) == 0 {
		return nil, fmt.Errorf("`%s %s` reported no test (%v): %s", python, strings.Join(args, " "), runErr, lastLines(stdout.String()+stderr.String(), 5))
	}
	return res, nil
}

// parsePytestSummary reads -rA's summary: node id to pass, fail or skip;
// a file that failed to collect is "build failed" under its path.
func parsePytestSummary(out string) map[string]string {
	res := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		word, rest, ok := strings.Cut(strings.TrimRight(line, "\r"), " ")
		if !ok {
			continue
		}
		id, _, _ := strings.Cut(rest, " - ")
		id = strings.TrimSpace(id)
		if strings.ContainsAny(id, " \t") || id == "" {
			continue
		}
		switch word {
		case "PASSED", "XPASS":
			res[id] = "pass"
		case "FAILED":
			res[id] = "fail"
		case "XFAIL":
			res[id] = "skip"
		case "ERROR":
			if strings.Contains(id, "::") {
				res[id] = "fail"
			} else {
				res[id] = "build failed"
			}
		}
	}
	return res
}

// pytestStatus is how a pytest run left the test t.
func pytestStatus(r map[string]string, t string) string {
	if s, ok := r[t]; ok {
		return s
	}
	file, _, _ := strings.Cut(t, "::")
	if r[file] == "build failed" {
		return "build failed"
	}
	return "absent"
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
