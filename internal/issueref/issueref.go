package issueref

import (
	"regexp"
	"strconv"
	"strings"
)

// Ref is an issue reference. Repo is "owner/name", "" for the text's own
// repository.
type Ref struct {
	Repo   string
	Number int
}

// Key is r with its repository lower-cased: GitHub's names are
// case-insensitive, so two references with equal keys name one issue.
func (r Ref) Key() Ref { return Ref{Repo: strings.ToLower(r.Repo), Number: r.Number} }

// Match is a reference and the bytes [Start, End) it spans in the text read.
type Match struct {
	Ref
	Start, End int
}

var (
	// refRE is #12, owner/repo#12 or an issue URL on any host's
	// github-like path. The name rules are GitHub's.
	refRE   = regexp.MustCompile(`(?:https?://[A-Za-z0-9.-]+/([A-Za-z0-9][A-Za-z0-9-]{0,38})/([A-Za-z0-9_.-]{1,100})/issues/(\d{1,9})|(?:([A-Za-z0-9][A-Za-z0-9-]{0,38})/([A-Za-z0-9_.-]{1,100}))?#(\d{1,9}))`)
	fenceRE = regexp.MustCompile("^\\s{0,3}(```|~~~)")
	codeRE  = regexp.MustCompile("`[^`]*`")
)

// Find returns the references standing alone in s, in order, repeats
// included: a reference glued to a word, a path or an HTML entity
// ("abc#12", "x/#3", "&#39;", "#4x") is not one, a number has at most nine
// digits and is positive, and a repository name holds no "..".
func Find(s string) []Match {
	var out []Match
	for _, sm := range refRE.FindAllStringSubmatchIndex(s, -1) {
		if sm[0] > 0 && !boundary(s[sm[0]-1]) {
			continue
		}
		if sm[1] < len(s) && isWord(s[sm[1]]) {
			continue
		}
		m := Match{Start: sm[0], End: sm[1]}
		switch {
		case sm[2] >= 0: // a URL
			m.Repo = s[sm[2]:sm[3]] + "/" + s[sm[4]:sm[5]]
			m.Number, _ = strconv.Atoi(s[sm[6]:sm[7]])
		default:
			if sm[8] >= 0 {
				m.Repo = s[sm[8]:sm[9]] + "/" + s[sm[10]:sm[11]]
			}
			m.Number, _ = strconv.Atoi(s[sm[12]:sm[13]])
		}
		if m.Number <= 0 || strings.Contains(m.Repo, "..") {
			continue
		}
		out = append(out, m)
	}
	return out
}

// Fence follows fenced code (``` or ~~~) down a text's lines; its zero value
// is outside any fence.
type Fence struct{ open string }

// Skip reports whether line is a fence's own line or inside fenced code,
// and moves past it. Call it on every line, in order.
func (f *Fence) Skip(line string) bool {
	if m := fenceRE.FindStringSubmatch(line); m != nil {
		switch f.open {
		case "":
			f.open = m[1]
		case m[1]:
			f.open = ""
		}
		return true
	}
	return f.open != ""
}

// StripCode blanks the inline code spans of one line (`#1` is code, not a
// reference), keeping the rest where it stood but for the span's width.
func StripCode(line string) string { return codeRE.ReplaceAllString(line, " ") }

// boundary: what may come before a reference. Not a word character, and not
// '&' (an HTML entity such as &#39;) or '/' (a path).
func boundary(b byte) bool { return !isWord(b) && b != '&' && b != '/' && b != '#' }

func isWord(b byte) bool {
	return b == '_' || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9')
}
