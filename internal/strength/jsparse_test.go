package strength

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseJSSites: the mutator's JSON, read as untrusted: sites outside
// the file or its lines, without an operator, or second on a line are
// dropped; code lines outside the file too.
func TestParseJSSites(t *testing.T) {
	src := []byte("a;\nb;\nc;\n") // 4 lines: the last is empty
	out := `{"version": "9.6.1", "code": [0, 1, 2, 4, 5, -3],
		"sites": [
			{"line": 1, "op": "ConditionalExpression", "start": 0, "end": 1, "repl": "true"},
			{"line": 1, "op": "BooleanLiteral", "start": 0, "end": 1, "repl": "x"},
			{"line": 2, "op": "", "start": 3, "end": 4, "repl": "y"},
			{"line": 3, "op": "ArithmeticOperator", "start": 7, "end": 6, "repl": "y"},
			{"line": 3, "op": "ArithmeticOperator", "start": 6, "end": 99, "repl": "y"},
			{"line": 9, "op": "ArithmeticOperator", "start": 6, "end": 7, "repl": "y"},
			{"line": 2, "op": "StringLiteral", "start": 3, "end": 4, "repl": "\"\""}
		]}`
	fs, err := parseJSSites([]byte(out), src)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]site{
		1: {line: 1, op: "ConditionalExpression", start: 0, end: 1, repl: "true"},
		2: {line: 2, op: "StringLiteral", start: 3, end: 4, repl: `""`},
	}
	if diff := cmp.Diff(want, fs.best, cmp.AllowUnexported(site{})); diff != "" {
		t.Errorf("sites (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[int]bool{1: true, 2: true, 4: true}, fs.code); diff != "" {
		t.Errorf("code (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"", "not json", `{"sites": {}}`} {
		if _, err := parseJSSites([]byte(bad), src); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// FuzzJSSites: no output of the mutator makes the reader panic, and every
// site it keeps lies in the file and applies.
func FuzzJSSites(f *testing.F) {
	f.Add([]byte(`{"code":[1],"sites":[{"line":1,"op":"BlockStatement","start":0,"end":2,"repl":"{}"}]}`), []byte("{}\n"))
	f.Add([]byte(`{"code":[1,2],"sites":[{"line":2,"op":"x","start":3,"end":3,"repl":""}]}`), []byte("a\nb"))
	f.Fuzz(func(t *testing.T, out, src []byte) {
		fs, err := parseJSSites(out, src)
		if err != nil {
			return
		}
		lines := bytes.Count(src, []byte("\n")) + 1
		for l, s := range fs.best {
			if l != s.line || l < 1 || l > lines || s.start < 0 || s.end < s.start || s.end > len(src) || s.op == "" {
				t.Fatalf("site %+v kept for line %d of a %d-line, %d-byte file", s, l, lines, len(src))
			}
			s.apply(src)
		}
		for l := range fs.code {
			if l < 1 || l > lines {
				t.Fatalf("code line %d of a %d-line file", l, lines)
			}
		}
	})
}

// v8File is a NODE_V8_COVERAGE file of one process whose hook was at
// top/.h/hook.cjs, with the scripts and their functions' ranges.
func v8File(t testing.TB, top string, scripts map[string][][]v8Range) []byte {
	t.Helper()
	type fn struct {
		Ranges []v8Range `json:"ranges"`
	}
	type script struct {
		URL       string `json:"url"`
		Functions []fn   `json:"functions"`
	}
	doc := struct {
		Result []script `json:"result"`
	}{Result: []script{{URL: "file://" + top + "/.h/hook.cjs", Functions: []fn{{Ranges: []v8Range{{0, 10, 1}}}}}}}
	for url, fns := range scripts {
		s := script{URL: url}
		for _, r := range fns {
			s.Functions = append(s.Functions, fn{Ranges: r})
		}
		doc.Result = append(doc.Result, s)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestV8Coverage: a line is covered when the innermost range over its
// first character ran; the top is where the process saw the hook (the
// boundary may show the tree elsewhere); offsets count UTF-16 units after
// a BOM; other scripts, files and processes without the hook are ignored.
func TestV8Coverage(t *testing.T) {
	// Offsets:   0         1         2         3         4
	//            0123456789012345678901234567890123456789012
	src := []byte("function f(x) {\n  if (x) {\n    return 1;\n  }\n  return 2;\n}\nf(0);\n")
	// Lines' first characters: 1@0 2@18 3@31 4@43 5@47 6@57 7@59
	ranges := [][]v8Range{
		{{0, 65, 1}},                           // the script
		{{0, 57, 1}, {26, 44, 0}, {45, 56, 1}}, // f: the if's block not taken
	}
	want := map[string]map[int]bool{"src/a.js": {1: true, 2: true, 3: true, 4: true, 5: true, 7: true}}
	srcs := map[string][]byte{"src/a.js": src}
	got := parseV8Coverage(v8File(t, "/sandbox/ws", map[string][][]v8Range{"file:///sandbox/ws/src/a.js": ranges}), ".h/hook.cjs", srcs, want)
	if diff := cmp.Diff(Coverage{"src/a.js": {1: true, 2: true, 5: true, 7: true}}, got); diff != "" {
		t.Errorf("coverage (-want +got):\n%s", diff)
	}

	// f never called: its range starts where the script's does, and is the
	// innermost.
	got = parseV8Coverage(v8File(t, "/w", map[string][][]v8Range{"/w/src/a.js": {{{0, 65, 1}}, {{0, 57, 0}}}}), ".h/hook.cjs", srcs, want)
	if diff := cmp.Diff(Coverage{"src/a.js": {7: true}}, got); diff != "" {
		t.Errorf("f never called (-want +got):\n%s", diff)
	}

	// A BOM (V8 never sees it) and a character of two UTF-16 units on line 1
	// move every line after it by 4 units (//😀); the if's block is made to
	// start right at line 3's first character and end right after line 4's.
	bom := append([]byte("\xEF\xBB\xBF"), bytes.Replace(src, []byte("f(x) {"), []byte("f(x) {//\U0001F600"), 1)...)
	shifted := [][]v8Range{{{0, 69, 1}}, {{0, 61, 1}, {35, 48, 0}, {49, 60, 1}}}
	got = parseV8Coverage(v8File(t, "/w", map[string][][]v8Range{"/w/src/a.js": shifted}), ".h/hook.cjs", map[string][]byte{"src/a.js": bom}, want)
	if diff := cmp.Diff(Coverage{"src/a.js": {1: true, 2: true, 5: true, 7: true}}, got); diff != "" {
		t.Errorf("with a BOM and an emoji (-want +got):\n%s", diff)
	}

	for name, data := range map[string][]byte{
		"not JSON":        []byte("{"),
		"no hook":         []byte(`{"result": [{"url": "file:///w/src/a.js", "functions": [{"ranges": [{"startOffset": 0, "endOffset": 65, "count": 1}]}]}]}`),
		"another tree":    v8File(t, "/w", map[string][][]v8Range{"file:///elsewhere/src/a.js": ranges}),
		"another file":    v8File(t, "/w", map[string][][]v8Range{"file:///w/src/b.js": ranges}),
		"node's own":      v8File(t, "/w", map[string][][]v8Range{"node:internal/x": ranges}),
		"garbage ranges":  v8File(t, "/w", map[string][][]v8Range{"file:///w/src/a.js": {{{-5, 3, 1}, {40, 2, 1}, {9, 9, 1}}}}),
		"a path with ../": v8File(t, "/w", map[string][][]v8Range{"file:///w/x/../../src/a.js": ranges}),
	} {
		if got := parseV8Coverage(data, ".h/hook.cjs", srcs, want); len(got) != 0 {
			t.Errorf("%s: %v", name, got)
		}
	}
}

// FuzzV8Coverage: no coverage file makes the reader panic, and it reports
// only lines it was asked about.
func FuzzV8Coverage(f *testing.F) {
	f.Add(string(v8File(f, "/w", map[string][][]v8Range{"file:///w/a.js": {{{0, 20, 1}, {5, 9, 0}}}})), "a;\n  b;\nc;\n")
	f.Add(`{"result":[{"url":"/w/.h/hook.cjs"},{"url":"/w/a.js","functions":[{"ranges":[{"startOffset":3,"endOffset":1,"count":1}]}]}]}`, "\xEF\xBB\xBFx\n")
	f.Fuzz(func(t *testing.T, data, src string) {
		want := map[string]map[int]bool{"a.js": {1: true, 2: true, 3: true}}
		cov := parseV8Coverage([]byte(data), ".h/hook.cjs", map[string][]byte{"a.js": []byte(src)}, want)
		for file, lines := range cov {
			for l := range lines {
				if !want[file][l] {
					t.Fatalf("line %s:%d reported, not asked about", file, l)
				}
			}
		}
	})
}

// TestJSFiles: which changed files are JavaScript to mutate, and which are
// not run by node as written.
func TestJSFiles(t *testing.T) {
	for file, want := range map[string]bool{
		"calc.js": true, "lib/a.mjs": true, "lib/b.cjs": true,
		"calc.test.js": false, "calc.spec.mjs": false, "calc_test.js": false, "calc-test.js": false, "test.js": false,
		"test-calc.js": false, "test/calc.js": false, "src/__tests__/a.js": false, "node_modules/x/a.js": false,
		".github/a.js": false, "dist/app.min.js": false, "a.ts": false, "a.jsx": false, "a.json": false,
	} {
		if got := jsFile(file); got != want {
			t.Errorf("jsFile(%q) = %v", file, got)
		}
	}
	for file, want := range map[string]string{"a.ts": "TypeScript", "a.d.ts": "TypeScript", "a.TSX": "TypeScript", "a.mts": "TypeScript", "a.jsx": "JSX", "a.js": ""} {
		if got := notRunAsIs(file); got != want {
			t.Errorf("notRunAsIs(%q) = %q", file, got)
		}
	}
}

// TestJSMutation: a mutant's state is the bytes that differ from the
// original and the original's sha256; the control run's changes nothing.
func TestJSMutation(t *testing.T) {
	orig := []byte("if (v < lo) {\n")
	got := jsMutation("a.js", orig, []byte("if (true) {\n"))
	sum := sha256.Sum256(orig)
	if got["start"] != 4 || got["end"] != 10 || got["repl"] != "dHJ1ZQ==" || got["sum"] != hex.EncodeToString(sum[:]) {
		t.Errorf("mutant: %v", got)
	}
	got = jsMutation("a.js", orig, orig)
	if got["start"] != got["end"] || got["repl"] != "" {
		t.Errorf("control: %v", got)
	}
}
