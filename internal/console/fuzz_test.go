package console

import (
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/record"
)

func TestDoingGroups(t *testing.T) {
	for _, tc := range []struct {
		body string
		k, n int
	}{
		{"**roadmap** · implementing group 2 of 3: the flag\n", 2, 3},
		{"**roadmap** · a group of 3 · implementing group 1 of 1: x", 1, 1},
		{"**roadmap** · implementing group 4 of 3: x", 0, 0},
		{"**roadmap** · ready\nimplementing group 2 of 3", 0, 0}, // only the first line
		{"group 0 of 2", 0, 0},
		{"group 9999999 of 99999999", 0, 0},
	} {
		if k, n := DoingGroups(tc.body); k != tc.k || n != tc.n {
			t.Errorf("DoingGroups(%q) = %d, %d; want %d, %d", tc.body, k, n, tc.k, tc.n)
		}
	}
}

func FuzzDoingGroups(f *testing.F) {
	f.Add("**roadmap** · implementing group 2 of 3: the flag\n")
	f.Add("group 1 of 1group 7 of 9")
	f.Fuzz(func(t *testing.T, body string) {
		k, n := DoingGroups(body)
		if (k == 0) != (n == 0) || k < 0 || k > n || n > record.MaxCount {
			t.Fatalf("DoingGroups(%q) = %d, %d", body, k, n)
		}
	})
}

// FuzzLogCalls: whatever a job log holds, the calls read from it are the
// Job's, each once, and reading never fails on text.
func FuzzLogCalls(f *testing.F) {
	f.Add(spendLine(1, 1, 1, 0.05) + spendLine(1, 1, 1, 0.05) + spendLine(2, 1, 1, 0.01))
	f.Add("\xef\xbb\xbfroadmap::spend {\"job\":1,\"group\":0,\"call\":1,\"model\":\"m\",\"tokens_in\":1,\"tokens_out\":1,\"usd\":0}\r\n")
	f.Add(strings.Repeat("x", 70000) + "\n" + spendLine(1, 0, 3, 1))
	f.Fuzz(func(t *testing.T, log string) {
		calls, err := LogCalls(strings.NewReader(log), 1)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int]bool{}
		for _, c := range calls {
			if c.Job != 1 || seen[c.Call] || c.Booked {
				t.Fatalf("call %+v (seen %v)", c, seen[c.Call])
			}
			seen[c.Call] = true
		}
	})
}
