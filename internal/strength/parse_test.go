package strength

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCoverProfile(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     Coverage
		err      string
	}{
		{"go test's own", "mode: set\nexample.com/c/c.go:3.24,3.40 1 1\nexample.com/c/c.go:5.24,6.11 1 0\nexample.com/c/c.go:6.11,8.3 1 1\n",
			Coverage{"example.com/c/c.go": {3: true, 6: true, 7: true, 8: true}}, ""},
		{"merged, with a second mode line", "mode: atomic\na/b.go:1.1,1.5 1 2\nmode: atomic\na/b.go:2.1,2.5 1 0\n",
			Coverage{"a/b.go": {1: true}}, ""},
		{"malformed lines skipped", "mode: set\nnocolon 1 1\na.go:1.1 1 1\na.go:x.1,2.1 1 1\na.go:5.1,4.1 1 1\na.go:1.1,1.2 1 -1\na.go:1.1,99999.1 1 1\na.go:9.1,9.2 1 1\n",
			Coverage{"a.go": {9: true}}, ""},
		{"a path with a colon", "mode: set\nC:/w/a.go:2.1,2.9 1 1\n", Coverage{"C:/w/a.go": {2: true}}, ""},
		{"CRLF", "mode: set\r\na.go:2.1,2.9 1 1\r\n", Coverage{"a.go": {2: true}}, ""},
		{"empty", "", nil, "empty"},
		{"no mode line", "a.go:1.1,1.2 1 1\n", nil, "not a mode line"},
		{"an overlong line", "mode: set\n" + strings.Repeat("x", 10000) + ":1.1,1.2 1 1\na.go:3.1,3.2 1 1\n", Coverage{"a.go": {3: true}}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCoverProfile(strings.NewReader(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("coverage (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzCoverProfile: no profile makes the parser panic, and every line it
// reports is within the bounds it promises.
func FuzzCoverProfile(f *testing.F) {
	f.Add("mode: set\nexample.com/c/c.go:3.24,3.40 1 1\n")
	f.Add("mode: count\na.go:1.1,2.2 3 4\nmode: count\nb.go:7.1,7.9 1 0\n")
	f.Add("mode: set\n:1.1,1.1 1 1\na.go:1.1,1.1 1 99999999999999999999\n")
	f.Fuzz(func(t *testing.T, in string) {
		cov, err := ParseCoverProfile(strings.NewReader(in))
		if err != nil {
			return
		}
		for file, lines := range cov {
			if file == "" {
				t.Errorf("a block with no file")
			}
			if len(lines) > maxBlockLines+1 && strings.Count(in, "\n") < 2 {
				t.Errorf("%d lines from one block", len(lines))
			}
			for l := range lines {
				if l <= 0 {
					t.Errorf("line %d", l)
				}
			}
		}
	})
}

func TestParseDiff(t *testing.T) {
	diff := `diff --git a/calc/calc.go b/calc/calc.go
index 1111111..2222222 100644
--- a/calc/calc.go
+++ b/calc/calc.go
@@ -1,4 +1,6 @@
 package calc
 
-func Add(a, b int) int { return a - b }
+func Add(a, b int) int { return a + b }
+
+func Sub(a, b int) int { return a - b }
@@ -10,2 +12,3 @@ func X() {
 	x()
+	y()
 }
diff --git a/gone.go b/gone.go
deleted file mode 100644
--- a/gone.go
+++ /dev/null
@@ -1 +0,0 @@
-package gone
diff --git "a/sp ace.go" "b/sp ace.go"
--- "a/sp ace.go"
+++ "b/sp ace.go"
@@ -0,0 +1 @@
+package sp
\ No newline at end of file
diff --git a/evil.go b/evil.go
--- a/evil.go
+++ b/../evil.go
@@ -1 +1 @@
+x
`
	want := map[string]map[int]bool{
		"calc/calc.go": {3: true, 4: true, 5: true, 13: true},
		"sp ace.go":    {1: true},
	}
	if diff := cmp.Diff(want, ParseDiff(diff)); diff != "" {
		t.Errorf("changed lines (-want +got):\n%s", diff)
	}
}

// FuzzParseDiff: no diff makes the parser panic or name a path out of the
// tree.
func FuzzParseDiff(f *testing.F) {
	f.Add("diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -1 +1,2 @@\n x\n+y\n")
	f.Add("+++ \"b/\\\"q.go\"\n@@ -0,0 +1 @@\n+a\n")
	f.Add("@@ -1 +99999999999 @@\n+a\n")
	f.Fuzz(func(t *testing.T, in string) {
		for p, lines := range ParseDiff(in) {
			if p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "../") || p == ".." {
				t.Errorf("path %q", p)
			}
			for l := range lines {
				if l <= 0 {
					t.Errorf("%s: line %d", p, l)
				}
			}
		}
	})
}

func TestModulePath(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"module example.com/calc\n\ngo 1.22\n", "example.com/calc"},
		{"// a comment\nmodule\texample.com/x // trailing\n", "example.com/x"},
		{"module \"example.com/quoted\"\n", "example.com/quoted"},
		{"module `raw`\n", "raw"},
		{"go 1.22\n", ""},
		{"modulex example.com/no\n", ""},
		{"module two words\n", ""},
		{"module\n", ""},
	} {
		if got := ModulePath(strings.NewReader(tt.in)); got != tt.want {
			t.Errorf("ModulePath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzModulePath: no go.mod makes the reader panic or return a path with
// spaces or quotes.
func FuzzModulePath(f *testing.F) {
	f.Add("module example.com/calc\n")
	f.Add("module \"a b\"\n")
	f.Fuzz(func(t *testing.T, in string) {
		if got := ModulePath(strings.NewReader(in)); strings.ContainsAny(got, " \t\"`\n") {
			t.Errorf("ModulePath = %q", got)
		}
	})
}

// TestParseDiffRenameAndQuoted: a renamed file's added lines are the new
// name's, and a path git quotes (octal escapes) is read back.
func TestParseDiffRenameAndQuoted(t *testing.T) {
	diff := "diff --git a/old.go b/pkg/new.go\nsimilarity index 80%\nrename from old.go\nrename to pkg/new.go\n--- a/old.go\n+++ b/pkg/new.go\n@@ -3,2 +3,2 @@\n x\n-y\n+z\n" +
		"diff --git \"a/t\\303\\251st.go\" \"b/t\\303\\251st.go\"\n--- \"a/t\\303\\251st.go\"\n+++ \"b/t\\303\\251st.go\"\n@@ -1 +1 @@\n-a\n+b\n"
	want := map[string]map[int]bool{"pkg/new.go": {4: true}, "tést.go": {1: true}}
	if d := cmp.Diff(want, ParseDiff(diff)); d != "" {
		t.Errorf("changed lines (-want +got):\n%s", d)
	}
}
