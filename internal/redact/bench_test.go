package redact

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// BenchmarkMask streams a 50 MB synthetic job log through Copy, the path
// roadmap mask and the log reader use. SetBytes makes the result a
// throughput; allocations per run show memory does not grow with the input
// (TestStreamingMemoryBounded checks the live heap).
func BenchmarkMask(b *testing.B) {
	const size = 50 << 20
	data, err := io.ReadAll(newLogGen(size, nil))
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name string
		cfg  Config
	}{
		{"families", Config{}},
		{"with-configured-secrets", Config{Secrets: []string{
			"ghs_" + "q7q7q7q7q7q7q7q7q7q7q7q7q7q7q7q7q7q7",
			"sk-ant-api03-configured-secret-value-for-the-benchmark",
			"a-database-password-2024",
			"AKIAIOSFODNN7BENCHMK",
			"xoxb-123456789012-configured",
		}}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			m := New(c.cfg)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Copy(io.Discard, bytes.NewReader(data)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMaskString is Mask on one trace-event-sized string, the form
// every GitHub write and trace event goes through.
func BenchmarkMaskString(b *testing.B) {
	m := New(Config{Secrets: []string{"a-database-password-2024"}})
	event := `{"type":"check_run","command":"go test ./internal/webhook -run TestBackoffSchedule","exit_code":1,"duration_ms":2210,"output":"--- FAIL: TestBackoffSchedule (0.00s)\n    worker_test.go:41: got 2s, want 4s"}`
	b.ReportAllocs()
	for b.Loop() {
		_ = m.Mask(event)
	}
}

// BenchmarkMaskPathological runs 60 KB lines built to be hard for each
// rule: long runs of keywords, operators, placeholders and near-addresses,
// and 60 KB of short lines that each end in the beginning of a configured
// secret (so each is held until the next) or hold one in pieces. Each
// should cost about as much as ordinary text of that length.
func BenchmarkMaskPathological(b *testing.B) {
	m := New(Config{Secrets: []string{"masked", "abcdef"}})
	cases := []struct{ name, unit, tail string }{
		{"placeholders", "[masked]", ""},
		{"secret-inside-placeholder", "masked ", ""},
		{"ipv6-groups", "fdfd:", ""},
		{"ipv4-octets", "10.10.", ""},
		{"assignments", "token=", ""},
		{"keywords", "tokentoken", ""},
		{"hosts", "a.local", ""},
		{"pem-markers", "-----BEGIN PRIVATE KEY-----", ""},
		{"headers", "authorization: ", ""},
		{"bearer", "bearer ", ""},
		{"urls", "a://b:", ""},
		{"jwt-segments", "eyJaaaaaaaaaaaa.", ""},
		{"backslashes", `\\\\ghp_`, ""},
		// The tail makes the whole text worth a look.
		{"lines-ending-in-a-secret-prefix", "x abcde\n", "abcdef"}, // each line held until the next
		{"secret-in-pieces", "abc def\n", ""},
		{"zero-width", "a\u200bb\u200bc\u200bd\u200be\u200bf ", ""},
	}
	for _, c := range cases {
		line := strings.Repeat(c.unit, 60000/len(c.unit)) + c.tail
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				_ = m.Mask(line)
			}
		})
	}
}
