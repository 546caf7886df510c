package redact

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

// canary is one secret family's test case from testdata/canaries.txtar.
type canary struct {
	name    string
	in      string
	want    string
	secrets []string // every generated value; none may survive masking
}

var reTemplate = regexp.MustCompile(`\{\{(\w+)(?: (\d+))?\}\}`)

// expand fills the templates of in with random characters seeded by seed,
// and returns the result and the values it generated.
func expand(t testing.TB, in string, seed string) (string, []string) {
	h := fnv.New64a()
	h.Write([]byte(seed))
	r := rand.New(rand.NewPCG(h.Sum64(), 1))
	const (
		alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
		upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
		hex    = "0123456789abcdef"
		digits = "0123456789"
		b64    = alnum + "+/"
		b64url = alnum + "-_"
	)
	pick := func(set string, n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(set[r.IntN(len(set))])
		}
		return b.String()
	}
	var values []string
	out := reTemplate.ReplaceAllStringFunc(in, func(m string) string {
		sub := reTemplate.FindStringSubmatch(m)
		n, _ := strconv.Atoi(sub[2])
		var v string
		switch sub[1] {
		case "alnum":
			v = pick(alnum, n)
		case "upper":
			v = pick(upper, n)
		case "hex":
			v = pick(hex, n)
		case "digits":
			v = pick(digits, n)
		case "b64":
			v = pick(b64, n)
		case "b64url":
			v = pick(b64url, n)
		case "jwt":
			enc := base64.RawURLEncoding
			header := enc.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT","kid":"` + pick(hex, 16) + `"}`))
			claims := enc.EncodeToString([]byte(`{"sub":"repo:roadmap-dev/roadmap:ref:refs/heads/main","aud":"sts","exp":` + pick(digits, 10) + `}`))
			v = header + "." + claims + "." + pick(b64url, 342)
		case "basic":
			v = base64.StdEncoding.EncodeToString([]byte("ci:" + pick(alnum, 24)))
		default:
			t.Fatalf("unknown template %s", m)
		}
		values = append(values, v)
		return v
	})
	return out, values
}

func loadCanaries(t testing.TB) []canary {
	t.Helper()
	ar, err := txtar.ParseFile("testdata/canaries.txtar")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	var names []string
	for _, f := range ar.Files {
		files[f.Name] = string(f.Data)
		if name, ok := strings.CutSuffix(f.Name, ".in"); ok {
			names = append(names, name)
		}
	}
	var out []canary
	for _, name := range names {
		want, ok := files[name+".want"]
		if !ok {
			t.Fatalf("canary %s has no .want", name)
		}
		in, secrets := expand(t, files[name+".in"], name)
		out = append(out, canary{name: name, in: in, want: want, secrets: secrets})
	}
	return out
}

func TestMaskFamilies(t *testing.T) {
	m := New(Config{})
	canaries := loadCanaries(t)
	if len(canaries) < 30 {
		t.Fatalf("only %d canaries loaded", len(canaries))
	}
	for _, c := range canaries {
		t.Run(c.name, func(t *testing.T) {
			got := m.Mask(c.in)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Mask mismatch (-want +got):\n%s", diff)
			}
			for _, s := range c.secrets {
				// A generated value shorter than 8 can occur by chance
				// in the kept text; longer ones cannot.
				if len(s) >= 8 && strings.Contains(got, s) {
					t.Errorf("secret %q survived masking", s)
				}
			}
		})
	}
}

// TestMaskFamiliesInContext puts every canary in the middle of a JSON string,
// a quoted shell argument and a log line, where a trace event, a comment and
// a job log carry them.
func TestMaskFamiliesInContext(t *testing.T) {
	m := New(Config{})
	for _, c := range loadCanaries(t) {
		if strings.Contains(c.in, "\n") && strings.Count(strings.TrimSpace(c.in), "\n") > 0 {
			continue // multi-line canaries: the JSON form is a different family (pem-json)
		}
		line := strings.TrimSuffix(c.in, "\n")
		raw, _ := json.Marshal(map[string]string{"output": line})
		for _, form := range []string{string(raw), "echo '" + line + "'", "2024-05-01T10:00:00.0000000Z " + line} {
			t.Run(c.name, func(t *testing.T) {
				got := m.Mask(form)
				if json.Valid([]byte(form)) && !json.Valid([]byte(got)) {
					t.Errorf("Mask(%q) = %q: no longer valid JSON", form, got)
				}
				for _, s := range c.secrets {
					if len(s) >= 8 && strings.Contains(got, s) {
						t.Errorf("Mask(%q) = %q: secret %q survived", form, got, s)
					}
				}
			})
		}
	}
}

func TestMaskConfiguredSecrets(t *testing.T) {
	const secret = `s3cr3t-"value"<&>\path`
	b64 := base64.StdEncoding.EncodeToString
	b64url := base64.URLEncoding.EncodeToString
	raw := base64.RawStdEncoding.EncodeToString
	jsonOf := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	m := New(Config{Secrets: []string{secret, "line-one-of-two\nline-two-of-two", "short"}})
	tests := []struct {
		name, in, want string
	}{
		{"plain", "value is " + secret + " ok", "value is [masked] ok"},
		{"json escaped", `{"v":` + jsonOf(secret) + `}`, `{"v":"[masked]"}`},
		{"json escaped without html escapes", `{"v":"s3cr3t-\"value\"<&>\\path"}`, `{"v":"[masked]"}`},
		{"base64 std", "env: " + b64([]byte(secret)) + " end", "env: [masked] end"},
		{"base64 url", "env: " + b64url([]byte(secret)) + " end", "env: [masked] end"},
		{"base64 raw", "env: " + raw([]byte(secret)) + " end", "env: [masked] end"},
		{"basic auth x-access-token", "Authorisation header " + b64([]byte("x-access-token:"+secret)) + " end", ""},
		{"base64 offset 1", "blob " + b64([]byte("a"+secret+"tail")) + " end", ""},
		{"base64 offset 2", "blob " + b64([]byte("ab"+secret+"tail")) + " end", ""},
		{"base64 offset 0", "blob " + b64([]byte("abc"+secret+"tail")) + " end", ""},
		{"url escaped", "GET /x?p=s3cr3t-%22value%22%3C%26%3E%5Cpath end", "GET /x?p=[masked] end"},
		{"multi-line first", "got line-one-of-two here", "got [masked] here"},
		{"multi-line second", "got line-two-of-two here", "got [masked] here"},
		{"too short to mask", "a short word", "a short word"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := m.Mask(tt.in)
			if tt.want != "" {
				if got != tt.want {
					t.Errorf("Mask(%q) = %q, want %q", tt.in, got, tt.want)
				}
				return
			}
			// Embedded encodings: the secret's characters are masked, the
			// text around them kept.
			if !strings.Contains(got, "[masked]") || !strings.HasSuffix(got, " end") {
				t.Errorf("Mask(%q) = %q, want the encoded secret masked", tt.in, got)
			}
			for _, enc := range []string{b64([]byte(secret))[4:20], b64([]byte("a" + secret))[4:20], b64([]byte("ab" + secret))[4:20]} {
				if strings.Contains(got, enc) {
					t.Errorf("Mask(%q) = %q: encoded secret %q survived", tt.in, got, enc)
				}
			}
		})
	}
}

func TestMaskPrivateHosts(t *testing.T) {
	tests := []struct {
		name     string
		suffixes []string
		in, want string
	}{
		{"default suffix", nil, "GET http://registry.corp:5000/v2/", "GET http://[masked]:5000/v2/"},
		{"kubernetes service", nil, "redis.cache.svc.cluster.local:6379", "[masked]:6379"},
		{"email host", nil, "mail ops@mx.corp now", "mail ops@[masked] now"},
		{"suffix not at the end", nil, "see api.internal.example.com", "see api.internal.example.com"},
		{"dotted file name", nil, "cp .env.local .env.local.bak", "cp .env.local .env.local.bak"},
		{"path component", nil, "read config/settings.local", "read config/settings.local"},
		{"go selector", nil, "t := time.Local", "t := time.Local"},
		{"method call", nil, "v := s.internal()", "v := s.internal()"},
		{"go field named like a suffix", nil, "if r.local && !c.cfg.private {", "if r.local && !c.cfg.private {"},
		{"identifier-like name in a url", nil, "GET http://vault.internal/v1", "GET http://[masked]/v1"},
		{"identifier-like name with a port", nil, "printer.local:631", "[masked]:631"},
		{"identifier-like name in a lookup", nil, "lookup vault.internal: no such host", "lookup [masked]: no such host"},
		{"hyphenated name", nil, "ping build-01.local", "ping [masked]"},
		{"plain suffix needs no context", nil, "ping nas.lan and db.corp", "ping [masked] and [masked]"},
		{"go package path", nil, "internal/redact/redact.go:12", "internal/redact/redact.go:12"},
		{"configured suffix", []string{"acme.net"}, "dial build.acme.net and db.corp", "dial [masked] and db.corp"},
		{"no host masking", []string{}, "dial db.corp", "dial db.corp"},
		{"private ipv4 with port", nil, "connect 192.168.0.17:22", "connect [masked]:22"},
		{"cgnat", nil, "tailscale 100.101.102.103", "tailscale [masked]"},
		{"cgnat edge", nil, "public 100.128.0.1", "public 100.128.0.1"},
		{"rfc1918 edges", nil, "172.15.0.1 172.16.0.1 172.31.255.255 172.32.0.1", "172.15.0.1 [masked] [masked] 172.32.0.1"},
		{"version not an address", nil, "go1.10.0.1 and v10.1.2.3 and 10.1.2.3.4", "go1.10.0.1 and v10.1.2.3 and 10.1.2.3.4"},
		{"loopback and link-local v4 kept", nil, "127.0.0.1 169.254.169.254", "127.0.0.1 169.254.169.254"},
		{"ipv6 unique local", nil, "addr fdab:cd::42/64", "addr [masked]/64"},
		{"ipv6 public kept", nil, "addr 2606:4700::1111", "addr 2606:4700::1111"},
		{"hex word not ipv6", nil, "sha feed:beef and fcab", "sha feed:beef and fcab"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(Config{PrivateSuffixes: tt.suffixes})
			if got := m.Mask(tt.in); got != tt.want {
				t.Errorf("Mask(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestBenignUnchanged(t *testing.T) {
	data, err := os.ReadFile("testdata/benign.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 8<<10 {
		t.Fatalf("benign corpus is only %d bytes", len(data))
	}
	m := New(Config{Secrets: []string{"an-unrelated-secret-value"}})
	got := m.Mask(string(data))
	if got != string(data) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(data), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Errorf("line %d changed:\n got %q\nwant %q", i+1, gl[i], wl[i])
			}
		}
	}
}

func TestMaskIdempotent(t *testing.T) {
	m := New(Config{Secrets: []string{"masked", "configured-secret-1"}})
	var inputs []string
	for _, c := range loadCanaries(t) {
		inputs = append(inputs, c.in)
	}
	inputs = append(inputs,
		"configured-secret-1ghp_"+strings.Repeat("a1", 18), // a placeholder becomes a word boundary
		"[masked] and [[masked]] and ***",
		"the word masked next to [masked]",
		"password=[masked] token: [masked] Authorization: Bearer [masked]",
		"https://user:[masked]@[masked]/x",
	)
	for i, in := range inputs {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			once := m.Mask(in)
			if twice := m.Mask(once); twice != once {
				t.Errorf("Mask not idempotent:\n once %q\ntwice %q", once, twice)
			}
		})
	}
	if got := m.Mask("[masked]"); got != "[masked]" {
		t.Errorf("a configured secret inside the placeholder changed it: %q", got)
	}
}

func readTestdata(name string) (string, error) {
	b, err := os.ReadFile(name)
	return string(b), err
}
