package redact

import (
	"bytes"
	"errors"
	"io"
)

const (
	// maxPEMLines bounds how many lines after a lone BEGIN marker are taken
	// as key body, so a cut block cannot mask the rest of a log.
	maxPEMLines = 1000
	// flushSize is how much masked output is held before it is written on.
	flushSize = 32 << 10
)

// Writer masks what is written to it and writes the result to the
// underlying writer, a line at a time. Text after the last newline is held
// until the next newline or Close, and so is a line that ends inside what
// may be a configured secret split across lines, until a later line shows
// whether it is. Memory stays bounded by the Masker's line cap whatever the
// input size. A Writer is not safe for concurrent use.
type Writer struct {
	m   *Masker
	dst io.Writer

	buf     []byte // the current line so far, without its newline
	out     []byte // masked output not yet written to dst
	scratch []span

	// The configured secrets are scanned for across lines: lit is the scan
	// at the end of the last line. A line in which a match under way
	// begins is held (its bytes and newline in block, its place in held)
	// until the match is found or given up, as are the lines after it.
	lit    litState
	block  []byte
	held   []heldLine
	ms     []litMatch
	litBuf []span

	pem     int  // body lines seen since a lone BEGIN marker; 0 outside a key
	chunked bool // the current line is longer than maxLine: masked in windows
	// pending are spans the previous window of a long line found and left
	// to this one, in this window's offsets.
	pending []pendingSpan

	written int64
	masked  int
	err     error
	closed  bool
}

// NewWriter returns a Writer that masks text on its way to w. Call Close to
// flush a final line that has no newline.
func (m *Masker) NewWriter(w io.Writer) *Writer {
	return &Writer{m: m, dst: w}
}

// Copy masks everything read from src into dst, streamed, and returns the
// number of bytes written to dst.
func (m *Masker) Copy(dst io.Writer, src io.Reader) (int64, error) {
	w := m.NewWriter(dst)
	_, err := io.Copy(w, src)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return w.written, err
}

// Masked returns how many spans the Writer has replaced so far.
func (w *Writer) Masked() int { return w.masked }

// Write masks p. It returns len(p) unless writing to the underlying writer
// failed.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.closed {
		return 0, errors.New("redact: write after close")
	}
	n := len(p)
	maxLine := w.m.maxLine
	for len(p) > 0 {
		if p[0] == '\n' {
			w.endLine(w.buf, true)
			w.buf = w.buf[:0]
			p = p[1:]
		} else if len(w.buf) == maxLine {
			// The line goes on past the cap: mask a window of it.
			w.window(false)
		} else {
			i := bytes.IndexByte(p, '\n')
			if len(w.buf) == 0 && !w.chunked && i >= 0 && i <= maxLine {
				// A whole line in p: mask it in place, no copy.
				w.endLine(p[:i], true)
				p = p[i+1:]
			} else {
				if i < 0 {
					i = len(p)
				}
				take := min(i, maxLine-len(w.buf))
				if need := len(w.buf) + take; need > cap(w.buf) {
					// Grow to at most the cap, never past it.
					nb := make([]byte, len(w.buf), min(max(2*cap(w.buf), need, 4<<10), maxLine))
					copy(nb, w.buf)
					w.buf = nb
				}
				w.buf = append(w.buf, p[:take]...)
				p = p[take:]
			}
		}
		if len(w.out) >= flushSize {
			if err := w.flush(); err != nil {
				return n - len(p), err
			}
		}
	}
	if err := w.flush(); err != nil {
		return n, err
	}
	return n, nil
}

// Close masks and writes a final line without a newline. It does not close
// the underlying writer.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.err != nil {
		return w.err
	}
	if len(w.buf) > 0 || w.chunked {
		w.endLine(w.buf, false)
		w.buf = w.buf[:0]
	} else {
		w.release(len(w.held))
	}
	return w.flush()
}

func (w *Writer) flush() error {
	if len(w.out) == 0 || w.err != nil {
		return w.err
	}
	n, err := w.dst.Write(w.out)
	w.written += int64(n)
	if err == nil && n < len(w.out) {
		err = io.ErrShortWrite
	}
	w.out = w.out[:0]
	w.err = err
	return err
}

// heldLine is a line held in Writer.block: [start, end), its newline at
// end unless it is the stream's last (nl false). lits are the configured
// secrets found on it so far, in its offsets.
type heldLine struct {
	start, end int
	nl         bool
	lits       []span
}

// endLine masks a complete line (without its newline; nl says whether one
// followed it). The configured secrets are scanned for from where the last
// line left off; the line is masked and passed on at once unless a match
// under way begins in it or in a line held before it.
func (w *Writer) endLine(line []byte, nl bool) {
	if w.chunked {
		w.window(true)
		w.chunked, w.pending = false, w.pending[:0]
		if nl {
			w.out = append(w.out, '\n')
		}
		return
	}
	a := w.m.lits
	if a == nil {
		w.emit(line, nil, nl)
		return
	}
	if len(w.held) == 0 {
		// Nothing under way: every match is inside the line.
		w.lit = litState{}
		w.ms = scanSplit(a, line, &w.lit, w.ms[:0])
		lits := w.litBuf[:0]
		for _, x := range w.ms {
			if s := walkBack(line, x.end, x.n); x.end-s-x.n <= w.m.slack() {
				lits = append(lits, span{start: s, end: x.end})
			}
		}
		w.litBuf = lits
		if nl {
			w.lit.sep(1)
			w.trimLit(line, 1)
		}
		if !nl || w.lit.s == 0 {
			w.emit(line, lits, nl)
			w.lit = litState{}
			return
		}
		w.block = append(append(w.block[:0], line...), '\n')
		w.held = append(w.held[:0], heldLine{start: 0, end: len(line), nl: true, lits: append([]span(nil), lits...)})
		return
	}
	off := len(w.block)
	w.block = append(w.block, line...)
	w.held = append(w.held, heldLine{start: off, end: off + len(line), nl: nl})
	w.ms = scanSplit(a, w.block[off:], &w.lit, w.ms[:0])
	for _, x := range w.ms {
		end := off + x.end
		if s := walkBack(w.block, end, x.n); end-s-x.n <= w.m.slack() {
			w.place(s, end)
		}
	}
	keep := len(w.block) + 1 // where the match under way begins
	if nl {
		w.block = append(w.block, '\n')
		w.lit.sep(1)
		if w.trimLit(w.block, 0); w.lit.s != 0 {
			keep = walkBack(w.block, len(w.block), int(a.depth[w.lit.s]))
		}
	}
	n := 0
	for n < len(w.held) && w.held[n].end < keep {
		n++
	}
	w.release(n)
}

// trimLit drops from the match under way at the end of b, followed by tail
// more separators, the prefixes whose separators already pass the slack: no
// match grows out of them.
func (w *Writer) trimLit(b []byte, tail int) {
	a := w.m.lits
	for w.lit.s != 0 {
		d := int(a.depth[w.lit.s])
		if len(b)+tail-walkBack(b, len(b), d)-d <= w.m.slack() {
			return
		}
		w.lit.s = a.fail[w.lit.s]
	}
}

// place adds the match [s, e) of w.block to the held lines it covers, each
// part without the separators at its ends.
func (w *Writer) place(s, e int) {
	for i := range w.held {
		h := &w.held[i]
		ps, pe := max(s, h.start), min(e, h.end)
		for ps < pe && sepAt(w.block[:pe], ps) > 0 {
			ps += sepAt(w.block[:pe], ps)
		}
		for pe > ps && sepBefore(w.block, pe) > 0 {
			pe -= sepBefore(w.block, pe)
		}
		if ps < pe {
			h.lits = append(h.lits, span{start: ps - h.start, end: pe - h.start})
		}
	}
}

// release masks and passes on the first n held lines, and forgets them.
func (w *Writer) release(n int) {
	if n == 0 {
		return
	}
	for _, h := range w.held[:n] {
		w.emit(w.block[h.start:h.end], h.lits, h.nl)
	}
	if n == len(w.held) {
		// Nothing under way is left (or the stream ends): start afresh.
		w.block, w.held, w.lit = w.block[:0], w.held[:0], litState{}
		return
	}
	shift := w.held[n].start
	w.block = w.block[:copy(w.block, w.block[shift:])]
	w.held = w.held[:copy(w.held, w.held[n:])]
	for i := range w.held {
		w.held[i].start -= shift
		w.held[i].end -= shift
	}
}

// emit masks one line, whose configured secrets lits are already found, and
// appends it (and its newline when nl) to the output.
func (w *Writer) emit(line []byte, lits []span, nl bool) {
	forced := lits
	if w.pem > 0 {
		if loc := rePEMEnd.FindIndex(line); loc != nil {
			forced = append(lits[:len(lits):len(lits)], span{start: contentStart(line), end: loc[1]})
			w.pem = 0
		} else if s, e, ok := pemBody(line); ok {
			if e > s {
				forced = append(lits[:len(lits):len(lits)], span{start: s, end: e})
			}
			w.pem++
			if w.pem > maxPEMLines {
				w.pem = 0
			}
		} else {
			w.pem = 0
		}
	}
	var open bool
	var n int
	w.out, open, n = w.m.maskLine(w.out, line, forced, &w.scratch)
	w.masked += n
	if open {
		w.pem = 1
	}
	if nl {
		w.out = append(w.out, '\n')
	}
}

// pendingSpan is a span one window of a long line hands to the next.
// sticky marks one that reached the window's end: it runs on over the
// bytes its carry kind takes.
type pendingSpan struct {
	span
	sticky bool
}

// window masks w.buf as a window of a line longer than the cap. A window
// that is not the line's last emits all but its final overlap bytes and
// keeps those as the start of the next window.
//
// A match belongs to the window in which it begins before the cut (the
// start of the kept overlap): a match beginning later is seen whole, key
// and all, by the next window, and one beginning earlier is seen whole, up
// to the window's end, by this one, as its beginning is shorter than the
// overlap. This window masks what it owns: the part before the cut now,
// the rest as spans handed to the next window, so a key emitted here never
// leaves its value unmasked there. A match the window's end cuts runs on
// over the bytes of its kind (a token, a value, a PEM body) in the next
// window, however long it is; a match that only a complete text shows
// (a JWT's dots, a URL's '@') is taken when its beginning and a run of
// its bytes reach the window's end.
func (w *Writer) window(final bool) {
	if !w.chunked {
		// A secret split across lines is looked for in lines up to the
		// cap only: the lines held so far go on as they are.
		w.release(len(w.held))
		w.lit = litState{}
	}
	w.chunked = true
	w.pem = 0
	win := w.buf
	sp, _ := w.m.spans(win, w.scratch[:0], true)
	cut := len(win)
	if !final {
		cut = len(win) - w.m.overlap
		sp = cutMatches(win, cut, sp)
	}
	for _, p := range w.pending {
		s := p.span
		s.end = min(s.end, len(win))
		if p.sticky {
			for s.end < len(win) && s.carry.continues(win[s.end]) {
				s.end++
			}
			if s.carry == carryPEM {
				if loc := rePEMEnd.FindIndex(win[s.end:]); loc != nil && loc[0] == 0 {
					s.end += loc[1]
					s.carry = carryToken // the block is complete
				}
			}
		}
		sp = append(sp, s)
	}
	w.pending = w.pending[:0]
	sp = w.m.normalize(win, sp)
	w.scratch = sp
	prev := 0
	for _, s := range sp {
		if s.start-s.head >= cut {
			continue // the next window sees this match whole
		}
		sticky := !final && (s.end == len(win) || s.carry == carryPEM && endMarkerCut(win[s.end:]))
		if s.start >= cut {
			// Begun here, masked there: hand it on whole.
			s.start, s.end, s.head = s.start-cut, s.end-cut, 0
			w.pending = append(w.pending, pendingSpan{span: s, sticky: sticky})
			continue
		}
		w.out = append(w.out, win[prev:s.start]...)
		if !s.cont {
			w.out = append(w.out, w.m.placeholder...)
			w.masked++
		}
		prev = s.end
		if s.end > cut {
			w.pending = append(w.pending, pendingSpan{span: span{start: 0, end: s.end - cut, cont: true, carry: s.carry}, sticky: sticky})
			prev = cut
		}
	}
	if prev < cut {
		w.out = append(w.out, win[prev:cut]...)
	}
	if !final {
		w.buf = w.buf[:copy(w.buf, win[cut:])]
	}
}

// endMarkerCut reports whether tail, the rest of a window after a PEM body,
// can be the beginning of its END marker cut by the window's end.
func endMarkerCut(tail []byte) bool {
	if len(tail) == 0 || len(tail) > 150 || tail[0] != '-' {
		return false
	}
	for _, c := range tail {
		if !isUpper(c) && !isDigit(c) && c != '-' && c != '_' && c != ' ' {
			return false
		}
	}
	return true
}

// cutMatches adds the matches that the end of a window (not a line's last)
// cuts before they show what they are, and that begin before cut: a JWT
// before its dots, a URL's password before its '@'. They are long runs
// (longer than the overlap), masked from where the secret starts to the
// window's end and on in the next window.
func cutMatches(win []byte, cut int, sp []span) []span {
	// A JWT: "eyJ" and a run of base64url and dots to the end.
	r := len(win)
	for r > 0 && (isAlnum(win[r-1]) || win[r-1] == '-' || win[r-1] == '_' || win[r-1] == '.') {
		r--
	}
	if i := bytes.Index(win[r:], []byte("eyJ")); i >= 0 && r+i < cut && len(win)-(r+i) >= 13 &&
		(r+i == 0 || !isAlnum(win[r+i-1])) {
		sp = append(sp, span{start: r + i, end: len(win), carry: carryToken})
	}
	// A URL's user information: "scheme://" and a run of its bytes to the end.
	r = len(win)
	for r > 0 && isURLPassChar(win[r-1]) {
		r--
	}
	if r >= 3 && bytes.Equal(win[r-3:r], []byte("://")) {
		scheme := r - 3
		for scheme > 0 && (isAlnum(win[scheme-1]) || win[scheme-1] == '+' || win[scheme-1] == '.' || win[scheme-1] == '-') {
			scheme--
		}
		s := r
		if i := bytes.IndexByte(win[r:], ':'); i >= 0 {
			s = r + i + 1 // the password; the user is kept, as for a whole URL
		}
		if scheme < r-3 && scheme < cut && s < len(win) {
			sp = append(sp, span{start: s, end: len(win), head: s - scheme, carry: carryURLPass})
		}
	}
	return sp
}

// contentStart is where a line's content begins after a GitHub Actions
// timestamp ("2024-05-01T10:00:00.1234567Z ") and indentation.
func contentStart(line []byte) int {
	i := timestampLen(line)
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	return i
}

// timestampLen is the length of a leading "YYYY-MM-DDTHH:MM:SS[.frac]Z "
// prefix, 0 if there is none.
func timestampLen(b []byte) int {
	const shape = "dddd-dd-ddTdd:dd:dd"
	if len(b) < len(shape)+2 {
		return 0
	}
	for i := 0; i < len(shape); i++ {
		if shape[i] == 'd' {
			if !isDigit(b[i]) {
				return 0
			}
		} else if b[i] != shape[i] {
			return 0
		}
	}
	i := len(shape)
	if b[i] == '.' {
		i++
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i+1 < len(b) && b[i] == 'Z' && b[i+1] == ' ' {
		return i + 2
	}
	return 0
}

// pemBody reports whether line can be a line of a PEM body: base64 (maybe
// quoted, maybe with a trailing escaped newline), a header such as
// "Proc-Type: 4,ENCRYPTED", or blank. [s, e) is the base64 to mask.
func pemBody(line []byte) (s, e int, ok bool) {
	s = contentStart(line)
	e = len(line)
	for e > s && (line[e-1] == ' ' || line[e-1] == '\t' || line[e-1] == '\r' || line[e-1] == ',' || line[e-1] == '"' || line[e-1] == '\'') {
		e--
	}
	if e-s >= 2 && line[e-2] == '\\' && line[e-1] == 'n' {
		e -= 2
	}
	if s < e && (line[s] == '"' || line[s] == '\'') {
		s++
	}
	if s >= e {
		return s, s, true
	}
	if i := bytes.Index(line[s:e], []byte(": ")); i > 0 {
		for _, c := range line[s : s+i] {
			if !isAlnum(c) && c != '-' {
				return 0, 0, false
			}
		}
		return s, s, true
	}
	for _, c := range line[s:e] {
		if !isBase64(c) {
			return 0, 0, false
		}
	}
	return s, e, true
}
