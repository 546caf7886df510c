package nofollow_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/nofollow"
)

// tree is a work tree with symlinks of every kind, and a directory outside
// it holding a secret.
type tree struct {
	ws, out string
	root    *os.Root
}

func newTree(t *testing.T) tree {
	t.Helper()
	ws, out := t.TempDir(), t.TempDir()
	write(t, filepath.Join(out, "secret"), "SECRET")
	write(t, filepath.Join(ws, "d", "f"), "in the tree")
	for link, target := range map[string]string{
		"indir":    "d",
		"infile":   "d/f",
		"d/up":     "../d/f",
		"outdir":   out,
		"outfile":  filepath.Join(out, "secret"),
		"outrel":   "../" + filepath.Base(out) + "/secret",
		"abs":      filepath.Join(ws, "d", "f"),
		"dangling": "d/new",
		"loop1":    "loop2",
		"loop2":    "loop1",
	} {
		if err := os.Symlink(target, filepath.Join(ws, filepath.FromSlash(link))); err != nil {
			t.Fatal(err)
		}
	}
	root, err := os.OpenRoot(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return tree{ws: ws, out: out, root: root}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func isSymlinkErr(err error) bool {
	var se *nofollow.SymlinkError
	return errors.As(err, &se)
}

// No read goes through a symlink, wherever it is on the path and wherever it
// points.
func TestReadFileRefusesSymlinks(t *testing.T) {
	tr := newTree(t)
	got, err := nofollow.ReadFile(tr.root, "d/f")
	if err != nil || string(got) != "in the tree" {
		t.Fatalf("ReadFile(d/f) = %q, %v", got, err)
	}
	for _, name := range []string{"infile", "indir/f", "d/up", "outfile", "outdir/secret", "outrel", "abs", "loop1"} {
		got, err := nofollow.ReadFile(tr.root, name)
		if !isSymlinkErr(err) {
			t.Errorf("ReadFile(%s) = %q, %v; want a SymlinkError", name, got, err)
		}
	}
	for _, name := range []string{"../x", "/etc/passwd", "a\x00b"} {
		if _, err := nofollow.ReadFile(tr.root, name); err == nil {
			t.Errorf("ReadFile(%q) read something", name)
		}
	}
	if _, err := nofollow.ReadFile(tr.root, "missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(missing): %v, want not exist", err)
	}
}

// A write through a symlink changes nothing and creates nothing, in the tree
// or out of it.
func TestWriteFileRefusesSymlinks(t *testing.T) {
	tr := newTree(t)
	for _, name := range []string{"infile", "indir/g", "outfile", "outdir/new", "dangling"} {
		if err := nofollow.WriteFile(tr.root, name, []byte("X"), 0o644); !isSymlinkErr(err) {
			t.Errorf("WriteFile(%s): %v, want a SymlinkError", name, err)
		}
	}
	if got := read(t, filepath.Join(tr.ws, "d", "f")); got != "in the tree" {
		t.Errorf("d/f = %q after writes through links to it", got)
	}
	if got := read(t, filepath.Join(tr.out, "secret")); got != "SECRET" {
		t.Errorf("outside secret = %q after a write through a link to it", got)
	}
	for _, p := range []string{filepath.Join(tr.out, "new"), filepath.Join(tr.ws, "d", "new"), filepath.Join(tr.ws, "d", "g")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was created", p)
		}
	}
	if err := nofollow.MkdirAll(tr.root, "indir/x", 0o755); !isSymlinkErr(err) {
		t.Errorf("MkdirAll(indir/x): %v, want a SymlinkError", err)
	}
	if err := nofollow.MkdirAll(tr.root, "outdir/x", 0o755); !isSymlinkErr(err) {
		t.Errorf("MkdirAll(outdir/x): %v, want a SymlinkError", err)
	}
	if err := nofollow.MkdirAll(tr.root, "a/b/c", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := nofollow.WriteFile(tr.root, "a/b/c/new", []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := nofollow.WriteFile(tr.root, "d/f", []byte("short"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(tr.ws, "d", "f")); got != "short" {
		t.Errorf("d/f = %q after WriteFile, want it replaced", got)
	}
	if fi, err := os.Stat(filepath.Join(tr.ws, "a/b/c/new")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("a/b/c/new: %v, %v; want mode 0600", fi, err)
	}
}

// Resolve follows symlinks inside the tree and refuses one out of it.
func TestResolve(t *testing.T) {
	tr := newTree(t)
	for name, want := range map[string]string{
		"d/f":         "d/f",
		"infile":      "d/f",
		"indir/f":     "d/f",
		"indir/up":    "d/f",
		"indir/new/x": "d/new/x",
		"d/../infile": "d/f",
		"dangling":    "d/new",
		"":            "",
		"new":         "new",
	} {
		if got, err := nofollow.Resolve(tr.root, name); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	for _, name := range []string{"outfile", "outdir/secret", "outrel", "abs"} {
		var oe *nofollow.OutsideError
		if got, err := nofollow.Resolve(tr.root, name); !errors.As(err, &oe) {
			t.Errorf("Resolve(%q) = %q, %v; want an OutsideError", name, got, err)
		}
	}
	if got, err := nofollow.Resolve(tr.root, "loop1"); err == nil {
		t.Errorf("Resolve(loop1) = %q, want an error", got)
	}
}

// ReadDir lists a symlink as one and does not list through one.
func TestReadDir(t *testing.T) {
	tr := newTree(t)
	entries, err := nofollow.ReadDir(tr.root, ".")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]fs.FileMode{}
	for _, e := range entries {
		kinds[e.Name()] = e.Type()
	}
	if kinds["d"] != fs.ModeDir || kinds["outdir"] != fs.ModeSymlink || kinds["infile"] != fs.ModeSymlink {
		t.Errorf("ReadDir(.) kinds = %v", kinds)
	}
	if _, err := nofollow.ReadDir(tr.root, "outdir"); !isSymlinkErr(err) {
		t.Errorf("ReadDir(outdir): %v, want a SymlinkError", err)
	}
	if _, err := nofollow.ReadDir(tr.root, "indir"); !isSymlinkErr(err) {
		t.Errorf("ReadDir(indir): %v, want a SymlinkError", err)
	}
}

// Rename moves inside the tree and refuses a directory that is a symlink.
func TestRename(t *testing.T) {
	tr := newTree(t)
	if err := nofollow.Rename(tr.root, "d/f", "outdir/f"); !isSymlinkErr(err) {
		t.Errorf("Rename(d/f, outdir/f): %v, want a SymlinkError", err)
	}
	if err := nofollow.Rename(tr.root, "indir/f", "g"); !isSymlinkErr(err) {
		t.Errorf("Rename(indir/f, g): %v, want a SymlinkError", err)
	}
	if err := nofollow.MkdirAll(tr.root, "d/archive", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := nofollow.Rename(tr.root, "d/f", "d/archive/f"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(tr.ws, "d", "archive", "f")); got != "in the tree" {
		t.Errorf("moved file = %q", got)
	}
	if _, err := os.Lstat(filepath.Join(tr.out, "f")); err == nil {
		t.Error("a file was moved out of the tree")
	}
}

// A path swapped between a file (or directory) and a symlink while it is
// read and written is never followed, out of the tree or inside it (to a
// file standing for .git/config): nothing there is read or written,
// whichever way each race goes.
func TestSwapRace(t *testing.T) {
	tr := newTree(t)
	n := 2000
	if testing.Short() {
		n = 200
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	halt := func() { stop.Store(true); wg.Wait() }
	t.Cleanup(halt) // before the temporary directories go
	swap := func(name, target string, real func(tmp string)) {
		defer wg.Done()
		p := filepath.Join(tr.ws, name)
		tmp := p + ".tmp"
		for i := 0; !stop.Load(); i++ {
			os.RemoveAll(tmp)
			if i%2 == 0 {
				real(tmp)
			} else if os.Symlink(target, tmp) != nil {
				continue
			}
			if os.Rename(tmp, p) != nil {
				os.RemoveAll(p)
			}
		}
	}
	write(t, filepath.Join(tr.ws, "guard"), "GUARD")
	wg.Add(3)
	go swap("y", "guard", func(tmp string) { os.WriteFile(tmp, []byte("inside"), 0o644) })
	go swap("x", filepath.Join(tr.out, "secret"), func(tmp string) { os.WriteFile(tmp, []byte("inside"), 0o644) })
	go swap("sub", tr.out, func(tmp string) {
		os.Mkdir(tmp, 0o755)
		os.WriteFile(filepath.Join(tmp, "secret"), []byte("inside"), 0o644)
	})
	reads, refusals := 0, 0
	for i := 0; i < n; i++ {
		for _, name := range []string{"x", "sub/secret", "y"} {
			got, err := nofollow.ReadFile(tr.root, name)
			if string(got) == "SECRET" || string(got) == "GUARD" {
				t.Fatalf("ReadFile(%s) read %q through a symlink", name, got)
			}
			if err == nil {
				reads++
			} else {
				refusals++
			}
			_ = nofollow.WriteFile(tr.root, name, []byte("WRITTEN"), 0o644)
			_ = nofollow.MkdirAll(tr.root, "sub/deeper", 0o755)
		}
	}
	halt()
	if got := read(t, filepath.Join(tr.out, "secret")); got != "SECRET" {
		t.Errorf("the file outside the tree was written: %q", got)
	}
	if got := read(t, filepath.Join(tr.ws, "guard")); got != "GUARD" {
		t.Errorf("the guarded file inside the tree was written: %q", got)
	}
	entries, _ := os.ReadDir(tr.out)
	if len(entries) != 1 {
		t.Errorf("the directory outside the tree has %d entries, want only its secret", len(entries))
	}
	t.Logf("%d reads, %d refusals", reads, refusals)
}
