package policy

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestResolve(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	outside := filepath.Join(root, "outside")
	for _, d := range []string{ws, outside, filepath.Join(ws, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a"), 0o644))
	must(os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644))
	must(os.Symlink(outside, filepath.Join(ws, "out")))                           // dir link out
	must(os.Symlink(filepath.Join(outside, "secret"), filepath.Join(ws, "leak"))) // file link out
	must(os.Symlink(filepath.Join(outside, "nothing"), filepath.Join(ws, "dangling")))
	must(os.Symlink("sub", filepath.Join(ws, "in"))) // link inside
	must(os.Symlink("../a.txt", filepath.Join(ws, "sub", "back")))

	real, err := filepath.EvalSymlinks(ws)
	must(err)
	tests := []struct {
		path    string
		want    string // relative to the real workspace; "" with refused
		refused bool
	}{
		{path: "a.txt", want: "a.txt"},
		{path: ".", want: "."},
		{path: "", want: "."},
		{path: "sub/new/file.go", want: "sub/new/file.go"},
		{path: "sub/../a.txt", want: "a.txt"},
		{path: filepath.Join(ws, "a.txt"), want: "a.txt"},
		{path: "in/x", want: "sub/x"},
		{path: "sub/back", want: "a.txt"},
		{path: "../../etc/passwd", refused: true},
		{path: "..", refused: true},
		{path: "/etc/passwd", refused: true},
		{path: outside, refused: true},
		{path: "out/secret", refused: true},
		{path: "out", refused: true},
		{path: "out/newfile", refused: true},
		{path: "leak", refused: true},
		{path: "dangling", refused: true},
		{path: "a\x00b", refused: true},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := Resolve(ws, tt.path)
			if tt.refused {
				var r *Refusal
				if !errors.As(err, &r) {
					t.Fatalf("Resolve(%q) = %q, %v; want a refusal", tt.path, got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tt.path, err)
			}
			if want := filepath.Join(real, tt.want); got != want {
				t.Errorf("Resolve(%q) = %q, want %q", tt.path, got, want)
			}
		})
	}
}
