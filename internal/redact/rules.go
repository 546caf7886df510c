package redact

import (
	"bytes"
	"encoding/base64"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// rule is one secret family: the keywords that make a line worth checking
// (case-insensitive, any one suffices) and the finder that runs on such
// lines. Keywords keep the expensive part off the vast majority of log lines.
type rule struct {
	name     string
	triggers []string
	find     func(m *Masker, line []byte, sp []span) []span
	// carry is what a match runs on over, past the end of a window that
	// cuts it (see Writer.window); the zero value is token characters.
	carry carryKind
}

// carryKind says which bytes continue a match that a window's end cut.
type carryKind uint8

const (
	carryToken      carryKind = iota // isTokenChar: tokens, JWTs, configured secrets
	carryValue                       // a generic key=value value: up to isValueStop
	carryCredential                  // a header's credential: up to isCredentialStop
	carryURLPass                     // a URL's password: up to '@', '/', blanks, quotes
	carryPEM                         // a one-line PEM body: base64, escaped newlines, blanks, then its END marker
)

// continues reports whether c goes on with a match of kind k.
func (k carryKind) continues(c byte) bool {
	switch k {
	case carryValue:
		return !isValueStop(c)
	case carryCredential:
		return !isCredentialStop(c)
	case carryURLPass:
		return isURLPassChar(c)
	case carryPEM:
		return isBase64(c) || c == '\\' || c == ' ' || c == '\t'
	}
	return isTokenChar(c)
}

// isURLPassChar is a byte reURLPass takes in a password.
func isURLPassChar(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '\f', '\v', '/', '@', '"', '\'', '<', '>', '[', ']', '`', '\\':
		return false
	}
	return true
}

// The patterns favour recall: prefixes with loose lengths, so a new token
// format of a known family is still masked. None can match the placeholder
// or across it: their character classes exclude '[' and ']'.
var (
	reGitHub     = regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}`)
	reAWSKeyID   = regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`)
	reOpenAI     = regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?([A-Za-z0-9_-]{20,})`)
	reAnthropic  = regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{20,}`)
	reSlack      = regexp.MustCompile(`\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-[A-Za-z0-9-]{10,}`)
	reSlackHook  = regexp.MustCompile(`hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/+-]{8,})`)
	reGitLab     = regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}`)
	reHugging    = regexp.MustCompile(`\bhf_[A-Za-z0-9]{30,}`)
	reGoogleKey  = regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`)
	reNPM        = regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36,}`)
	reJWT        = regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+){0,2}`)
	reAuthHeader = regexp.MustCompile(`(?i)\b(?:(?:proxy-)?authorization|x-api-key|x-auth-token|private-token|x-goog-api-key)(?:\\?["'])?\s*[:=]\s*(?:\\?["'])?`)
	reBearer     = regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{8,})`)
	reBasic      = regexp.MustCompile(`\b[Bb]asic\s+([A-Za-z0-9+/]{4,}={0,2})`)
	reURLPass    = regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/@:"'<>\[\]\x60\\]*:([^\s/@"'<>\[\]\x60\\]+)@`)
	rePEMBegin   = regexp.MustCompile(`-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`)
	rePEMEnd     = regexp.MustCompile(`-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`)
)

// genericKeywords trigger the key=value rule, and a key must hold one.
var genericKeywords = []string{
	"token", "secret", "passwd", "password", "pwd", "passphrase",
	"api_key", "api-key", "apikey", "access_key", "access-key", "accesskey",
	"private_key", "private-key", "privatekey", "credential",
}

func builtinRules(suffixes [][]byte) []rule {
	hostTriggers := make([]string, len(suffixes))
	for i, s := range suffixes {
		hostTriggers[i] = string(s)
	}
	return []rule{
		{"github-token", []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, reFind(reGitHub, 0, nil), carryToken},
		{"aws-access-key-id", []string{"akia", "asia", "abia", "acca"}, reFind(reAWSKeyID, 0, nil), carryToken},
		{"openai-key", []string{"sk-"}, reFind(reOpenAI, 0, openAIBody), carryToken},
		{"anthropic-key", []string{"sk-ant-"}, reFind(reAnthropic, 0, nil), carryToken},
		{"slack-token", []string{"xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-", "xapp-"}, reFind(reSlack, 0, nil), carryToken},
		{"slack-webhook", []string{"hooks.slack.com/"}, reFind(reSlackHook, 1, nil), carryToken},
		{"gitlab-token", []string{"glpat-"}, reFind(reGitLab, 0, nil), carryToken},
		{"huggingface-token", []string{"hf_"}, reFind(reHugging, 0, nil), carryToken},
		{"google-api-key", []string{"aiza"}, reFind(reGoogleKey, 0, nil), carryToken},
		{"npm-token", []string{"npm_"}, reFind(reNPM, 0, nil), carryToken},
		{"pem-private-key", []string{"private key"}, nil, carryToken}, // multi-line: see findPEM and Writer
		{"jwt", []string{"eyj"}, reFind(reJWT, 0, nil), carryToken},
		{"authorization-header", []string{"authorization", "x-api-key", "x-auth-token", "private-token", "x-goog-api-key"}, findAuthHeader, carryCredential},
		{"bearer", []string{"bearer"}, findBearer, carryToken},
		{"basic-auth", []string{"basic"}, reFind(reBasic, 1, basicCredential), carryToken},
		{"url-password", []string{"://"}, reFind(reURLPass, 1, urlPassword), carryURLPass},
		{"generic-secret", genericKeywords, findGeneric, carryValue},
		{"private-host", hostTriggers, findPrivateHosts, carryToken},
		{"private-ipv4", []string{"10.", "172.", "192.168.", "100."}, findPrivateIPv4, carryToken},
		{"private-ipv6", []string{"fc", "fd", "fe8", "fe9", "fea", "feb"}, findPrivateIPv6, carryToken},
	}
}

// reFind masks group g of every match of re for which ok (if set) agrees;
// ok sees the line and the match's submatch indexes.
func reFind(re *regexp.Regexp, g int, ok func(line []byte, loc []int) bool) func(*Masker, []byte, []span) []span {
	return func(_ *Masker, line []byte, sp []span) []span {
		for _, loc := range re.FindAllSubmatchIndex(line, -1) {
			s, e := loc[2*g], loc[2*g+1]
			if s < 0 || e <= s {
				continue
			}
			if ok != nil && !ok(line, loc) {
				continue
			}
			sp = append(sp, span{start: s, end: e, head: s - loc[0]})
		}
		return sp
	}
}

// group returns submatch g of a match.
func group(line []byte, loc []int, g int) []byte {
	if loc[2*g] < 0 {
		return nil
	}
	return line[loc[2*g]:loc[2*g+1]]
}

// openAIBody accepts an sk- key only when its random part has letters and
// digits, so hyphenated words after "sk-" are left alone.
func openAIBody(line []byte, loc []int) bool {
	var letter, digit bool
	for _, c := range group(line, loc, 1) {
		switch {
		case isDigit(c):
			digit = true
		case isLetter(c):
			letter = true
		}
	}
	return letter && digit
}

// findBearer masks the token after the word "bearer", skipping prose such as
// "bearer Authorization header" or "the bearer credential.": a token has a
// digit or a symbol besides trailing punctuation, and '=' only as padding.
func findBearer(_ *Masker, line []byte, sp []span) []span {
	for _, loc := range reBearer.FindAllSubmatchIndex(line, -1) {
		s, e := loc[2], loc[3]
		for e > s && line[e-1] == '.' {
			e--
		}
		v := line[s:e]
		if e-s < 8 || onlyLetters(v) {
			continue
		}
		if i := bytes.IndexByte(v, '='); i >= 0 {
			if len(bytes.TrimRight(v[i:], "=")) > 0 || !bytes.ContainsAny(v[:i], "0123456789") {
				continue // an auth-param or an assignment: realm=, BEDROCK_MODEL=x
			}
		}
		sp = append(sp, span{start: s, end: e, head: s - loc[0]})
	}
	return sp
}

func onlyLetters(v []byte) bool {
	for _, c := range v {
		if !isLetter(c) {
			return false
		}
	}
	return true
}

// basicCredential accepts a Basic credential only when it decodes to
// "user:password", so the English word "basic" followed by a word is kept.
func basicCredential(line []byte, loc []int) bool {
	v := group(line, loc, 1)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
		dec, err := enc.DecodeString(string(v))
		if err != nil {
			continue
		}
		if bytes.IndexByte(dec, ':') < 0 {
			return false
		}
		for _, c := range dec {
			if c < 0x20 || c == 0x7f {
				return false
			}
		}
		return true
	}
	return false
}

// notReference skips values that name a secret instead of holding one: a
// shell or template reference ($TOKEN, ${{ ... }}, {{ .Token }}, <token>), a
// printf verb (%s), or an already masked run of stars.
func notReference(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	switch v[0] {
	case '$', '{', '<':
		return false
	}
	if rePrintfVerb.Match(v) {
		return false
	}
	return len(bytes.Trim(v, "*")) > 0
}

var (
	reSelector  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$`)
	reHexNumber = regexp.MustCompile(`^0[xX][0-9a-fA-F_]+$`)
)

var reDateTime = regexp.MustCompile(`^\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?$`)

var rePrintfVerb = regexp.MustCompile(`^%[-+# 0-9.*]*[a-zA-Z]$`)

// urlPassword keeps references in URLs, such as Go's
// "https://x-access-token:%s@github.com".
func urlPassword(line []byte, loc []int) bool { return notReference(group(line, loc, 1)) }

// findAuthHeader masks the credential of an Authorization (or similar)
// header, keeping the header name and the scheme: "Authorization: Bearer
// [masked]".
func findAuthHeader(_ *Masker, line []byte, sp []span) []span {
	for _, loc := range reAuthHeader.FindAllIndex(line, -1) {
		i := loc[1]
		// Skip a scheme word ("Bearer", "token", "Basic", "AWS4-HMAC-SHA256").
		j := i
		for j < len(line) && (isAlnum(line[j]) || line[j] == '-') {
			j++
		}
		scheme := false
		if j > i && j < len(line) && (line[j] == ' ' || line[j] == '\t') && isAuthScheme(line[i:j]) {
			for j < len(line) && (line[j] == ' ' || line[j] == '\t') {
				j++
			}
			i, scheme = j, true
		}
		e := i
		for e < len(line) && !isCredentialStop(line[e]) {
			e++
		}
		for e > i && (line[e-1] == '.' || line[e-1] == ':' || line[e-1] == '!' || line[e-1] == '?') {
			e-- // sentence punctuation
		}
		v := line[i:e]
		if e == i || !notReference(v) || isAuthScheme(v) || isLowerWord(v) || allDigits(v) {
			continue
		}
		if !scheme && onlyLetters(v) {
			continue // prose: "tag-based authorization: TagResource"
		}
		sp = append(sp, span{start: i, end: e, head: i - loc[0]})
	}
	return sp
}

// allDigits is a number after a header name, as in a header table.
func allDigits(v []byte) bool {
	for _, c := range v {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// isLowerWord is prose after a header name ("Authorization: Bearer header").
func isLowerWord(v []byte) bool {
	for _, c := range v {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

func isAuthScheme(w []byte) bool {
	for _, s := range []string{"bearer", "basic", "token", "digest", "negotiate", "bot", "ntlm", "apikey", "aws4-hmac-sha256", "hoba", "mutual", "sso-key"} {
		if bytes.EqualFold(w, []byte(s)) {
			return true
		}
	}
	return false
}

func isCredentialStop(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '"', '\'', '`', ',', ';', '@', '[', ']', '<', '>', '(', ')', '{', '}', '\\':
		return true
	}
	return false
}

// maxKey bounds how far back from an assignment a key is looked for, which
// keeps a line of "a=a=a=..." linear.
const maxKey = 256

// findGeneric masks the value of key=value, key: value, key := value,
// "key": "value" and key => value pairs whose key names a secret
// (client_secret, DB_PASSWORD, api-key) when the value looks like one. It
// scans from each assignment operator instead of running a pattern with a
// leading repetition, so a long line costs linear time.
func findGeneric(_ *Masker, line []byte, sp []span) []span {
	for p := 0; p < len(line); p++ {
		c := line[p]
		if c != ':' && c != '=' {
			continue
		}
		opEnd := p + 1
		switch {
		case c == ':' && opEnd < len(line) && line[opEnd] == '=':
			opEnd++ // :=
		case c == '=' && opEnd < len(line) && line[opEnd] == '>':
			opEnd++ // =>
		case c == '=' && opEnd < len(line) && line[opEnd] == '=':
			p = opEnd // a comparison: ==
			continue
		case c == '=' && p > 0 && bytes.IndexByte([]byte("!<>="), line[p-1]) >= 0:
			continue // !=, <=, >=
		}
		// The key: [A-Za-z0-9_.-]+, then an optional (escaped) quote and
		// blanks before the operator.
		k := p
		for k > 0 && (line[k-1] == ' ' || line[k-1] == '\t') {
			k--
		}
		if k > 0 && (line[k-1] == '"' || line[k-1] == '\'') {
			k--
			if k > 0 && line[k-1] == '\\' {
				k--
			}
		}
		keyEnd := k
		for k > 0 && keyEnd-k < maxKey && isKeyChar(line[k-1]) {
			k--
		}
		key := line[k:keyEnd]
		if len(key) == 0 || !hasKeyword(key) {
			continue
		}
		// The value: after blanks and an optional (escaped) quote.
		s := opEnd
		for s < len(line) && (line[s] == ' ' || line[s] == '\t') {
			s++
		}
		if s+1 < len(line) && line[s] == '\\' && (line[s+1] == '"' || line[s+1] == '\'') {
			s += 2
		} else if s < len(line) && (line[s] == '"' || line[s] == '\'') {
			s++
		}
		e := s
		for e < len(line) && !isValueStop(line[e]) {
			e++
		}
		if e == s {
			continue
		}
		p = e - 1 // values do not overlap; this keeps the scan linear
		switch {
		case k > 0 && line[k-1] == '/':
			continue // URL userinfo (https://x-access-token:...@): the URL rule masks only the password
		case e < len(line) && line[e] == '(':
			continue // a call: token := newToken(...)
		case aboutSecret(key), !looksSecret(line[s:e]):
			continue
		}
		sp = append(sp, span{start: s, end: e, head: s - k})
	}
	return sp
}

func isKeyChar(c byte) bool { return isAlnum(c) || c == '_' || c == '.' || c == '-' }

func isValueStop(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '"', '\'', '`', ',', ';', '&', '(', ')', '{', '}', '[', ']', '<', '>', '\\':
		return true
	}
	return false
}

// hasKeyword reports whether key holds one of genericKeywords, ignoring case.
func hasKeyword(key []byte) bool {
	var buf [maxKey]byte
	lower := buf[:len(key)]
	for i, c := range key {
		if isUpper(c) {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	for _, w := range genericKeywords {
		if bytes.Contains(lower, []byte(w)) {
			return true
		}
	}
	return false
}

// aboutSecret reports a key whose last word says its value describes a
// secret instead of being one.
func aboutSecret(key []byte) bool {
	end := len(key)
	for end > 0 && !isAlnum(key[end-1]) {
		end--
	}
	start := end
	for start > 0 && isAlnum(key[start-1]) {
		// A camel-case boundary (tokenPath) also starts a word.
		if isUpper(key[start-1]) && start < end && !isUpper(key[start]) {
			start--
			break
		}
		start--
	}
	switch strings.ToLower(string(key[start:end])) {
	case "path", "file", "filename", "dir", "url", "uri", "endpoint", "host", "name", "type", "kind",
		"id", "ids", "count", "len", "length", "size", "at", "ttl", "expiry", "expires", "expiration",
		"header", "env", "ref", "prefix", "suffix", "field", "mode", "format", "scope", "scopes",
		"version", "method", "limit", "index", "source", "provider", "store", "location":
		return true
	}
	return false
}

func looksSecret(v []byte) bool {
	if len(v) < MinSecretLength {
		return false
	}
	switch v[0] {
	case '$', '%', '/', '~', '#', '+', '.', '-':
		return false // a reference, a path, a comment, a negative number, or code: "PWD="+dir
	}
	if reSelector.Match(v) || reHexNumber.Match(v) {
		return false // cfg.Token, r.opts.secret2, 0x3f879678
	}
	lower := bytes.ToLower(v)
	for _, w := range []string{"token", "secret", "passw", "key", "credential"} {
		if bytes.Contains(lower, []byte(w)) {
			return false // an identifier that names a secret: test2048PrivateKey, Bug4Secret
		}
	}
	if i := bytes.IndexByte(v, '='); i >= 0 && len(bytes.TrimRight(v[i:], "=")) > 0 {
		return false // another assignment (body=%q), not base64 padding
	}
	if bytes.IndexByte(v, ':') >= 0 {
		return false // a structured value: urn:ietf:..., GID:user_list, host:port
	}
	if bytes.IndexByte(v, '*') >= 0 {
		return false // an expression (2*n), a glob, a grammar, or masked stars
	}
	if bytes.HasPrefix(v, []byte("./")) || bytes.HasPrefix(v, []byte("../")) || bytes.Contains(v, []byte("://")) {
		return false
	}
	var letters, digits, special int
	for _, c := range v {
		switch {
		case isLetter(c):
			letters++
		case isDigit(c):
			digits++
		case c == '_' || c == '-' || c == '.':
		default:
			special++
		}
	}
	if letters == 0 {
		return false // numbers, versions, dates, addresses
	}
	if reDateTime.Match(v) {
		return false // a timestamp: "token_expires_at": "2023-11-16T08:47:09Z"
	}
	if _, err := strconv.ParseFloat(string(v), 64); err == nil {
		return false // 1e+10, Inf, NaN: a number, and masking it would break JSON
	}
	if digits == 0 && special == 0 {
		return false // words and identifiers: cfg.Token, GITHUB_TOKEN, my-secret-name
	}
	return entropy(v) >= 2.5
}

// entropy is the Shannon entropy of v in bits per byte.
func entropy(v []byte) float64 {
	var counts [256]int
	for _, c := range v {
		counts[c]++
	}
	h := 0.0
	n := float64(len(v))
	for _, k := range counts {
		if k > 0 {
			p := float64(k) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// findPEM masks private-key blocks within one line: BEGIN through END when
// both are on the line (a JSON-escaped key), else the BEGIN marker and the
// base64 that follows it; open reports the latter, so the Writer masks the
// body lines that follow.
func findPEM(line []byte, sp []span) (_ []span, open bool) {
	noEnd := false
	for off := 0; off < len(line); {
		loc := rePEMBegin.FindIndex(line[off:])
		if loc == nil {
			break
		}
		b, e := off+loc[0], off+loc[1]
		if !noEnd {
			if end := rePEMEnd.FindIndex(line[e:]); end != nil {
				sp = append(sp, span{start: b, end: e + end[1]})
				off = e + end[1]
				continue
			}
			noEnd = true // and none further on: do not search again
		}
		for e < len(line) && (isBase64(line[e]) || line[e] == '\\' || line[e] == ' ' || line[e] == '\t') {
			e++
		}
		for e > b && (line[e-1] == ' ' || line[e-1] == '\t') {
			e--
		}
		sp = append(sp, span{start: b, end: e, carry: carryPEM})
		open = true
		off = e
	}
	return sp, open
}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isUpper(c byte) bool  { return 'A' <= c && c <= 'Z' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isAlnum(c byte) bool  { return isDigit(c) || isLetter(c) }
func isHex(c byte) bool    { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }
func isBase64(c byte) bool { return isAlnum(c) || c == '+' || c == '/' || c == '=' }

// isTokenChar is a byte that can continue a token across a window edge.
func isTokenChar(c byte) bool {
	return isAlnum(c) || c == '_' || c == '-' || c == '+' || c == '/' || c == '=' || c == '.' || c == '~'
}
