package record

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

// escaped is text whose every character JSON writes as six: the worst case
// for a bound counted on the decoded text.
func escaped(n int) string { return strings.Repeat("<", n) }

// worstCase is the largest record the setters can write: every bounded key
// full of characters JSON escapes, the largest numbers each field takes, 100
// Jobs, and the largest visible part a writer renders.
func worstCase(t *testing.T) *Record {
	t.Helper()
	big := Spend{TokensIn: MaxTokens, TokensOut: MaxTokens, USD: MaxUSD - 1e-9*123456789, ModelCalls: MaxCount}
	word := strings.Repeat("w", MaxWord)
	jobs := make([]JobOutcome, MaxJobs)
	for i := range jobs {
		jobs[i] = JobOutcome{Job: MaxCount - MaxJobs + i + 1, RunID: MaxRunID, Result: ResultReturned,
			Failure: word, Group: MaxCount, Spend: big, Requests: MaxCount, Dispatching: MaxRunID}
	}
	files := make([]string, MaxFiles)
	for i := range files {
		files[i] = escaped(200)
	}
	secs := make([]int, MaxGroupSeconds)
	for i := range secs {
		secs[i] = MaxCount
	}
	var c Changes
	c.SetResult(ResultReturned)
	c.SetFailure(word)
	c.SetStopped(escaped(10 * MaxLine))
	c.SetCheckLog(escaped(10 * MaxCheckLog))
	c.SetConflict(files)
	c.SetSpend(big)
	c.SetSpendEstimated(MaxCount)
	c.SetGroup(MaxCount)
	c.SetGroupSeconds(secs)
	sha := SHA(strings.Repeat("f", 64))
	c.SetSHA(sha)
	c.SetWIP(sha)
	// implement.kept deletes implement.wip (and the other way round): the
	// longer name of the two is the one left.
	c.SetKept(sha)
	c.SetCheckedSHA(sha)
	c.SetMergedBase(sha)
	c.SetPublishedSHA(sha)
	// The trace is bounded on its JSON text already; fill it with escapes.
	// A stage Job's copy goes first: the implement Job's after it replaces it.
	c.SetStageTrace(json.RawMessage(`"` + strings.Repeat(`\u003c`, (MaxTrace-2)/6) + `"`))
	c.SetTrace(json.RawMessage(`"` + strings.Repeat(`\u003c`, (MaxTrace-2)/6) + `"`))
	c.SetAttempt(MaxCount)
	c.SetJobs(jobs)
	c.SetQuestion(escaped(10 * MaxQuestion))
	c.SetAnswer(escaped(10 * MaxQuestion))
	c.SetStageState(word)
	c.SetStagePR(MaxCount)
	open := make([]OpenFinding, MaxReviewOpen+3)
	for i := range open {
		open[i] = OpenFinding{ID: strings.Repeat("f", 16), File: escaped(500), Line: MaxCount, Title: escaped(500)}
	}
	closed := make([]ClosedFinding, MaxReviewClosed+7)
	for i := range closed {
		closed[i] = ClosedFinding{ID: strings.Repeat("e", 16), Why: escaped(500)}
	}
	c.SetReview(ReviewLedger{SHA: sha, Open: open, Closed: closed})
	strengths := make([]GroupStrength, 50)
	for i := range strengths {
		strengths[i] = GroupStrength{Group: MaxCount, Generated: MaxCount, Killed: MaxCount, Survived: MaxCount, NotCovered: MaxCount,
			TimedOut: MaxCount, Score: 0.123456789, Unmeasured: escaped(500)}
	}
	c.SetStrength(strengths)
	done := make([]CommentDone, MaxCommentEntries+5)
	for i := range done {
		done[i] = CommentDone{Kind: CommentReview, ID: MaxRunID, Answered: escaped(500)}
	}
	c.SetComments(CommentLedger{Through: MaxUnix, Done: done})
	c.SetStagePlan("openspec/changes/" + strings.Repeat("p", MaxLine-len("openspec/changes/")))
	r := &Record{}
	if err := r.Apply(c); err != nil {
		t.Fatalf("the worst case does not apply: %v", err)
	}
	notes := make([]string, MaxNotes+5)
	for i := range notes {
		notes[i] = strings.Repeat("n", 10*MaxNoteChars) + string(rune('a'+i))
	}
	r.SetView(View{Doing: escaped(10 * MaxDoing), RunURL: "https://github.example/" + strings.Repeat("o", 2000), Notes: notes})
	return r
}

// TestRecordRenderedBound: the worst-case record comment stays under
// GitHub's 65,536 characters with the margin docs/record.md states, counted
// on the rendered text, and reads back.
func TestRecordRenderedBound(t *testing.T) {
	r := worstCase(t)
	out, err := RenderComment(r)
	if err != nil {
		t.Fatalf("RenderComment(worst case) error = %v", err)
	}
	n := utf8.RuneCountInString(out)
	t.Logf("worst-case record comment: %d characters, %d under the limit", n, MaxBodyChars-n)
	if n > MaxBodyChars-RecordMargin {
		t.Errorf("the worst-case record comment is %d characters; want at most %d (%d under GitHub's %d)",
			n, MaxBodyChars-RecordMargin, RecordMargin, MaxBodyChars)
	}
	back, err := Parse(out)
	if err != nil {
		t.Fatalf("the worst case does not read back: %v", err)
	}
	if !back.Equal(r) {
		t.Errorf("the worst case reads back different")
	}
	// Each bounded text key is bounded as written, not only as decoded.
	for _, k := range []Key{KeyImplementCheckLog, KeyImplementQuestion, KeyImplementAnswer, KeyImplementStopped, KeyImplementConflict, KeyImplementReview, KeyImplementStrength, KeyImplementComments} {
		raw, _ := back.Raw(k)
		sp, _ := specOf(k)
		if got := utf8.RuneCountInString(raw); got > sp.bound {
			t.Errorf("%s is %d characters as written, over its bound %d", k, got, sp.bound)
		}
	}
	// A value over its bound as written is refused when read, even when
	// its decoded text is short enough.
	body := "<!-- roadmap:record v1\nimplement.check_log: \"" + strings.Repeat(`\u003c`, MaxCheckLog/6+1) + "\"\n-->"
	var pe *ParseError
	if _, err := Parse(body); !errors.As(err, &pe) || pe.Kind != KindType {
		t.Errorf("Parse(check log over its bound as written) error = %v, want a type error", err)
	}
}

// TestOneTraceCopy: the record holds the trace copy of the last Job only,
// stage's or implement's, so the two never share the body's bound (the
// worst case above has room for one).
func TestOneTraceCopy(t *testing.T) {
	r := &Record{}
	for _, tc := range []struct {
		set       func(*Changes, json.RawMessage)
		want, not Key
	}{
		{(*Changes).SetTrace, KeyImplementTrace, KeyStageTrace},
		{(*Changes).SetStageTrace, KeyStageTrace, KeyImplementTrace},
		{(*Changes).SetTrace, KeyImplementTrace, KeyStageTrace},
	} {
		var c Changes
		tc.set(&c, json.RawMessage(`{"v":1,"ev":[]}`))
		if err := r.Apply(c); err != nil {
			t.Fatalf("Apply(%s): %v", tc.want, err)
		}
		if _, ok := r.Raw(tc.want); !ok {
			t.Errorf("after writing %s the record lacks it", tc.want)
		}
		if _, ok := r.Raw(tc.not); ok {
			t.Errorf("after writing %s the record still holds %s", tc.want, tc.not)
		}
		if _, k, ok := r.LastTrace(); !ok || k != tc.want {
			t.Errorf("LastTrace() key %q, want %q", k, tc.want)
		}
	}
}

// TestOneUnfinishedWork: the record names the last stop's unfinished work
// only, a WIP commit on the branch (implement.wip) or a group commit a
// conflict stop kept (implement.kept), so the two never share the body's
// bound (the worst case above has room for one).
func TestOneUnfinishedWork(t *testing.T) {
	r := &Record{}
	for _, tc := range []struct {
		set       func(*Changes, SHA)
		want, not Key
	}{
		{(*Changes).SetWIP, KeyImplementWIP, KeyImplementKept},
		{(*Changes).SetKept, KeyImplementKept, KeyImplementWIP},
		{(*Changes).SetWIP, KeyImplementWIP, KeyImplementKept},
	} {
		var c Changes
		tc.set(&c, "9e8d7c6b5a")
		if err := r.Apply(c); err != nil {
			t.Fatalf("Apply(%s): %v", tc.want, err)
		}
		if _, ok := r.Raw(tc.want); !ok {
			t.Errorf("after writing %s the record lacks it", tc.want)
		}
		if _, ok := r.Raw(tc.not); ok {
			t.Errorf("after writing %s the record still holds %s", tc.want, tc.not)
		}
	}
}

// TestSpendOverflow: sums that overflow are refused when read, and Add
// saturates at the bounds a write accepts.
func TestSpendOverflow(t *testing.T) {
	for _, raw := range []string{
		`{"tokens_in":1,"tokens_out":1,"usd":1e300,"model_calls":1}`,
		`{"tokens_in":9223372036854775000,"tokens_out":1,"usd":1,"model_calls":1}`,
		`{"tokens_in":1,"tokens_out":99999999999999999999,"usd":1,"model_calls":1}`,
		`{"tokens_in":1,"tokens_out":1,"usd":1,"model_calls":9223372036854775000}`,
	} {
		body := "<!-- roadmap:record v1\nimplement.spend: " + raw + "\n-->"
		var pe *ParseError
		if _, err := Parse(body); !errors.As(err, &pe) || pe.Kind != KindType || !strings.Contains(err.Error(), "implement.spend") {
			t.Errorf("Parse(spend %s) error = %v, want a type error naming implement.spend", raw, err)
		}
		jobs := `[{"job":1,"run_id":1,"spend":` + raw + `}]`
		if _, err := Parse("<!-- roadmap:record v1\nimplement.jobs: " + jobs + "\n-->"); !errors.As(err, &pe) || pe.Kind != KindType {
			t.Errorf("Parse(jobs with spend %s) error = %v, want a type error", raw, err)
		}
	}
	// Add of two values a write accepts gives a value a write accepts.
	top := Spend{TokensIn: MaxTokens, TokensOut: MaxTokens - 1, USD: MaxUSD, ModelCalls: MaxCount}
	for _, tc := range []struct{ a, b Spend }{
		{top, top},
		{top, Spend{TokensIn: 1, TokensOut: 5, USD: 0.5, ModelCalls: 1}},
		{Spend{USD: MaxUSD - 0.1}, Spend{USD: 0.3}},
		{Spend{TokensIn: math.MaxInt64}, Spend{TokensIn: math.MaxInt64}},
		{Spend{USD: math.Inf(1)}, Spend{}},
		{Spend{USD: math.NaN()}, Spend{}},
	} {
		sum := tc.a.Add(tc.b)
		var c Changes
		c.SetSpend(sum)
		c.SetJobs([]JobOutcome{{Job: 1, RunID: 1, Spend: sum}})
		r := &Record{}
		if err := r.Apply(c); err != nil {
			t.Errorf("%+v.Add(%+v) = %+v, which a write refuses: %v", tc.a, tc.b, sum, err)
			continue
		}
		out, err := RenderComment(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(out); err != nil {
			t.Errorf("%+v.Add(%+v) = %+v, which a read refuses: %v", tc.a, tc.b, sum, err)
		}
	}
	if got := top.Add(top); got.TokensIn != MaxTokens || got.USD != MaxUSD || got.ModelCalls != MaxCount {
		t.Errorf("top.Add(top) = %+v, want each field at its bound", got)
	}
}

// TestPlanPathConfined (record part): stage.plan names a directory under
// openspec/changes/ by a clean relative path; any other value is an error
// naming the key, when read and when set.
func TestPlanPathConfined(t *testing.T) {
	for _, tc := range []struct {
		plan string
		ok   bool
	}{
		{"openspec/changes/add-backoff", true},
		{"openspec/changes/2024/add-backoff", true},
		{"../outside/openspec/changes/x", false},
		{"openspec/changes/../../etc", false},
		{"openspec/changes/x/../../../outside", false},
		{"/etc/passwd", false},
		{"/work/openspec/changes/x", false},
		{"openspec/changes", false},
		{"openspec/changes/", false},
		{"openspec/changes/./x", false},
		{"openspec/changes//x", false},
		{`openspec/changes/x\..\..\y`, false},
		{"docs", false},
	} {
		body := "<!-- roadmap:record v1\nstage.plan: " + encodeJSON(tc.plan) + "\n-->"
		_, err := Parse(body)
		if tc.ok != (err == nil) {
			t.Errorf("Parse(stage.plan %q) error = %v, want ok=%v", tc.plan, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "stage.plan") {
			t.Errorf("Parse(stage.plan %q) error %q does not name the key", tc.plan, err)
		}
		var c Changes
		c.SetStagePlan(tc.plan)
		err = (&Record{}).Apply(c)
		if tc.ok != (err == nil) {
			t.Errorf("SetStagePlan(%q) Apply error = %v, want ok=%v", tc.plan, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "stage.plan") {
			t.Errorf("SetStagePlan(%q) error %q does not name the key", tc.plan, err)
		}
		if got := CheckPlanPath(tc.plan); tc.ok != (got == nil) {
			t.Errorf("CheckPlanPath(%q) = %v, want ok=%v", tc.plan, got, tc.ok)
		}
	}
}
