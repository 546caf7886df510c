package redact

import (
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

const testServer = "github.com"

func TestNeutralise(t *testing.T) {
	const z = "\u200b"
	for _, tc := range []struct{ in, want string }{
		// Mentions, not addresses or versions.
		{"ask @octocat or @acme/reviewers", "ask @" + z + "octocat or @" + z + "acme/reviewers"},
		{"@octocat", "@" + z + "octocat"},
		{"(@a) \"@b\" -@c \\@d é@e", "(@" + z + "a) \"@" + z + "b\" -@" + z + "c \\@" + z + "d é@" + z + "e"},
		{"mail a@example.com, pkg@v1.2.3, x_@y, @ alone, @-x", "mail a@example.com, pkg@v1.2.3, x_@y, @ alone, @-x"},
		// HTML, comments, entities.
		{"<!-- roadmap:stop -->", "<" + z + "!-- roadmap:stop -->"},
		{`<img src="https://evil.example/p.png">`, "<" + z + `img src="hxxps://evil.example/p.png">`},
		{"</details> <?php <https://github.com/x>", "<" + z + "/details> <" + z + "?php <" + z + "https://github.com/x>"},
		{"a < b, a <= b, x<-y, 1<2", "a < b, a <= b, x<-y, 1<2"},
		{"&#64;octocat &lt;!-- &amp; & done", "&" + z + "#64;octocat &" + z + "lt;!-- &" + z + "amp; & done"},
		// Images and links.
		{"![x](https://github.com/a.png)", "!" + z + "[x]" + z + "(https://github.com/a.png)"},
		{"[click](//evil.example) [r]: https://evil.example", "[click]" + z + "(//evil.example) [r]" + z + ": hxxps://evil.example"},
		{"see https://evil.example/x and HTTP://EVIL.example", "see hxxps://evil.example/x and HXXP://EVIL.example"},
		{"ftp://files.example/a", "fxp://files.example/a"},
		{"https://github.com/acme/widgets/pull/3 https://GitHub.com. https://github.com:443/x https://api.github.com/repos",
			"https://github.com/acme/widgets/pull/3 https://GitHub.com. https://github.com:443/x https://api.github.com/repos"},
		{"https://api.evil.example https://uploads.github.com/x", "hxxps://api.evil.example hxxps://uploads.github.com/x"},
		{"https://github.com@evil.example https://github.com.evil.example https://github.com:x@evil.example",
			"hxxps://github.com@evil.example hxxps://github.com.evil.example hxxps://github.com:x@evil.example"},
		{"www.evil.example (www.evil.example) a.www.b", "www" + z + ".evil.example (www" + z + ".evil.example) a.www.b"},
		{"&www.evil.example <www.x", "&" + z + "www" + z + ".evil.example <" + z + "www" + z + ".x"},
		// Workflow commands.
		{"::error::x\n  ::add-mask::y\na::b ##[group]z", ":" + z + ":error::x\n  :" + z + ":add-mask::y\na::b #" + z + "#[group]z"},
		// Controls and bidirectional text.
		{"a\x00b\x1b[31mc\u202eevil\u2066d\xffe\tf\r\n", "a\uFFFDb\uFFFD[31mc\uFFFDevil\uFFFDd\uFFFDe\tf\r\n"},
		// Ordinary text and code pass byte for byte.
		{"if a[i] > 0 && b != nil { return x[1:] } // ok", "if a[i] > 0 && b != nil { return x[1:] } // ok"},
		{"", ""},
	} {
		if got := Neutralise(tc.in, testServer); got != tc.want {
			t.Errorf("Neutralise(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
	if got := Neutralise("https://github.com/x", ""); got != "hxxps://github.com/x" {
		t.Errorf("with no server, a link to github.com is %q; want it defanged", got)
	}
	if got := Neutralise("https://ghe.example:8443/x https://ghe.example/x", "ghe.example:8443"); got != "https://ghe.example:8443/x hxxps://ghe.example/x" {
		t.Errorf("a server with a port: %q", got)
	}
}

var (
	reMention = regexp.MustCompile(`(?:^|[^A-Za-z0-9_])@[A-Za-z0-9]`)
	reTag     = regexp.MustCompile(`<[A-Za-z/!?]`)
	reEntity  = regexp.MustCompile(`&[#A-Za-z]`)
	reScheme  = regexp.MustCompile(`(?i)(?:https?|ftp)://`)
	reWWW     = regexp.MustCompile(`(?i)(?:^|[\s*_~(\x80-\xff])www\.`)
)

// FuzzNeutralise checks, for any text, that the output holds no mention,
// no HTML (no "<!--"), no entity, no image, link or link definition, no
// link to a host other than the server, no workflow command and no
// control, bidirectional or invalid character; that it is stable; and that
// text with nothing to neutralise is left as it is.
func FuzzNeutralise(f *testing.F) {
	for _, s := range []string{
		"@octocat", "<!-- roadmap:record v1\nimplement.group: 9\n-->", "![x](https://evil.example/p.png)",
		"<img src=x>", "https://github.com/acme/widgets", "https://github.com@evil.example", "::error::x",
		"##[group]", "&#64;x", "[a](//b)", "www.evil.example", "é@x", "a\u202eb", "\xff", "plain text, a < b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := Neutralise(in, testServer)
		if again := Neutralise(out, testServer); again != out {
			t.Fatalf("not stable:\n   in %q\n once %q\ntwice %q", in, out, again)
		}
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8: %q -> %q", in, out)
		}
		for _, bad := range []string{"<!--", "![", "](", "]:", "##["} {
			if strings.Contains(out, bad) {
				t.Fatalf("%q in %q -> %q", bad, in, out)
			}
		}
		for _, re := range []*regexp.Regexp{reMention, reTag, reEntity, reWWW} {
			if loc := re.FindStringIndex(out); loc != nil {
				t.Fatalf("%s matches %q in %q -> %q", re, out[loc[0]:loc[1]], in, out)
			}
		}
		for _, loc := range reScheme.FindAllStringIndex(out, -1) {
			if !serverHost(out[loc[1]:], testServer) {
				t.Fatalf("a link to another host: %q in %q -> %q", out[loc[0]:], in, out)
			}
		}
		for _, line := range strings.FieldsFunc(out, func(r rune) bool { return r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029' }) {
			if strings.HasPrefix(strings.TrimLeftFunc(line, unicode.IsSpace), "::") {
				t.Fatalf("a workflow command line %q in %q -> %q", line, in, out)
			}
		}
		for _, r := range out {
			if r != '\t' && r != '\n' && r != '\r' && unicode.IsControl(r) || bidiControl(r) {
				t.Fatalf("control %U in %q -> %q", r, in, out)
			}
		}
		if plain(in) && out != in {
			t.Fatalf("text with nothing to neutralise changed: %q -> %q", in, out)
		}
	})
}

// plain reports text Neutralise has no reason to touch: valid UTF-8 with no
// control or bidirectional character, and none of the characters that start
// markup, a mention, a command or a link.
func plain(s string) bool {
	if !utf8.ValidString(s) || strings.ContainsAny(s, "<&@!]:#") || strings.Contains(s, "//") || strings.Contains(strings.ToLower(s), "www.") {
		return false
	}
	for _, r := range s {
		if r != '\t' && r != '\n' && r != '\r' && unicode.IsControl(r) || bidiControl(r) {
			return false
		}
	}
	return true
}
