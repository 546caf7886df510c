package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// encodedSecret is a configured secret of no known family: only its value
// can find it.
const encodedSecret = "Vq7-ravel-Kj2-secret-Wp9-harbour"

// pieces cuts s into pieces of n bytes.
func pieces(s string, n int) []string {
	var out []string
	for len(s) > n {
		out, s = append(out, s[:n]), s[n:]
	}
	return append(out, s)
}

func interleave(s, sep string) string {
	return strings.Join(strings.Split(s, ""), sep)
}

func percentAll(s string, upper bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		f := "%%%02x"
		if upper {
			f = "%%%02X"
		}
		fmt.Fprintf(&b, f, s[i])
	}
	return b.String()
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// encodedForms are the forms of encodedSecret a model might print instead
// of the value, each as it would stand in text.
func encodedForms() []struct{ name, form string } {
	s := encodedSecret
	long := strings.Repeat(s, 4) // long enough for base64 to wrap
	return []struct{ name, form string }{
		{"plain", s},
		{"hex", hex.EncodeToString([]byte(s))},
		{"HEX", strings.ToUpper(hex.EncodeToString([]byte(s)))},
		{"reversed", reverse(s)},
		{"percent", percentAll(s, false)},
		{"PERCENT", percentAll(s, true)},
		{"base64", base64.StdEncoding.EncodeToString([]byte(s))},
		{"base64url-raw", base64.RawURLEncoding.EncodeToString([]byte(s))},
		{"base64 after a prefix", base64.StdEncoding.EncodeToString([]byte("x-access-token:" + s))},
		{"base64 wrapped at 76", strings.Join(pieces(base64.StdEncoding.EncodeToString([]byte(long)), 76), "\n")},
		{"in pieces on lines", strings.Join(pieces(s, 7), "\n")},
		{"in indented pieces", strings.Join(pieces(s, 5), "\n    ")},
		{"in pieces with a blank line", strings.Join(pieces(s, 11), "\n\n")},
		{"CRLF pieces", strings.Join(pieces(s, 9), "\r\n")},
		{"spaced groups", strings.Join(pieces(s, 4), " ")},
		{"one letter a line", strings.Join(pieces(s, 1), "\n")},
		{"hex in pieces", strings.Join(pieces(hex.EncodeToString([]byte(s)), 16), "\n")},
		{"hex bytes spaced", strings.Join(pieces(hex.EncodeToString([]byte(s)), 2), " ")},
		{"U+200B", interleave(s, "\u200b")},
		{"U+200C", interleave(s, "\u200c")},
		{"U+200D", interleave(s, "\u200d")},
		{"U+2060", interleave(s, "\u2060")},
		{"U+FEFF", interleave(s, "\ufeff")},
		{"zero-width and a line break", interleave(s[:10], "\u200b") + "\n" + interleave(s[10:], "\u2060")},
	}
}

// secretBytes reports the first run of four or more bytes of the secret (or
// of one of its encodings) that out still holds, "" when none.
func secretLeft(t *testing.T, out string) string {
	t.Helper()
	sq := squeeze(out)
	for _, f := range []string{encodedSecret, hex.EncodeToString([]byte(encodedSecret)), reverse(encodedSecret)} {
		for i := 0; i+8 <= len(f); i++ {
			if strings.Contains(sq, f[i:i+8]) {
				return f[i : i+8]
			}
		}
	}
	return ""
}

// TestMaskEncodedForms: every form of a configured secret that a model might
// print is masked, in a line of text, streamed a byte at a time, across the
// windows of a long line, and Contains finds each; the text around it stays.
func TestMaskEncodedForms(t *testing.T) {
	m := New(Config{Secrets: []string{encodedSecret}})
	const before, after = "the value is: ", " (do not share)"
	for _, f := range encodedForms() {
		t.Run(f.name, func(t *testing.T) {
			in := "line one\n" + before + f.form + after + "\nline three\n"
			out := m.Mask(in)
			if left := secretLeft(t, out); left != "" {
				t.Fatalf("%q survives in\n%s", left, out)
			}
			if !strings.HasPrefix(out, "line one\n"+before) || !strings.HasSuffix(out, after+"\nline three\n") {
				t.Errorf("the text around the secret changed:\n%s", out)
			}
			if got, want := strings.Count(out, "\n"), strings.Count(in, "\n"); got != want {
				t.Errorf("%d newlines, want %d", got, want)
			}
			if again := m.Mask(out); again != out {
				t.Errorf("not idempotent:\n%s\n%s", out, again)
			}
			// Streamed a byte at a time, the output is the same.
			var b bytes.Buffer
			w := m.NewWriter(&b)
			for i := 0; i < len(in); i++ {
				w.Write([]byte{in[i]})
			}
			w.Close()
			if b.String() != out {
				t.Errorf("streamed byte by byte:\n%s\nwant:\n%s", b.String(), out)
			}
			if !m.Contains(in) {
				t.Errorf("Contains(%q) = false", in)
			}
			if f.name != "base64 wrapped at 76" && !strings.Contains(f.form, "\n") {
				// One line longer than the line cap, the form across the
				// end of its first window and across the cut before it.
				for _, at := range []int{defaultMaxLine, defaultMaxLine - defaultOverlap} {
					head := strings.Repeat("lorem ipsum dolor ", 4000)[:at-len(before)-len(f.form)/2]
					tail := strings.Repeat("lorem ipsum dolor ", 4000)
					got := m.Mask(head + before + f.form + after + tail)
					if left := secretLeft(t, got); left != "" {
						t.Errorf("in a long line, across %d: %q survives", at, left)
					}
					if !strings.HasPrefix(got, head+before) || !strings.HasSuffix(got, after+tail) {
						t.Errorf("in a long line, across %d: the text around the secret changed", at)
					}
				}
			}
		})
	}

	t.Run("bounds", func(t *testing.T) {
		for _, tc := range []struct {
			name, in string
			masked   bool
		}{
			{"16 blanks between pieces", encodedSecret[:10] + strings.Repeat(" ", 16) + encodedSecret[10:], true},
			{"17 blanks between pieces", encodedSecret[:10] + strings.Repeat(" ", 17) + encodedSecret[10:], false},
			{"a word between pieces", encodedSecret[:10] + " and " + encodedSecret[10:], false},
			{"the pieces out of order", encodedSecret[10:] + "\n" + encodedSecret[:10], false},
		} {
			out := m.Mask(tc.in)
			if got := out != tc.in; got != tc.masked {
				t.Errorf("%s: masked %v, want %v: %q", tc.name, got, tc.masked, out)
			}
			if got := m.Contains(tc.in); got != tc.masked {
				t.Errorf("%s: Contains = %v, want %v", tc.name, got, tc.masked)
			}
		}
	})

	t.Run("Contains", func(t *testing.T) {
		if New(Config{}).Contains(encodedSecret) {
			t.Error("a masker with no configured secret found one")
		}
		if m.Contains(benign(t)) {
			t.Error("the benign corpus holds the secret")
		}
		// Families are not asked: a push of ordinary code that holds an
		// address or a token-shaped test value is not refused.
		if m.Contains("dial 10.0.0.5:80 with ghp_" + strings.Repeat("Ab1", 12)) {
			t.Error("Contains answered for a family, not a configured secret")
		}
		ph := New(Config{Secrets: []string{"masked"}})
		if ph.Contains("a [masked] value") || !ph.Contains("masked value") {
			t.Error("a configured secret inside a placeholder counts, or outside one does not")
		}
	})

	t.Run("held lines keep their order", func(t *testing.T) {
		// Lines held while a split secret may be under way come out in
		// order, each once, whether or not the secret completes.
		var in strings.Builder
		for i := range 200 {
			fmt.Fprintf(&in, "step %d: %s\n", i, encodedSecret[:3+i%20])
		}
		in.WriteString(strings.Join(pieces(encodedSecret, 6), "\n") + "\nend\n")
		out := m.Mask(in.String())
		lines := strings.Split(out, "\n")
		for i := range 200 {
			if want := fmt.Sprintf("step %d: %s", i, encodedSecret[:3+i%20]); lines[i] != want {
				t.Fatalf("line %d = %q, want %q", i, lines[i], want)
			}
		}
		if rest := strings.Join(lines[200:], "\n"); strings.Count(rest, DefaultPlaceholder) != 6 || !strings.HasSuffix(rest, "\nend\n") {
			t.Errorf("the split secret:\n%s", rest)
		}
	})
}
