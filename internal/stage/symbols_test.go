package stage

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestNamedSymbols(t *testing.T) {
	var many []string
	for i := range 40 {
		many = append(many, fmt.Sprintf("sym%dName", i))
	}
	for _, tt := range []struct {
		name, issue string
		want        []string
	}{
		{"a call in prose", `Hello("Ada") returns "Hello, Ada!".`, []string{"Hello"}},
		{"sentence words are not symbols", "The Add button should Save the file. HTTP is fine.", nil},
		{"a qualified name in a code span", "Change `greet.Hello` to trim.", []string{"Hello"}},
		{"code-shaped words in prose", "parseArgs and NewClient break; max_jobs too, and HTTP.", []string{"parseArgs", "NewClient", "max_jobs"}},
		{"keywords and builtins", "`return` a `string` from `len(x)` and `append()`", nil},
		{"other languages' keywords and builtins", "`None`, `self()`, `Promise`, `Option`, `Some(x)`, `Result` and `isinstance()`", nil},
		{"a lower-case call", "then `trimName()` is called", []string{"trimName"}},
		{"in order, once", "NewClient then Hello() then NewClient again", []string{"NewClient", "Hello"}},
		{"bounded", strings.Join(many, " "), many[:maxNamedSymbols]},
		{"glued to a non-ASCII letter", "éHello() and ÅparseArgs", nil},
		{"too short", "`Ab` and `X1()`", nil},
		{"an unclosed code span", "`Hello and then", []string{"Hello"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := namedSymbols(tt.issue); !slices.Equal(got, tt.want) {
				t.Errorf("namedSymbols(%q) = %q, want %q", tt.issue, got, tt.want)
			}
		})
	}
}

func FuzzNamedSymbols(f *testing.F) {
	for _, s := range []string{`Hello("Ada")`, "`greet.Hello` and parseArgs", "max_jobs `NewClient()`", "é`ÅB_c(`", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, issue string) {
		got := namedSymbols(issue)
		if len(got) > maxNamedSymbols {
			t.Fatalf("%d symbols, more than %d", len(got), maxNamedSymbols)
		}
		seen := map[string]bool{}
		for _, s := range got {
			if len(s) < 3 || len(s) > 64 || !identStart(s[0]) || seen[s] || !strings.Contains(issue, s) {
				t.Fatalf("symbol %q of %q: not a new identifier of the issue", s, issue)
			}
			for i := 0; i < len(s); i++ {
				if !identPart(s[i]) {
					t.Fatalf("symbol %q of %q is not an identifier", s, issue)
				}
			}
			seen[s] = true
		}
	})
}

func TestUsesWord(t *testing.T) {
	for _, tt := range []struct {
		src, w string
		want   bool
	}{
		{"x := Hello()", "Hello", true},
		{"HelloWorld and xHello", "Hello", false},
		{"HelloHello Hello", "Hello", true},
		{"HelloHello", "Hello", false},
		{"Hello", "Hello", true},
	} {
		if got := usesWord([]byte(tt.src), tt.w); got != tt.want {
			t.Errorf("usesWord(%q, %q) = %v, want %v", tt.src, tt.w, got, tt.want)
		}
	}
}

func TestNamesPath(t *testing.T) {
	for _, tt := range []struct {
		issue, file string
		want        bool
	}{
		{"see `cmd/app/main.go`", "cmd/app/main.go", true},
		{"see cmd/app/main.go.", "cmd/app/main.go", true},
		{"see internal/cmd/app/main.go", "cmd/app/main.go", false},
		{"see xgreet.go", "greet.go", false},
		{"see greet.go-old", "greet.go", false},
		{"greet.go, then greet.go.bak", "greet.go", true},
		{"go.mod", "go", false},
		{"xgreet.gogreet.go", "greet.go", false},
		{"a.greet.go, greet.go", "greet.go", true},
	} {
		if got := namesPath(tt.issue, tt.file); got != tt.want {
			t.Errorf("namesPath(%q, %q) = %v, want %v", tt.issue, tt.file, got, tt.want)
		}
	}
}

// TestStageContextSymbols: the planner's prompt puts the code the issue is
// about first. A file the issue names by path, then the files that declare
// the symbols it names (found by Go's parser), then those that use them,
// come before a file whose name merely shares a word with the issue; the
// index says where each symbol is declared, and which are declared nowhere.
func TestStageContextSymbols(t *testing.T) {
	root := t.TempDir()
	for rel, content := range map[string]string{
		"go.mod":                      "module example.com/app\n\ngo 1.22\n",
		"internal/text/hello.go":      "package text\n\n// Hello greets.\nfunc Hello(name string) string { return \"Hello, \" + name }\n\ntype Greeter struct{}\n\nfunc (Greeter) Wave() {}\n",
		"internal/text/hello_test.go": "package text\n\nimport \"testing\"\n\nfunc TestHello(t *testing.T) { _ = Hello(\"Ada\") }\n",
		"cmd/app/main.go":             "package main\n\nfunc main() {}\n",
		"greetings.md":                "Notes on greetings.\n",
		"docs/notes.md":               "Nothing here.\n",
		"internal/text/shout.go":      "package text\n\n// HelloWorld is not Hello.\nvar HelloWorld = 1\n",
		"openspec/changes/x/tasks.md": "- [ ] 1.1 Hello\n",
		"config/app.yml":              "retry_count: 3\n",
	} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	issue := "Add greetings\n\n`Hello` should accept an empty name, `Greeter.Wave` too; `NewGreeter` is new. The entry point is `cmd/app/main.go`; retry_count stays."
	parts := repoParts(root, issue)
	var names []string
	index := ""
	for _, p := range parts {
		names = append(names, p.Name)
		if strings.HasPrefix(p.Name, "Where the symbols") {
			index = p.Text
		}
	}
	want := []string{"The repository's files", "Where the symbols the issue names are declared",
		"cmd/app/main.go", "internal/text/hello.go", "internal/text/hello_test.go"}
	if !slices.Equal(names, want) {
		t.Errorf("prompt parts %q\nwant %q", names, want)
	}
	for _, line := range []string{
		"Hello: internal/text/hello.go:4 (func)",
		"Greeter: internal/text/hello.go:6 (type)",
		"Wave: internal/text/hello.go:8 (method of Greeter)",
		"NewGreeter: declared nowhere in the repository and used nowhere",
		"retry_count: no declaration found; used in config/app.yml",
	} {
		if !strings.Contains(index, line) {
			t.Errorf("the symbol index lacks %q:\n%s", line, index)
		}
	}
	// A file that only uses a symbol is named as its caller, a test as
	// its test; the plan's own files never.
	if !strings.Contains(index, "Hello: internal/text/hello.go:4 (func); called from internal/text/shout.go; tested in internal/text/hello_test.go") {
		t.Errorf("the symbol index does not name Hello's caller and test:\n%s", index)
	}
	if strings.Contains(index, "openspec/") {
		t.Errorf("the index names a file of the plan:\n%s", index)
	}
	// Priorities keep the order when the window is short: the index
	// outlives the files, and the files go in the order they were ranked.
	for i := 1; i < len(parts); i++ {
		if parts[i].Priority > parts[i-1].Priority {
			t.Errorf("part %q (priority %d) outranks %q (%d)", parts[i].Name, parts[i].Priority, parts[i-1].Name, parts[i-1].Priority)
		}
	}
	// An issue that names no symbol costs no index and no scan.
	for _, p := range repoParts(root, "Add greetings\n\nthe greetings are thin") {
		if strings.HasPrefix(p.Name, "Where the symbols") {
			t.Errorf("an index for an issue that names no symbol:\n%s", p.Text)
		}
	}
}

// BenchmarkRepoParts: the prompt's repository parts on a tree at the map's
// bound (maxListedFiles Go files of about 4 KiB), for an issue that names
// symbols, so every file is read for them and the users are parsed.
func BenchmarkRepoParts(b *testing.B) {
	root := b.TempDir()
	body := strings.Repeat("// filler line of a Go file in the benchmark's tree\n", 80)
	for i := range maxListedFiles {
		dir := filepath.Join(root, fmt.Sprintf("pkg%03d", i/20))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		src := fmt.Sprintf("package pkg\n\n%sfunc Func%d() { NewClient() }\n", body, i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.go", i)), []byte(src), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	issue := "Retry in `NewClient`\n\n`Func7` and `parseArgs` call NewClient() without a timeout."
	b.ResetTimer()
	for b.Loop() {
		if parts := repoParts(root, issue); len(parts) < 3 {
			b.Fatalf("%d parts", len(parts))
		}
	}
}
