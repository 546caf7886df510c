package citriage

import (
	"bytes"
	"context"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/github"
)

const (
	// maxJobLog is the most of one job's log kept for reading: its tail,
	// where a failure is. maxLogRead bounds how much is read to get there.
	maxJobLog  = 4 << 20
	maxLogRead = 64 << 20
	// maxExcerpt bounds the failing part kept of one check; excerptBefore
	// and excerptAfter are the lines kept around the deciding line.
	maxExcerpt    = 6 << 10
	excerptBefore = 40
	excerptAfter  = 8
)

// Finding is one failed PR check, read and classified.
type Finding struct {
	Check   github.Check
	Verdict failure.Verdict
	Excerpt string // the failing part, masked
	RunID   int64  // the workflow run of an Actions job, else 0
	Attempt int    // the run's attempt the job ran in
}

// Source is where a failed check's evidence is read: GitHub's Actions API.
type Source interface {
	Job(ctx context.Context, jobID int64) (github.JobRun, error)
	JobLog(ctx context.Context, jobID int64) (io.ReadCloser, error)
	JobAnnotations(ctx context.Context, jobID int64) ([]string, error)
}

// Read reads what a failed check left: an Actions job's log and
// annotations, another app's output and annotations, a status's
// description; then classifies it and keeps the failing part. A read that
// fails leaves the check classified on what was read; logf says why.
func (w *Watch) Read(ctx context.Context, src Source, c github.Check, logf func(string, ...any)) Finding {
	f := Finding{Check: c}
	var log []byte
	var annotations []string
	switch {
	case c.Kind == "check_run" && c.App == github.ActionsApp && c.ID != 0:
		if job, err := src.Job(ctx, c.ID); err == nil {
			f.RunID, f.Attempt = job.RunID, max(job.RunAttempt, 1)
		} else {
			logf("roadmap: watch: read job %d of %s: %v", c.ID, c.Name, err)
		}
		if rc, err := src.JobLog(ctx, c.ID); err == nil {
			log, err = tail(rc, maxJobLog, maxLogRead)
			rc.Close()
			if err != nil {
				logf("roadmap: watch: read the log of %s: %v", c.Name, err)
			}
		} else {
			logf("roadmap: watch: download the log of %s: %v", c.Name, err)
		}
		annotations, _ = src.JobAnnotations(ctx, c.ID)
	case c.Kind == "check_run":
		log = []byte(c.Output)
		if c.ID != 0 {
			annotations, _ = src.JobAnnotations(ctx, c.ID)
		}
	default:
		log = []byte(c.Description)
	}
	conclusion := c.Detail
	if i := strings.LastIndexByte(conclusion, '/'); i >= 0 {
		conclusion = conclusion[i+1:]
	}
	f.Verdict = failure.Classify(failure.Input{Log: bytes.NewReader(log), Annotations: annotations, Conclusion: conclusion})
	if f.Verdict.Class == failure.Unknown && conclusion == "failure" {
		// A check that ran and failed with nothing more decisive in its
		// log failed on the change: the agent reads it.
		f.Verdict.Class = failure.ChecksFailed
	}
	part := failingPart(log, f.Verdict.Line)
	if len(annotations) > 0 {
		part += "\nannotations:\n" + strings.Join(annotations, "\n")
	}
	f.Excerpt = w.mask(cut(part, maxExcerpt))
	return f
}

func sortByRun(fs []Finding) {
	sort.Slice(fs, func(a, b int) bool { return fs[a].RunID < fs[b].RunID })
}

// tail reads rd to its end, or to limit bytes, and keeps the last keep
// bytes, so a huge log costs bounded memory and its end, where a job fails,
// is what is kept.
func tail(rd io.Reader, keep, limit int64) ([]byte, error) {
	lr := io.LimitReader(rd, limit)
	buf := make([]byte, 0, min(keep, 64<<10))
	chunk := make([]byte, 32<<10)
	for {
		n, err := lr.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if over := int64(len(buf)) - keep; over > 0 {
			buf = append(buf[:0], buf[over:]...)
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// failingPart is the part of a log around line (1-based): the lines before
// it, where a test prints its failure, and a few after; the last lines when
// line is 0. Timestamps of the runner's log lines are dropped, and no line is
// longer than 1,000 bytes.
func failingPart(log []byte, line int) string {
	lines := strings.Split(strings.ToValidUTF8(string(log), "\uFFFD"), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	lo, hi := len(lines)-excerptBefore, len(lines)
	if line > 0 && line <= len(lines) {
		lo, hi = line-1-excerptBefore, line+excerptAfter
	}
	lo, hi = max(lo, 0), min(hi, len(lines))
	var b strings.Builder
	for _, l := range lines[lo:hi] {
		l = strings.TrimRight(stripStamp(l), "\r")
		if len(l) > 1000 {
			l = strings.ToValidUTF8(l[:1000], "") + "…"
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// stripStamp drops the runner's "2024-01-02T03:04:05.1234567Z " prefix.
func stripStamp(l string) string {
	if len(l) > 20 && l[4] == '-' && l[7] == '-' && l[10] == 'T' {
		if i := strings.IndexByte(l, ' '); i > 0 && i < 40 && l[i-1] == 'Z' {
			if _, err := time.Parse(time.RFC3339Nano, l[:i]); err == nil {
				return l[i+1:]
			}
		}
	}
	return l
}

// cut keeps the last n bytes of s, on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + strings.ToValidUTF8(s[len(s)-n:], "")
}
