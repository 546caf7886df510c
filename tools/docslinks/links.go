package docslinks

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// link is one inline link of a page: its target as written and the line it
// is on.
type link struct {
	Target string
	Line   int
}

// page is what the check reads of one Markdown file: its links and the
// anchors its headings make.
type page struct {
	Links   []link
	Anchors map[string]bool
}

var (
	fence   = regexp.MustCompile("^ {0,3}(```+|~~~+)")
	heading = regexp.MustCompile(`^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$`)
	// inline matches [text](target) and ![alt](target), the text allowed one
	// level of nested brackets, the target optionally followed by a title.
	inline = regexp.MustCompile(`!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(<?([^()\s<>]*)>?(?:\s+"[^"]*")?\)`)
	// htmlAnchor is an explicit anchor written as HTML.
	htmlAnchor = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
)

// parse reads a page: links outside fenced code blocks and code spans, and
// the anchor of every heading (numbered as GitHub numbers repeats).
func parse(text string) page {
	p := page{Anchors: map[string]bool{}}
	seen := map[string]int{}
	var inFence string
	for i, line := range strings.Split(text, "\n") {
		if m := fence.FindStringSubmatch(line); m != nil {
			marker := m[1][:1]
			switch {
			case inFence == "":
				inFence = strings.Repeat(marker, len(m[1]))
			case strings.HasPrefix(strings.TrimSpace(line), inFence) && strings.Trim(strings.TrimSpace(line), marker) == "":
				inFence = ""
			}
			continue
		}
		if inFence != "" {
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			p.Anchors[m[1]] = true
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			slug := Slug(m[2])
			if n, ok := seen[slug]; ok {
				seen[slug] = n + 1
				slug = fmt.Sprintf("%s-%d", slug, n+1)
			} else {
				seen[slug] = 0
			}
			p.Anchors[slug] = true
		}
		for _, m := range inline.FindAllStringSubmatch(blankCode(line), -1) {
			p.Links = append(p.Links, link{Target: m[1], Line: i + 1})
		}
	}
	return p
}

// blankCode replaces each code span of a line (a run of backticks to the
// next run of the same length) with spaces, so that a link written as code
// is not read as a link.
func blankCode(line string) string {
	b := []byte(line)
	for i := 0; i < len(b); {
		if b[i] != '`' {
			i++
			continue
		}
		n := 0
		for i+n < len(b) && b[i+n] == '`' {
			n++
		}
		run := strings.Repeat("`", n)
		end := -1
		for j := i + n; j < len(b); {
			k := strings.Index(string(b[j:]), run)
			if k < 0 {
				break
			}
			k += j
			m := 0
			for k+m < len(b) && b[k+m] == '`' {
				m++
			}
			if m == n {
				end = k
				break
			}
			j = k + m
		}
		if end < 0 {
			i += n
			continue
		}
		for j := i; j < end+n; j++ {
			b[j] = ' '
		}
		i = end + n
	}
	return string(b)
}

var (
	mdLink   = regexp.MustCompile(`!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\([^)]*\)`)
	htmlTag  = regexp.MustCompile(`<[^>]+>`)
	emphasis = regexp.MustCompile(`(^|[^\p{L}\p{N}])(?:\*{1,3}|_{1,3})([^*_]+?)(?:\*{1,3}|_{1,3})($|[^\p{L}\p{N}])`)
)

// Slug is the anchor GitHub gives a heading's text: the text as rendered
// (links to their text, no code or emphasis markers, no HTML tags),
// lower-cased, every character that is not a letter, a mark, a number, a
// connector such as _, a hyphen or a space removed, and each space made a
// hyphen. Repeats are numbered by parse.
func Slug(text string) string {
	text = mdLink.ReplaceAllString(text, "$1")
	text = htmlTag.ReplaceAllString(text, "")
	text = strings.ReplaceAll(text, "`", "")
	for {
		next := emphasis.ReplaceAllString(text, "$1$2$3")
		if next == text {
			break
		}
		text = next
	}
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsNumber(r) || unicode.Is(unicode.Pc, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
