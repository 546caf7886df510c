package failure

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

func FuzzClassify(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(logsDir, "*.log"))
	real, _ := filepath.Glob(filepath.Join(realLogsDir, "*.log"))
	for _, p := range append(files, real...) {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, "failure", 137)
	}
	f.Add([]byte("Error: Process completed with exit code 137.\nKilled\nexit code 137137"), "", -1)
	f.Add([]byte("status code 5\ncode e50\nx_test.go:\n1:\n:1:1: \nfound 3\n ()"), "", -1)
	f.Add([]byte(""), "", -1)
	f.Add([]byte("\xef\xbb\xbf"), "cancelled", 0)
	f.Add([]byte("2026-11-29T10:15:02.1234567Z"), "timed_out", 143)
	f.Add([]byte("##[error]roadmap: stopped: class="), "success", 1)
	f.Add([]byte("##[error]roadmap: yielded: class=\xff\xfe"), "skipped", 1)
	f.Add([]byte("GET https://x: 4"), "", 0)
	f.Add([]byte("oom_kill 00000000000000000000000000001"), "", 137)
	f.Add([]byte("\x1b[31"), "", 0)
	f.Add(bytes.Repeat([]byte("x"), MaxLine+10), "", 0)

	f.Fuzz(func(t *testing.T, log []byte, conclusion string, exit int) {
		in := Input{Log: bytes.NewReader(log), Conclusion: conclusion}
		if exit >= 0 {
			in.ExitCode = &exit
		}
		v := Classify(in)
		if !v.Class.Valid() {
			t.Fatalf("class %q is not in the table", v.Class)
		}
		if v.LogErr != nil {
			t.Fatalf("LogErr = %v reading from memory", v.LogErr)
		}
		if len(v.Evidence) > MaxEvidence || !utf8.ValidString(v.Evidence) {
			t.Fatalf("evidence of %d bytes, valid UTF-8 %v", len(v.Evidence), utf8.ValidString(v.Evidence))
		}
		if lines := bytes.Count(log, []byte("\n")) + 1; v.Line < 0 || v.Line > lines {
			t.Fatalf("line %d outside the log's %d lines", v.Line, lines)
		}
		if v.Source == "" {
			t.Fatal("no source")
		}
		in.Log = bytes.NewReader(log)
		if again := Classify(in); again != v {
			t.Fatalf("two runs differ: %+v then %+v", v, again)
		}
		if c := ClassifyError(errors.New(string(log))); !c.Valid() {
			t.Fatalf("ClassifyError gave %q, not in the table", c)
		}
	})
}

// BenchmarkClassify classifies a 50 MB job log built from the real-shaped
// logs in testdata/logs. Allocations per op must stay flat as the log grows.
func BenchmarkClassify(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join(logsDir, "*.log"))
	var corpus []byte
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		// Keep ordinary lines only, so the log is long and mostly noise,
		// as a real 50 MB log is; the end decides.
		for _, l := range bytes.SplitAfter(data, []byte("\n")) {
			if !bytes.Contains(l, []byte("##[")) {
				corpus = append(corpus, l...)
			}
		}
	}
	const size = 50 << 20
	log := make([]byte, 0, size+len(corpus))
	for len(log) < size {
		log = append(log, corpus...)
	}
	log = append(log, "2026-11-29T11:15:02.1234567Z ##[error]The operation was canceled.\n"...)
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	for b.Loop() {
		v := Classify(Input{Log: bytes.NewReader(log)})
		if v.Class != Killed {
			b.Fatalf("class %s, want killed", v.Class)
		}
	}
}
