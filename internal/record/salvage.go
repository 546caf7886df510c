package record

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Unread is a line of a record block that Salvage could not read: a line a
// person's edit broke.
type Unread struct {
	// Err is what Parse says of the line; it names the line.
	Err *ParseError
	// Key is the key the line names, when one can be made out ("" when
	// not): a line `implement.group: two` names implement.group.
	Key Key
	// Text is the line as written, cut to 120 characters and made valid
	// UTF-8 (a NUL byte is dropped): for a person to find it, never to be
	// read as a value.
	Text string
	// keyLine: the line stood in the record block and was meant as a key
	// line (not the block's first line, not a line of a second block).
	keyLine bool
}

// Salvaged says what Salvage made of a block it could not read whole.
type Salvaged struct {
	// Unread are the lines not read, in the order of the body.
	Unread []Unread
	// Read are the keys read from the block's lines, sorted.
	Read []Key
	// Restored are the keys taken from the last good record because the
	// block lost them: a line naming the key did not read, or a line that
	// did not read names no key the last record held (so whatever it was,
	// each key the last record held and the block lacks is kept).
	Restored []Key
}

// Broken reports whether the block needed salvaging.
func (s Salvaged) Broken() bool { return len(s.Unread) > 0 }

// Salvage reads body as Parse does, but a record block a person broke is not
// an error: every line of the block that reads as a key is kept (a person's
// valid edits with it), every line that does not is dropped and returned in
// Unread, and keys the block lost are taken from last, the last record the
// caller read whole (nil when it has none), as Salvaged.Restored says. The
// text around the block is kept as Parse keeps it; a second record block
// and a block with no closing `-->` line (read to the end of the body or to
// the next block) are removed from it and their lines returned in Unread.
// A record comment whose block's first line is gone holds no block; with a
// last record that held keys it is salvaged too, its keys all restored.
//
// What Salvage refuses is what it must not guess: a block of a version this
// release does not read (a newer release's record is never rewritten by an
// older one). Its error is Parse's.
//
// A body Parse reads whole is returned as Parse returns it, with an empty
// Salvaged.
func Salvage(body string, last *Record) (*Record, Salvaged, error) {
	r, err := Parse(body)
	if err == nil {
		if last == nil || len(last.vals) == 0 || HasBlock(body) {
			return r, Salvaged{}, nil
		}
		sv := Salvaged{Unread: []Unread{{Err: &ParseError{Line: 1, Kind: KindMalformed,
			Msg: "the record block's first line `<!-- roadmap:record v1` is gone, so the comment holds no record block"}}}}
		r.eol = "\n"
		return restore(r, sv, last, true)
	}
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Kind == KindVersion {
		return nil, Salvaged{}, err
	}
	return salvage(body, last)
}

// salvage is the lenient Parse: the first block outside a code fence is the
// record, read line by line.
func salvage(body string, last *Record) (*Record, Salvaged, error) {
	lines := splitLines(body)
	fences := newFencer(body, lines)
	var (
		sv   Salvaged
		vals = map[Key]string{}
		seen = map[Key]int{}
		// drop: the line is part of a block and leaves the text.
		drop = make([]bool, len(lines))
		// open is the record's first line, shut its last (-1: none yet);
		// cur is the block being read (-1: outside any).
		open, shut, cur = -1, -1, -1
		size            int
	)
	unread := func(i int, kind ErrorKind, key Key, keyLine bool, msg string) {
		sv.Unread = append(sv.Unread, Unread{Err: &ParseError{Line: i + 1, Kind: kind, Msg: msg},
			Key: key, Text: shown(body[lines[i].start:lines[i].end]), keyLine: keyLine})
	}
	unterminated := func(to string) {
		unread(cur, KindUnterminated, "", false, "the record block has no closing `-->` line; roadmap read it to "+to)
	}
	for i := 0; i < len(lines); i++ {
		s := body[lines[i].start:lines[i].end]
		if cur < 0 {
			if fences.fenced(i, s) || !isOpener(s) {
				continue
			}
		} else if isOpener(s) {
			// A block that never closed ends where the next one opens.
			unterminated("the next block")
			cur = -1
		}
		if cur < 0 {
			// An opener: the record's, or a second block's.
			drop[i], cur = true, i
			size = utf8.RuneCountInString(body[lines[i].start:lines[i].next])
			switch {
			case open >= 0:
				unread(i, KindDuplicate, "", false, fmt.Sprintf("a second record block (the record is the block at line %d); roadmap dropped it", open+1))
			default:
				open, shut = i, i
				if err := checkOpener(openerLine(s), i+1); err != nil {
					var pe *ParseError
					if errors.As(err, &pe) && pe.Kind == KindVersion {
						return nil, Salvaged{}, err
					}
					unread(i, KindMalformed, "", false, err.(*ParseError).Msg)
				}
			}
			continue
		}
		drop[i] = true
		if cur == open {
			shut = i
		}
		t := strings.Trim(s, " \t\r")
		if t == closer {
			cur = -1
			continue
		}
		if t == "" {
			continue
		}
		if cur != open {
			unread(i, KindDuplicate, "", false, fmt.Sprintf("a line of a second record block (the record is the block at line %d)", open+1))
			continue
		}
		key := lineKey(s)
		if err := checkText(s, i+1); err != nil {
			unread(i, KindEncoding, key, true, err.(*ParseError).Msg)
			continue
		}
		if size += utf8.RuneCountInString(body[lines[i].start:lines[i].next]); size > MaxBlockChars {
			unread(i, KindTooLarge, key, true, fmt.Sprintf("the record block passes %d characters here; a block holds at most %d (record.MaxBlockChars)", MaxBlockChars, MaxBlockChars))
			continue
		}
		k, v, perr := keyLine(s, i+1, seen)
		if perr != nil {
			unread(i, perr.Kind, key, true, perr.Msg)
			continue
		}
		vals[k] = v
	}
	if cur >= 0 {
		unterminated("the end of the comment")
	}
	r := &Record{vals: vals, eol: "\n"}
	if body[lines[open].end:lines[open].next] == "\r\n" {
		r.eol = "\r\n"
	}
	r.final = lines[shut].next > lines[shut].end
	var text strings.Builder
	after := false
	for i, l := range lines {
		if !drop[i] {
			text.WriteString(body[l.start:l.next])
			after = after || i > shut
		}
	}
	r.text = text.String()
	if !after {
		// As Parse: the line end before a block that ends the body is the
		// block's separator, which Render writes.
		if r.eol == "\r\n" && strings.HasSuffix(r.text, "\r\n") {
			r.text = r.text[:len(r.text)-2]
		} else {
			r.text = strings.TrimSuffix(r.text, "\n")
		}
	}
	return restore(r, sv, last, false)
}

// restore takes from last the keys the block lost (Salvaged.Restored). A
// key line that did not read and names a key last held loses that key; one
// that names none of last's keys could have been any of them, so, as when
// the block's first line is gone (all), every key last held that r lacks is
// restored. A key the block does not name is otherwise the person's to
// delete.
func restore(r *Record, sv Salvaged, last *Record, all bool) (*Record, Salvaged, error) {
	sv.Read = r.Keys()
	if last == nil {
		return r, sv, nil
	}
	lost := map[Key]bool{}
	for _, u := range sv.Unread {
		switch {
		case !u.keyLine:
		case u.Key != "" && last.Has(u.Key):
			lost[u.Key] = true
		default:
			all = true
		}
	}
	for _, k := range last.Keys() {
		if r.Has(k) || !(all || lost[k]) {
			continue
		}
		r.vals[k] = last.vals[k]
		sv.Restored = append(sv.Restored, k)
	}
	return r, sv, nil
}

// lineKey is the key a block line names, "" when it names none: the run of
// key characters it starts with.
func lineKey(s string) Key {
	s = strings.TrimLeft(s, " \t")
	end := strings.IndexFunc(s, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.')
	})
	if end >= 0 {
		s = s[:end]
	}
	if !validKey(s) {
		return ""
	}
	return Key(s)
}

// shown is a line as Unread.Text holds it.
func shown(s string) string {
	s = strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "\uFFFD")
	if utf8.RuneCountInString(s) > 120 {
		s = string([]rune(s)[:119]) + "…"
	}
	return s
}
