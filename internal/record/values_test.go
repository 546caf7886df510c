package record

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestResultValid(t *testing.T) {
	for _, tc := range []struct {
		r    Result
		want bool
	}{
		{ResultReady, true}, {ResultStopped, true}, {ResultYielded, true}, {ResultReturned, true},
		{"", false}, {"Ready", false}, {"killed", false}, {"ready ", false},
	} {
		if got := tc.r.Valid(); got != tc.want {
			t.Errorf("Result(%q).Valid() = %v, want %v", tc.r, got, tc.want)
		}
	}
}

func TestSpendAdd(t *testing.T) {
	var sum Spend
	// Ten calls of 0.1 USD: a float sum would be 0.9999999999999999.
	for range 10 {
		sum = sum.Add(Spend{TokensIn: 1000, TokensOut: 200, USD: 0.1, ModelCalls: 1})
	}
	want := Spend{TokensIn: 10000, TokensOut: 2000, USD: 1, ModelCalls: 10}
	if diff := cmp.Diff(want, sum); diff != "" {
		t.Errorf("sum of ten calls (-want +got):\n%s", diff)
	}
	var c Changes
	c.SetSpend(sum)
	r, _ := Parse("")
	if err := r.Apply(c); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Raw(KeyImplementSpend); got != `{"tokens_in":10000,"tokens_out":2000,"usd":1,"model_calls":10}` {
		t.Errorf("implement.spend = %s", got)
	}
}

func TestParseSHA(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"abcdef0", true},
		{"3f2a9c1d4e5f60718293a4b5c6d7e8f901234567", true},
		{strings.Repeat("a", 64), true},
		{"abcdef", false},
		{strings.Repeat("a", 65), false},
		{"ABCDEF0", false},
		{"abcdefg", false},
		{"", false},
	} {
		_, err := ParseSHA(tc.in)
		if got := err == nil; got != tc.ok {
			t.Errorf("ParseSHA(%q) error = %v, want ok=%v", tc.in, err, tc.ok)
		}
	}
}

// TestSetGet: every value a setter writes reads back through Render and Parse.
func TestSetGet(t *testing.T) {
	r, err := Parse("Body.\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Apply(everyKey()); err != nil {
		t.Fatalf("Apply(every key) error = %v", err)
	}
	out, err := Render(r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(out)
	if err != nil {
		t.Fatalf("Parse(Render()) error = %v", err)
	}
	for _, k := range AllKeys() {
		if k == KeyStageTrace {
			continue // a record holds one trace copy: implement.trace, written last (below, stage.trace)
		}
		if k == KeyImplementWIP {
			continue // a record holds one of implement.wip and implement.kept: kept, written last (TestOneUnfinishedWork)
		}
		if !back.Has(k) {
			t.Errorf("key %s missing after a round trip", k)
		}
	}
	staged, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	var st Changes
	st.SetStageTrace(json.RawMessage(`{"v":1,"dropped":0,"ev":[]}`))
	if err := staged.Apply(st); err != nil {
		t.Fatal(err)
	}
	stagedOut, err := Render(staged)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(stagedOut)
	if err != nil {
		t.Fatalf("Parse(Render()) after SetStageTrace error = %v", err)
	}
	if !again.Has(KeyStageTrace) || again.Has(KeyImplementTrace) {
		t.Errorf("after SetStageTrace and a round trip: stage.trace %v, implement.trace %v; want stage.trace only",
			again.Has(KeyStageTrace), again.Has(KeyImplementTrace))
	}
	ans, _ := back.Answer()
	if want := "Yes — keep it,\nbut mark it deprecated."; ans != want {
		t.Errorf("Answer() = %q, want %q", ans, want)
	}
	log, _ := back.CheckLog()
	if !strings.Contains(log, "<!-- not a comment -->") {
		t.Errorf("CheckLog() = %q, lost its text", log)
	}
	trace, _ := back.Trace()
	var v any
	if err := json.Unmarshal(trace, &v); err != nil {
		t.Errorf("Trace() is not JSON: %v", err)
	}
	if want := `{"events":[{"note":"a < b","ok":false,"phase":"checks"}]}`; mustJSON(t, v) != want {
		t.Errorf("Trace() = %s, want the same events as %s", trace, want)
	}
	jobs, _ := back.Jobs()
	if len(jobs) != 3 || jobs[1].Failure != "killed" || jobs[2].Spend.USD != 0.07 {
		t.Errorf("Jobs() = %+v", jobs)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return strings.NewReplacer(`\u003c`, "<", `\u003e`, ">").Replace(string(b))
}

func TestSetterBounds(t *testing.T) {
	longLog := strings.Repeat("noise\n", 2000) + "--- FAIL: TestX\nFAIL"
	files := make([]string, MaxFiles+20)
	for i := range files {
		files[i] = "f" + strings.Repeat("x", i%7) + ".go"
	}
	files[0] = "first.go"
	jobs := make([]JobOutcome, MaxJobs+5)
	for i := range jobs {
		jobs[i] = JobOutcome{Job: i + 1, RunID: int64(1000 + i)}
	}
	var c Changes
	c.SetCheckLog(longLog)
	c.SetQuestion(strings.Repeat("q", MaxQuestion+10))
	c.SetConflict(files)
	c.SetJobs(jobs)
	c.SetStopped("line one\nline two")
	r, _ := Parse("")
	if err := r.Apply(c); err != nil {
		t.Fatalf("Apply() error = %v", err)
	}
	log, _ := r.CheckLog()
	// Bounds count the value as written: the log's line ends are escaped.
	if raw, _ := r.Raw(KeyImplementCheckLog); utf8.RuneCountInString(raw) != MaxCheckLog {
		t.Errorf("check log is %d characters as written, want %d", utf8.RuneCountInString(raw), MaxCheckLog)
	}
	if !strings.HasSuffix(log, "--- FAIL: TestX\nFAIL") || !strings.HasPrefix(log, "…") {
		t.Errorf("check log kept %q…%q, want the tail after a …", log[:20], log[len(log)-20:])
	}
	q, _ := r.Question()
	// Written as a JSON string (the "…" is not plain): two quotes.
	if n := utf8.RuneCountInString(q); n != MaxQuestion-2 || !strings.HasSuffix(q, "…") {
		t.Errorf("question is %d characters ending %q, want %d ending …", n, q[len(q)-5:], MaxQuestion-2)
	}
	got, _ := r.Conflict()
	if len(got) != MaxFiles || got[0] != "first.go" {
		t.Errorf("conflict kept %d files starting %q, want the first %d", len(got), got[0], MaxFiles)
	}
	gotJobs, _ := r.Jobs()
	if len(gotJobs) != MaxJobs || gotJobs[len(gotJobs)-1].Job != MaxJobs+5 {
		t.Errorf("jobs kept %d, last %d; want the newest %d", len(gotJobs), gotJobs[len(gotJobs)-1].Job, MaxJobs)
	}
	if s, _ := r.Stopped(); s != "line one / line two" {
		t.Errorf("Stopped() = %q, want the lines joined", s)
	}
}

func TestApply(t *testing.T) {
	base := lf("Text", "<!-- roadmap:record v1", "implement.group: 1", "zeta.note: kept", "-->")
	tests := []struct {
		name    string
		changes func(c *Changes)
		wantErr string
		want    map[Key]string
	}{
		{
			name:    "set and delete",
			changes: func(c *Changes) { c.SetGroup(2); c.SetResult(ResultYielded); c.Delete(KeyImplementSHA) },
			want:    map[Key]string{KeyImplementGroup: "2", KeyImplementResult: "yielded", "zeta.note": "kept"},
		},
		{
			name:    "later edit wins",
			changes: func(c *Changes) { c.SetGroup(2); c.Delete(KeyImplementGroup); c.SetGroup(3) },
			want:    map[Key]string{KeyImplementGroup: "3", "zeta.note": "kept"},
		},
		{
			name:    "delete an unknown key",
			changes: func(c *Changes) { c.Delete("zeta.note") },
			want:    map[Key]string{KeyImplementGroup: "1"},
		},
		{name: "group zero", changes: func(c *Changes) { c.SetResult(ResultReady); c.SetGroup(0) }, wantErr: "implement.group"},
		{name: "bad result", changes: func(c *Changes) { c.SetResult("done") }, wantErr: "implement.result"},
		{name: "bad sha", changes: func(c *Changes) { c.SetCheckedSHA("HEAD") }, wantErr: "implement.checked_sha"},
		{name: "bad class", changes: func(c *Changes) { c.SetFailure("Checks failed") }, wantErr: "implement.failure"},
		{name: "empty text", changes: func(c *Changes) { c.SetStopped("") }, wantErr: "implement.stopped"},
		{name: "negative spend", changes: func(c *Changes) { c.SetSpend(Spend{USD: -1}) }, wantErr: "implement.spend"},
		{name: "bad job", changes: func(c *Changes) { c.SetJobs([]JobOutcome{{Job: 1, Result: "done"}}) }, wantErr: "implement.jobs"},
		{name: "trace not JSON", changes: func(c *Changes) { c.SetTrace(json.RawMessage("{")) }, wantErr: "implement.trace"},
		{name: "trace too long", changes: func(c *Changes) {
			c.SetTrace(json.RawMessage(`"` + strings.Repeat("x", MaxTrace) + `"`))
		}, wantErr: "at most 8192"},
		{name: "bad key", changes: func(c *Changes) { c.Delete("Bad Key") }, wantErr: "not a valid key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Parse(base)
			if err != nil {
				t.Fatal(err)
			}
			var c Changes
			tc.changes(&c)
			err = r.Apply(c)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Apply() error = %v, want one naming %q", err, tc.wantErr)
				}
				want := map[Key]string{KeyImplementGroup: "1", "zeta.note": "kept"}
				if diff := cmp.Diff(want, values(r)); diff != "" {
					t.Errorf("a failed Apply changed the record (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply() error = %v", err)
			}
			if diff := cmp.Diff(tc.want, values(r)); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
			if !c.Applied(r) {
				t.Errorf("Applied() = false on the record it was applied to")
			}
		})
	}
}

// TestApplied is the read-back check: a record another writer changed after our
// read still holds our change only if our keys are as we set them.
func TestApplied(t *testing.T) {
	var ours Changes
	ours.SetPublishedSHA("abcdef0123")
	ours.SetGroup(2)
	ours.Delete(KeyImplementCheckLog)

	tests := []struct {
		name string
		body string
		want bool
	}{
		{"holds them", lf("<!-- roadmap:record v1", "implement.group: 2", "implement.published_sha: abcdef0123", "stage.pr: 4", "-->"), true},
		{"lost the race", lf("<!-- roadmap:record v1", "implement.group: 1", "implement.published_sha: abcdef0123", "-->"), false},
		{"key deleted by us is back", lf("<!-- roadmap:record v1", "implement.check_log: x", "implement.group: 2", "implement.published_sha: abcdef0123", "-->"), false},
		{"no record", "text", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Parse(tc.body)
			if err != nil {
				t.Fatal(err)
			}
			if got := ours.Applied(r); got != tc.want {
				t.Errorf("Applied() = %v, want %v", got, tc.want)
			}
		})
	}
	var merged Changes
	var spend Changes
	spend.SetSpend(Spend{TokensIn: 1})
	merged.Merge(ours)
	merged.Merge(spend)
	if diff := cmp.Diff([]Key{KeyImplementPublishedSHA, KeyImplementGroup, KeyImplementCheckLog, KeyImplementSpend}, merged.Keys()); diff != "" {
		t.Errorf("Merge() keys (-want +got):\n%s", diff)
	}
}

func TestZeroRecord(t *testing.T) {
	var r Record
	var c Changes
	c.SetGroup(1)
	if err := r.Apply(c); err != nil {
		t.Fatal(err)
	}
	got, err := Render(&r)
	if err != nil {
		t.Fatal(err)
	}
	if want := lf("<!-- roadmap:record v1", "implement.group: 1", "-->"); got != want {
		t.Errorf("Render(zero Record + group) = %q, want %q", got, want)
	}
}

func TestUpdate(t *testing.T) {
	var c Changes
	c.SetResult(ResultYielded)
	got, err := Update(crlf("Fix it.", ""), c)
	if err != nil {
		t.Fatal(err)
	}
	if want := crlf("Fix it.", "", "<!-- roadmap:record v1", "implement.result: yielded", "-->"); got != want {
		t.Errorf("Update() = %q, want %q", got, want)
	}
	if _, err := Update(lf("<!-- roadmap:record v3", "-->"), c); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("Update(bad body) error = %v, want one naming line 1", err)
	}
}

// TestKeySpecs: every key AllKeys lists has a type, and AllKeys is sorted.
func TestKeySpecs(t *testing.T) {
	keys := AllKeys()
	for i, k := range keys {
		if _, ok := specOf(k); !ok {
			t.Errorf("key %s has no type in specOf", k)
		}
		if !validKey(string(k)) {
			t.Errorf("key %s does not pass validKey", k)
		}
		if i > 0 && keys[i-1] >= k {
			t.Errorf("AllKeys() is not sorted at %s", k)
		}
	}
}
