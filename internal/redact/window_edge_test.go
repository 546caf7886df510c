package redact

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// edgeAlphabet is what canary values are made of, and nothing else in
// these lines is: a byte of it in the output is a piece of a secret.
const edgeAlphabet = "0123456789QWZ"

// edgeCanary is one rule's secret in context; text holds value.
type edgeCanary struct {
	rule string
	text func(value string) string
}

var edgeCanaries = []edgeCanary{
	{"url-password", func(v string) string { return "https://ci:" + v + "@git.example.com/acme/widgets.git" }},
	{"key=value", func(v string) string { return "password=" + v }},
	{"bearer", func(v string) string { return "curl -H Bearer " + v }},
	{"authorization", func(v string) string { return "Authorization: " + v }},
	{"authorization-scheme", func(v string) string { return "Authorization: Bearer " + v }},
	{"json-api-key", func(v string) string { return `{"api_key": "` + v + `"}` }},
	{"x-api-key", func(v string) string { return "X-Api-Key: " + v }},
	{"jwt", func(v string) string {
		n := len(v) / 3
		return "eyJ" + v[:n] + "." + v[n:2*n] + "." + v[2*n:]
	}},
	{"pem-one-line", func(v string) string {
		var body []string
		for len(v) > 64 {
			body, v = append(body, v[:64]), v[64:]
		}
		body = append(body, v)
		return `"-----BEGIN RSA PRIVATE KEY-----\n` + strings.Join(body, `\n`) + `\n-----END RSA PRIVATE KEY-----\n"`
	}},
	{"github-token", func(v string) string { return "ghp_" + v }},
}

func edgeValue(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = edgeAlphabet[r.IntN(len(edgeAlphabet))]
	}
	return string(b)
}

// edgeFiller is n bytes of prose with no byte of edgeAlphabet.
func edgeFiller(n int) string {
	return strings.Repeat("lorem ipsum dolor sit amet ", n/27+1)[:n]
}

// leaked returns the first run of secret bytes in out, "" when none.
func leaked(out string) string {
	i := strings.IndexAny(out, edgeAlphabet)
	if i < 0 {
		return ""
	}
	j := i
	for j < len(out) && strings.IndexByte(edgeAlphabet, out[j]) >= 0 {
		j++
	}
	return out[max(0, i-40):min(len(out), j+8)]
}

// TestMaskWindowEdges proves the claim in redact.go: a line longer than the
// line cap is masked in overlapping windows, and a secret that crosses a
// window's edge is masked whatever part of it (key, scheme, value) falls
// in which window, for values longer than the overlap and the window too.
//
// The windows' logic does not depend on their size, so the first part runs
// it in small windows, where every offset of every canary across every
// window boundary of a line is cheap; the second runs the default windows
// on lines of 1 MiB, with a canary across each boundary.
func TestMaskWindowEdges(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 6))
	ref := New(Config{}) // default windows: each canary alone fits one

	t.Run("small windows, every offset", func(t *testing.T) {
		m := New(Config{})
		m.maxLine, m.overlap = 128, 48 // the overlap still holds every match's beginning
		for _, c := range edgeCanaries {
			// Shorter than the overlap, longer than the overlap, longer than a window.
			for _, n := range []int{30, 80, 200} {
				canary := c.text(edgeValue(r, n))
				masked := ref.Mask(canary)
				if l := leaked(masked); l != "" {
					t.Fatalf("%s: the canary is not masked even on a short line: %q", c.rule, l)
				}
				// Three windows' boundaries: the first window, and windows
				// that take spans from the one before.
				lineLen := 2*m.maxLine + len(canary)
				for off := 0; off+len(canary) < lineLen; off++ {
					in := edgeFiller(off) + " " + canary + " " + edgeFiller(lineLen-off-len(canary))
					want := edgeFiller(off) + " " + masked + " " + edgeFiller(lineLen-off-len(canary))
					got := m.Mask(in + "\n")
					if l := leaked(got); l != "" {
						t.Fatalf("%s (value of %d bytes) at offset %d leaks: %q", c.rule, n, off, l)
					}
					if got != want+"\n" {
						t.Fatalf("%s (value of %d bytes) at offset %d:\n got %q\nwant %q", c.rule, n, off, got, want)
					}
				}
			}
		}
	})

	t.Run("default windows, 1 MiB lines", func(t *testing.T) {
		m := New(Config{})
		const lineLen = 1 << 20
		step := m.maxLine - m.overlap
		// The boundaries: window k spans [k*step, k*step+maxLine); the first
		// overlap bytes of each are the end of the one before.
		var bounds []int
		for k := 1; k*step+m.overlap < lineLen; k++ {
			bounds = append(bounds, k*step, k*step+m.overlap)
		}
		// A placement puts the boundary at byte part of a canary: its first
		// byte, around its value's start and end, its last byte.
		type placement struct {
			canary, masked string
			part           int
		}
		var short, long []placement
		for _, c := range edgeCanaries {
			for _, n := range []int{40, m.overlap + 4096} {
				value := edgeValue(r, n)
				canary := c.text(value)
				vs := strings.Index(canary, value[:16])
				ve := vs + len(value)
				for _, part := range []int{0, vs - 1, vs, vs + 1, vs + n/2, ve - 1, ve, len(canary) - 1} {
					p := placement{canary, ref.Mask(canary), part}
					if n == 40 {
						short = append(short, p)
					} else {
						long = append(long, p)
					}
				}
			}
		}
		// Each line holds a canary across as many boundaries as fit; the
		// long ones take every other boundary.
		lines := 0
		for _, todo := range [][]placement{short, long} {
			for len(todo) > 0 {
				var in, want strings.Builder
				var where []string
				pos := 0
				for i, at := range bounds {
					if len(todo) == 0 || (len(todo[0].canary) > m.overlap && i%4 != 0) {
						continue
					}
					p := todo[0]
					start := at - p.part
					if start < pos+1 || start+len(p.canary)+1 > lineLen {
						continue
					}
					todo = todo[1:]
					in.WriteString(edgeFiller(start-pos-1) + " " + p.canary + " ")
					want.WriteString(edgeFiller(start-pos-1) + " " + p.masked + " ")
					where = append(where, fmt.Sprintf("%.20q… at %d", p.canary, start))
					pos = start + len(p.canary) + 1
				}
				in.WriteString(edgeFiller(lineLen - pos))
				want.WriteString(edgeFiller(lineLen - pos))
				lines++
				got := m.Mask(in.String())
				if l := leaked(got); l != "" {
					t.Fatalf("line %d (%s): leaks %q", lines, strings.Join(where, ", "), l)
				}
				if got != want.String() {
					t.Fatalf("line %d: output differs from the canaries masked alone: %s", lines, firstDiff(got, want.String()))
				}
			}
		}
		t.Logf("%d lines of %d bytes, %d boundaries each", lines, lineLen, len(bounds))
	})
}

// firstDiff shows where got and want part.
func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	return fmt.Sprintf("at byte %d:\n got %q\nwant %q", i, got[max(0, i-80):min(len(got), i+80)], want[max(0, i-80):min(len(want), i+80)])
}

func ExampleMasker_Mask_longLine() {
	m := New(Config{})
	line := strings.Repeat("x ", 40000) + "password=Q1W2Z3Q4W5Z6Q7W8" + strings.Repeat(" y", 40000)
	fmt.Println(strings.Count(m.Mask(line), "[masked]"))
	// Output: 1
}
