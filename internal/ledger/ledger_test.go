package ledger

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseLedgerLine(t *testing.T) {
	good := Entry{Day: "2026-11-29", Issue: 12, Job: 3, RunID: 9120, USD: 0.12, TokensIn: 4100, TokensOut: 900, ModelCalls: 7}
	if got, ok := ParseLine(Line(good)); !ok || got != good {
		t.Errorf("round trip = %+v, %v; want %+v", got, ok, good)
	}
	bad := []string{
		"",
		"roadmap::ledger",
		"roadmap::ledger {}",
		`roadmap::ledger {"day":"2026-13-01","issue":1,"job":1,"usd":0,"tokens_in":0,"tokens_out":0,"model_calls":0}`,
		`roadmap::ledger {"day":"2026-11-29","issue":0,"job":1,"usd":0,"tokens_in":0,"tokens_out":0,"model_calls":0}`,
		`roadmap::ledger {"day":"2026-11-29","issue":1,"job":1,"usd":-1,"tokens_in":0,"tokens_out":0,"model_calls":0}`,
		`roadmap::ledger {"day":"2026-11-29","issue":1,"job":1,"usd":1,"tokens_in":0,"tokens_out":0,"model_calls":0,"admin":true}`,
		`roadmap::ledger {"day":"2026-11-29","issue":1,"job":1,"usd":1e999,"tokens_in":0,"tokens_out":0,"model_calls":0}`,
		`roadmap::ledger {"day":"2026-11-29","issue":1,"job":1,"usd":1,"tokens_in":0,"tokens_out":0,"model_calls":0} {}`,
		"roadmap::ledger " + strings.Repeat(" ", 1024),
		fmt.Sprintf("say roadmap::ledger %s", strings.TrimPrefix(Line(good), Prefix)),
	}
	for _, s := range bad {
		if e, ok := ParseLine(s); ok {
			t.Errorf("ParseLine(%q) = %+v, want refused", s, e)
		}
	}
}

func FuzzParseLedgerLine(f *testing.F) {
	f.Add(Line(Entry{Day: "2026-11-29", Issue: 12, Job: 3, USD: 0.12, TokensIn: 4100, TokensOut: 900, ModelCalls: 7}))
	f.Add(`roadmap::ledger {"day":"2026-11-29","issue":1,"job":1,"usd":-1}`)
	f.Add("roadmap::ledger {\"day\":\"2026-02-30\"}")
	f.Fuzz(func(t *testing.T, s string) {
		e, ok := ParseLine(s)
		if !ok {
			return
		}
		// What parses is valid and writes back to a line that parses the same.
		if e.Issue < 1 || e.Job < 1 || e.USD < 0 || e.TokensIn < 0 || e.TokensOut < 0 || e.ModelCalls < 0 {
			t.Fatalf("accepted an invalid entry %+v from %q", e, s)
		}
		again, ok := ParseLine(Line(e))
		if !ok || again != e {
			t.Fatalf("round trip of %+v = %+v, %v", e, again, ok)
		}
	})
}
