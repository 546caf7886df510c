package redact

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// streamCorpus is every canary and the benign corpus in one text.
func streamCorpus(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, c := range loadCanaries(t) {
		b.WriteString(c.in)
	}
	b.WriteString(benign(t))
	return b.String()
}

func benign(t testing.TB) string {
	t.Helper()
	data, err := readTestdata("testdata/benign.txt")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestMaskStreaming(t *testing.T) {
	m := New(Config{Secrets: []string{"configured-secret-value"}})
	text := streamCorpus(t) + "tail configured-secret-value and ghp_" + strings.Repeat("Ab1", 12) // no final newline
	want := m.Mask(text)
	if want == text {
		t.Fatal("corpus has nothing to mask")
	}
	sizes := []int{1, 2, 3, 7, 16, 63, 64, 1000, len(text)}
	for _, size := range sizes {
		t.Run(fmt.Sprintf("writes of %d", size), func(t *testing.T) {
			var out bytes.Buffer
			w := m.NewWriter(&out)
			for p := text; len(p) > 0; {
				n := min(size, len(p))
				if k, err := w.Write([]byte(p[:n])); err != nil || k != n {
					t.Fatalf("Write = %d, %v", k, err)
				}
				p = p[n:]
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, out.String()); diff != "" {
				t.Errorf("streamed output differs from Mask (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("random writes", func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		for range 20 {
			var out bytes.Buffer
			w := m.NewWriter(&out)
			for p := text; len(p) > 0; {
				n := min(1+r.IntN(200), len(p))
				w.Write([]byte(p[:n]))
				p = p[n:]
			}
			w.Close()
			if out.String() != want {
				t.Fatalf("streamed output differs from Mask")
			}
		}
	})
	t.Run("Copy", func(t *testing.T) {
		for _, r := range []io.Reader{strings.NewReader(text), iotest.OneByteReader(strings.NewReader(text)), iotest.HalfReader(strings.NewReader(text))} {
			var out bytes.Buffer
			n, err := m.Copy(&out, r)
			if err != nil {
				t.Fatal(err)
			}
			if n != int64(out.Len()) {
				t.Errorf("Copy returned %d, wrote %d", n, out.Len())
			}
			if diff := cmp.Diff(want, out.String()); diff != "" {
				t.Errorf("Copy output differs from Mask (-want +got):\n%s", diff)
			}
		}
	})
}

// TestMaskLongLines checks lines longer than the line cap, masked in
// windows: a secret at any offset, across any window edge, is masked once
// and nothing else changes.
func TestMaskLongLines(t *testing.T) {
	filler := func(n int) string {
		return strings.Repeat("lorem ipsum dolor ", n/18+1)[:n]
	}
	token := "ghp_" + strings.Repeat("Zx9", 12)
	t.Run("small windows, every offset", func(t *testing.T) {
		m := New(Config{Secrets: []string{"exact-secret-42"}})
		m.maxLine, m.overlap = 256, 96
		for _, secret := range []string{token, "exact-secret-42", "10.1.2.3"} {
			for off := 0; off < 700; off++ {
				in := filler(off) + " " + secret + " " + filler(900-off)
				want := filler(off) + " [masked] " + filler(900-off)
				var out bytes.Buffer
				w := m.NewWriter(&out)
				w.Write([]byte(in))
				w.Write([]byte("\nnext line\n"))
				w.Close()
				if got := out.String(); got != want+"\nnext line\n" {
					t.Fatalf("secret %q at offset %d:\n got %q\nwant %q", secret, off, got, want)
				}
			}
		}
	})
	t.Run("token longer than the overlap", func(t *testing.T) {
		m := New(Config{})
		m.maxLine, m.overlap = 256, 96
		long := "ghp_" + strings.Repeat("a1B2", 200) // 804 bytes: spans several windows
		for off := 0; off < 300; off += 7 {
			in := filler(off) + " " + long + " " + filler(500)
			want := filler(off) + " [masked] " + filler(500)
			if got := m.Mask(in); got != want {
				t.Fatalf("offset %d:\n got %q\nwant %q", off, got, want)
			}
		}
	})
	t.Run("default cap", func(t *testing.T) {
		m := New(Config{})
		var in, want strings.Builder
		for i := range 40 {
			f := filler(7919 + i*13)
			in.WriteString(f + " " + token + " ")
			want.WriteString(f + " [masked] ")
		}
		if in.Len() < 3*defaultMaxLine {
			t.Fatalf("line is only %d bytes", in.Len())
		}
		got := m.Mask(in.String() + "\n")
		if got != want.String()+"\n" {
			t.Errorf("long line masked wrong: %d placeholders, want 40; token survives: %v",
				strings.Count(got, "[masked]"), strings.Contains(got, token))
		}
	})
}

// logGen produces a synthetic job log of n bytes without holding it in
// memory: Actions timestamps, go test output, JSON events, a secret, a
// private address or a private host every few hundred lines, and now and
// then a line longer than the line cap.
type logGen struct {
	left    int
	r       *rand.Rand
	pending []byte
	line    int
	onMB    func() // called after each MiB handed out
	handed  int
}

func newLogGen(n int, onMB func()) *logGen {
	return &logGen{left: n, r: rand.New(rand.NewPCG(7, 11)), onMB: onMB}
}

func (g *logGen) Read(p []byte) (int, error) {
	if g.left == 0 {
		return 0, io.EOF
	}
	if len(g.pending) == 0 {
		g.pending = g.next()
	}
	n := copy(p, g.pending[:min(len(g.pending), g.left)])
	g.pending = g.pending[n:]
	g.left -= n
	before := g.handed
	g.handed += n
	if g.onMB != nil && g.handed>>20 != before>>20 {
		g.onMB()
	}
	return n, nil
}

func (g *logGen) next() []byte {
	g.line++
	ts := fmt.Sprintf("2024-05-01T10:%02d:%02d.%07dZ ", g.line/60%60, g.line%60, g.r.IntN(1e7))
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	rnd := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alnum[g.r.IntN(len(alnum))]
		}
		return string(b)
	}
	var s string
	switch k := g.line % 1000; {
	case k == 17:
		s = "export GH_TOKEN=ghp_" + rnd(36)
	case k == 313:
		s = "dial tcp 10.0." + fmt.Sprint(g.r.IntN(255)) + ".7:5432: connect: connection refused"
	case k == 555:
		s = `{"type":"model_call","model":"claude-sonnet-4-5","tokens_in":18230,"tokens_out":4410,"duration_ms":5123,"outcome":"ok"}`
	case k == 777:
		s = "curl -H 'Authorization: Bearer " + rnd(40) + "' https://build-cache.corp/api"
	case k == 901 && g.line%20000 == 901:
		s = strings.Repeat("x", 100<<10) + " ghp_" + rnd(36) // a line over the cap
	case k%5 == 0:
		s = "=== RUN   TestWebhookDelivery/retry_" + fmt.Sprint(k)
	case k%5 == 1:
		s = "--- PASS: TestWebhookDelivery/retry_" + fmt.Sprint(k) + " (0.00s)"
	case k%5 == 2:
		s = "internal/webhook/worker.go:" + fmt.Sprint(k) + ":3: commit 3f786850e387550fdab836ed7e6dc881de23001b applied"
	case k%5 == 3:
		s = "ok  \tgithub.com/roadmap-dev/roadmap/internal/webhook\t0.214s\tcoverage: 84.7% of statements"
	default:
		s = "[command]/usr/bin/git -c protocol.version=2 fetch --no-tags --depth=1 origin +refs/heads/main"
	}
	return []byte(ts + s + "\n")
}

// TestStreamingMemoryBounded streams 4 MiB and 40 MiB of log through the
// Writer, measuring the live heap (after a collection) at every MiB. Memory
// that grew with the input would show as a much higher peak for the longer
// stream.
func TestStreamingMemoryBounded(t *testing.T) {
	m := New(Config{Secrets: SecretsFromEnv([]string{"GITHUB_TOKEN=ghs_" + strings.Repeat("q7", 18)})})
	peak := func(size int) uint64 {
		var base runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&base)
		var max uint64
		gen := newLogGen(size, func() {
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > base.HeapAlloc && ms.HeapAlloc-base.HeapAlloc > max {
				max = ms.HeapAlloc - base.HeapAlloc
			}
		})
		w := m.NewWriter(io.Discard)
		if _, err := io.Copy(w, gen); err != nil {
			t.Fatal(err)
		}
		w.Close()
		if cap(w.buf) > m.maxLine || cap(w.out) > flushSize+4*m.maxLine {
			t.Errorf("writer buffers grew: buf %d, out %d", cap(w.buf), cap(w.out))
		}
		return max
	}
	small, large := peak(4<<20), peak(40<<20)
	t.Logf("peak live heap: %d KiB for 4 MiB, %d KiB for 40 MiB", small>>10, large>>10)
	// The writer holds about 64 KiB of line and 32 KiB of output; allow
	// for the runtime's own noise, far below the 36 MiB a growing buffer
	// would add.
	if large > small+4<<20 {
		t.Errorf("live heap grew with the input: %d KiB for 4 MiB, %d KiB for 40 MiB", small>>10, large>>10)
	}
}

type failWriter struct{ after int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.after <= 0 {
		return 0, io.ErrClosedPipe
	}
	f.after--
	return len(p), nil
}

func TestWriterError(t *testing.T) {
	m := New(Config{})
	w := m.NewWriter(&failWriter{after: 1})
	if _, err := w.Write([]byte("one\n")); err != nil {
		t.Fatalf("first write: %v", err)
	}
	if _, err := w.Write([]byte("two\n")); err == nil {
		t.Fatal("second write succeeded, want the underlying error")
	}
	if _, err := w.Write([]byte("three\n")); err == nil {
		t.Fatal("write after an error succeeded")
	}
	if err := w.Close(); err == nil {
		t.Fatal("Close after an error returned nil")
	}
}
