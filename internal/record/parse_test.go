package record

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// values returns every key of r with its value as written.
func values(r *Record) map[Key]string {
	out := map[Key]string{}
	for _, k := range r.Keys() {
		out[k], _ = r.Raw(k)
	}
	return out
}

// lf joins lines with "\n"; crlf with "\r\n". Neither adds a line end at the end.
func lf(lines ...string) string   { return strings.Join(lines, "\n") }
func crlf(lines ...string) string { return strings.Join(lines, "\r\n") }

type parseCase struct {
	name string
	body string
	// For a body that parses:
	text    string
	vals    map[Key]string
	unknown []Key
	// render is the body Render gives back; "" means the body itself (an
	// unchanged record renders to the same bytes).
	render string
	// For a body that does not parse:
	errLine int
	errKind ErrorKind
	errHas  string
}

// parseCases is shared by TestParse, TestRoundTrip and the fuzzer's seed corpus.
func parseCases() []parseCase {
	return []parseCase{
		{
			name: "empty body",
			body: "",
			text: "",
			vals: map[Key]string{},
		},
		{
			name: "no block",
			body: "Fix the login page.\n\nSteps:\n1. open it\n",
			text: "Fix the login page.\n\nSteps:\n1. open it\n",
			vals: map[Key]string{},
		},
		{
			name: "plain",
			body: lf("Fix the login page.", "", "<!-- roadmap:record v1",
				"implement.group: 2",
				"implement.result: yielded",
				`implement.spend: {"tokens_in":18230,"tokens_out":4410,"usd":0.21,"model_calls":14}`,
				"-->"),
			text: "Fix the login page.\n",
			vals: map[Key]string{
				KeyImplementGroup:  "2",
				KeyImplementResult: "yielded",
				KeyImplementSpend:  `{"tokens_in":18230,"tokens_out":4410,"usd":0.21,"model_calls":14}`,
			},
		},
		{
			name: "plain, line end after the block",
			body: lf("Fix it.", "<!-- roadmap:record v1", "implement.result: ready", "-->", ""),
			text: "Fix it.",
			vals: map[Key]string{KeyImplementResult: "ready"},
		},
		{
			name: "block alone",
			body: lf("<!-- roadmap:record v1", "stage.pr: 12", "stage.state: planned", "-->"),
			text: "",
			vals: map[Key]string{KeyStagePR: "12", KeyStageState: "planned"},
		},
		{
			name: "CRLF",
			body: crlf("Fix the login page.", "", "Steps:", "1. open it", "", "<!-- roadmap:record v1",
				"implement.checked_sha: 3f2a9c1d",
				"implement.group: 2",
				"-->"),
			text: crlf("Fix the login page.", "", "Steps:", "1. open it", ""),
			vals: map[Key]string{KeyImplementCheckedSHA: "3f2a9c1d", KeyImplementGroup: "2"},
		},
		{
			name: "CRLF, line end after the block",
			body: crlf("Fix it.", "<!-- roadmap:record v1", "implement.group: 1", "-->", ""),
			text: "Fix it.",
			vals: map[Key]string{KeyImplementGroup: "1"},
		},
		{
			name: "CRLF text, LF block",
			body: "Fix it.\r\nSteps\r\n" + lf("<!-- roadmap:record v1", "implement.group: 1", "-->"),
			text: "Fix it.\r\nSteps\r",
			vals: map[Key]string{KeyImplementGroup: "1"},
		},
		{
			name: "Unicode",
			body: lf("Привет 👋 — café, 日本語のテキスト", "", "<!-- roadmap:record v1",
				`implement.stopped: "étape 3 — checks"`,
				`implement.wip: 9e8d7c6`,
				"-->"),
			text: "Привет 👋 — café, 日本語のテキスト\n",
			vals: map[Key]string{KeyImplementStopped: `"étape 3 — checks"`, KeyImplementWIP: "9e8d7c6"},
		},
		{
			name: "person's HTML comments",
			body: lf("<!-- a note for me -->", "Text", "<!--", "a longer note", "-->", "<!-- roadmap is great -->", "",
				"<!-- roadmap:record v1", "implement.group: 1", "-->"),
			text: lf("<!-- a note for me -->", "Text", "<!--", "a longer note", "-->", "<!-- roadmap is great -->", ""),
			vals: map[Key]string{KeyImplementGroup: "1"},
		},
		{
			name: "fenced example block",
			body: lf("The record looks like this:", "", "```", "<!-- roadmap:record v1", "implement.group: 9", "-->", "```",
				"", "~~~md", "<!-- roadmap:record v2", "~~~", "", "````", "```", "<!-- roadmap:record v1", "```", "````", "",
				"<!-- roadmap:record v1", "implement.group: 1", "-->"),
			text: lf("The record looks like this:", "", "```", "<!-- roadmap:record v1", "implement.group: 9", "-->", "```",
				"", "~~~md", "<!-- roadmap:record v2", "~~~", "", "````", "```", "<!-- roadmap:record v1", "```", "````", ""),
			vals: map[Key]string{KeyImplementGroup: "1"},
		},
		{
			name: "fenced example, no record",
			body: lf("Example:", "```html", "<!-- roadmap:record v1", "implement.group: 9", "-->", "```", ""),
			text: lf("Example:", "```html", "<!-- roadmap:record v1", "implement.group: 9", "-->", "```", ""),
			vals: map[Key]string{},
		},
		{
			name: "unclosed fence fences nothing",
			body: lf("```go", "func main() {", "", "<!-- roadmap:record v1", "implement.group: 1", "-->"),
			text: lf("```go", "func main() {", ""),
			vals: map[Key]string{KeyImplementGroup: "1"},
		},
		{
			name: "indented opener is text",
			body: lf("Code:", "", "    <!-- roadmap:record v1", "    implement.group: 1", "    -->"),
			text: lf("Code:", "", "    <!-- roadmap:record v1", "    implement.group: 1", "    -->"),
			vals: map[Key]string{},
		},
		{
			name: "unknown keys",
			body: lf("x", "", "<!-- roadmap:record v1",
				`future.thing: {"a":[1,2]}`,
				"implement.group: 3",
				"review.round:",
				"zeta.note: hello world",
				"-->"),
			text: "x\n",
			vals: map[Key]string{
				"future.thing":    `{"a":[1,2]}`,
				KeyImplementGroup: "3",
				"review.round":    "",
				"zeta.note":       "hello world",
			},
			unknown: []Key{"future.thing", "review.round", "zeta.note"},
		},
		{
			name: "quoted values",
			body: lf("x", "<!-- roadmap:record v1",
				`implement.check_log: "--- FAIL: TestBackoff\n    want 1h, got 2h\n\u003c/pre\u003e"`,
				`implement.conflict: ["internal/webhook/backoff.go","docs/a b.md"]`,
				`implement.stopped: 'it''s the checks'`,
				"-->"),
			text: "x",
			vals: map[Key]string{
				KeyImplementCheckLog: `"--- FAIL: TestBackoff\n    want 1h, got 2h\n\u003c/pre\u003e"`,
				KeyImplementConflict: `["internal/webhook/backoff.go","docs/a b.md"]`,
				KeyImplementStopped:  `'it''s the checks'`,
			},
		},
		{
			name:   "block in the middle moves to the end",
			body:   lf("Before", "<!-- roadmap:record v1", "implement.group: 1", "-->", "After", ""),
			text:   lf("Before", "After", ""),
			vals:   map[Key]string{KeyImplementGroup: "1"},
			render: lf("Before", "After", "", "<!-- roadmap:record v1", "implement.group: 1", "-->", ""),
		},
		{
			name:   "blank lines and blanks around values are dropped",
			body:   lf("x", "<!-- roadmap:record v1", "", "implement.result:   ready  ", "\t", "implement.group: 2", " --> "),
			text:   "x",
			vals:   map[Key]string{KeyImplementResult: "ready", KeyImplementGroup: "2"},
			render: lf("x", "<!-- roadmap:record v1", "implement.group: 2", "implement.result: ready", "-->"),
		},
		{
			name:   "keys out of order are sorted",
			body:   lf("x", "<!-- roadmap:record v1", "stage.pr: 4", "implement.result: ready", "-->"),
			text:   "x",
			vals:   map[Key]string{KeyStagePR: "4", KeyImplementResult: "ready"},
			render: lf("x", "<!-- roadmap:record v1", "implement.result: ready", "stage.pr: 4", "-->"),
		},
		{
			name:   "empty block renders as the text alone",
			body:   lf("x", "", "<!-- roadmap:record v1", "-->"),
			text:   "x\n",
			vals:   map[Key]string{},
			render: "x\n",
		},

		// Errors, each naming its line.
		{
			name:    "duplicate block",
			body:    lf("a", "<!-- roadmap:record v1", "implement.group: 1", "-->", "b", "<!-- roadmap:record v1", "implement.group: 2", "-->"),
			errLine: 6, errKind: KindDuplicate, errHas: "line 2",
		},
		{
			name: "duplicate block after a fenced example",
			body: lf("```", "<!-- roadmap:record v1", "-->", "```", "<!-- roadmap:record v1", "implement.group: 1", "-->",
				"<!-- roadmap:record v1", "-->"),
			errLine: 8, errKind: KindDuplicate,
		},
		{
			name:    "unterminated block",
			body:    lf("a", "", "<!-- roadmap:record v1", "implement.group: 1", ""),
			errLine: 3, errKind: KindUnterminated, errHas: "-->",
		},
		{
			name:    "unterminated block before another",
			body:    lf("<!-- roadmap:record v1", "implement.group: 1", "<!-- roadmap:record v1", "implement.group: 2", "-->"),
			errLine: 1, errKind: KindUnterminated, errHas: "line 3",
		},
		{
			name:    "unknown version",
			body:    lf("x", "<!-- roadmap:record v2", "implement.group: 1", "-->"),
			errLine: 2, errKind: KindVersion, errHas: `"v2"`,
		},
		{
			name:    "no version",
			body:    lf("<!-- roadmap:record", "-->"),
			errLine: 1, errKind: KindVersion,
		},
		{
			name:    "opener and closer on one line",
			body:    lf("x", "<!-- roadmap:record v1 -->"),
			errLine: 2, errKind: KindMalformed,
		},
		{
			name:    "line that is not key: value",
			body:    lf("x", "", "<!-- roadmap:record v1", "implement.group: 1", "this line is not a key", "-->"),
			errLine: 5, errKind: KindMalformed, errHas: "key: value",
		},
		{
			name:    "no space after the colon",
			body:    lf("<!-- roadmap:record v1", "implement.group:2", "-->"),
			errLine: 2, errKind: KindMalformed,
		},
		{
			name:    "not a key",
			body:    lf("<!-- roadmap:record v1", "Implement.Group: 2", "-->"),
			errLine: 2, errKind: KindMalformed,
		},
		{
			name:    "key set twice",
			body:    lf("<!-- roadmap:record v1", "implement.group: 1", "implement.group: 2", "-->"),
			errLine: 3, errKind: KindMalformed, errHas: "line 2",
		},
		{
			name:    "value that would end the comment",
			body:    lf("<!-- roadmap:record v1", "zeta.note: a --> b", "-->"),
			errLine: 2, errKind: KindMalformed, errHas: "-->",
		},
		{
			name:    "CRLF line numbers",
			body:    crlf("a", "b", "<!-- roadmap:record v1", "implement.group: 1", "oops", "-->"),
			errLine: 5, errKind: KindMalformed,
		},
		{
			name:    "wrong type: group",
			body:    lf("x", "<!-- roadmap:record v1", "implement.group: two", "-->"),
			errLine: 3, errKind: KindType, errHas: "implement.group",
		},
		{
			name:    "wrong type: group zero",
			body:    lf("<!-- roadmap:record v1", "implement.group: 0", "-->"),
			errLine: 2, errKind: KindType,
		},
		{
			name:    "wrong type: quoted group",
			body:    lf("<!-- roadmap:record v1", `implement.group: "2"`, "-->"),
			errLine: 2, errKind: KindType,
		},
		{
			name:    "wrong type: result",
			body:    lf("<!-- roadmap:record v1", "implement.result: done", "-->"),
			errLine: 2, errKind: KindType, errHas: "implement.result",
		},
		{
			name:    "wrong type: spend field",
			body:    lf("<!-- roadmap:record v1", `implement.spend: {"tokens_in":"many"}`, "-->"),
			errLine: 2, errKind: KindType,
		},
		{
			name:    "wrong type: spend misspelt field",
			body:    lf("<!-- roadmap:record v1", `implement.spend: {"token_in":5}`, "-->"),
			errLine: 2, errKind: KindType,
		},
		{
			name:    "wrong type: spend negative",
			body:    lf("<!-- roadmap:record v1", `implement.spend: {"tokens_in":-5}`, "-->"),
			errLine: 2, errKind: KindType,
		},
		{
			name:    "wrong type: spend null",
			body:    lf("<!-- roadmap:record v1", `implement.spend: null`, "-->"),
			errLine: 2, errKind: KindType,
		},
		{
			name:    "wrong type: uppercase sha",
			body:    lf("<!-- roadmap:record v1", "implement.sha: 3F2A9C1D", "-->"),
			errLine: 2, errKind: KindType,
		},
		{
			name:    "wrong type: short sha",
			body:    lf("<!-- roadmap:record v1", "implement.published_sha: 3f2a9c", "-->"),
			errLine: 2, errKind: KindType, errHas: "implement.published_sha",
		},
		{
			name:    "wrong type: conflict not a list",
			body:    lf("<!-- roadmap:record v1", `implement.conflict: "a.go"`, "-->"),
			errLine: 2, errKind: KindType,
		},
		{
			name:    "wrong type: trace not JSON",
			body:    lf("<!-- roadmap:record v1", "implement.trace: started", "-->"),
			errLine: 2, errKind: KindType,
		},
		{
			name:    "wrong type: trace over its bound",
			body:    lf("<!-- roadmap:record v1", `implement.trace: "`+strings.Repeat("e", MaxTrace)+`"`, "-->"),
			errLine: 2, errKind: KindType, errHas: "at most 8192",
		},
		{
			name:    "wrong type: check log over its bound",
			body:    lf("<!-- roadmap:record v1", `implement.check_log: "`+strings.Repeat("é", MaxCheckLog+1)+`"`, "-->"),
			errLine: 2, errKind: KindType, errHas: "at most 4000",
		},
		{
			name:    "wrong type: job entry",
			body:    lf("<!-- roadmap:record v1", `implement.jobs: [{"job":0,"run_id":5,"spend":{}}]`, "-->"),
			errLine: 2, errKind: KindType,
		},
		{
			name:    "wrong type: group seconds",
			body:    lf("<!-- roadmap:record v1", "implement.group_seconds: [412, -1]", "-->"),
			errLine: 2, errKind: KindType, errHas: "implement.group_seconds",
		},
		{
			name:    "wrong type: failure class",
			body:    lf("<!-- roadmap:record v1", "implement.failure: Checks Failed", "-->"),
			errLine: 2, errKind: KindType,
		},
		{
			name:    "wrong type: stage pr",
			body:    lf("<!-- roadmap:record v1", "stage.pr: -3", "-->"),
			errLine: 2, errKind: KindType, errHas: "stage.pr",
		},
		{
			name:    "wrong type: plain text YAML would misread",
			body:    lf("<!-- roadmap:record v1", "implement.stopped: step: checks", "-->"),
			errLine: 2, errKind: KindType,
		},
		{
			name:    "wrong type: empty known key",
			body:    lf("<!-- roadmap:record v1", "implement.stopped:", "-->"),
			errLine: 2, errKind: KindType,
		},
	}
}

func TestParse(t *testing.T) {
	for _, tc := range parseCases() {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Parse(tc.body)
			if tc.errKind != 0 {
				var pe *ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("Parse() error = %v, want a *ParseError", err)
				}
				if got, want := pe.Line, tc.errLine; got != want {
					t.Errorf("error line = %d, want %d (%v)", got, want, err)
				}
				if got, want := pe.Kind, tc.errKind; got != want {
					t.Errorf("error kind = %v, want %v (%v)", got, want, err)
				}
				if !strings.Contains(err.Error(), tc.errHas) {
					t.Errorf("error %q does not mention %q", err, tc.errHas)
				}
				if !strings.HasPrefix(err.Error(), "line ") {
					t.Errorf("error %q does not start with its line", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse() error = %v", err)
			}
			if got, want := r.Text(), tc.text; got != want {
				t.Errorf("Text() = %q, want %q", got, want)
			}
			if diff := cmp.Diff(tc.vals, values(r)); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.unknown, r.Unknown(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Unknown() (-want +got):\n%s", diff)
			}
			want := tc.render
			if want == "" {
				want = tc.body
			}
			got, err := Render(r)
			if err != nil {
				t.Fatalf("Render() error = %v", err)
			}
			if got != want {
				t.Errorf("Render() = %q, want %q", got, want)
			}
		})
	}
}

// TestParseValues checks what the typed getters read from a parsed body.
func TestParseValues(t *testing.T) {
	body := lf("x", "<!-- roadmap:record v1",
		"implement.answer: yes",
		"implement.attempt: 3",
		`implement.check_log: "--- FAIL: TestBackoff\n    want 1h, got 2h"`,
		"implement.checked_sha: 3f2a9c1d",
		`implement.conflict: ["a.go","b/c.go"]`,
		"implement.failure: checks_failed",
		"implement.group: 2",
		"implement.group_seconds: [412, 903]",
		`implement.jobs: [{"job":1,"run_id":901,"result":"yielded","group":1,"spend":{"tokens_in":10,"tokens_out":2,"usd":0.01,"model_calls":1}},{"job":2,"run_id":905,"spend":{"tokens_in":0,"tokens_out":0,"usd":0,"model_calls":0}}]`,
		"implement.published_sha: 00aa11bb22cc33dd44ee55ff66778899aabbccdd",
		`implement.question: "Keep the old API?"`,
		"implement.result: stopped",
		"implement.sha: abcdef0",
		`implement.spend: {"tokens_in":18230,"tokens_out":4410,"usd":0.21,"model_calls":14}`,
		"implement.stopped: checks",
		`implement.trace: {"events":[{"at":"group 1","ok":true}]}`,
		`implement.wip: '9e8d7c6b'`,
		"stage.plan: openspec/changes/add-backoff",
		"stage.pr: 41",
		"stage.state: planned",
		"-->")
	r, err := Parse(body)
	if err != nil {
		t.Fatalf("Parse() error = %v", err)
	}
	type all struct {
		Answer, CheckLog, Failure, Question, Stopped, StagePlan, StageState string
		Attempt, Group, StagePR                                             int
		CheckedSHA, PublishedSHA, SHA, WIP                                  SHA
		Conflict                                                            []string
		GroupSeconds                                                        []int
		Jobs                                                                []JobOutcome
		Result                                                              Result
		Spend                                                               Spend
		Trace                                                               string
	}
	var got all
	var ok bool
	present := func(name string) {
		if !ok {
			t.Errorf("%s() reports the key absent", name)
		}
	}
	got.Answer, ok = r.Answer()
	present("Answer")
	got.CheckLog, ok = r.CheckLog()
	present("CheckLog")
	got.Failure, ok = r.Failure()
	present("Failure")
	got.Question, ok = r.Question()
	present("Question")
	got.Stopped, ok = r.Stopped()
	present("Stopped")
	got.WIP, ok = r.WIP()
	present("WIP")
	got.StagePlan, ok = r.StagePlan()
	present("StagePlan")
	got.StageState, ok = r.StageState()
	present("StageState")
	got.Attempt, ok = r.Attempt()
	present("Attempt")
	got.Group, ok = r.Group()
	present("Group")
	got.StagePR, ok = r.StagePR()
	present("StagePR")
	got.CheckedSHA, ok = r.CheckedSHA()
	present("CheckedSHA")
	got.PublishedSHA, ok = r.PublishedSHA()
	present("PublishedSHA")
	got.SHA, ok = r.SHA()
	present("SHA")
	got.Conflict, ok = r.Conflict()
	present("Conflict")
	got.GroupSeconds, ok = r.GroupSeconds()
	present("GroupSeconds")
	got.Jobs, ok = r.Jobs()
	present("Jobs")
	got.Result, ok = r.Result()
	present("Result")
	got.Spend, ok = r.Spend()
	present("Spend")
	var trace []byte
	trace, ok = r.Trace()
	present("Trace")
	got.Trace = string(trace)

	want := all{
		Answer:       "yes",
		CheckLog:     "--- FAIL: TestBackoff\n    want 1h, got 2h",
		Failure:      "checks_failed",
		Question:     "Keep the old API?",
		Stopped:      "checks",
		WIP:          "9e8d7c6b",
		StagePlan:    "openspec/changes/add-backoff",
		StageState:   "planned",
		Attempt:      3,
		Group:        2,
		StagePR:      41,
		CheckedSHA:   "3f2a9c1d",
		PublishedSHA: "00aa11bb22cc33dd44ee55ff66778899aabbccdd",
		SHA:          "abcdef0",
		Conflict:     []string{"a.go", "b/c.go"},
		GroupSeconds: []int{412, 903},
		Jobs: []JobOutcome{
			{Job: 1, RunID: 901, Result: ResultYielded, Group: 1, Spend: Spend{TokensIn: 10, TokensOut: 2, USD: 0.01, ModelCalls: 1}},
			{Job: 2, RunID: 905},
		},
		Result: ResultStopped,
		Spend:  Spend{TokensIn: 18230, TokensOut: 4410, USD: 0.21, ModelCalls: 14},
		Trace:  `{"events":[{"at":"group 1","ok":true}]}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("getters (-want +got):\n%s", diff)
	}

	empty, err := Parse("no record here")
	if err != nil {
		t.Fatalf("Parse() error = %v", err)
	}
	if v, ok := empty.Group(); ok {
		t.Errorf("Group() on a body with no record = %d, true; want absent", v)
	}
	if v, ok := empty.Result(); ok {
		t.Errorf("Result() on a body with no record = %q, true; want absent", v)
	}
}
