package redact

import (
	"regexp"
	"strings"
	"sync"
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
		{"mail a@example.com, pkg@v1.2.3, x_@y, @ alone, @-x, a @ b", "mail a@" + z + "example.com, pkg@" + z + "v1.2.3, x_@" + z + "y, @ alone, @" + z + "-x, a @ b"},
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
		{"https://github.com/acme/widgets/blob/main/a.go https://GitHub.com. https://github.com:443/x https://api.github.com/repos",
			"https://github.com/acme/widgets/blob/main/a.go https://GitHub.com. https://github.com:443/x https://api.github.com/repos"},
		{"https://api.evil.example https://uploads.github.com/x", "hxxps://api.evil.example hxxps://uploads.github.com/x"},
		{"https://github.com@evil.example https://github.com.evil.example https://github.com:x@evil.example",
			"hxxps://github.com@" + z + "evil.example hxxps://github.com.evil.example hxxps://github.com:x@" + z + "evil.example"},
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

// autolinkRefs lists what in text GitHub would link as a reference to
// another repository or as an e-mail address, written from GitHub's rules
// for autolinked references and GFM's e-mail autolinks, not from
// Neutralise, and a little wider than they are where that is simpler:
//   - an issue, pull request or discussion in another repository:
//     owner/repo#12;
//   - GH-12, an issue by its other short form;
//   - a commit in another repository or a fork: owner/repo@sha, owner@sha
//     (7 to 40 hex digits);
//   - an e-mail address: local part of letters, digits, ".", "+", "-",
//     "_", then "@", then a domain holding a "." before a letter or digit
//     (and the same after "mailto:" or "xmpp:");
//   - a URL on server (or its API host) to an issue, a pull request, a
//     discussion or a commit: https://server/owner/repo/issues/12, which
//     GitHub shows and records as owner/repo#12.
func autolinkRefs(text, server string) []string {
	var found []string
	for _, re := range []*regexp.Regexp{reCrossIssue, reGH, reCommitRef, reEmail, reMailto, serverRefRe(server)} {
		found = append(found, re.FindAllString(text, -1)...)
	}
	return found
}

var (
	reCrossIssue = regexp.MustCompile(`[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+#[0-9]+`)
	reGH         = regexp.MustCompile(`(?i)gh-[0-9]+`)
	reCommitRef  = regexp.MustCompile(`[A-Za-z0-9_.-]+@[0-9A-Fa-f]{7,40}`)
	reEmail      = regexp.MustCompile(`[A-Za-z0-9.+_-]+@[A-Za-z0-9._-]*\.[A-Za-z0-9_-]`)
	reMailto     = regexp.MustCompile(`(?i)(?:mailto|xmpp):[A-Za-z0-9.+_-]+@[A-Za-z0-9._-]`)
)

// serverRefRes holds serverRefRe's expressions by server, compiled once.
var serverRefRes sync.Map

func serverRefRe(server string) *regexp.Regexp {
	if re, ok := serverRefRes.Load(server); ok {
		return re.(*regexp.Regexp)
	}
	const name, sep = `[A-Za-z0-9_.-]+`, `[/\\]+`
	re := regexp.MustCompile(`(?i)(?:https?|ftp)://(?:api\.)?` + regexp.QuoteMeta(server) + `(?::[0-9]*)?` +
		sep + name + sep + name + sep + `(?:issues|pulls?|discussions|commits?)` + sep + `[A-Za-z0-9]`)
	serverRefRes.Store(server, re)
	return re
}

// TestNeutraliseCrossRefs checks that no reference to another repository
// (owner/repo#12, owner/repo@sha, owner@sha, GH-12, a URL to an issue) and
// no e-mail address survives Neutralise, wherever it stands, and that a
// reference within the repository (#12, a bare SHA) and a link on the
// server to anything else are left.
func TestNeutraliseCrossRefs(t *testing.T) {
	const (
		z     = "\u200b"
		sha   = "0123456789abcdef0123456789abcdef01234567"
		short = "a5c3785"
	)
	for _, tc := range []struct{ in, want string }{
		{"other/repo#12", "other/repo#" + z + "12"},
		{"other/repo@" + sha, "other/repo@" + z + sha},
		{"owner@" + short, "owner@" + z + short},
		{"GH-12 and gh-3", "GH-" + z + "12 and gh-" + z + "3"},
		{"a@b.example", "a@" + z + "b.example"},
		{"mailto:a@b.example", "mailto:a@" + z + "b.example"},
		{"[x](mailto:a@b.example)", "[x]" + z + "(mailto:a@" + z + "b.example)"},
		{"xmpp:a@b.example/r", "xmpp:a@" + z + "b.example/r"},
		{"first.last+tag@mail.b-c.example", "first.last+tag@" + z + "mail.b-c.example"},
		{"a@_x.example a@-x.example a@.x.example", "a@" + z + "_x.example a@" + z + "-x.example a@" + z + ".x.example"},
		// Inside parentheses and punctuation.
		{"(other/repo#12)", "(other/repo#" + z + "12)"},
		{"see other/repo#12, owner@" + short + "; GH-4.", "see other/repo#" + z + "12, owner@" + z + short + "; GH-" + z + "4."},
		{`"a@b.example" <other/repo#1> [o.r/x_y-z#2]`, `"a@` + z + `b.example" <` + z + `other/repo#` + z + `1> [o.r/x_y-z#` + z + `2]`},
		{"**other/repo#12** _owner@" + short + "_", "**other/repo#" + z + "12** _owner@" + z + short + "_"},
		// At a line's start and end.
		{"other/repo#12\nGH-7\nowner/repo@" + sha + "\r\nmail a@b.example",
			"other/repo#" + z + "12\nGH-" + z + "7\nowner/repo@" + z + sha + "\r\nmail a@" + z + "b.example"},
		{"fixed in owner/repo#12\nby a@b.example", "fixed in owner/repo#" + z + "12\nby a@" + z + "b.example"},
		// URLs on the server that GitHub reads as references.
		{"https://github.com/other/repo/issues/12", "hxxps://github.com/other/repo/issues/12"},
		{"(https://github.com/other/repo/pull/3/files)", "(hxxps://github.com/other/repo/pull/3/files)"},
		{"https://GitHub.com/o/r/commit/" + sha, "hxxps://GitHub.com/o/r/commit/" + sha},
		{"https://github.com/o/r/discussions/5 https://github.com:443/o/r/pulls/5", "hxxps://github.com/o/r/discussions/5 hxxps://github.com:443/o/r/pulls/5"},
		{"https://github.com//o//r/issues/12 https://github.com/o/r/%69ssues/1 https://github.com\\o\\r\\issues\\1",
			"hxxps://github.com//o//r/issues/12 hxxps://github.com/o/r/%69ssues/1 hxxps://github.com\\o\\r\\issues\\1"},
	} {
		if len(autolinkRefs(tc.in, testServer)) == 0 {
			t.Errorf("the checker finds nothing to link in %q: it is too weak to judge", tc.in)
		}
		got := Neutralise(tc.in, testServer)
		if got != tc.want {
			t.Errorf("Neutralise(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
		if refs := autolinkRefs(got, testServer); len(refs) > 0 {
			t.Errorf("Neutralise(%q) = %q still links %q", tc.in, got, refs)
		}
		if again := Neutralise(got, testServer); again != got {
			t.Errorf("not stable: %q -> %q -> %q", tc.in, got, again)
		}
	}
	// A reference within the repository, a bare SHA, other links on the
	// server and text that only looks alike pass.
	for _, in := range []string{
		"#12", "(#12) and #3.", "fixes #12\n#4", sha, short, "C# 12, a # 1, x#y, gh-x, GH -1, #1a",
		"https://github.com/acme/widgets/blob/main/a.go#L12", "https://github.com/o/r/issues https://github.com/o/r/actions/runs/1",
		"https://github.com/o/issues/1/x",
	} {
		if got := Neutralise(in, testServer); got != in {
			t.Errorf("Neutralise(%q) = %q; want it left", in, got)
		}
	}
	if got, want := Neutralise("https://ghe.example/o/r/issues/1 https://ghe.example/o/r", "ghe.example"), "hxxps://ghe.example/o/r/issues/1 https://ghe.example/o/r"; got != want {
		t.Errorf("on a GitHub Enterprise server: %q; want %q", got, want)
	}
	// Posted in acme/widgets, a URL to its own issue, pull request or
	// commit stays a link; one to any other repository, or that only
	// reaches another one by "..", does not; the short forms are as above.
	for _, tc := range []struct{ in, want string }{
		{"https://github.com/acme/widgets/pull/3 https://github.com/ACME/Widgets/issues/4#issuecomment-1 https://github.com/acme/widgets/commit/" + sha,
			"https://github.com/acme/widgets/pull/3 https://github.com/ACME/Widgets/issues/4#issuecomment-1 https://github.com/acme/widgets/commit/" + sha},
		{"https://github.com/acme/widgets-2/pull/3 https://github.com/acme/widgets/../../other/repo/issues/1 https://github.com/acme/%77idgets/pull/3",
			"hxxps://github.com/acme/widgets-2/pull/3 hxxps://github.com/acme/widgets/../../other/repo/issues/1 https://github.com/acme/%77idgets/pull/3"},
		{"https://github.com/x/y/../../acme/widgets/pull/3 https://github.com/acme/widgets/pull/3/%zz", "https://github.com/x/y/../../acme/widgets/pull/3 hxxps://github.com/acme/widgets/pull/3/%zz"},
		{"acme/widgets#3 other/repo#4 #5", "acme/widgets#" + z + "3 other/repo#" + z + "4 #5"},
	} {
		if got := NeutraliseIn(tc.in, testServer, "acme/widgets"); got != tc.want {
			t.Errorf("NeutraliseIn(%q, acme/widgets)\n got %q\nwant %q", tc.in, got, tc.want)
		}
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
// link to a host other than the server, no reference to another
// repository and no e-mail address (autolinkRefs), no workflow command and no
// control, bidirectional or invalid character; that it is stable; and that
// text with nothing to neutralise is left as it is.
func FuzzNeutralise(f *testing.F) {
	for _, s := range []string{
		"@octocat", "<!-- roadmap:record v1\nimplement.group: 9\n-->", "![x](https://evil.example/p.png)",
		"<img src=x>", "https://github.com/acme/widgets", "https://github.com@evil.example", "::error::x",
		"##[group]", "&#64;x", "[a](//b)", "www.evil.example", "é@x", "a\u202eb", "\xff", "plain text, a < b",
		"other/repo#12", "owner/repo@a5c3785", "GH-12", "mailto:a@b.example", "(a@b.example)", "#12 C# 1",
		"https://github.com/o/r/issues/1", "https://github.com//o/r/pull/2", "https://github.com/o/r/blob/x#L1",
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
		if refs := autolinkRefs(out, testServer); len(refs) > 0 {
			t.Fatalf("a reference or an e-mail address GitHub links, %q, in %q -> %q", refs, in, out)
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
// markup, a mention, a reference, a command or a link.
func plain(s string) bool {
	l := strings.ToLower(s)
	if !utf8.ValidString(s) || strings.ContainsAny(s, "<&@!]:#") || strings.Contains(s, "//") || strings.Contains(l, "www.") || strings.Contains(l, "gh-") {
		return false
	}
	for _, r := range s {
		if r != '\t' && r != '\n' && r != '\r' && unicode.IsControl(r) || bidiControl(r) {
			return false
		}
	}
	return true
}
