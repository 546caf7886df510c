package llm

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// bpePieces splits text the way cl100k's pre-tokenizer does (without its
// whitespace lookahead, which only moves a space between pieces). A BPE
// tokenizer never merges across pieces, so the count is a lower bound of the
// real token count: an estimate below it is certainly too low.
var bpePieces = regexp.MustCompile(`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\pL\pN]?\pL+|\pN{1,3}| ?[^\s\pL\pN]+[\r\n]*|\s*[\r\n]+|\s+`)

func lowerBound(text string) int { return len(bpePieces.FindAllStringIndex(text, -1)) }

// goFile is generated Go code that looks like a repository's: identifiers,
// comments, literals, indentation.
func goFile(pkg string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// Package %s handles part %d of the delivery pipeline.\npackage %s\n\nimport (\n\t\"context\"\n\t\"fmt\"\n\t\"time\"\n)\n\n", pkg, n, pkg)
	for f := 0; f < 12; f++ {
		fmt.Fprintf(&b, `// Step%[1]dOf%[2]d retries the webhook delivery with a capped backoff (max %[3]d attempts).
func (w *Worker) Step%[1]dOf%[2]d(ctx context.Context, id int64, payload []byte) error {
	deadline := time.Now().Add(%[3]d * time.Second)
	for attempt := 0; attempt < %[3]d; attempt++ {
		if err := w.client.Post(ctx, fmt.Sprintf("/hooks/%%d/deliveries", id), payload); err != nil {
			w.log.Printf("delivery %%d attempt %%d failed: %%v", id, attempt, err)
			continue
		}
		return nil
	}
	return fmt.Errorf("deliver %%d before %%s: gave up", id, deadline)
}

`, f, n, 3+f%5)
	}
	return b.String()
}

func TestEstimateConservative(t *testing.T) {
	samples := map[string]string{
		"prose":    strings.Repeat("The worker retries each delivery with a capped exponential backoff, and gives up after an hour. ", 20),
		"go code":  goFile("webhook", 1),
		"json":     `{"tokens_in":18230,"tokens_out":4410,"usd":0.21,"model_calls":14,"ids":[1,2,3,4,5,6,7,8,9,10,11,12]}`,
		"csv":      strings.Repeat("1,2,3,4,5,6,7,8,9,0\n", 30),
		"hex":      "3f2a9b1c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a 1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c",
		"base64":   "h1:Z3kQ9aB7xLmN2pR4sT6vW8yA0cE2gI4kM6oQ8sU0wY2=",
		"cjk":      "重试每次投递，并在一小时后放弃。日志记录每次失败。",
		"emoji":    "deploy 🚀 done ✅ failed ❌ retry 🔁",
		"spaces":   "a \t 1 \n\n   x  ",
		"trailing": "end ",
	}
	for name, text := range samples {
		t.Run(name, func(t *testing.T) {
			got := Estimate(text)
			if lb := lowerBound(text); got < lb {
				t.Errorf("Estimate = %d, below the %d pre-tokenizer pieces the text certainly costs", got, lb)
			}
			if min := (len(text) + 2) / 3; got < min {
				t.Errorf("Estimate = %d, below ceil(bytes/3) = %d", got, min)
			}
		})
	}
}
