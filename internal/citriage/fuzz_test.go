package citriage

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzFailingPart: a job log is hostile text. Whatever it holds, the part
// kept is valid UTF-8, bounded, and never longer than the lines kept allow.
func FuzzFailingPart(f *testing.F) {
	f.Add([]byte("2026-11-29T09:01:02.3000000Z --- FAIL: TestX (0.00s)\n    x_test.go:1: bad\nFAIL\n"), 1)
	f.Add([]byte("npm ERR! code ECONNRESET\r\n"), 0)
	f.Add([]byte("\xff\xfe2026-11-29T09:01:02Z \n"), 7)
	f.Add([]byte(strings.Repeat("a", 5000)), -3)
	f.Fuzz(func(t *testing.T, log []byte, line int) {
		part := failingPart(log, line)
		if !utf8.ValidString(part) {
			t.Fatalf("not UTF-8: %q", part)
		}
		lines := strings.Count(part, "\n")
		if lines > excerptBefore+excerptAfter+1 {
			t.Fatalf("%d lines kept, want at most %d", lines, excerptBefore+excerptAfter+1)
		}
		if len(part) > (excerptBefore+excerptAfter+1)*(1000+len("…")+1) {
			t.Fatalf("%d bytes kept", len(part))
		}
		if c := cut(part, maxExcerpt); len(c) > maxExcerpt+len("…") || !utf8.ValidString(c) {
			t.Fatalf("cut: %d bytes, valid %v", len(c), utf8.ValidString(c))
		}
		got, err := tail(bytes.NewReader(log), 64, 1<<20)
		if err != nil || len(got) > 64 || !bytes.HasSuffix(log, got) {
			t.Fatalf("tail = %q, %v; want the last ≤64 bytes of the log", got, err)
		}
	})
}
