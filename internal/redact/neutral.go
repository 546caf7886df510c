package redact

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// zwsp is what Neutralise puts after a character that would start markup:
// it is invisible, and no markup, mention or command reads through it.
const zwsp = "\u200b"

// Neutralise makes text that roadmap did not write (the model's words, a
// check's output, a log line) safe to place in a comment or a PR body on
// the GitHub server whose host is server (such as "github.com" or
// "ghe.example.com:8443"; "" for none). The text then cannot:
//
//   - mention anyone, or make a link by an "@": an "@" before a letter, a
//     digit, "_", "-" or "." gets a U+200B after it, wherever it stands: a
//     mention (@user, @org/team), an e-mail address (a@b.example, also
//     after "mailto:"), a commit in another repository or fork
//     (owner/repo@sha, owner@sha);
//   - refer to another repository's issue, pull request or discussion,
//     which GitHub would note there as roadmap's: a "#" before a digit
//     right after a name's byte or "/" (owner/repo#12) gets a U+200B after
//     it, and so does "GH-" (any case) before a digit; "#12" after a blank
//     or a bracket, a reference within the repository, is left;
//   - hold HTML: a "<" before a letter, "/", "!" or "?" (a tag, "<!--", a
//     closing tag, "<https://…>") gets a U+200B after it, so "<!--" never
//     appears and no text can forge a marker or a record block; and "&"
//     before "#" or a letter (an entity, which could spell "@" or "<")
//     gets one too;
//   - show an image or make a link: "![", "](" and "]:" (an image, an
//     inline link, a link definition) get a U+200B inside; "http://",
//     "https://" and "ftp://" become "hxxp://", "hxxps://" and "fxp://"
//     unless the host right after them is server itself or its API host
//     ("api." and server), with a port or not, and nothing else: no user,
//     no other host, no look-alike; nor does a URL on the server to an
//     issue, a pull request, a discussion or a commit
//     (/owner/repo/issues/12, …), which GitHub takes as a reference like
//     owner/repo#12; "www." where GitHub would link it gets a U+200B
//     before its dot;
//   - read as a workflow command: a "::" that starts a line (after blanks)
//     and every "##[" get a U+200B inside;
//   - hide or reorder what a person reads: other control characters,
//     Unicode bidirectional controls and invalid UTF-8 become U+FFFD.
//
// Everything else is left byte for byte, so the text reads the same, and
// Neutralise(Neutralise(s)) equals Neutralise(s). Mask text before
// neutralising it: a placeholder that masking puts before "(" would make
// "[masked](…)" a link again.
func Neutralise(s, server string) string { return NeutraliseIn(s, server, "") }

// NeutraliseIn is Neutralise for text posted in the repository repo
// ("owner/name") on server: a URL on the server to repo's own issue, pull
// request, discussion or commit stays a link, as "#12" and a bare SHA do.
// Everything else is neutralised as Neutralise does it, references to any
// other repository and "owner/name#12" alike.
func NeutraliseIn(s, server, repo string) string {
	var b strings.Builder
	changed := false
	put := func(i int, lit string) {
		if !changed {
			b.Grow(len(s) + 16)
			b.WriteString(s[:i])
			changed = true
		}
		b.WriteString(lit)
	}
	lineStart := true
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && n == 1, unicode.IsControl(r), bidiControl(r):
				put(i, "\uFFFD")
				lineStart = false
			default:
				if changed {
					b.WriteString(s[i : i+n])
				}
				switch {
				case r == '\u2028' || r == '\u2029':
					lineStart = true
				case !unicode.IsSpace(r):
					lineStart = false
				}
			}
			i += n
			continue
		}
		var next, after byte
		if i+1 < len(s) {
			next = s[i+1]
		}
		if i+2 < len(s) {
			after = s[i+2]
		}
		insert, skip := false, 1
		var lit string // a replacement for s[i:i+skip]
		switch {
		case c == '\n' || c == '\r':
			if changed {
				b.WriteByte(c)
			}
			lineStart = true
			i++
			continue
		case c == ' ' || c == '\t':
			if changed {
				b.WriteByte(c)
			}
			i++
			continue
		case c < 0x20 || c == 0x7f:
			lit = "\uFFFD"
		case c == '<':
			insert = isLetter(next) || next == '/' || next == '!' || next == '?'
		case c == '&':
			insert = next == '#' || isLetter(next)
		case c == '@':
			insert = isAlnum(next) || next == '_' || next == '-' || next == '.'
		case c == '!':
			insert = next == '['
		case c == ']':
			insert = next == '(' || next == ':'
		case c == ':':
			insert = lineStart && next == ':'
		case c == '#':
			insert = next == '#' && after == '[' || isDigit(next) && i > 0 && refByte(s[i-1])
		case c == 'g' || c == 'G':
			if i+3 < len(s) && strings.EqualFold(s[i:i+3], "gh-") && isDigit(s[i+3]) {
				lit, skip = s[i:i+3]+zwsp, 3
			}
		case c == 'h' || c == 'H' || c == 'f' || c == 'F':
			if n := schemeLen(s[i:]); n > 0 && (!serverHost(s[i+n:], server) || serverRef(s[i+n:], repo)) {
				lit, skip = defang(s[i:i+n]), n
			}
		case c == 'w' || c == 'W':
			if i+4 <= len(s) && strings.EqualFold(s[i:i+4], "www.") && (i == 0 || wwwBefore(lastOut(s, i, &b, changed))) {
				lit, skip = s[i:i+3]+zwsp+".", 4
			}
		}
		switch {
		case lit != "":
			put(i, lit)
		case insert:
			put(i, s[i:i+1]+zwsp)
		case changed:
			b.WriteString(s[i : i+skip])
		}
		lineStart = false
		i += skip
	}
	if !changed {
		return s
	}
	return b.String()
}

// refByte is a byte that can end an owner's or a repository's name (or the
// "/" between them): a "#" before a digit right after one reads as a
// reference to another repository's issue (owner/repo#12), where "#12"
// after a blank or a bracket is one in the repository itself.
func refByte(c byte) bool { return isAlnum(c) || c == '_' || c == '-' || c == '.' || c == '/' }

// refKinds are the path segments after owner/repo that make a URL on the
// server a reference: GitHub shows it as owner/repo#12 (or a commit
// reference) and notes it on the issue, pull request or discussion it names,
// as it does the short form.
var refKinds = []string{"issues", "pull", "pulls", "discussions", "commit", "commits"}

// serverRef reports whether rest, the text after a scheme's "://", is a URL
// to an issue, a pull request, a discussion or a commit of a repository
// other than own ("owner/name", any case; "" for none): /owner/repo/issues/…,
// /owner/repo/pull/… and so on. The path is read as a browser reads it:
// a backslash counts as "/", empty and "." segments are skipped, ".." drops
// the one before, each segment is unescaped; a path that does not unescape
// counts as a reference.
func serverRef(rest, own string) bool {
	end := 0
	for end < len(rest) && !authorityEnd(rest[end]) {
		end++
	}
	path := rest[end:]
	if stop := strings.IndexAny(path, "?# \t\r\n<>\"'`"); stop >= 0 {
		path = path[:stop]
	}
	var segs []string
	for _, seg := range strings.FieldsFunc(path, func(r rune) bool { return r == '/' || r == '\\' }) {
		seg, err := url.PathUnescape(seg)
		switch {
		case err != nil:
			return true
		case seg == "..":
			segs = segs[:max(len(segs)-1, 0)]
		case seg != ".":
			segs = append(segs, seg)
		}
	}
	if len(segs) < 4 || own != "" && strings.EqualFold(segs[0]+"/"+segs[1], own) {
		return false
	}
	for _, k := range refKinds {
		if strings.EqualFold(segs[2], k) {
			return true
		}
	}
	return false
}

// lastOut is the byte the output so far ends with, before s[i:]: s[i-1],
// or, once something was changed, the last byte written, which may be that
// of a U+200B Neutralise put (as in "&" U+200B "www."), so that the output,
// read again, needs nothing more.
func lastOut(s string, i int, b *strings.Builder, changed bool) byte {
	if changed {
		o := b.String()
		return o[len(o)-1]
	}
	return s[i-1]
}

// wwwBefore is a byte after which GitHub links a bare "www.": a blank, "*",
// "_", "~", "(" (and, to be safe, any non-ASCII byte).
func wwwBefore(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' ||
		c == '*' || c == '_' || c == '~' || c == '(' || c >= utf8.RuneSelf
}

// bidiControl reports the Unicode bidirectional embedding, override and
// isolate controls, which can make text read in another order than it is.
func bidiControl(r rune) bool {
	return '\u202a' <= r && r <= '\u202e' || '\u2066' <= r && r <= '\u2069' || r == '\u200e' || r == '\u200f' || r == '\u061c'
}

// schemeLen is the length of an "http://", "https://" or "ftp://" (any
// case) that s starts with, 0 for none.
func schemeLen(s string) int {
	for _, p := range []string{"http://", "https://", "ftp://"} {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			return len(p)
		}
	}
	return 0
}

// defang writes a scheme so that nothing links it: http becomes hxxp, ftp
// fxp, in the case it was written in.
func defang(scheme string) string {
	b := []byte(scheme)
	for i := 1; i < len(b) && i < 3; i++ {
		if b[i] == 't' {
			b[i] = 'x'
		} else if b[i] == 'T' {
			b[i] = 'X'
		}
	}
	return string(b)
}

// serverHost reports whether rest, the text after a scheme's "://", starts
// with server's host (or its API host, "api." and the server's) and nothing
// else as its authority: the host alone, or with a port when server names
// none, then the end of the URL's authority. A user part, another host that
// begins like it, or any byte a host does not hold means no.
func serverHost(rest, server string) bool {
	if server == "" {
		return false
	}
	end := 0
	for end < len(rest) && !authorityEnd(rest[end]) {
		end++
	}
	auth := strings.TrimRight(rest[:end], ".,:;!?*_~")
	if strings.EqualFold(auth, server) || strings.EqualFold(auth, "api."+server) {
		return true
	}
	host, port, hasPort := strings.Cut(auth, ":")
	return hasPort && !strings.Contains(server, ":") && (strings.EqualFold(host, server) || strings.EqualFold(host, "api."+server)) &&
		port != "" && strings.Trim(port, "0123456789") == ""
}

// authorityEnd is a byte that ends a URL's authority, or that no host
// holds: where serverHost stops reading.
func authorityEnd(c byte) bool {
	switch c {
	case '/', '?', '#', '\\', ' ', '\t', '\n', '\r', '"', '\'', '<', '>', '`', '(', ')', '[', ']', '{', '}', '|', '^':
		return true
	}
	return false
}
