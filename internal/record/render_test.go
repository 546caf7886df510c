package record

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name.golden, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("rendered body differs from %s (-want +got):\n%s", path, diff)
	}
}

// everyKey sets every key this release knows, with values that need quoting.
func everyKey() Changes {
	var c Changes
	c.SetAnswer("Yes — keep it,\nbut mark it deprecated.")
	c.SetAttempt(3)
	c.SetTier(1)
	c.SetCheckLog("--- FAIL: TestBackoffSchedule (0.00s)\n    backoff_test.go:31: delay(5) = 2h, want 1h\n<!-- not a comment -->\nFAIL")
	c.SetCheckedSHA("3f2a9c1d4e")
	c.SetMergedBase("4e5f6071a8")
	c.SetConflict([]string{"internal/webhook/backoff.go", "docs/delivery guide.md"})
	c.SetFailure("checks_failed")
	c.SetGroup(2)
	c.SetGroupSeconds([]int{412, 903})
	c.SetJobs([]JobOutcome{
		{Job: 1, RunID: 9001, Result: ResultYielded, Group: 1, Spend: Spend{TokensIn: 12000, TokensOut: 3000, USD: 0.14, ModelCalls: 9}},
		{Job: 2, RunID: 9007, Failure: "killed"},
		{Job: 3, RunID: 9012, Result: ResultStopped, Failure: "checks_failed", Group: 2, Spend: Spend{TokensIn: 6230, TokensOut: 1410, USD: 0.07, ModelCalls: 5}},
	})
	c.SetPublishedSHA("3f2a9c1d4e")
	c.SetQuestion(`Should "retry" keep the old 5-minute cap?`)
	c.SetResult(ResultStopped)
	c.SetSHA("3f2a9c1d4e")
	c.SetSpend(Spend{TokensIn: 18230, TokensOut: 4410, USD: 0.21, ModelCalls: 14})
	c.SetSpendEstimated(1)
	c.SetStopped("checks")
	c.SetTrace(json.RawMessage(`{"events": [{"phase": "checks", "ok": false, "note": "a < b"}]}`))
	c.SetWIP("9e8d7c6b5a")
	c.SetKept("5a6b7c8d9e")
	c.SetStagePlan("openspec/changes/add-backoff")
	c.SetStoppedBy("alice")
	c.SetWakeAt(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	c.SetWaitingFor(12)
	c.SetBlockedBy("#12, acme/lib#4")
	c.SetModels(map[string]string{"planner": "openai/gpt-4o-mini"}, map[string]string{"verifier": "openai/gpt-4.1", "reviewer": "openai/gpt-4.1", "implementer": ""})
	c.SetParallelism(1)
	c.SetReview(ReviewLedger{SHA: "0123456789abcdef0123456789abcdef01234567", Open: []OpenFinding{{ID: "a1b2c3d4e5f6", File: "calc/add.go", Line: 7, Title: "off by one"}},
		Closed: []ClosedFinding{{ID: "00ff00ff00ff", Why: "dismissed by octocat"}}})
	c.SetStrength([]GroupStrength{{Group: 1, Generated: 4, Killed: 3, Survived: 1, Score: 0.75}})
	c.SetComments(CommentLedger{Through: 1777629600, Done: []CommentDone{{Kind: CommentLine, ID: 31, SHA: "0123456789abcdef0123"},
		{Kind: CommentReview, ID: 30, Answered: "the bound is <= by the spec"}, {Kind: CommentPR, ID: 50, Ignored: "mallory"}}})
	c.SetStagePR(41)
	c.SetStageState("planned")
	c.SetStageRound(2)
	c.SetStageJobs([]JobOutcome{{Job: 1, RunID: 77, Result: ResultStaged, Spend: Spend{TokensIn: 10, TokensOut: 2, USD: 0.01, ModelCalls: 3}}})
	c.SetStageFindings("openspec/changes/add-backoff/tasks.md:3: roadmap/verifier: no test [ERROR]")
	return c
}

func TestRender(t *testing.T) {
	stop := func() Changes {
		var c Changes
		c.SetResult(ResultReady)
		c.Delete(KeyImplementCheckLog, KeyImplementConflict, KeyImplementFailure, KeyImplementStopped)
		return c
	}
	group := func(n int) Changes {
		var c Changes
		c.SetGroup(n)
		c.SetSHA("abcdef0123")
		c.SetSpend(Spend{TokensIn: 100, TokensOut: 20, USD: 0.002, ModelCalls: 2})
		return c
	}
	existing := lf("Fix the webhook retries.", "", "<!-- roadmap:record v1",
		`implement.check_log: "FAIL\nexit 1"`,
		`implement.conflict: ["a.go"]`,
		"implement.failure: conflict",
		"implement.result: stopped",
		"implement.stopped: push",
		"-->")
	tests := []struct {
		name    string
		body    string
		changes Changes
	}{
		{"new-block-empty-body", "", group(1)},
		{"new-block-after-text", "Fix the webhook retries.\n\nThe delay doubles without a cap.\n", group(1)},
		{"new-block-text-without-line-end", "Fix it", group(1)},
		{"new-block-crlf-text", crlf("Fix the webhook retries.", "", "The delay doubles.", ""), group(1)},
		{"every-key", "# Backoff\n\nCap the delay at one hour.\n", everyKey()},
		{"block-moved-to-end", lf("Before", "<!-- roadmap:record v1", "implement.group: 1", "-->", "After"), group(2)},
		{"stop-cleared", existing, stop()},
		{"all-keys-deleted", existing, func() Changes {
			var c Changes
			c.Delete(KeyImplementCheckLog, KeyImplementConflict, KeyImplementFailure, KeyImplementResult, KeyImplementStopped)
			return c
		}()},
		{"unknown-keys-kept", lf("x", "<!-- roadmap:record v1", "a.future: 1", `zeta.note: {"k":"v"}`, "-->"), group(1)},
		{"crlf-block-updated", crlf("Fix it.", "", "<!-- roadmap:record v1", "implement.group: 1", "-->", ""), group(2)},
		{"unicode", "Исправить повтор 🔁 — 日本語\n", func() Changes {
			var c Changes
			c.SetStopped("étape « checks »")
			c.SetQuestion("Garder l’ancienne API ? 🤔")
			return c
		}()},
		{"fenced-example-untouched", lf("Example:", "```", "<!-- roadmap:record v1", "implement.group: 9", "-->", "```", ""), group(1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Parse(tc.body)
			if err != nil {
				t.Fatalf("Parse() error = %v", err)
			}
			text := r.Text()
			if err := r.Apply(tc.changes); err != nil {
				t.Fatalf("Apply() error = %v", err)
			}
			got, err := Render(r)
			if err != nil {
				t.Fatalf("Render() error = %v", err)
			}
			golden(t, tc.name, got)

			back, err := Parse(got)
			if err != nil {
				t.Fatalf("Parse(Render()) error = %v", err)
			}
			if back.Text() != text {
				t.Errorf("person's text changed:\n got %q\nwant %q", back.Text(), text)
			}
			if !tc.changes.Applied(back) {
				t.Errorf("the rendered body does not hold the changes")
			}
		})
	}
}

// TestRenderRoundTrip: an unchanged record renders and parses back to itself.
func TestRenderRoundTrip(t *testing.T) {
	bodies := map[string]string{}
	for _, tc := range parseCases() {
		if tc.errKind == 0 {
			bodies[tc.name] = tc.body
		}
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "records", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		bodies[filepath.Base(f)] = string(b)
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			r, err := Parse(body)
			if err != nil {
				t.Skipf("not a valid body: %v", err)
			}
			out, err := Render(r)
			if err != nil {
				t.Fatalf("Render() error = %v", err)
			}
			back, err := Parse(out)
			if err != nil {
				t.Fatalf("Parse(Render()) error = %v", err)
			}
			if diff := cmp.Diff(r, back); diff != "" {
				t.Errorf("Parse(Render(r)) != r (-r +back):\n%s", diff)
			}
			again, err := Render(back)
			if err != nil || again != out {
				t.Errorf("Render is not stable: %q then %q (%v)", out, again, err)
			}
		})
	}
}

func TestRenderTooLong(t *testing.T) {
	// The block every case adds: "\n" separator, opener, one key, closer.
	block := "\n<!-- roadmap:record v1\nimplement.group: 1\n-->"
	blockChars := utf8.RuneCountInString(block)
	tests := []struct {
		name      string
		textChars int // characters of person's text, each a two-byte "é"
		wantOver  int // 0: fits
	}{
		{"exactly the limit", MaxBodyChars - blockChars, 0},
		{"one over", MaxBodyChars - blockChars + 1, 1},
		{"far over", MaxBodyChars, blockChars},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Parse(strings.Repeat("é", tc.textChars))
			if err != nil {
				t.Fatal(err)
			}
			var c Changes
			c.SetGroup(1)
			if err := r.Apply(c); err != nil {
				t.Fatal(err)
			}
			out, err := Render(r)
			if tc.wantOver == 0 {
				if err != nil {
					t.Fatalf("Render() error = %v, want none", err)
				}
				if got := utf8.RuneCountInString(out); got != MaxBodyChars {
					t.Errorf("rendered %d characters, want %d", got, MaxBodyChars)
				}
				return
			}
			var tl *TooLongError
			if !errors.As(err, &tl) {
				t.Fatalf("Render() error = %v, want a *TooLongError", err)
			}
			if got := tl.Over(); got != tc.wantOver {
				t.Errorf("Over() = %d, want %d", got, tc.wantOver)
			}
			if want := fmt.Sprintf("%d over GitHub's limit of 65536", tc.wantOver); !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		})
	}
}
