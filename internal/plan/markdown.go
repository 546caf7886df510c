package plan

import "strings"

// Doc is one Markdown file of a change or of the main specs, kept line by line
// with each line's own ending, so that rendering it gives back every byte it
// was read from: CRLF, a lone CR, a missing final newline and a byte-order
// mark included. The structures built over a Doc (DeltaSpec, MainSpec) point
// into its lines by number and never copy a line's ending away.
type Doc struct {
	Path  string // slash-separated, relative to the repository root
	BOM   bool   // the file starts with U+FEFF
	Lines []Line // never empty: "" is one empty line with no ending
}

// Line is one line of a Doc: its text without the ending, and the ending
// ("\n", "\r\n", "\r", or "" for the last line).
type Line struct {
	Text string
	EOL  string
}

const bom = "\ufeff"

// ParseDoc splits src into lines the way OpenSpec reads a file: CRLF and a lone
// CR end a line as LF does, and a leading byte-order mark is not part of the
// first line.
func ParseDoc(path string, src []byte) *Doc {
	s := string(src)
	d := &Doc{Path: path}
	if strings.HasPrefix(s, bom) {
		d.BOM = true
		s = s[len(bom):]
	}
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n':
			d.Lines = append(d.Lines, Line{Text: s[start:i], EOL: "\n"})
			start = i + 1
		case '\r':
			eol := "\r"
			if i+1 < len(s) && s[i+1] == '\n' {
				eol = "\r\n"
			}
			d.Lines = append(d.Lines, Line{Text: s[start:i], EOL: eol})
			i += len(eol) - 1
			start = i + 1
		}
	}
	d.Lines = append(d.Lines, Line{Text: s[start:]})
	return d
}

// Bytes renders the Doc: exactly the bytes it was parsed from.
func (d *Doc) Bytes() []byte {
	var b strings.Builder
	if d.BOM {
		b.WriteString(bom)
	}
	for _, l := range d.Lines {
		b.WriteString(l.Text)
		b.WriteString(l.EOL)
	}
	return []byte(b.String())
}

// Texts returns the line texts, as OpenSpec's parsers see them after they
// normalise line endings.
func (d *Doc) Texts() []string {
	out := make([]string, len(d.Lines))
	for i, l := range d.Lines {
		out[i] = l.Text
	}
	return out
}

// Normalized is the file as OpenSpec's parsers read it: LF endings, no BOM.
func (d *Doc) Normalized() string { return strings.Join(d.Texts(), "\n") }

var (
	fenceOpenRe  = jsRegexp("^\\s*(`{3,}|~{3,})")
	fenceCloseRe = jsRegexp("^\\s*(`{3,}|~{3,})\\s*$")
)

// fenceMask marks the lines inside fenced code, the fences included, with
// OpenSpec's rule (src/core/parsers/code-fence.ts): a run of three or more
// backticks or tildes after any indentation opens a fence, and only a line
// holding nothing but a run of the same character, at least as long, closes
// it. An unclosed fence runs to the end of the file.
func fenceMask(lines []string) []bool {
	mask := make([]bool, len(lines))
	var marker byte
	length := 0
	for i, l := range lines {
		if marker == 0 {
			if m := fenceOpenRe.FindStringSubmatch(l); m != nil {
				marker, length = m[1][0], len(m[1])
				mask[i] = true
			}
			continue
		}
		mask[i] = true
		if m := fenceCloseRe.FindStringSubmatch(l); m != nil && m[1][0] == marker && len(m[1]) >= length {
			marker = 0
		}
	}
	return mask
}
