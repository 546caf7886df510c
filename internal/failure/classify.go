package failure

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

const (
	// MaxLine is how much of one log line the classifier looks at. The rest of
	// a longer line is skipped, so memory stays bounded whatever the log holds.
	MaxLine = 64 << 10
	// MaxEvidence is the longest evidence a Verdict carries, in bytes.
	MaxEvidence = 512
)

// Input is what a failed Job left behind. Every field is optional.
type Input struct {
	// Log is the job's log, read once, line by line, never whole.
	Log io.Reader
	// Annotations are the messages of the job's check-run annotations. The
	// runner-lost message often lives only there: a lost runner leaves a log
	// that just stops, or none at all.
	Annotations []string
	// Conclusion is the job's conclusion: success, failure, cancelled,
	// timed_out, skipped, neutral, action_required, or "" when unknown.
	Conclusion string
	// ExitCode is the failed step's exit code, nil when unknown. When nil, the
	// runner's "Process completed with exit code N." lines stand in for it.
	ExitCode *int
	// Err is an error the caller met itself (the GitHub layer, git). It counts
	// as the last line of the log.
	Err error
}

// Source says where a verdict's evidence came from.
type Source string

const (
	SourceRunnerLine Source = "runner_line" // the runner's typed "roadmap: <result>: class=…" line
	SourceLog        Source = "log"         // a line of the log
	SourceAnnotation Source = "annotation"  // a check-run annotation
	SourceConclusion Source = "conclusion"  // the job's conclusion
	SourceExitCode   Source = "exit_code"   // the exit code the caller passed
	SourceError      Source = "error"       // Input.Err
	SourceNone       Source = "none"        // nothing decided: the class is unknown
)

// Kill reasons (Verdict.Reason of class killed).
const (
	ReasonTimeout    = "timeout"
	ReasonCancelled  = "cancelled"
	ReasonRunnerLost = "runner_lost"
	ReasonSIGKILL    = "sigkill" // exit 137 without OOM evidence
	ReasonSIGTERM    = "sigterm" // exit 143
	// ReasonDiskFull: the machine's disk is full ("No space left on
	// device", ENOSPC, the runner's "running out of disk space"). The
	// change is not at fault and a retry on the same machine fills the
	// same disk again: a continuation runs on a fresh runner.
	ReasonDiskFull = "disk_full"
)

// Other reasons.
const (
	ReasonPrimary   = "primary"   // rate_limited: the hourly quota
	ReasonSecondary = "secondary" // rate_limited: a secondary limit
	// ReasonUnknownClass: the runner's typed line names a class the table
	// does not have.
	ReasonUnknownClass = "unknown_class"
	ReasonNoEvidence   = "no_evidence"
)

// Verdict is the classifier's answer.
type Verdict struct {
	Class Class
	// Reason refines the class: how a killed Job was killed, which rate limit.
	Reason string
	// Evidence is the line that decided, without its timestamp, ANSI colours
	// and surrounding space, cut to MaxEvidence bytes. It is not masked: a
	// caller writing it anywhere passes it through the secret masker first.
	Evidence string
	// Line is the 1-based line of Evidence in the log, 0 when it is not a log line.
	Line   int
	Source Source
	// LogErr is set when the log could not be read to its end; the verdict
	// rests on what was read.
	LogErr error
}

// Row returns the taxonomy row of the verdict's class.
func (v Verdict) Row() Row {
	r, _ := Lookup(v.Class)
	return r
}

// Classify decides the class of a failed Job. Precedence, highest first (the
// why is in docs/taxonomy.md):
//
//  1. the runner's typed line "roadmap: <result>: class=<class>" (last wins);
//  2. oom: exit code 137 and OOM evidence anywhere in the log;
//  3. killed: the runner's timeout, shutdown/lost-runner and cancel messages,
//     then the conclusion (timed_out, cancelled), then exit 137 or 143;
//  4. oom: OOM evidence with any other exit code (the process said so);
//  5. killed: a tool's word that its child got SIGKILL ("Killed", "exit code 137");
//  6. killed (disk_full): the machine's disk is full, which explains the
//     errors that follow it;
//  7. the last line with error evidence: rate_limited, auth, conflict,
//     indeterminate, transient, the runner's "checks failed" line (a line
//     with several kinds of evidence takes the first of that order). A go
//     test log line is the test's output, never such evidence; and a test
//     runner's failure report (go's "--- FAIL", pytest's "FAILED", jest's
//     "✕", cargo's "test result: FAILED") is never such evidence and voids
//     what came before it: the test run went on to its report, so what its
//     tests printed about networks and servers did not end the job;
//  8. checks_failed from a test runner's, linter's, race detector's or
//     compiler's failure output, or a test runner's "no tests ran", then go
//     test's "FAIL<tab>" and log lines, then go's "[no test files]" in a log
//     where no package ran a test;
//  9. unknown.
func Classify(in Input) Verdict {
	s := newScanner()
	var logErr error
	if in.Log != nil {
		logErr = s.scan(in.Log)
	}
	for _, a := range in.Annotations {
		s.line(0, SourceAnnotation, []byte(a), true)
	}
	if in.Err != nil {
		s.err(in.Err)
	}
	v := s.decide(in)
	v.LogErr = logErr
	return v
}

// slot keeps one candidate evidence line in a fixed buffer, so that a log
// with a million matching lines allocates nothing per line.
type slot struct {
	set    bool
	line   int
	source Source
	class  Class
	reason string
	n      int
	buf    [MaxEvidence]byte
}

func (s *slot) put(line int, src Source, c Class, reason string, text []byte) {
	s.set, s.line, s.source, s.class, s.reason = true, line, src, c, reason
	s.n = copy(s.buf[:], text)
}

func (s *slot) evidence() string {
	b := s.buf[:s.n]
	// A cut in the middle of a rune would leave invalid UTF-8 in JSON.
	for len(b) > 0 && !utf8.Valid(b) {
		b = b[:len(b)-1]
	}
	return string(b)
}

func (s *slot) verdict() Verdict {
	return Verdict{Class: s.class, Reason: s.reason, Evidence: s.evidence(), Line: s.line, Source: s.source}
}

// kill slots, in precedence order.
const (
	killTimeout = iota
	killRunnerLost
	killCancelled
	killSIGKILL
	killSIGTERM
	nKill
)

type scanner struct {
	m       *matcher
	clean   []byte // the line without timestamp and ANSI escapes
	lower   []byte // clean, ASCII lower case
	typed   slot
	oom     slot
	kill    [nKill]slot
	strong  slot
	disk    slot // the machine's disk is full
	weak    slot // a failing test, lint finding or compile error; go test's "--- FAIL: TestX"
	weakPkg slot // go test "FAIL<tab>pkg", "FAIL" and a test's own log lines
	// noTests is go's "?<tab>pkg<tab>[no test files]": a failure only in a
	// log where no package ran a test (goRan false).
	noTests slot
	goRan   bool
	// toolKill is a tool's word that its child died of SIGKILL ("Killed",
	// "exit code 137"): a kill, and with OOM evidence an OOM.
	toolKill slot
	saw137   bool
	saw143   bool
	lineNum  int
}

func newScanner() *scanner {
	return &scanner{
		m: markerMatcher,
		// Grown by append as long lines need, never past MaxLine.
		clean: make([]byte, 0, 1024),
		lower: make([]byte, 0, 1024),
	}
}

// scan reads r line by line. A line longer than MaxLine is looked at up to
// MaxLine bytes; the rest is skipped.
func (s *scanner) scan(r io.Reader) error {
	br := bufio.NewReaderSize(r, MaxLine)
	for {
		frag, err := br.ReadSlice('\n')
		if len(frag) > 0 {
			s.lineNum++
			if s.lineNum == 1 {
				frag = bytes.TrimPrefix(frag, []byte("\xef\xbb\xbf"))
			}
			s.line(s.lineNum, SourceLog, frag, false)
		}
		for err == bufio.ErrBufferFull {
			_, err = br.ReadSlice('\n')
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read job log after line %d: %w", s.lineNum, err)
		}
	}
}

// line looks at one line. annotation is true for check-run annotations, which
// come from the runner and the server and so count as annotated lines.
func (s *scanner) line(num int, src Source, raw []byte, annotation bool) {
	if len(raw) > MaxLine {
		raw = raw[:MaxLine]
	}
	s.clean = stripANSI(s.clean[:0], stripTimestamp(raw))
	content := bytes.TrimSpace(s.clean)
	annotated := annotation
	msg := content
	for _, p := range [][]byte{[]byte("##[error]"), []byte("##[warning]"), []byte("##[notice]")} {
		if bytes.HasPrefix(content, p) {
			annotated = true
			msg = bytes.TrimSpace(content[len(p):])
			break
		}
	}
	if !annotated {
		if m, ok := uiRunnerLine(content); ok {
			annotated, msg = true, m
		}
	}
	s.lower = lowerASCII(s.lower[:0], msg)
	sig := s.m.match(s.lower)

	// 1. The runner's typed line.
	if annotated {
		if c, ok := parseTypedLine(msg); ok {
			reason := ""
			if !c.Valid() {
				c, reason = Unknown, ReasonUnknownClass
			}
			s.typed.put(num, runnerSource(src), c, reason, content)
		}
	}

	// 2. OOM evidence, from any line: the kernel, cgroup files, runtimes.
	if oomLine(sig, s.lower) {
		s.oom.put(num, src, OOM, "", content)
	}
	runnerExit := false

	// 3. The runner's messages about how the job ended.
	if annotated {
		switch {
		case sig&sigTimeout != 0:
			s.kill[killTimeout].put(num, src, Killed, ReasonTimeout, content)
		case sig&sigRunnerLost != 0:
			s.kill[killRunnerLost].put(num, src, Killed, ReasonRunnerLost, content)
		case sig&sigCancel != 0:
			s.kill[killCancelled].put(num, src, Killed, ReasonCancelled, content)
		}
		if code, ok := parseExitLine(s.lower); ok {
			runnerExit = true
			switch code {
			case 137:
				s.saw137 = true
				s.kill[killSIGKILL].put(num, src, Killed, ReasonSIGKILL, content)
			case 143:
				s.saw143 = true
				s.kill[killSIGTERM].put(num, src, Killed, ReasonSIGTERM, content)
			}
		}
	}

	// A tool saying its child died of SIGKILL ("Killed", "exit code 137").
	if !runnerExit && toolSIGKILL(s.lower) {
		s.toolKill.put(num, src, Killed, ReasonSIGKILL, content)
	}

	// 4. Error evidence: the last decisive line wins. A go test log line is
	// the test's own output: what it says about servers is not the job's
	// infrastructure. A test runner's failure report decides whatever words
	// it quotes, and voids the evidence before it: the tests ran on to
	// their report, so what they printed did not end the job.
	testOutput := goTestLogLine(msg)
	report := testReport(msg, s.lower)
	if report && s.strong.set && s.strong.class != ChecksFailed {
		s.strong.set = false
	}
	if !testOutput && !report {
		if c, reason := lineClass(sig, s.lower, msg, annotated, true); c != "" {
			if reason == ReasonDiskFull {
				s.disk.put(num, src, c, reason, content)
			} else {
				s.strong.put(num, src, c, reason, content)
			}
		}
	}

	// 5. Test, lint and compiler failures: weak, because failing tests are
	// normal while a behaviour group runs fail-to-pass and during repair
	// rounds.
	switch goTestFail(msg) {
	case 1:
		s.weak.put(num, src, ChecksFailed, "", content)
	case 2:
		s.weakPkg.put(num, src, ChecksFailed, "", content)
	default:
		switch {
		case report, checkFailure(msg, s.lower, annotated || bytes.HasPrefix(content, []byte("Error: "))):
			s.weak.put(num, src, ChecksFailed, "", content)
		case testOutput:
			s.weakPkg.put(num, src, ChecksFailed, "", content)
		case goNoTestFiles(msg):
			s.noTests.put(num, src, ChecksFailed, "", content)
		}
	}
	if goTestRan(msg) {
		s.goRan = true
	}
}

// oomLine is true when a line is OOM evidence on its own: a kernel, cgroup or
// runtime message that memory ran out. A SIGKILL (exit 137, "Killed") never is.
func oomLine(sig signal, lower []byte) bool {
	return sig&sigOOM != 0 || sig&(sigKilledProcess|sigTotalVM) == sigKilledProcess|sigTotalVM || allocFailed(lower)
}

func runnerSource(src Source) Source {
	if src == SourceLog {
		return SourceRunnerLine
	}
	return src
}

// err counts an in-process error as the last line of the log.
func (s *scanner) err(err error) {
	c := ClassifyError(err)
	text := []byte(err.Error())
	switch c {
	case Unknown:
	case Killed:
		if _, r := textClass(err.Error()); r == ReasonDiskFull {
			s.disk.put(0, SourceError, Killed, ReasonDiskFull, text)
			break
		}
		s.kill[killCancelled].put(0, SourceError, Killed, ReasonCancelled, text)
	default:
		reason := ""
		if c == RateLimited {
			_, reason = textClass(err.Error())
		}
		s.strong.put(0, SourceError, c, reason, text)
	}
}

func (s *scanner) decide(in Input) Verdict {
	if s.typed.set {
		return s.typed.verdict()
	}
	exit137, exit143 := s.saw137, s.saw143
	if in.ExitCode != nil {
		// The caller's exit code is the step's own; it overrides the log.
		exit137, exit143 = *in.ExitCode == 137, *in.ExitCode == 143
		if !exit137 {
			s.kill[killSIGKILL].set = false
		}
		if !exit143 {
			s.kill[killSIGTERM].set = false
		}
	}
	if (exit137 || s.toolKill.set) && s.oom.set {
		return s.oom.verdict()
	}
	for k := range nKill {
		switch k {
		case killTimeout:
			if !s.kill[k].set && in.Conclusion == "timed_out" {
				return Verdict{Class: Killed, Reason: ReasonTimeout, Source: SourceConclusion}
			}
		case killCancelled:
			if !s.kill[k].set && in.Conclusion == "cancelled" {
				return Verdict{Class: Killed, Reason: ReasonCancelled, Source: SourceConclusion}
			}
		case killSIGKILL:
			if !s.kill[k].set && exit137 {
				return Verdict{Class: Killed, Reason: ReasonSIGKILL, Source: SourceExitCode}
			}
		case killSIGTERM:
			if !s.kill[k].set && exit143 {
				return Verdict{Class: Killed, Reason: ReasonSIGTERM, Source: SourceExitCode}
			}
		}
		if s.kill[k].set {
			return s.kill[k].verdict()
		}
	}
	// An out-of-memory message without 137: the process said it ran out of
	// memory itself (Go's runtime, Node's heap, the JVM), which is evidence;
	// 137 alone never is.
	if s.oom.set {
		return s.oom.verdict()
	}
	if s.toolKill.set {
		return s.toolKill.verdict()
	}
	if s.disk.set {
		return s.disk.verdict()
	}
	if s.strong.set {
		return s.strong.verdict()
	}
	if s.weak.set {
		return s.weak.verdict()
	}
	if s.weakPkg.set {
		return s.weakPkg.verdict()
	}
	if s.noTests.set && !s.goRan {
		return s.noTests.verdict()
	}
	return Verdict{Class: Unknown, Reason: ReasonNoEvidence, Source: SourceNone}
}

// lineClass is the error class one line gives, by the order rate_limited,
// auth, conflict, indeterminate, transient, checks_failed. logLine is true for
// a line of a job's log: there a timeout of a GET or HEAD (a registry's
// manifest, a token, a version check) is transient, because a read changed
// nothing and retrying it is all a reconcile would do. Errors met in process
// keep the stricter reading: roadmap reconciles its own requests.
func lineClass(sig signal, lower, msg []byte, annotated, logLine bool) (Class, string) {
	status := goGitHubStatus(lower)
	if status == 0 {
		status = toolStatus(lower)
	}
	if status == 0 {
		status = octokitStatus(lower)
	}
	if status == 0 {
		status = dumpServerError(lower)
	}
	switch {
	case sig&sigDiskFull != 0:
		return Killed, ReasonDiskFull
	case sig&sigRateSecondary != 0:
		return RateLimited, ReasonSecondary
	case sig&sigRatePrimary != 0:
		return RateLimited, ReasonPrimary
	case sig&sigRate != 0 || status == 429:
		return RateLimited, ""
	case sig&sigAuth != 0 || sig&(sigPermissionTo|sigDeniedTo) == sigPermissionTo|sigDeniedTo || status == 401 || status == 403:
		return Auth, ""
	case sig&sigConflict != 0 || status == 409:
		return Conflict, ""
	case sig&sigIndeterminate != 0 && sig&sigPreSend == 0 && !(logLine && readRequest(lower)):
		return Indeterminate, ""
	case sig&(sigTransient|sigIndeterminate) != 0,
		sig&sigUnexpectedEOF != 0 && sig&sigSyntaxError == 0,
		status == 500 || status == 502 || status == 503 || status == 504:
		return Transient, ""
	case annotated && bytes.HasPrefix(msg, []byte(checksFailedPrefix)):
		return ChecksFailed, ""
	}
	return "", ""
}

// textClass classifies free text (an error's message) line by line, the last
// decisive line winning, as the log classifier does.
func textClass(text string) (Class, string) {
	m := markerMatcher
	var c Class
	var reason string
	var lower []byte
	for _, l := range bytes.Split([]byte(text), []byte("\n")) {
		lower = lowerASCII(lower[:0], bytes.TrimSpace(l))
		if lc, lr := lineClass(m.match(lower), lower, nil, false, false); lc != "" {
			c, reason = lc, lr
		}
	}
	return c, reason
}

// parseExitLine parses the runner's "Process completed with exit code N."
func parseExitLine(lower []byte) (int, bool) {
	const p = "process completed with exit code "
	i := bytes.Index(lower, []byte(p))
	if i < 0 {
		return 0, false
	}
	rest := lower[i+len(p):]
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	code, err := strconv.Atoi(string(rest[:n]))
	if err != nil {
		return 0, false
	}
	return code, true
}

// goGitHubStatus finds the HTTP status in go-github's error text
// "METHOD URL: STATUS message" and returns it, 0 when there is none.
func goGitHubStatus(lower []byte) int {
	for off := 0; off < len(lower); {
		i := bytes.Index(lower[off:], []byte("http"))
		if i < 0 {
			return 0
		}
		i += off
		off = i + 4
		rest := lower[i:]
		if !bytes.HasPrefix(rest, []byte("https://")) && !bytes.HasPrefix(rest, []byte("http://")) {
			continue
		}
		if !precededByMethod(lower[:i]) {
			continue
		}
		end := bytes.IndexByte(rest, ' ')
		if end < 1 || rest[end-1] != ':' || len(rest) < end+4 {
			continue
		}
		d := rest[end+1 : end+4]
		if !isDigit(d[0]) || !isDigit(d[1]) || !isDigit(d[2]) {
			continue
		}
		if len(rest) > end+4 && rest[end+4] != ' ' {
			continue
		}
		return int(d[0]-'0')*100 + int(d[1]-'0')*10 + int(d[2]-'0')
	}
	return 0
}

func precededByMethod(before []byte) bool {
	for _, m := range []string{"get ", "post ", "patch ", "put ", "delete ", "head "} {
		if bytes.HasSuffix(before, []byte(m)) {
			k := len(before) - len(m)
			return k == 0 || !isLetter(before[k-1])
		}
	}
	return false
}

// goTestFail is 1 for go test's "--- FAIL: TestX" line, 2 for its
// "FAIL<tab>pkg" and "FAIL" lines, 0 otherwise.
func goTestFail(msg []byte) int {
	t := bytes.TrimLeft(msg, " \t")
	switch {
	case bytes.HasPrefix(t, []byte("--- FAIL: ")):
		return 1
	case bytes.HasPrefix(t, []byte("FAIL\t")), bytes.Equal(t, []byte("FAIL")):
		return 2
	}
	return 0
}

// stripTimestamp removes the "2026-11-29T10:15:02.1234567Z " prefix that
// GitHub Actions (and Azure Pipelines) put on every log line, the bracketed
// "[2020-06-30T12:55:26.119Z] " of Jenkins' timestamper, and the line ending.
func stripTimestamp(b []byte) []byte {
	b = bytes.TrimRight(b, "\r\n")
	if rest, ok := bytes.CutPrefix(b, []byte("[")); ok {
		if t, ok := cutTimestamp(rest); ok && len(t) > 0 && t[0] == ']' {
			return bytes.TrimPrefix(t[1:], []byte(" "))
		}
		return b
	}
	t, ok := cutTimestamp(b)
	if !ok {
		return b
	}
	if len(t) == 0 {
		return t
	}
	if t[0] == ' ' {
		return t[1:]
	}
	return b
}

// cutTimestamp cuts "2026-11-29T10:15:02[.1234567]Z" from the start of b and
// returns what follows it.
func cutTimestamp(b []byte) ([]byte, bool) {
	if len(b) < 20 {
		return nil, false
	}
	for i, want := range []byte("dddd-dd-ddTdd:dd:dd") {
		c := b[i]
		if want == 'd' {
			if !isDigit(c) {
				return nil, false
			}
		} else if c != want {
			return nil, false
		}
	}
	i := 19
	if b[i] == '.' {
		i++
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && b[i] == 'Z' {
		return b[i+1:], true
	}
	return nil, false
}

// stripANSI appends b to dst without ANSI CSI sequences (colours in tool output).
func stripANSI(dst, b []byte) []byte {
	for i := 0; i < len(b); i++ {
		if b[i] == 0x1b && i+1 < len(b) && b[i+1] == '[' {
			j := i + 2
			for j < len(b) && (b[j] < 0x40 || b[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		dst = append(dst, b[i])
	}
	return dst
}

func lowerASCII(dst, b []byte) []byte {
	for _, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// markerMatcher is the index of markers, built once: it is read-only.
var markerMatcher = newMatcher(markers)

// matcher finds every marker in a line in one pass: markers are indexed by
// their first two bytes, so each position of the line costs one table lookup.
type matcher struct {
	index   [1 << 16]uint8 // bigram → bucket number, 0 for none
	buckets [][]int
	ms      []marker
}

func newMatcher(ms []marker) *matcher {
	m := &matcher{ms: ms, buckets: [][]int{nil}}
	for i, mk := range ms {
		k := uint16(mk.text[0])<<8 | uint16(mk.text[1])
		b := m.index[k]
		if b == 0 {
			if len(m.buckets) > 255 {
				panic("failure: too many marker buckets")
			}
			b = uint8(len(m.buckets))
			m.index[k] = b
			m.buckets = append(m.buckets, nil)
		}
		m.buckets[b] = append(m.buckets[b], i)
	}
	return m
}

func (m *matcher) match(lower []byte) signal {
	var sig signal
	for i := 0; i+1 < len(lower); i++ {
		b := m.index[uint16(lower[i])<<8|uint16(lower[i+1])]
		if b == 0 {
			continue
		}
		for _, id := range m.buckets[b] {
			mk := &m.ms[id]
			if !bytes.HasPrefix(lower[i:], []byte(mk.text)) {
				continue
			}
			after := lower[i+len(mk.text):]
			if mk.flags&flagNoDigitAfter != 0 && len(after) > 0 && isDigit(after[0]) {
				continue
			}
			if mk.flags&flagPositiveCount != 0 && !positiveOrNoCount(after) {
				continue
			}
			if mk.flags&flagNotAfterOn != 0 && bytes.HasSuffix(lower[:i], []byte("on")) {
				continue
			}
			sig |= mk.sig
		}
	}
	return sig
}

// positiveOrNoCount is true unless after starts with a count that is zero
// ("oom_kill 0" in memory.events says no process was killed).
func positiveOrNoCount(after []byte) bool {
	t := bytes.TrimLeft(after, " :=\t")
	if len(t) == 0 || !isDigit(t[0]) {
		return true
	}
	for _, c := range t {
		if !isDigit(c) {
			break
		}
		if c != '0' {
			return true
		}
	}
	return false
}
