package record

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzRecord feeds Parse any body. No input may panic; a body that parses must
// render and parse back to the same record with the person's text unchanged, and
// must keep that text through a write of new keys.
func FuzzRecord(f *testing.F) {
	for _, tc := range parseCases() {
		f.Add(tc.body)
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "records", "*.md"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(string(b))
		}
	}
	f.Add("```\n<!-- roadmap:record v1\n")
	f.Add("~~~~\n```\n<!-- roadmap:record v1\nimplement.group: 1\n-->\n```\n")
	f.Add("a\r\r\n<!-- roadmap:record v1\r\nx.y: 1\r\n-->")
	f.Add("\uFEFF<!-- roadmap:record v1\n  implement.group: 2\n-->")
	f.Add("text\n   <!-- roadmap:record v1\nimplement.stopped: a\x00b\n-->")
	f.Add("<!-- roadmap:record v1\nimplement.check_log: \"\xff \\ud800\"\n-->")
	f.Add("<!-- roadmap:record v1\nzeta.x: " + strings.Repeat("x", MaxValueChars+1) + "\n-->")
	f.Fuzz(func(t *testing.T, body string) {
		r, err := Parse(body)
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("Parse() error %v is a %T, want *ParseError", err, err)
			}
			return
		}
		// What a block holds is text within its bounds: never a NUL, bytes
		// that are not UTF-8 or a value over MaxValueChars.
		for _, k := range r.Keys() {
			v, _ := r.Raw(k)
			if msg := encodingProblem(v) + sizeProblem(v); msg != "" {
				t.Fatalf("Parse() accepted %s: %s", k, msg)
			}
		}
		out, err := Render(r)
		if err != nil {
			if _, ok := err.(*TooLongError); !ok {
				t.Fatalf("Render() error = %v", err)
			}
			return
		}
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(Render(r)) error = %v\nbody: %q\nrendered: %q", err, body, out)
		}
		if !back.Equal(r) {
			t.Fatalf("Parse(Render(r)) != r\nbody: %q\nrendered: %q\n r: %#v\nback: %#v", body, out, r, back)
		}
		if again, err := Render(back); err != nil || again != out {
			t.Fatalf("Render is not stable:\n first %q\nsecond %q (%v)", out, again, err)
		}

		// A write of new keys keeps the person's text.
		var c Changes
		c.SetResult(ResultYielded)
		c.SetCheckLog(body)
		c.SetStopped(body)
		c.Delete(KeyImplementGroup)
		if err := r.Apply(c); err != nil {
			if strings.TrimSpace(body) == "" {
				return // an empty step label is refused, rightly
			}
			t.Fatalf("Apply() error = %v", err)
		}
		out, err = Render(r)
		if err != nil {
			return // too long
		}
		written, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse() of a written body error = %v\nrendered: %q", err, out)
		}
		if written.Text() != back.Text() {
			t.Fatalf("person's text changed by a write:\n got %q\nwant %q", written.Text(), back.Text())
		}
		if !c.Applied(written) {
			t.Fatalf("written body does not hold the changes: %q", out)
		}
	})
}

// BenchmarkParseRender: parse and render a body near GitHub's limit, with a full
// record, as every phase does once per read and write.
func BenchmarkParseRender(b *testing.B) {
	body := benchBody(b)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := Parse(body)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Render(r); err != nil {
			b.Fatal(err)
		}
	}
}

// benchBody is a 60,000-character body: paragraphs, a fenced example, CRLF-free
// markdown, then a record holding every key.
func benchBody(tb testing.TB) string {
	tb.Helper()
	var sb strings.Builder
	para := "The delivery worker retries a failed webhook with a delay that doubles each time — " +
		"see `internal/webhook/backoff.go`. 日本語も少し。\n\n"
	for i := 0; sb.Len() < 50000; i++ {
		sb.WriteString(para)
		if i%40 == 0 {
			sb.WriteString("```\n<!-- roadmap:record v1\nimplement.group: 9\n-->\n```\n\n")
		}
	}
	r, err := Parse(sb.String())
	if err != nil {
		tb.Fatal(err)
	}
	if err := r.Apply(everyKey()); err != nil {
		tb.Fatal(err)
	}
	out, err := Render(r)
	if err != nil {
		tb.Fatal(err)
	}
	// Pad the person's text to exactly 60,000 characters in all.
	n := len([]rune(out))
	if n > 60000 {
		tb.Fatalf("bench body already %d characters", n)
	}
	r, _ = Parse(strings.Repeat("x", 60000-n) + out)
	out, err = Render(r)
	if err != nil {
		tb.Fatal(err)
	}
	if got := len([]rune(out)); got != 60000 {
		tb.Fatalf("bench body is %d characters, want 60000", got)
	}
	return out
}

// FuzzApply sets a key to any value. What Apply accepts, Parse must accept
// back from the rendered body, unchanged.
func FuzzApply(f *testing.F) {
	f.Add(uint8(0), "ready", "text")
	f.Add(uint8(5), `{"tokens_in":1,"tokens_out":2,"usd":0.5,"model_calls":1}`, "")
	f.Add(uint8(3), `"multi\nline"`, "a\r\nb\r\n")
	f.Add(uint8(200), "x", "```\n")
	f.Fuzz(func(t *testing.T, which uint8, raw, body string) {
		keys := append(AllKeys(), "zeta.unknown")
		k := keys[int(which)%len(keys)]
		r, err := Parse(body)
		if err != nil {
			return
		}
		var c Changes
		c.set(k, raw)
		if err := r.Apply(c); err != nil {
			return
		}
		out, err := Render(r)
		if err != nil {
			return
		}
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("Apply accepted %s: %q, but its body does not parse: %v\nbody: %q", k, raw, err, out)
		}
		if !back.Equal(r) || !c.Applied(back) {
			t.Fatalf("%s: %q did not survive a round trip: %q", k, raw, out)
		}
		if _, ok := back.JSON(k); !ok {
			t.Fatalf("JSON(%s) absent after Apply", k)
		}
	})
}
