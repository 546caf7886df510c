package record

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
)

// opener starts the block; the version follows it on the same line.
const (
	opener  = "<!-- roadmap:record"
	version = "v1"
	closer  = "-->"
)

// Record is a parsed issue body: the person's text and the block's keys. Get one
// from Parse (of a body with or without a block; the zero Record is an empty body)
// and change it only with Apply, so every known key always holds a value of its
// type.
type Record struct {
	// text is the body without the block: what the person wrote, byte for byte.
	text string
	// eol ends each line of the block: "\r\n" when the block read had CRLF lines
	// (GitHub's web editor saves the whole body so), or, with no block, when the
	// person's text has a CRLF; "\n" otherwise.
	eol string
	// final: the closing "-->" line ends with eol. Kept so an unchanged body
	// renders to the same bytes; a new block has no line end after "-->".
	final bool
	// vals holds every key's value as written in the block (a YAML scalar or
	// one-line JSON), known and unknown keys alike.
	vals map[Key]string
}

// Parse splits an issue body into the person's text and the record block.
//
// The block is found by its first line, `<!-- roadmap:record v1`, at the start of a
// line outside any fenced code block (``` or ~~~), so an example block a person
// shows in a fence is neither the record nor a duplicate. A byte order mark and up
// to three spaces before it are tolerated, as CommonMark still reads such a line as
// the start of an HTML comment (hidden); four spaces make it an indented code
// block, which GitHub shows, so such a line is text. Key lines may be indented. A body without a block is
// a record with no keys. The person's text is everything outside the block's lines;
// when the block ends the body, the one line end before it is the block's separator
// and not part of the text (Render writes it back).
//
// Errors are *ParseError values naming the 1-based line: a second block, a block
// with no closing `-->`, a version other than v1, a line that is not `key: value`,
// a key set twice, a value of the wrong type for a known key, a NUL byte or
// invalid UTF-8 in the block (KindEncoding), and a value over MaxValueChars or a
// block over MaxBlockChars (KindTooLarge).
func Parse(body string) (*Record, error) {
	lines := splitLines(body)
	fences := newFencer(body, lines)
	open, shut := -1, -1
	vals := map[Key]string{}
	for i := 0; i < len(lines); i++ {
		s := body[lines[i].start:lines[i].end]
		if fences.fenced(i, s) || !isOpener(s) {
			continue
		}
		if open >= 0 {
			return nil, &ParseError{Line: i + 1, Kind: KindDuplicate,
				Msg: fmt.Sprintf("a second record block (the record is the block at line %d); remove one", open+1)}
		}
		if err := checkOpener(openerLine(s), i+1); err != nil {
			return nil, err
		}
		end, err := parseBlock(body, lines, i, vals)
		if err != nil {
			return nil, err
		}
		open, shut = i, end
		i = end
	}
	if open < 0 {
		return &Record{text: body, eol: eolOf(body), vals: vals}, nil
	}
	r := &Record{vals: vals, eol: "\n"}
	if body[lines[open].end:lines[open].next] == "\r\n" {
		r.eol = "\r\n"
	}
	before, after := body[:lines[open].start], body[lines[shut].next:]
	r.final = lines[shut].next > lines[shut].end
	if after == "" {
		// The separator Render writes is eol; strip what it would have written.
		switch {
		case r.eol == "\r\n" && strings.HasSuffix(before, "\r\n"):
			before = before[:len(before)-2]
		case strings.HasSuffix(before, "\n"):
			before = before[:len(before)-1]
		}
	}
	r.text = before + after
	return r, nil
}

// openerLine strips what may stand before the opener on its line: a byte order
// mark (an editor or a pasted file adds one), then up to three spaces.
func openerLine(s string) string {
	s = strings.TrimPrefix(s, "\uFEFF")
	for i := 0; i < 3 && strings.HasPrefix(s, " "); i++ {
		s = s[1:]
	}
	return s
}

func isOpener(s string) bool {
	s = openerLine(s)
	if !strings.HasPrefix(s, opener) {
		return false
	}
	rest := s[len(opener):]
	return rest == "" || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\r'
}

func checkOpener(s string, n int) error {
	fields := strings.Fields(s[len(opener):])
	switch {
	case len(fields) == 0:
		return &ParseError{Line: n, Kind: KindVersion,
			Msg: "the record block names no version; want `<!-- roadmap:record v1`"}
	case fields[0] != version:
		return &ParseError{Line: n, Kind: KindVersion,
			Msg: fmt.Sprintf("unknown record version %q; this release reads %s", clip(fields[0]), version)}
	case len(fields) > 1:
		return &ParseError{Line: n, Kind: KindMalformed,
			Msg: "`<!-- roadmap:record v1` must stand alone on its line; keys go on the lines below it and `-->` on a line of its own"}
	}
	return nil
}

// parseBlock reads the key lines after the opener at line open into vals and
// returns the index of the closing line. Blank lines are allowed and dropped.
func parseBlock(body string, lines []line, open int, vals map[Key]string) (int, error) {
	seen := map[Key]int{}
	size := utf8.RuneCountInString(body[lines[open].start:lines[open].next])
	for j := open + 1; j < len(lines); j++ {
		s := body[lines[j].start:lines[j].end]
		if err := checkText(s, j+1); err != nil {
			return 0, err
		}
		if size += utf8.RuneCountInString(body[lines[j].start:lines[j].next]); size > MaxBlockChars {
			return 0, &ParseError{Line: open + 1, Kind: KindTooLarge,
				Msg: fmt.Sprintf("the record block passes %d characters at line %d; a block holds at most %d (record.MaxBlockChars)", MaxBlockChars, j+1, MaxBlockChars)}
		}
		t := strings.Trim(s, " \t\r")
		switch {
		case t == closer:
			return j, nil
		case t == "":
			continue
		case isOpener(s):
			return 0, &ParseError{Line: open + 1, Kind: KindUnterminated,
				Msg: fmt.Sprintf("the record block has no closing `-->` line before another block opens at line %d", j+1)}
		}
		k, v, perr := keyLine(s, j+1, seen)
		if perr != nil {
			return 0, perr
		}
		vals[k] = v
	}
	return 0, &ParseError{Line: open + 1, Kind: KindUnterminated,
		Msg: "the record block has no closing `-->` line"}
}

// keyLine reads s, line n (1-based) of a block, as `key: value`, checked by
// its key's type; seen holds the keys read so far and their lines, and
// takes this one.
func keyLine(s string, n int, seen map[Key]int) (Key, string, *ParseError) {
	k, v, msg := splitKeyLine(strings.TrimLeft(s, " \t"))
	if msg != "" {
		return "", "", &ParseError{Line: n, Kind: KindMalformed, Msg: msg}
	}
	if msg := sizeProblem(v); msg != "" {
		return "", "", &ParseError{Line: n, Kind: KindTooLarge, Msg: fmt.Sprintf("%s: %s", k, msg)}
	}
	if first, dup := seen[k]; dup {
		return "", "", &ParseError{Line: n, Kind: KindMalformed,
			Msg: fmt.Sprintf("key %s is set twice (first at line %d)", k, first)}
	}
	if sp, ok := specOf(k); ok {
		if err := check(sp, v); err != nil {
			return "", "", &ParseError{Line: n, Kind: KindType, Msg: fmt.Sprintf("%s: %v", k, err)}
		}
	}
	seen[k] = n
	return k, v, nil
}

// checkText refuses a block line holding a NUL byte or bytes that are not
// UTF-8.
func checkText(s string, n int) error {
	if msg := encodingProblem(s); msg != "" {
		return &ParseError{Line: n, Kind: KindEncoding, Msg: msg}
	}
	return nil
}

// encodingProblem says what makes s other than text, "" when nothing does. Such
// bytes are refused, not rewritten: encoding/json turns them into U+FFFD, so a
// reader would see other text than was written and the next write would carry
// the change silently.
func encodingProblem(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return fmt.Sprintf("a NUL byte at column %d; the record block holds text only", i+1)
	}
	if utf8.ValidString(s) {
		return ""
	}
	i := 0
	for {
		r, w := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && w == 1 {
			break
		}
		i += w
	}
	return fmt.Sprintf("byte 0x%02x at column %d is not UTF-8; the record block is UTF-8 text, and roadmap refuses it rather than rewrite it", s[i], i+1)
}

// sizeProblem says whether a value is over MaxValueChars, "" when not.
func sizeProblem(v string) string {
	if n := utf8.RuneCountInString(v); n > MaxValueChars {
		return fmt.Sprintf("the value is %d characters; a record value holds at most %d (record.MaxValueChars)", n, MaxValueChars)
	}
	return ""
}

// splitKeyLine reads `key: value`. msg says what is wrong, "" when nothing is.
func splitKeyLine(s string) (Key, string, string) {
	colon := strings.IndexByte(s, ':')
	if colon < 0 {
		return "", "", fmt.Sprintf("want `key: value` in the record block, got %q", clip(s))
	}
	k, rest := s[:colon], s[colon+1:]
	if !validKey(k) {
		return "", "", fmt.Sprintf("want `key: value` in the record block; %q is not a key (a lowercase letter, then a-z 0-9 _ - .)", clip(k))
	}
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return "", "", fmt.Sprintf("want `key: value` with a space after the colon, got %q", clip(s))
	}
	v := strings.Trim(rest, " \t\r")
	if msg := rawProblem(v); msg != "" {
		return "", "", fmt.Sprintf("%s: %s", k, msg)
	}
	return Key(k), v, ""
}

// rawProblem checks what every value needs, whatever its key: it must fit on its
// line and must not end the HTML comment (GitHub would show the rest of the block).
func rawProblem(v string) string {
	switch {
	case strings.Contains(v, closer):
		return "the value holds `-->`, which would end the hidden block early; write it as a JSON string"
	case strings.ContainsAny(v, "\r\n"):
		return "the value holds a line break; write it as a JSON string"
	case v != strings.Trim(v, " \t"):
		return "the value starts or ends with a blank"
	}
	return ""
}

// eolOf picks the line end for a new block: CRLF when the person's text uses it.
func eolOf(text string) string {
	if strings.Contains(text, "\r\n") {
		return "\r\n"
	}
	return "\n"
}

// Render returns the issue body: the person's text, then the block with its keys
// sorted. A record with no keys renders as the person's text alone. A body over
// MaxBodyChars is a *TooLongError that says by how much.
func Render(r *Record) (string, error) { return render(r, false) }

// render writes the text and the block; always writes the block even with no
// keys (a record comment).
func render(r *Record, always bool) (string, error) {
	var b strings.Builder
	size := len(r.text) + len(opener) + len(version) + 16
	for k, v := range r.vals {
		size += len(k) + len(v) + 4
	}
	b.Grow(size)
	eol := r.eol
	if eol == "" { // a zero Record, not from Parse
		eol = eolOf(r.text)
	}
	b.WriteString(r.text)
	if len(r.vals) > 0 || always {
		if r.text != "" {
			b.WriteString(eol)
		}
		b.WriteString(opener + " " + version)
		b.WriteString(eol)
		for _, k := range r.Keys() {
			b.WriteString(string(k))
			b.WriteByte(':')
			if v := r.vals[k]; v != "" {
				b.WriteByte(' ')
				b.WriteString(v)
			}
			b.WriteString(eol)
		}
		b.WriteString(closer)
		if r.final {
			b.WriteString(eol)
		}
	}
	out := b.String()
	if n := utf8.RuneCountInString(out); n > MaxBodyChars {
		return "", &TooLongError{Chars: n}
	}
	return out, nil
}

// Update parses body, applies c and renders the result: one merge of the write
// protocol.
func Update(body string, c Changes) (string, error) {
	r, err := Parse(body)
	if err != nil {
		return "", fmt.Errorf("parse record: %w", err)
	}
	if err := r.Apply(c); err != nil {
		return "", err
	}
	return Render(r)
}

// Clone returns a copy of r that Apply and SetView can change without
// changing r.
func (r *Record) Clone() *Record {
	c := *r
	c.vals = maps.Clone(r.vals)
	if c.vals == nil {
		c.vals = map[Key]string{}
	}
	return &c
}

// Text returns the person's text: the body without the block.
func (r *Record) Text() string { return r.text }

// Keys returns the keys present, sorted, known and unknown.
func (r *Record) Keys() []Key { return slices.Sorted(maps.Keys(r.vals)) }

// Unknown returns the keys present that this release does not know, sorted. They
// are carried through every write unchanged.
func (r *Record) Unknown() []Key {
	var out []Key
	for _, k := range r.Keys() {
		if !k.Known() {
			out = append(out, k)
		}
	}
	return out
}

// Raw returns a key's value as written in the block.
func (r *Record) Raw(k Key) (string, bool) {
	v, ok := r.vals[k]
	return v, ok
}

// Has reports whether k is present.
func (r *Record) Has(k Key) bool {
	_, ok := r.vals[k]
	return ok
}

// Equal reports whether two records render the same body. The layout of the block
// (line ends) matters only when there is a block to render.
func (r *Record) Equal(o *Record) bool {
	if r == nil || o == nil {
		return r == o
	}
	if r.text != o.text || !maps.Equal(r.vals, o.vals) {
		return false
	}
	return len(r.vals) == 0 || (r.eol == o.eol && r.final == o.final)
}

// clip shortens s for an error message.
func clip(s string) string {
	const n = 60
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
