package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Result is how a Job ended (DESIGN §2): the value of implement.result and of the
// implement action's `result` output. A Job that wrote none was killed.
type Result string

// The results.
const (
	// ResultReady: every group passed and the PR is ready for review.
	ResultReady Result = "ready"
	// ResultStopped: the Job ended on a failure; implement.failure holds its class.
	ResultStopped Result = "stopped"
	// ResultYielded: the Job gave its slot back on purpose; a continuation resumes.
	ResultYielded Result = "yielded"
	// ResultReturned: the item went back to stage or to a person.
	ResultReturned Result = "returned"
	// ResultStaged is a stage Job's clean ending (its line in stage.jobs
	// only): the plan is in its draft PR.
	ResultStaged Result = "staged"
)

// Valid reports whether r is one of the four results.
func (r Result) Valid() bool {
	switch r {
	case ResultReady, ResultStopped, ResultYielded, ResultReturned:
		return true
	}
	return false
}

// Stop reports whether the result is a stop (only "stopped" is).
func (r Result) Stop() bool { return r == ResultStopped }

// Spend is what model calls cost: the value of implement.spend and of each Job's
// entry in implement.jobs.
type Spend struct {
	TokensIn   int64   `json:"tokens_in"`
	TokensOut  int64   `json:"tokens_out"`
	USD        float64 `json:"usd"`
	ModelCalls int     `json:"model_calls"`
}

// Add returns the sum of s and o. USD is rounded to nano-dollars so that sums of
// many calls stay short in the record and equal sums compare equal. Each field
// saturates at its bound (MaxTokens, MaxUSD, MaxCount) and a negative, NaN or
// infinite part counts as nothing, so a sum is always a spend a write accepts:
// an item that somehow spends past a bound stays at the bound, over every
// budget, rather than making the record unwritable.
func (s Spend) Add(o Spend) Spend {
	return Spend{
		TokensIn:   addCapped(s.TokensIn, o.TokensIn, MaxTokens),
		TokensOut:  addCapped(s.TokensOut, o.TokensOut, MaxTokens),
		USD:        addUSD(s.USD, o.USD),
		ModelCalls: int(addCapped(int64(s.ModelCalls), int64(o.ModelCalls), MaxCount)),
	}
}

func addCapped(a, b, top int64) int64 {
	a, b = min(max(a, 0), top), min(max(b, 0), top)
	if a > top-b {
		return top
	}
	return a + b
}

func addUSD(a, b float64) float64 {
	clean := func(x float64) float64 {
		if math.IsNaN(x) || x < 0 {
			return 0
		}
		return min(x, MaxUSD)
	}
	return min(math.Round((clean(a)+clean(b))*1e9)/1e9, MaxUSD)
}

// Zero reports whether nothing was spent.
func (s Spend) Zero() bool { return s == Spend{} }

func (s Spend) check() error {
	switch {
	case s.TokensIn < 0 || s.TokensOut < 0 || s.ModelCalls < 0 || s.USD < 0 || math.IsNaN(s.USD) || math.IsInf(s.USD, 0):
		return errors.New("a spend holds no negative or infinite number")
	case s.TokensIn > MaxTokens || s.TokensOut > MaxTokens:
		return fmt.Errorf("a token count over %d (a sum that overflowed)", MaxTokens)
	case s.USD > MaxUSD:
		return fmt.Errorf("usd %g is over %g (a sum that overflowed)", s.USD, MaxUSD)
	case s.ModelCalls > MaxCount:
		return fmt.Errorf("model_calls over %d", MaxCount)
	}
	return nil
}

// SHA is a commit id: 7 to 64 lowercase hex digits (abbreviated, SHA-1 or SHA-256).
type SHA string

// ParseSHA checks s as a SHA.
func ParseSHA(s string) (SHA, error) {
	if len(s) < 7 || len(s) > 64 {
		return "", fmt.Errorf("a SHA has 7 to 64 hex digits, %q has %d characters", clip(s), len(s))
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", fmt.Errorf("a SHA is lowercase hex, %q is not", clip(s))
		}
	}
	return SHA(s), nil
}

// JobOutcome is one Job's line of implement.jobs; the PR comment's table has a row
// for each. Result is empty for a Job that was killed before it wrote one.
type JobOutcome struct {
	Job     int    `json:"job"`
	RunID   int64  `json:"run_id"`
	Result  Result `json:"result,omitempty"`
	Failure string `json:"failure,omitempty"`
	Group   int    `json:"group,omitempty"`
	Spend   Spend  `json:"spend"`
	// Requests counts the GitHub requests the Job made that count against
	// the rate limit (a 304 does not) before its last mark's write.
	Requests int `json:"requests,omitempty"`
	// Dispatching is when report set out to dispatch the next Job (Unix
	// seconds), written before the dispatch in the same write as report's
	// mark: a re-run of report that finds it looks for the run before it
	// dispatches again.
	Dispatching int64 `json:"dispatching,omitempty"`
	// At is when the line last changed (Unix seconds): the Job's last mark,
	// or report's settling of it. The dashboard and `roadmap metrics` place
	// the Job in time by it (spend per day, stops per window, stage to
	// ready); a line written before it existed has none and is placed by
	// nothing.
	At int64 `json:"at,omitempty"`
}

func (j JobOutcome) check() error {
	switch {
	case j.Job < 1 || j.Job > MaxCount:
		return fmt.Errorf("job %d: a Job number is from 1 to %d", j.Job, MaxCount)
	case j.RunID < 0 || j.RunID > MaxRunID:
		return fmt.Errorf("job %d: run_id %d is negative or over %d", j.Job, j.RunID, MaxRunID)
	case j.Result != "" && !j.Result.Valid() && j.Result != ResultStaged:
		return fmt.Errorf("job %d: %q is not a result", j.Job, clip(string(j.Result)))
	case j.Failure != "" && !isWord(j.Failure, MaxWord):
		return fmt.Errorf("job %d: %q is not a failure class", j.Job, clip(j.Failure))
	case j.Group < 0 || j.Group > MaxCount:
		return fmt.Errorf("job %d: group %d is negative or over %d", j.Job, j.Group, MaxCount)
	case j.Requests < 0 || j.Requests > MaxCount:
		return fmt.Errorf("job %d: requests %d is negative or over %d", j.Job, j.Requests, MaxCount)
	case j.Dispatching < 0 || j.Dispatching > MaxRunID:
		return fmt.Errorf("job %d: dispatching %d is negative or over %d", j.Job, j.Dispatching, MaxRunID)
	case j.At < 0 || j.At > MaxUnix:
		return fmt.Errorf("job %d: at %d is negative or past %d", j.Job, j.At, int64(MaxUnix))
	}
	if err := j.Spend.check(); err != nil {
		return fmt.Errorf("job %d: %w", j.Job, err)
	}
	return nil
}

// check tells whether raw is a value of the type sp describes. The message
// names what the key wants.
func check(sp spec, raw string) error {
	if err := decode(sp, raw, nil); err != nil {
		got := strconv.Quote(clip(raw))
		if raw != "" && (raw[0] == '{' || raw[0] == '[') {
			got = clip(raw)
		}
		return fmt.Errorf("want %s, got %s: %w", sp.what, got, err)
	}
	return nil
}

// decode reads raw as sp's type into out (*string, *int, *SHA, *Result, *Spend,
// *[]string, *[]JobOutcome; nil only checks).
func decode(sp spec, raw string, out any) error {
	switch sp.kind {
	case kindResult, kindWord, kindLine, kindText, kindSHA, kindPlan:
		if sp.bound > 0 {
			if n := utf8.RuneCountInString(raw); n > sp.bound {
				return fmt.Errorf("%d characters as written, at most %d", n, sp.bound)
			}
		}
		s, err := decodeScalar(raw)
		if err != nil {
			return err
		}
		if err := checkString(sp, s); err != nil {
			return err
		}
		switch p := out.(type) {
		case *string:
			*p = s
		case *SHA:
			*p = SHA(s)
		case *Result:
			*p = Result(s)
		}
	case kindCount:
		n, err := decodeCount(raw)
		if err != nil {
			return err
		}
		if p, ok := out.(*int); ok {
			*p = n
		}
	case kindSpend:
		var s Spend
		if err := decodeJSON(raw, '{', &s); err != nil {
			return err
		}
		if err := s.check(); err != nil {
			return err
		}
		if p, ok := out.(*Spend); ok {
			*p = s
		}
	case kindFiles:
		var files []string
		if err := decodeJSON(raw, '[', &files); err != nil {
			return err
		}
		if len(files) > MaxFiles {
			return fmt.Errorf("%d files, at most %d", len(files), MaxFiles)
		}
		if n := utf8.RuneCountInString(raw); n > sp.bound {
			return fmt.Errorf("%d characters as written, at most %d", n, sp.bound)
		}
		for _, f := range files {
			if f == "" {
				return errors.New("an empty file name")
			}
		}
		if p, ok := out.(*[]string); ok {
			*p = files
		}
	case kindJobs:
		var jobs []JobOutcome
		if err := decodeJSON(raw, '[', &jobs); err != nil {
			return err
		}
		if len(jobs) > sp.bound {
			return fmt.Errorf("%d Jobs, at most %d", len(jobs), sp.bound)
		}
		for _, j := range jobs {
			if err := j.check(); err != nil {
				return err
			}
		}
		if p, ok := out.(*[]JobOutcome); ok {
			*p = jobs
		}
	case kindSeconds:
		var secs []int
		if err := decodeJSON(raw, '[', &secs); err != nil {
			return err
		}
		if len(secs) > sp.bound {
			return fmt.Errorf("%d durations, at most %d", len(secs), sp.bound)
		}
		for _, s := range secs {
			if s < 0 || s > MaxCount {
				return fmt.Errorf("a duration %d out of 0 to %d", s, MaxCount)
			}
		}
		if p, ok := out.(*[]int); ok {
			*p = secs
		}
	case kindReview:
		return decodeObject[ReviewLedger](sp, raw, out)
	case kindComments:
		return decodeObject[CommentLedger](sp, raw, out)
	case kindStrength:
		if n := utf8.RuneCountInString(raw); n > sp.bound {
			return fmt.Errorf("%d characters as written, at most %d", n, sp.bound)
		}
		var gs []GroupStrength
		if err := decodeJSON(raw, '[', &gs); err != nil {
			return err
		}
		for _, g := range gs {
			if err := g.check(); err != nil {
				return err
			}
		}
		if p, ok := out.(*[]GroupStrength); ok {
			*p = gs
		}
	case kindTrace:
		if raw == "" || !strings.ContainsRune(`"{[`, rune(raw[0])) || !json.Valid([]byte(raw)) {
			return errors.New("not a JSON string, object or array")
		}
		if n := utf8.RuneCountInString(raw); n > sp.bound {
			return fmt.Errorf("%d characters, at most %d", n, sp.bound)
		}
		if p, ok := out.(*json.RawMessage); ok {
			*p = json.RawMessage(raw)
		}
	default:
		return fmt.Errorf("no decoder for kind %d", sp.kind)
	}
	return nil
}

func checkString(sp spec, s string) error {
	switch sp.kind {
	case kindResult:
		if !Result(s).Valid() {
			return errors.New("not a result")
		}
	case kindWord:
		if !isWord(s, sp.bound) {
			return errors.New("not a lowercase word")
		}
	case kindSHA:
		if _, err := ParseSHA(s); err != nil {
			return err
		}
	case kindLine, kindText:
		if s == "" {
			return errors.New("empty text")
		}
		if sp.kind == kindLine && strings.ContainsAny(s, "\r\n") {
			return errors.New("more than one line")
		}
	case kindPlan:
		return CheckPlanPath(s)
	}
	return nil
}

// plansDir is where every plan lives: an OpenSpec change is a directory
// under it.
const plansDir = "openspec/changes/"

// CheckPlanPath checks a plan path (stage.plan, implement's --plan): a clean
// relative slash path to a directory under openspec/changes/ — no "..", no
// ".", no empty part, no backslash, not absolute. That it is a directory
// inside the repository, symlinks resolved, is the reader's check on disk.
func CheckPlanPath(p string) error {
	rest, ok := strings.CutPrefix(p, plansDir)
	if !ok || rest == "" {
		return fmt.Errorf("%q is not a directory under %s", clip(p), plansDir)
	}
	if strings.ContainsAny(p, "\\\x00") || strings.ContainsAny(p, "\r\n") {
		return fmt.Errorf("%q holds a backslash, NUL or line break", clip(p))
	}
	for _, part := range strings.Split(rest, "/") {
		if part == "" || part == "." || part == ".." {
			return fmt.Errorf("%q is not a clean path under %s (no empty, . or .. parts)", clip(p), plansDir)
		}
	}
	return nil
}

// isWord: a lowercase letter, then lowercase letters, digits, '_' and '-'.
func isWord(s string, bound int) bool {
	if s == "" || len(s) > bound || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// decodeScalar reads a YAML scalar as text: a JSON (YAML double-quoted) string, a
// YAML single-quoted string, or a plain scalar, which is its own text whatever
// YAML would type it as (the key, not the scalar, says what a value is). A plain
// scalar that YAML would read as something else than a scalar is refused, so the
// block stays valid YAML.
func decodeScalar(raw string) (string, error) {
	if raw == "" {
		return "", errors.New("no value")
	}
	switch c := raw[0]; {
	case c == '"':
		if err := surrogateProblem(raw); err != nil {
			return "", err
		}
		var s string
		if err := json.Unmarshal([]byte(raw), &s); err != nil {
			return "", errors.New("not a valid double-quoted string")
		}
		return s, nil
	case c == '\'':
		return singleQuoted(raw)
	case c == '{' || c == '[':
		return "", errors.New("JSON where text belongs")
	case strings.IndexByte("#&*!|>%@`", c) >= 0,
		strings.HasPrefix(raw, "- "), strings.HasPrefix(raw, "? "), strings.HasPrefix(raw, ": "),
		strings.Contains(raw, ": "), strings.Contains(raw, " #"), strings.HasSuffix(raw, ":"):
		return "", errors.New("YAML would not read this as plain text; quote it as a JSON string")
	}
	return raw, nil
}

func singleQuoted(raw string) (string, error) {
	if len(raw) < 2 || raw[len(raw)-1] != '\'' {
		return "", errors.New("a single-quoted string with no closing quote")
	}
	inner := raw[1 : len(raw)-1]
	if strings.Contains(strings.ReplaceAll(inner, "''", ""), "'") {
		return "", errors.New("a lone quote inside a single-quoted string (write it twice)")
	}
	return strings.ReplaceAll(inner, "''", "'"), nil
}

func decodeCount(raw string) (int, error) {
	if raw == "" || len(raw) > 9 || raw[0] < '1' || raw[0] > '9' {
		return 0, errors.New("not an integer >= 1")
	}
	n, err := strconv.Atoi(raw)
	if err != nil {
		return 0, errors.New("not an integer >= 1")
	}
	return n, nil
}

// decodeJSON reads one JSON value that must start with first, refusing fields the
// type does not have (a misspelt field would otherwise be dropped silently).
func decodeJSON(raw string, first byte, v any) error {
	if raw == "" || raw[0] != first {
		if first == '{' {
			return errors.New("not a JSON object")
		}
		return errors.New("not a JSON array")
	}
	if err := surrogateProblem(raw); err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonProblem(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more after the JSON value")
	}
	return nil
}

// surrogateProblem refuses a JSON escape of half a UTF-16 surrogate pair
// (`\ud800` alone): encoding/json would read it as U+FFFD, a silent rewrite of
// what the block says.
func surrogateProblem(raw string) error {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if i+1 < len(raw) && raw[i+1] != 'u' {
			i++
			continue
		}
		r, ok := hex4(raw, i+2)
		switch {
		case !ok || !utf16.IsSurrogate(r):
			i++
			continue
		case r < 0xdc00 && i+7 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u':
			if lo, ok := hex4(raw, i+8); ok && lo >= 0xdc00 && lo <= 0xdfff {
				i += 11
				continue
			}
		}
		return fmt.Errorf("the escape %s at character %d is half a UTF-16 surrogate pair, which is no character; roadmap refuses it rather than read it as U+FFFD", raw[i:i+6], i+1)
	}
	return nil
}

// hex4 reads the four hex digits at s[i:i+4].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	n, err := strconv.ParseUint(s[i:i+4], 16, 16)
	return rune(n), err == nil
}

// encodeString writes text as a plain scalar when that is safe and plain, as a
// JSON string otherwise. JSON escapes '<' and '>', so no value can hold "-->".
func encodeString(s string) string {
	if plainSafe(s) {
		return s
	}
	return encodeJSON(s)
}

func plainSafe(s string) bool {
	if s == "" || s[len(s)-1] == ' ' {
		return false
	}
	if c := s[0]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '/') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("_./+@-=,() ", c) >= 0) {
			return false
		}
	}
	return true
}

// encodeJSON writes v as compact one-line JSON with HTML characters escaped.
// decodeObject decodes a ledger (a JSON object bounded as written, its
// own check) into out when out is a *T.
func decodeObject[T interface{ check() error }](sp spec, raw string, out any) error {
	if n := utf8.RuneCountInString(raw); n > sp.bound {
		return fmt.Errorf("%d characters as written, at most %d", n, sp.bound)
	}
	var v T
	if err := decodeJSON(raw, '{', &v); err != nil {
		return err
	}
	if err := v.check(); err != nil {
		return err
	}
	if p, ok := out.(*T); ok {
		*p = v
	}
	return nil
}

func encodeJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		// Only the types of this package reach here, and they always marshal.
		panic(fmt.Sprintf("record: marshal %T: %v", v, err))
	}
	return string(b)
}

// compactJSON makes raw one line with '<', '>' and '&' escaped.
func compactJSON(raw []byte) (string, error) {
	var c bytes.Buffer
	if err := json.Compact(&c, raw); err != nil {
		return "", err
	}
	var h bytes.Buffer
	json.HTMLEscape(&h, c.Bytes())
	return h.String(), nil
}

// jsonProblem says what encoding/json found in words that do not name Go types.
func jsonProblem(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		want := "a value of another type"
		switch te.Type.Kind() {
		case reflect.Int, reflect.Int64, reflect.Int32:
			want = "an integer"
		case reflect.Float64, reflect.Float32:
			want = "a number"
		case reflect.String:
			want = "a string"
		case reflect.Struct, reflect.Map:
			want = "an object"
		case reflect.Slice:
			want = "an array"
		}
		if te.Field != "" {
			return fmt.Errorf("field %s holds a JSON %s, want %s", te.Field, te.Value, want)
		}
		return fmt.Errorf("a JSON %s, want %s", te.Value, want)
	}
	return errors.New(strings.TrimPrefix(err.Error(), "json: "))
}
