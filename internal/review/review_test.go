package review

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/llm"
)

// TestReviewFindingsTyped: a reviewer's answer becomes typed findings, and
// every malformed or oversized entry is dropped with its reason.
func TestReviewFindingsTyped(t *testing.T) {
	t.Run("a well-formed answer", func(t *testing.T) {
		w := newWorld(t)
		f := divZero()
		f["start"], f["end"] = "7", 7 // a string line number is read; the lines are corrected to the quote's
		res, _ := w.run(Options{}, Input{}, reviewer(t, answer(t, f)), refuter(t, `[]`))
		want := []Finding{{ID: FindingID("calc.go", "return a / b", "bug"), File: "calc.go", Start: 5, End: 5, Severity: SeverityBlocking,
			Kind: "bug", Title: "Div panics when b is 0", Trigger: "Div(1, 0) now divides by zero: the guard was removed", Quote: "return a / b"}}
		if diff := cmp.Diff(want, res.Findings); diff != "" {
			t.Errorf("findings (-want +got):\n%s", diff)
		}
		if len(res.Dropped) != 0 {
			t.Errorf("dropped: %s", reasons(res.Dropped))
		}
	})
	good := func(edit func(finding)) finding {
		f := divZero()
		edit(f)
		return f
	}
	for _, tc := range []struct {
		name  string
		entry any
		want  string // in the reason
	}{
		{"not an object", "a finding", "not an object"},
		{"an array", []int{1}, "not an object"},
		{"start is a bool", good(func(f finding) { f["start"] = true }), "start is not a line number"},
		{"start is negative", good(func(f finding) { f["start"] = -3 }), "not a line number"},
		{"start is huge", good(func(f finding) { f["start"] = 1e12 }), "not a line number"},
		{"end before start", good(func(f finding) { f["start"], f["end"] = 9, 4 }), "not a range"},
		{"a range too long", good(func(f finding) { f["start"], f["end"] = 1, 5000 }), "not a range"},
		{"file is a number", good(func(f finding) { f["file"] = 7 }), "file is not a string"},
		{"no file", good(func(f finding) { delete(f, "file") }), "no file"},
		{"an absolute file", good(func(f finding) { f["file"] = "/etc/passwd" }), "not a relative path"},
		{"a file up and out", good(func(f finding) { f["file"] = "../outside.go" }), "not a clean path"},
		{"a file in .git", good(func(f finding) { f["file"] = ".git/config" }), "inside .git"},
		{"an unclean file", good(func(f finding) { f["file"] = "./calc.go" }), "not a clean path"},
		{"unknown severity", good(func(f finding) { f["severity"] = "critical" }), "neither blocking nor advisory"},
		{"no severity", good(func(f finding) { delete(f, "severity") }), "no severity"},
		{"unknown kind", good(func(f finding) { f["kind"] = "style" }), "not one of"},
		{"no title", good(func(f finding) { f["title"] = " " }), "no title"},
		{"no trigger", good(func(f finding) { delete(f, "trigger") }), "no trigger"},
		{"no quote", good(func(f finding) { f["quote"] = "\n \t" }), "no quote"},
		{"an oversized quote", good(func(f finding) { f["quote"] = strings.Repeat("x", maxQuote+1) }), "more than"},
		{"an oversized entry", good(func(f finding) { f["title"] = strings.Repeat("t", maxEntryBytes) }), "bytes is more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok := divZero()
			data := answer(t, finding{"x": tc.entry})
			data = fmt.Sprintf("[%s, %s]", data[len(`[{"x":`):len(data)-2], answer(t, ok)[1:len(answer(t, ok))-1])
			fs, dropped := ParseFindings(data)
			if len(fs) != 1 || fs[0].Title != ok["title"] {
				t.Errorf("the well-formed entry beside it: got %+v", fs)
			}
			if len(dropped) != 1 || !strings.Contains(dropped[0].Reason, tc.want) || !strings.HasPrefix(dropped[0].Reason, "entry 1: ") {
				t.Errorf("dropped = %+v, want one with a reason holding %q", dropped, tc.want)
			}
		})
	}
	for _, a := range []string{"", "none", "{}", "null", "[1,", `[] trailing`, "\x00"} {
		fs, dropped := ParseFindings(a)
		if len(fs) != 0 || len(dropped) != 1 || !strings.Contains(dropped[0].Reason, "not a JSON array") {
			t.Errorf("ParseFindings(%q) = %v, %v; want one dropped answer", a, fs, dropped)
		}
	}
	if fs, dropped := ParseFindings("[]"); len(fs) != 0 || len(dropped) != 0 {
		t.Errorf("an empty list: %v, %v", fs, dropped)
	}
	t.Run("too many entries", func(t *testing.T) {
		var many []finding
		for i := 0; i < maxEntries+7; i++ {
			many = append(many, divZero())
		}
		fs, dropped := ParseFindings(answer(t, many...))
		if len(fs) != maxEntries || len(dropped) != 1 || !strings.Contains(dropped[0].Reason, "7 more entries") {
			t.Errorf("got %d findings, dropped %+v", len(fs), dropped)
		}
	})
	t.Run("control characters", func(t *testing.T) {
		f := divZero()
		f["title"] = "Div\npanics\x1b[31m | \u202eevil"
		f["quote"] = "return a\x07 / b"
		fs, _ := ParseFindings(answer(t, f))
		if len(fs) != 1 {
			t.Fatalf("got %v", fs)
		}
		if strings.ContainsAny(fs[0].Title, "\n\x1b\u202e") || fs[0].Quote != "return a / b" {
			t.Errorf("title %q quote %q still hold control characters", fs[0].Title, fs[0].Quote)
		}
	})
}

// TestReviewDropsQuoteNotInHead: a finding is kept only when its quote is in
// the head file, read inside the work tree through no symlink.
func TestReviewDropsQuoteNotInHead(t *testing.T) {
	w := newWorld(t)
	outside := t.TempDir()
	write(t, outside, "secret.go", "return a / b\n")
	if err := os.Symlink(filepath.Join(outside, "secret.go"), filepath.Join(w.dir, "out.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("calc.go", filepath.Join(w.dir, "alias.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(w.dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(w.dir, "fifo.go"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(w.dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, w.dir, "big.go", "return a / b\n"+strings.Repeat("// padding\n", maxHeadFile/10))
	advisory := func(edit func(finding)) finding {
		f := divZero()
		f["severity"] = "advisory"
		edit(f)
		return f
	}
	kept := advisory(func(finding) {})
	cases := map[string]finding{
		"the old side only":    advisory(func(f finding) { f["quote"] = "if b == 0 {\n\t\treturn 0\n\t}" }),
		"paraphrased":          advisory(func(f finding) { f["quote"] = "return a divided by b" }),
		"a symlink out":        advisory(func(f finding) { f["file"] = "out.go" }),
		"a symlink in":         advisory(func(f finding) { f["file"] = "alias.go" }),
		"a directory link out": advisory(func(f finding) { f["file"] = "linkdir/secret.go" }),
		"absent":               advisory(func(f finding) { f["file"] = "nosuch.go" }),
		"a directory":          advisory(func(f finding) { f["file"] = "sub" }),
		"a FIFO":               advisory(func(f finding) { f["file"] = "fifo.go" }),
		"a file too large":     advisory(func(f finding) { f["file"] = "big.go" }),
	}
	// Each file the review must not read says why in its own words.
	why := map[string]string{"out.go": "is a symlink", "alias.go": "is a symlink", "linkdir/secret.go": "is a symlink",
		"nosuch.go": "no such file", "sub": "not a regular file", "fifo.go": "not a regular file", "big.go": "larger than", "calc.go": "the quote is not in the head file"}
	entries := []finding{kept}
	for _, f := range cases {
		entries = append(entries, f)
	}
	res, rp := w.run(Options{}, Input{}, reviewer(t, answer(t, entries...)), refuter(t, `[]`))
	if len(res.Findings) != 1 || res.Findings[0].ID != FindingID("calc.go", "return a / b", "bug") {
		t.Errorf("findings = %+v, want only the one whose quote is in calc.go", res.Findings)
	}
	if len(res.Dropped) != len(cases) {
		t.Errorf("dropped %d, want %d:\n%s", len(res.Dropped), len(cases), reasons(res.Dropped))
	}
	for _, d := range res.Dropped {
		if !strings.Contains(d.Reason, why[d.Finding.File]) {
			t.Errorf("%s dropped because %q, want %q", d.Finding.File, d.Reason, why[d.Finding.File])
		}
	}
	if got := served(rp); !cmp.Equal(got, []string{"reviewer"}) {
		t.Errorf("calls served %v: no blocking finding, so no refutation", got)
	}
	t.Run("a quote of several lines", func(t *testing.T) {
		f := avgEmpty()
		f["severity"], f["start"], f["end"] = "advisory", 1, 1
		f["quote"] = "for _, x := range xs {\n  sum += x\n}\nreturn sum / len(xs)"
		res, _ := w.run(Options{}, Input{}, reviewer(t, answer(t, f)))
		if len(res.Findings) != 1 || res.Findings[0].Start != 11 || res.Findings[0].End != 14 {
			t.Errorf("findings = %+v, want lines 11-14; dropped:\n%s", res.Findings, reasons(res.Dropped))
		}
	})
}

// TestReviewRefutation: the refuter's second call makes a refuted blocking
// finding advisory, with its reason; an upheld one stays blocking; without a
// blocking finding there is no second call.
func TestReviewRefutation(t *testing.T) {
	w := newWorld(t)
	div, avg := FindingID("calc.go", "return a / b", "bug"), FindingID("calc.go", "return sum / len(xs)", "bug")
	verdicts := fmt.Sprintf(`[{"id": %q, "verdict": "refuted", "reason": "every caller checks b first"}, {"id": %q, "verdict": "upheld", "reason": "Avg(nil) panics"}]`, div, avg)
	res, rp := w.run(Options{}, Input{}, reviewer(t, answer(t, divZero(), avgEmpty())), refuter(t, verdicts))
	got := map[string]Finding{}
	for _, f := range res.Findings {
		got[f.ID] = f
	}
	if f := got[div]; f.Severity != SeverityAdvisory || f.Refuted != "every caller checks b first" {
		t.Errorf("the refuted finding: %+v", f)
	}
	if f := got[avg]; f.Severity != SeverityBlocking || f.Refuted != "" {
		t.Errorf("the upheld finding: %+v", f)
	}
	if b := res.Blocking(); len(b) != 1 || b[0].ID != avg {
		t.Errorf("Blocking() = %+v", b)
	}
	if res.Refuted != 1 {
		t.Errorf("Refuted = %d, want 1", res.Refuted)
	}
	if got := served(rp); !cmp.Equal(got, []string{"reviewer", "refuter"}) {
		t.Errorf("served %v, want the reviewer then the refuter", got)
	}
	if res.Usage.TokensIn != 2000 || res.Usage.TokensOut != 200 || res.Usage.ModelCalls != 2 || res.Turns != 2 {
		t.Errorf("usage %+v turns %d: want both calls summed", res.Usage, res.Turns)
	}
	t.Run("a refutation without evidence or for another id does not count", func(t *testing.T) {
		verdicts := fmt.Sprintf(`[{"id": %q, "verdict": "refuted", "reason": ""}, {"id": "000000000000", "verdict": "refuted", "reason": "x"}, "junk"]`, div)
		res, _ := w.run(Options{}, Input{}, reviewer(t, answer(t, divZero())), refuter(t, verdicts))
		if b := res.Blocking(); len(b) != 1 || b[0].ID != div {
			t.Errorf("Blocking() = %+v, want the finding to stand", b)
		}
	})
	t.Run("no blocking finding, no second call", func(t *testing.T) {
		f := divZero()
		f["severity"] = "advisory"
		res, rp := w.run(Options{}, Input{}, reviewer(t, answer(t, f)), refuter(t, verdicts))
		if got := served(rp); !cmp.Equal(got, []string{"reviewer"}) {
			t.Errorf("served %v, want the reviewer only", got)
		}
		if len(res.Findings) != 1 || res.Usage.ModelCalls != 1 {
			t.Errorf("findings %+v usage %+v", res.Findings, res.Usage)
		}
	})
	t.Run("a blocking finding dropped for its quote calls no refuter", func(t *testing.T) {
		f := divZero()
		f["quote"] = "not in the head"
		_, rp := w.run(Options{}, Input{}, reviewer(t, answer(t, f)), refuter(t, verdicts))
		if got := served(rp); !cmp.Equal(got, []string{"reviewer"}) {
			t.Errorf("served %v, want the reviewer only", got)
		}
	})
}

// TestReviewLedgerNeverRepeats: an id the ledger closed is never raised
// again, whatever lines or words the model uses; ids are stable; the
// max_findings bound demotes the blocking findings past it, counted.
func TestReviewLedgerNeverRepeats(t *testing.T) {
	w := newWorld(t)
	id := FindingID("calc.go", "return a / b", "bug")
	for _, tc := range []struct {
		file, quote, kind string
		same              bool
	}{
		{"calc.go", "return a / b", "bug", true},
		{"calc.go", "  return   a /\n\tb  ", "bug", true},
		{"calc.go", "return a / b", "BUG", true},
		{"calc.go", "return a / b", "security", false},
		{"calc.go", "return a/b", "bug", false},
		{"other.go", "return a / b", "bug", false},
	} {
		if got := FindingID(tc.file, tc.quote, tc.kind) == id; got != tc.same {
			t.Errorf("FindingID(%q, %q, %q) == %s is %v, want %v", tc.file, tc.quote, tc.kind, id, got, tc.same)
		}
	}
	for _, how := range []string{Repaired, "dismissed by ada"} {
		t.Run(how, func(t *testing.T) {
			again := divZero()
			again["start"], again["end"] = 1, 2
			again["title"] = "Division by zero is possible"
			again["trigger"] = "a zero divisor"
			again["quote"] = "return  a / b\n"
			res, rp := w.run(Options{}, Input{Closed: map[string]string{id: how}}, reviewer(t, answer(t, again, avgEmpty())), refuter(t, "[]"))
			for _, f := range res.Findings {
				if f.ID == id {
					t.Errorf("the closed finding was raised again: %+v", f)
				}
			}
			if len(res.Dropped) != 1 || !strings.Contains(res.Dropped[0].Reason, "closed in the ledger: "+how) {
				t.Errorf("dropped:\n%s", reasons(res.Dropped))
			}
			if len(res.Findings) != 1 || len(served(rp)) != 2 {
				t.Errorf("findings %+v served %v: the other finding goes on", res.Findings, served(rp))
			}
		})
	}
	t.Run("max_findings", func(t *testing.T) {
		var fs []finding
		quotes := []string{"return a / b", "return sum / len(xs)", "sum += x", "sum := 0", "for _, x := range xs {"}
		for _, q := range quotes {
			f := divZero()
			f["quote"] = q
			fs = append(fs, f)
		}
		res, _ := w.run(Options{MaxFindings: 2}, Input{}, reviewer(t, answer(t, fs...)), refuter(t, "[]"))
		if b := res.Blocking(); len(b) != 2 || b[0].Quote != quotes[0] || b[1].Quote != quotes[1] {
			t.Errorf("blocking = %+v, want the first two", b)
		}
		if res.Demoted != 3 || len(res.Findings) != 5 {
			t.Errorf("demoted %d of %d findings, want 3 of 5", res.Demoted, len(res.Findings))
		}
		res, _ = w.run(Options{}, Input{}, reviewer(t, answer(t, fs...)), refuter(t, "[]"))
		if b := res.Blocking(); len(b) != DefaultMaxFindings || res.Demoted != 2 {
			t.Errorf("default bound: %d blocking, %d demoted", len(b), res.Demoted)
		}
	})
}

// FuzzParseFindings: whatever the reviewer answers, ParseFindings never
// panics and every finding it keeps is typed and bounded.
func FuzzParseFindings(f *testing.F) {
	for _, seed := range []string{
		`[]`,
		`[{"file": "calc.go", "start": 5, "end": 5, "severity": "blocking", "kind": "bug", "title": "t", "trigger": "x", "quote": "return a / b"}]`,
		`[{"file": "../x", "start": "1"}, 1, "s", null, []]`,
		`[{"file": "a.go", "start": 1e999, "severity": "advisory", "kind": "test", "title": "t", "trigger": "x", "quote": "q"}]`,
		`[{"file": "a|b.go", "severity": "advisory", "kind": "plan", "title": "a\n|b", "trigger": "\u0000", "quote": "\u202e"}]`,
		`none`, `{"findings": []}`, `[`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fs, dropped := ParseFindings(s)
		if len(fs)+len(dropped) > maxEntries+1 {
			t.Fatalf("%d findings and %d dropped", len(fs), len(dropped))
		}
		for _, g := range fs {
			if checkPath(g.File) != nil || !kinds[g.Kind] || (g.Severity != SeverityBlocking && g.Severity != SeverityAdvisory) {
				t.Fatalf("an ill-typed finding: %+v", g)
			}
			if g.ID != FindingID(g.File, g.Quote, g.Kind) || g.Start < 1 || g.End < g.Start {
				t.Fatalf("id or lines: %+v", g)
			}
			if len(g.Title) > maxTitle+4 || len(g.Trigger) > maxTrigger+4 || len(g.Quote) > maxQuote || strings.ContainsAny(g.Title+g.Trigger, "\n\r\x00") {
				t.Fatalf("unbounded text: %+v", g)
			}
		}
		for _, d := range dropped {
			if d.Reason == "" {
				t.Fatal("dropped without a reason")
			}
		}
	})
}

// TestReviewStops: a call that ends without an answer stops the review with
// its status; the two calls share the step budget and count toward the
// item's; a refuter that does not answer leaves the findings unrefuted.
func TestReviewStops(t *testing.T) {
	w := newWorld(t)
	runRaw := func(cfg agent.Config, convs ...*llm.Conversation) (Result, *llm.Replay) {
		t.Helper()
		rp := llm.NewReplay(convs)
		cfg.Models = []agent.Tier{{Name: "reviewer-model", Model: rp}}
		cfg.Sandbox = treeSandbox{w.dir}
		cfg.Estimator = func(agent.ModelRequest) int64 { return 100 }
		res, err := Run(context.Background(), Options{Config: cfg}, Input{Dir: w.dir, Diff: w.diff})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		return res, rp
	}
	t.Run("the reviewer does not answer", func(t *testing.T) {
		res, _ := runRaw(agent.Config{}, refuter(t, "[]"))
		if res.Status != agent.StatusModelError || len(res.Findings) != 0 || res.Reason == "" {
			t.Errorf("status %s (%s), findings %+v", res.Status, res.Reason, res.Findings)
		}
	})
	t.Run("the refuter does not answer", func(t *testing.T) {
		res, _ := runRaw(agent.Config{}, reviewer(t, answer(t, divZero())))
		if res.Status != agent.StatusModelError || len(res.Blocking()) != 1 || res.Usage.ModelCalls != 1 {
			t.Errorf("status %s, blocking %+v, usage %+v: want the finding to stand unrefuted", res.Status, res.Blocking(), res.Usage)
		}
	})
	t.Run("the step's turns are shared", func(t *testing.T) {
		res, rp := runRaw(agent.Config{Budget: agent.Budget{Turns: 1}}, reviewer(t, answer(t, divZero())), refuter(t, "[]"))
		if res.Status != agent.StatusBudgetExhausted || len(res.Blocking()) != 1 || !cmp.Equal(served(rp), []string{"reviewer"}) {
			t.Errorf("status %s, blocking %d, served %v", res.Status, len(res.Blocking()), served(rp))
		}
		res, rp = runRaw(agent.Config{Budget: agent.Budget{Turns: 2}}, reviewer(t, answer(t, divZero())), refuter(t, "[]"))
		if res.Status != agent.StatusFinished || len(served(rp)) != 2 {
			t.Errorf("two turns: status %s, served %v", res.Status, served(rp))
		}
	})
	t.Run("the item's budget counts the reviewer's call", func(t *testing.T) {
		// The reviewer's call costs 1000 tokens in; the refuter's request is
		// estimated at 100: within 1050 alone, not after the first call.
		res, rp := runRaw(agent.Config{ItemBudget: agent.Budget{TokensIn: 1050}}, reviewer(t, answer(t, divZero())), refuter(t, "[]"))
		if res.Status != agent.StatusBudgetExhausted || !cmp.Equal(served(rp), []string{"reviewer"}) {
			t.Errorf("status %s (%s), served %v", res.Status, res.Reason, served(rp))
		}
	})
}
