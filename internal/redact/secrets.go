package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// maxLiteral is the longest literal the secret automaton holds; longer
// secrets are cut into pieces this long, each masked where it occurs, so
// every match is shorter than the window overlap of long lines.
const maxLiteral = 4 << 10

// minEncoded is the shortest encoded form registered. The middle of a
// shifted base64 encoding of a short secret can be only a few characters,
// which would mask ordinary text.
const minEncoded = 8

// secretForms returns the literals to find for the configured secrets: each
// line of each secret (a runner also masks multi-line secrets line by line),
// its JSON and URL escapes, its base64 encodings, its hex (lower and upper
// case), its percent-encoding of every byte (both cases) and its characters
// reversed. Each literal is registered without separators (split.go), so
// it is also found in pieces.
//
// Base64 is registered at the three byte alignments, keeping only the
// characters that depend on the secret alone. That finds the secret inside
// any larger encoded text, such as base64("x-access-token:"+secret) in a
// Basic authorization header, whatever comes before it.
func secretForms(secrets []string) []string {
	seen := map[string]bool{}
	var out []string
	// add registers s if it is at least minLen long, cut into pieces of at
	// most maxLiteral bytes (the last piece overlaps the one before rather
	// than being a tiny literal of its own).
	add := func(s string, minLen int) {
		s = squeeze(s)
		if len(s) < minLen {
			return
		}
		for start := 0; start < len(s); start += maxLiteral {
			end := min(start+maxLiteral, len(s))
			st := start
			if end-st < minLen {
				st = end - minLen
			}
			if piece := s[st:end]; !seen[piece] {
				seen[piece] = true
				out = append(out, piece)
			}
		}
	}
	for _, secret := range secrets {
		for _, line := range strings.Split(secret, "\n") {
			line = strings.TrimSuffix(line, "\r")
			if len(line) < MinSecretLength {
				continue
			}
			add(line, MinSecretLength)
			for _, f := range escapedForms(line) {
				add(f, MinSecretLength)
			}
			for _, f := range base64Forms([]byte(line)) {
				add(f, minEncoded)
			}
			for _, f := range byteForms(line) {
				add(f, MinSecretLength)
			}
		}
	}
	slices.Sort(out)
	return out
}

// escapedForms are the JSON string escapes (with and without HTML escaping)
// and URL escapes of s that differ from s.
func escapedForms(s string) []string {
	var out []string
	var b bytes.Buffer
	for _, html := range []bool{true, false} {
		b.Reset()
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if err := enc.Encode(s); err == nil {
			j := strings.TrimSuffix(b.String(), "\n")
			j = j[1 : len(j)-1]
			out = append(out, j)
		}
	}
	out = append(out, url.QueryEscape(s), url.PathEscape(s))
	return slices.DeleteFunc(out, func(f string) bool { return f == s })
}

// byteForms are the hex encodings of s (lower and upper case), its
// percent-encoding of every byte (%xx, both cases) and s reversed, character
// by character: what a model asked to hide a value prints instead.
func byteForms(s string) []string {
	hex := make([]byte, 0, 2*len(s))
	pct := make([]byte, 0, 3*len(s))
	for i := 0; i < len(s); i++ {
		hex = append(hex, "0123456789abcdef"[s[i]>>4], "0123456789abcdef"[s[i]&15])
		pct = append(pct, '%', "0123456789abcdef"[s[i]>>4], "0123456789abcdef"[s[i]&15])
	}
	rev := []byte(s)
	if utf8.ValidString(s) {
		r := []rune(s)
		slices.Reverse(r)
		rev = []byte(string(r))
	} else {
		slices.Reverse(rev)
	}
	return []string{string(hex), strings.ToUpper(string(hex)), string(pct), strings.ToUpper(string(pct)), string(rev)}
}

// base64Forms are the std and URL-safe base64 encodings of b: whole (with
// and without padding) and, for each alignment 0, 1 and 2, the characters
// that depend on b alone.
func base64Forms(b []byte) []string {
	var out []string
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		full := enc.EncodeToString(b)
		out = append(out, full, strings.TrimRight(full, "="))
		for shift := 0; shift < 3; shift++ {
			buf := make([]byte, shift+len(b))
			copy(buf[shift:], b)
			e := enc.EncodeToString(buf)
			// Leading characters mix in the unknown bytes before the
			// secret: 0, 2 or 3 of them. Only whole 3-byte groups end in
			// characters that do not depend on what follows.
			lead := []int{0, 2, 3}[shift]
			whole := len(buf) / 3 * 4
			if whole > lead {
				out = append(out, e[lead:whole])
			}
		}
	}
	return out
}

// SecretsFromEnv returns the values of environment variables ("NAME=value",
// as from os.Environ) whose names say they hold a secret: a name part TOKEN,
// SECRET, KEY, PASSWORD, PASSWD, PASSPHRASE, PAT or CREDENTIAL(S) (parts are
// split at '_' and '-'; GITHUB_TOKEN, ACTIONS_RUNTIME_TOKEN and
// ACTIONS_ID_TOKEN_REQUEST_TOKEN among them). Names ending in a part that
// says the value is a location or a label (URL, URI, PATH, FILE, DIR, NAME,
// TYPE) are skipped, and so are values shorter than MinSecretLength. The
// result is sorted and free of duplicates.
func SecretsFromEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || len(value) < MinSecretLength || !secretName(name) {
			continue
		}
		out = append(out, value)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func secretName(name string) bool {
	parts := strings.FieldsFunc(strings.ToUpper(name), func(r rune) bool { return r == '_' || r == '-' })
	if len(parts) == 0 {
		return false
	}
	switch parts[len(parts)-1] {
	case "URL", "URI", "PATH", "FILE", "DIR", "NAME", "TYPE":
		return false
	}
	for _, p := range parts {
		switch p {
		case "KEY", "KEYS", "PAT", "PASS":
			return true
		}
		for _, w := range []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "APIKEY", "ACCESSKEY", "PRIVATEKEY"} {
			if strings.Contains(p, w) {
				return true
			}
		}
	}
	return false
}
