package redact

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// fuzzSecrets are the configured secrets of the fuzzed masker.
var fuzzSecrets = []string{"fuzz-secret-1", "masked", "Zm9vYmFyYmF6"}

// secretLike reports whether s has anything a secret rule could start from:
// a family prefix or keyword, a configured secret, a private suffix, or the
// start of a private address. It is written from the families in
// docs/redact.md, not from the masker's trigger table, so a rule that starts
// masking keyword-free text fails FuzzMask.
func secretLike(s string) bool {
	l := strings.ToLower(s)
	for _, k := range []string{
		"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "akia", "asia", "abia", "acca",
		"sk-", "xox", "xapp-", "hooks.slack.com", "glpat-", "hf_", "aiza", "npm_",
		"private key", "eyj", "authorization", "x-api-key", "x-auth-token", "private-token", "x-goog-api-key",
		"bearer", "basic", "://",
		"token", "secret", "passw", "pwd", "passphrase", "api_key", "api-key", "apikey",
		"access_key", "access-key", "accesskey", "private_key", "private-key", "privatekey", "credential",
		".internal", ".local", ".corp", ".lan", ".home.arpa", ".intranet", ".private",
		"10.", "172.", "192.168.", "100.", "fc", "fd", "fe8", "fe9", "fea", "feb",
	} {
		if strings.Contains(l, k) {
			return true
		}
	}
	return holdsForm(s)
}

// holdsForm reports whether s, without its separators, holds a form of a
// configured secret: a superset of what the masker finds, which also
// bounds the separators.
func holdsForm(s string) bool {
	sq := squeeze(s)
	for _, sec := range fuzzSecrets {
		for _, f := range secretForms([]string{sec}) {
			if strings.Contains(sq, f) {
				return true
			}
		}
	}
	return false
}

// onlyReplaces reports whether out is in with some spans replaced by ph:
// the text between placeholders appears in in, in order.
func onlyReplaces(in, out, ph string) bool {
	parts := strings.Split(out, ph)
	pos := 0
	for i, p := range parts {
		if i == 0 {
			if !strings.HasPrefix(in, p) {
				return false
			}
			pos = len(p)
			continue
		}
		if i == len(parts)-1 {
			return len(in)-len(p) >= pos && strings.HasSuffix(in, p)
		}
		j := strings.Index(in[pos:], p)
		if j < 0 {
			return false
		}
		pos += j + len(p)
	}
	return true
}

// FuzzMask checks, for any text:
//   - masking is idempotent: Mask(Mask(x)) == Mask(x);
//   - masking only replaces spans by the placeholder, and keeps every newline;
//   - a benign line (no keyword of any family, no configured secret) is left
//     byte for byte, so it is never lengthened; text whose lines are each
//     left unchanged is left unchanged as a whole, unless a configured
//     secret is split across its lines;
//   - a configured secret never survives;
//   - valid JSON stays valid JSON.
func FuzzMask(f *testing.F) {
	for _, c := range loadCanaries(f) {
		f.Add(c.in)
	}
	for _, line := range strings.Split(benign(f), "\n") {
		f.Add(line)
	}
	for _, s := range []string{
		"", "\n", "[masked]", "fuzz-secret-1[masked]ghp_abcdefghijklmnopqrstuvwxyz0123456789",
		`{"token":"1e+300000","password":"p4ss\\u00e9word"}`, "https://u:p@h.local:1/x",
		"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----", "fd00::1%eth0 10.0.0.1:80",
		"Authorization: Bearer [masked]", "Zm9vYmFyYmF6", "token=\\\"abc123def\\\"",
	} {
		f.Add(s)
	}
	m := New(Config{Secrets: fuzzSecrets})
	f.Fuzz(func(t *testing.T, in string) {
		out := m.Mask(in)
		if again := m.Mask(out); again != out {
			t.Fatalf("not idempotent:\n   in %q\n once %q\ntwice %q", in, out, again)
		}
		if strings.Count(out, "\n") != strings.Count(in, "\n") {
			t.Fatalf("newlines changed: %q -> %q", in, out)
		}
		if !onlyReplaces(in, out, DefaultPlaceholder) {
			t.Fatalf("output is not the input with spans replaced: %q -> %q", in, out)
		}
		allKept := true
		for _, line := range strings.Split(in, "\n") {
			if len(line) > m.maxLine {
				allKept = false
				continue
			}
			got := m.Mask(line)
			if !secretLike(line) && got != line {
				t.Fatalf("benign line changed: %q -> %q", line, got)
			}
			if got != line {
				allKept = false
			}
		}
		if allKept && out != in && !holdsForm(in) {
			t.Fatalf("every line alone is unchanged, the text is not: %q -> %q", in, out)
		}
		if strings.Contains(out, "fuzz-secret-1") {
			t.Fatalf("configured secret survived: %q -> %q", in, out)
		}
		if json.Valid([]byte(in)) && !json.Valid([]byte(out)) {
			t.Fatalf("valid JSON became invalid: %q -> %q", in, out)
		}
	})
}

// FuzzMaskSplit checks that a configured secret printed in pieces never
// survives: the fuzzer chooses where it is cut, what separators (blanks,
// line breaks, zero-width characters, at most maxGap) go between the
// pieces, and the text around it, and the output never holds the secret
// without its separators, streamed or not.
func FuzzMaskSplit(f *testing.F) {
	const secret = "fuzz-Split-Secret-7"
	f.Add("before ", " after", []byte{3, 1, 7, 2}, false)
	f.Add("", "", []byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, true)
	f.Add("fuzz-Spl", "it", []byte{5, 200, 4, 13}, false)
	seps := []string{" ", "\n", "\t", "\r\n", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "  ", "\n    "}
	m := New(Config{Secrets: []string{secret}})
	f.Fuzz(func(t *testing.T, pre, post string, cuts []byte, hexed bool) {
		if len(pre)+len(post) > 4096 {
			return
		}
		form := secret
		if hexed {
			form = strings.ToUpper(fmt.Sprintf("%x", secret))
		}
		var b strings.Builder
		b.WriteString(pre)
		for i := 0; i < len(form); {
			n := 1
			var sep string
			if len(cuts) > 0 {
				n = 1 + int(cuts[0]&15)
				sep = seps[int(cuts[0]>>4)%len(seps)]
				cuts = cuts[1:]
			}
			n = min(n, len(form)-i)
			b.WriteString(form[i : i+n])
			i += n
			if i < len(form) {
				b.WriteString(sep)
			}
		}
		b.WriteString(post)
		in := b.String()
		out := m.Mask(in)
		if strings.Contains(squeeze(out), form) {
			t.Fatalf("the secret survives:\n   in %q\n  out %q", in, out)
		}
		var sb strings.Builder
		w := m.NewWriter(&sb)
		for i := 0; i < len(in); i += 3 {
			w.Write([]byte(in[i:min(i+3, len(in))]))
		}
		w.Close()
		if sb.String() != out {
			t.Fatalf("streamed output differs:\n   in %q\n  got %q\n want %q", in, sb.String(), out)
		}
		if !m.Contains(in) {
			t.Fatalf("Contains(%q) = false", in)
		}
	})
}
