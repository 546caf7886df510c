// Package proxytest writes a Go module proxy on disk for tests: the
// GOPROXY protocol's files (<module>/@v/list, <version>.info, .mod, .zip)
// under a directory a file:// GOPROXY names, so the go command downloads
// from it with no network.
package proxytest

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
)

// Proxy is a module proxy under Dir.
type Proxy struct {
	Dir string
	// Sums are the h1: sums of the zips written, by "module@version".
	Sums map[string]string
}

// New is an empty proxy under dir.
func New(dir string) *Proxy { return &Proxy{Dir: dir, Sums: map[string]string{}} }

// URL is the proxy as GOPROXY names it.
func (p *Proxy) URL() string { return "file://" + filepath.ToSlash(p.Dir) }

// Env is an environment for the go command that reads only this proxy,
// with no checksum database and a module cache of its own under cache
// (writable, so a test's temporary directory can be removed).
func (p *Proxy) Env(cache string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GOPROXY", "GOSUMDB", "GONOSUMDB", "GOPRIVATE", "GONOPROXY", "GOMODCACHE", "GOFLAGS", "GOWORK", "GOTOOLCHAIN":
		default:
			env = append(env, kv)
		}
	}
	return append(env, "GOPROXY="+p.URL(), "GOSUMDB=off", "GONOSUMDB=*", "GOMODCACHE="+cache,
		"GOFLAGS=-modcacherw", "GOTOOLCHAIN=local")
}

// Add writes module at version with files (slash path to content; go.mod
// among them) and records its sum. The zip follows the module zip rules:
// every file under module@version/, no directories, no vendor/ or nested
// modules (the caller gives none).
func (p *Proxy) Add(module, version string, files map[string]string) error {
	gomod, ok := files["go.mod"]
	if !ok {
		return fmt.Errorf("%s@%s: no go.mod", module, version)
	}
	esc := escape(module)
	dir := filepath.Join(p.Dir, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w, err := zw.Create(module + "@" + version + "/" + n)
		if err != nil {
			return err
		}
		if _, err := w.Write([]byte(files[n])); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	info := fmt.Sprintf(`{"Version":%q,"Time":"2026-01-01T00:00:00Z"}`, version)
	for name, data := range map[string][]byte{version + ".zip": buf.Bytes(), version + ".mod": []byte(gomod), version + ".info": []byte(info)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	list, _ := os.ReadFile(filepath.Join(dir, "list"))
	if err := os.WriteFile(filepath.Join(dir, "list"), append(list, []byte(version+"\n")...), 0o644); err != nil {
		return err
	}
	p.Sums[module+"@"+version] = Hash1(module+"@"+version, files)
	return nil
}

// Hash1 is the h1: hash of a module zip of files (dirhash.Hash1 over the
// zip's names, prefix included).
func Hash1(prefix string, files map[string]string) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, prefix+"/"+n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%x  %s\n", sha256.Sum256([]byte(files[strings.TrimPrefix(n, prefix+"/")])), n)
	}
	return "h1:" + base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// escape is a module path as the proxy protocol spells it: each capital
// letter is "!" and its lower case.
func escape(p string) string {
	var b strings.Builder
	for _, r := range p {
		if unicode.IsUpper(r) {
			b.WriteByte('!')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
