package dashboard

import (
	"context"
	"strings"
	"testing"
	"time"
)

const stageReport = `{"cases":[{"name":"s1","score":1,"spend":{"tokens_in":8400,"tokens_out":1050,"usd":0.00189,"model_calls":7}},` +
	`{"name":"s2","score":0.4}],"score":0.7,"floor":0.7,"passed":true,"suite":"stage","provider":"github-models",` +
	`"model":"openai/gpt-4o-mini","started":"2026-12-04T15:00:00Z"}`

// TestParseEvalReport: a report as the eval verbs print it is summed into
// its suite's line; what is not a report, or holds a value out of its
// bounds or a model name that could carry markup, is refused.
func TestParseEvalReport(t *testing.T) {
	s, err := ParseEvalReport("x", []byte(stageReport))
	if err != nil {
		t.Fatal(err)
	}
	want := EvalSuite{Suite: "stage", Score: 0.7, Floor: 0.7, Passed: true, Cases: 2, TokensIn: 8400, TokensOut: 1050, USD: 0.00189,
		Provider: "github-models", Model: "openai/gpt-4o-mini", Started: time.Date(2026, 12, 4, 15, 0, 0, 0, time.UTC)}
	if s != want {
		t.Errorf("ParseEvalReport = %+v, want %+v", s, want)
	}
	// An older report names no suite: the file's.
	if s, err := ParseEvalReport(SuiteName("/tmp/out/gates.json"), []byte(`{"cases":[],"score":1,"floor":0.98,"passed":true}`)); err != nil || s.Suite != "gates" {
		t.Errorf("a report without its suite: %+v, %v; want the file's name, gates", s, err)
	}
	for _, bad := range []string{
		``, `null`, `[]`, `{"cases":[]}`, `{"score":1,"floor":0,"passed":true}`,
		`{"cases":[],"score":1.5,"floor":0,"passed":true}`,
		`{"cases":[],"score":1,"floor":-1,"passed":true}`,
		`{"cases":[{"spend":{"tokens_in":-1}}],"score":1,"floor":0,"passed":true}`,
		`{"cases":[{"spend":{"usd":1e300}}],"score":1,"floor":0,"passed":true}`,
		`{"cases":[],"score":1,"floor":0,"passed":true,"model":"@acme/team"}`,
		`{"cases":[],"score":1,"floor":0,"passed":true,"model":"<!-- x -->"}`,
		`{"cases":[],"score":1,"floor":0,"passed":true,"suite":"Gates | x"}`,
		`{"cases":[],"score":1,"floor":0,"passed":true} {"cases":[]}`,
		`{"cases":[],"score":1,"floor":0,"passed":true,"started":"0001-01-01T00:00:01Z"}`,
	} {
		if s, err := ParseEvalReport("gates", []byte(bad)); err == nil {
			t.Errorf("ParseEvalReport(%q) = %+v, want an error", bad, s)
		}
	}
	if _, err := ParseEvalReport("gates", make([]byte, MaxEvalReport+1)); err == nil || !strings.Contains(err.Error(), "over") {
		t.Errorf("a report over the bound: %v", err)
	}
}

// TestKeepEvals: a post replaces the Evals section; an update that brings
// no evals (report's, the refresh's) keeps it.
func TestKeepEvals(t *testing.T) {
	w := newWorld(t)
	s, err := ParseEvalReport("stage", []byte(stageReport))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := Keep(ctx, KeepOptions{GitHub: w.client(t), Issue: w.dash, Evals: &Evals{Suites: []EvalSuite{s}}, Now: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := Keep(ctx, KeepOptions{GitHub: w.client(t), Issue: w.dash, Lines: lines(t)[:1], Now: now}); err != nil {
		t.Fatal(err)
	}
	is, _ := w.fake.Issue(w.dash)
	if !strings.Contains(is.Body, "| stage | 0.7000 | 0.7000 | ✅ yes | 2 | 8400 / 1050 |") {
		t.Errorf("an update without evals dropped the Evals section:\n%s", is.Body)
	}
	bad := &Evals{Suites: []EvalSuite{{Suite: "stage", Model: "@acme/team"}}}
	if _, err := Keep(ctx, KeepOptions{GitHub: w.client(t), Issue: w.dash, Evals: bad, Now: now}); err == nil {
		t.Error("Keep wrote eval results with a model name that mentions a team")
	}
}

// FuzzParseEvalReport: a report is a file carried from the job that ran
// the model to the job that posts it. The parser never panics, and what it
// accepts is a section the state block keeps and reads back whole.
func FuzzParseEvalReport(f *testing.F) {
	f.Add([]byte(stageReport))
	f.Add([]byte(`{"cases":[],"score":1,"floor":0.98,"passed":true}`))
	f.Add([]byte(`{"cases":[{"spend":{"tokens_in":9223372036854775807,"tokens_out":9223372036854775807,"usd":1e9}},{"spend":{"tokens_in":9223372036854775807}}],"score":0,"floor":1,"passed":false,"model":"a:b/c+d"}`))
	f.Add([]byte(`{"cases":null,"score":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseEvalReport("gates", data)
		if err != nil {
			return
		}
		st := &State{Evals: &Evals{Suites: []EvalSuite{s}}}
		if err := st.check(); err != nil {
			t.Fatalf("an accepted report does not pass the state's check: %v (%+v)", err, s)
		}
		back, err := Parse(Render(st, View{Now: now}))
		if err != nil {
			t.Fatalf("an accepted report does not read back from the body: %v", err)
		}
		if back.Evals == nil || len(back.Evals.Suites) != 1 || back.Evals.Suites[0] != s {
			t.Fatalf("read back %+v, want %+v", back.Evals, s)
		}
	})
}
