package unidiff

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// renameAndQuoted is what git prints for a renamed, edited file, a new file
// whose name git quotes (a space and a non-ASCII rune, octal-escaped), a
// pure rename, a deleted file and a binary file.
const renameAndQuoted = `diff --git a/old name.go b/new name.go
similarity index 90%
rename from old name.go
rename to new name.go
index 1111111..2222222 100644
--- a/old name.go
+++ b/new name.go
@@ -1,2 +1,3 @@ package x
 a
-b
+c
+d
diff --git "a/t\303\251st \"q\".go" "b/t\303\251st \"q\".go"
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ "b/t\303\251st \"q\".go"
@@ -0,0 +1 @@
+x
\ No newline at end of file
diff --git a/r.go b/sub/r2.go
similarity index 100%
rename from r.go
rename to sub/r2.go
diff --git a/gone.go b/gone.go
deleted file mode 100644
index 4444444..0000000
--- a/gone.go
+++ /dev/null
@@ -1 +0,0 @@
-package gone
diff --git a/img.png b/img.png
index 5555555..6666666 100644
Binary files a/img.png and b/img.png differ
`

func TestParse(t *testing.T) {
	want := []File{
		{Old: "old name.go", New: "new name.go", Hunks: []Hunk{{Header: "@@ -1,2 +1,3 @@ package x", NewStart: 1, Lines: []string{" a", "-b", "+c", "+d"}}}},
		{New: `tést "q".go`, Hunks: []Hunk{{Header: "@@ -0,0 +1,1 @@", NewStart: 1, Lines: []string{"+x"}}}},
		{Old: "r.go", New: "sub/r2.go"},
		{Old: "gone.go", Hunks: []Hunk{{Header: "@@ -1,1 +0,0 @@", Lines: []string{"-package gone"}}}},
		{Old: "img.png", New: "img.png", Binary: true},
	}
	if diff := cmp.Diff(want, Parse(renameAndQuoted)); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
}

// TestParseOutOfTree: a path that leaves the tree is no path.
func TestParseOutOfTree(t *testing.T) {
	got := Parse("diff --git a/x.go b/x.go\n--- a/../x.go\n+++ b//etc/x.go\n@@ -1 +1 @@\n-a\n+b\n")
	if len(got) != 1 || got[0].Old != "" || got[0].New != "" {
		t.Errorf("Parse = %+v, want one file with no paths", got)
	}
}

// FuzzParse: a diff holds model-written text; no input makes Parse panic or
// name a path out of the tree, or a hunk line without its op.
func FuzzParse(f *testing.F) {
	f.Add(renameAndQuoted)
	f.Add("diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -1 +1,2 @@\n x\n+y\n")
	f.Add("+++ \"b/\\\"q.go\"\n@@ -0,0 +1 @@\n+a\n")
	f.Fuzz(func(t *testing.T, in string) {
		for _, file := range Parse(in) {
			for _, p := range []string{file.Old, file.New} {
				if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "../") || p == ".." || strings.Contains(p, "/../") {
					t.Errorf("path %q", p)
				}
			}
			for _, h := range file.Hunks {
				for _, l := range h.Lines {
					if l == "" || !strings.ContainsRune(" +-", rune(l[0])) {
						t.Errorf("hunk line %q", l)
					}
				}
			}
		}
	})
}
