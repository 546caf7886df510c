package dashboard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/record"
)

// Bounds on the Evals section and on the reports it is made from.
const (
	// MaxEvalReport is the largest eval report (`roadmap eval … --json`)
	// read: the implement set's seven cases print a few tens of KB.
	MaxEvalReport = 8 << 20
	// MaxEvalSuites is how many suites one post shows.
	MaxEvalSuites = 8
	// maxEvalCases is the most cases a report may hold.
	maxEvalCases = 10_000
	maxProblem   = 200
	maxRunURL    = 300
)

// Evals is the Evals section: the suites of the last eval run posted
// (`roadmap dashboard eval`), which a later post replaces whole.
type Evals struct {
	Suites []EvalSuite `json:"suites"`
	// Run is the workflow run that posted them (a URL on the server), or "".
	Run string `json:"run,omitempty"`
}

// EvalSuite is one suite's result as the dashboard shows it.
type EvalSuite struct {
	// Suite is gates, stage or implement.
	Suite  string  `json:"suite"`
	Score  float64 `json:"score"`
	Floor  float64 `json:"floor"`
	Passed bool    `json:"passed"`
	Cases  int     `json:"cases"`
	// TokensIn, TokensOut and USD are the cases' spend summed.
	TokensIn  int64   `json:"tokens_in"`
	TokensOut int64   `json:"tokens_out"`
	USD       float64 `json:"usd"`
	// Provider and Model the Jobs ran on ("" when none ran: the gates).
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// Started is when the suite's run started.
	Started time.Time `json:"started,omitzero"`
	// Problem says why the suite's report could not be read: the suite is
	// shown as not passed, with this.
	Problem string `json:"problem,omitempty"`
}

// modelName is a model or provider name as the dashboard shows one: no
// markup, no mention, no space (openai/gpt-4o-mini, qwen2.5-coder,
// meta/Llama-3.3-70B-Instruct).
var modelName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/+-]{0,99}$`)

// runURL is a workflow run's page.
var runURL = regexp.MustCompile(`^https://[A-Za-z0-9.-]+(:[0-9]{1,5})?/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/actions/runs/[0-9]{1,20}$`)

// ValidModelName reports whether s can be shown as a model or provider name.
func ValidModelName(s string) bool { return modelName.MatchString(s) }

// ValidRunURL reports whether s can be shown as a workflow run's link.
func ValidRunURL(s string) bool { return len(s) <= maxRunURL && runURL.MatchString(s) }

// ParseEvalReport reads one suite's report, as `roadmap eval gates|stage|
// implement --json` prints it (docs/eval.md). The file is the eval job's
// output, carried to the job that posts it: it is read defensively, with
// bounds, and a report that is not one is an error, never a score. name is
// the suite when the report does not say (an older roadmap's report): the
// file's base name, such as "gates" of gates.json.
func ParseEvalReport(name string, data []byte) (EvalSuite, error) {
	if len(data) > MaxEvalReport {
		return EvalSuite{}, fmt.Errorf("the report is %d bytes, over %d", len(data), MaxEvalReport)
	}
	var raw struct {
		Cases []struct {
			Spend *struct {
				TokensIn  int64   `json:"tokens_in"`
				TokensOut int64   `json:"tokens_out"`
				USD       float64 `json:"usd"`
			} `json:"spend"`
		} `json:"cases"`
		Score    *float64  `json:"score"`
		Floor    *float64  `json:"floor"`
		Passed   *bool     `json:"passed"`
		Suite    string    `json:"suite"`
		Model    string    `json:"model"`
		Provider string    `json:"provider"`
		Started  time.Time `json:"started"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		return EvalSuite{}, fmt.Errorf("not an eval report: %w", err)
	}
	if dec.More() {
		return EvalSuite{}, errors.New("not an eval report: more than one JSON value")
	}
	switch {
	case raw.Cases == nil || raw.Score == nil || raw.Floor == nil || raw.Passed == nil:
		return EvalSuite{}, errors.New("not an eval report: cases, score, floor or passed is missing")
	case !unit(*raw.Score) || !unit(*raw.Floor):
		return EvalSuite{}, errors.New("the score or the floor is not from 0 to 1")
	case len(raw.Cases) > maxEvalCases:
		return EvalSuite{}, fmt.Errorf("%d cases, over %d", len(raw.Cases), maxEvalCases)
	}
	s := EvalSuite{Suite: raw.Suite, Score: *raw.Score, Floor: *raw.Floor, Passed: *raw.Passed, Cases: len(raw.Cases),
		Provider: raw.Provider, Model: raw.Model}
	if s.Suite == "" {
		s.Suite = name
	}
	if !word(s.Suite) || s.Suite == "" {
		return EvalSuite{}, fmt.Errorf("the suite %q is not a suite's name", clip(s.Suite, 20))
	}
	if (s.Model != "" && !ValidModelName(s.Model)) || (s.Provider != "" && !ValidModelName(s.Provider)) {
		return EvalSuite{}, errors.New("the model or the provider is not a model's name")
	}
	if !raw.Started.IsZero() {
		if y := raw.Started.UTC().Year(); y < 2000 || y > 9999 {
			return EvalSuite{}, errors.New("the start time is not a date")
		}
		s.Started = raw.Started.UTC().Truncate(time.Second)
	}
	var sum record.Spend
	for _, c := range raw.Cases {
		if c.Spend == nil {
			continue
		}
		if c.Spend.TokensIn < 0 || c.Spend.TokensOut < 0 || !money(c.Spend.USD) {
			return EvalSuite{}, errors.New("a case's spend is negative or out of its bounds")
		}
		// Add saturates at the record's bounds.
		sum = sum.Add(record.Spend{TokensIn: c.Spend.TokensIn, TokensOut: c.Spend.TokensOut, USD: c.Spend.USD})
	}
	s.TokensIn, s.TokensOut, s.USD = sum.TokensIn, sum.TokensOut, round6(sum.USD)
	return s, nil
}

// SuiteName is the suite a report file names by its base name (gates of
// .../gates.json), made a word; "report" when nothing of it is one.
func SuiteName(path string) string {
	base := path[strings.LastIndexAny(path, `/\`)+1:]
	if i := strings.IndexByte(base, '.'); i > 0 {
		base = base[:i]
	}
	base = strings.ToLower(base)
	var b strings.Builder
	for _, r := range base {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		case r == '-':
			b.WriteRune('_')
		}
		if b.Len() >= 40 {
			break
		}
	}
	if b.Len() == 0 {
		return "report"
	}
	return b.String()
}

// ProblemText bounds the text of a problem the section shows.
func ProblemText(s string) string { return clip(strings.Join(strings.Fields(s), " "), maxProblem) }

func unit(v float64) bool { return v >= 0 && v <= 1 && !math.IsNaN(v) }

// check: the section as read back from the body (people edit it).
func (e *Evals) check() error {
	if e == nil {
		return nil
	}
	if len(e.Suites) > MaxEvalSuites {
		return fmt.Errorf("%d eval suites, over %d", len(e.Suites), MaxEvalSuites)
	}
	if e.Run != "" && !ValidRunURL(e.Run) {
		return errors.New("the eval run is not a run's link")
	}
	for _, s := range e.Suites {
		switch {
		case !word(s.Suite) || s.Suite == "":
			return fmt.Errorf("eval suite %q is not a suite's name", clip(s.Suite, 20))
		case !unit(s.Score) || !unit(s.Floor) || s.Cases < 0 || s.Cases > maxEvalCases:
			return fmt.Errorf("eval suite %s: a value is out of its bounds", s.Suite)
		case s.TokensIn < 0 || s.TokensIn > record.MaxTokens || s.TokensOut < 0 || s.TokensOut > record.MaxTokens || !money(s.USD):
			return fmt.Errorf("eval suite %s: its spend is out of its bounds", s.Suite)
		case (s.Model != "" && !ValidModelName(s.Model)) || (s.Provider != "" && !ValidModelName(s.Provider)):
			return fmt.Errorf("eval suite %s: the model is not a model's name", s.Suite)
		case len([]rune(s.Problem)) > maxProblem:
			return fmt.Errorf("eval suite %s: its problem is too long", s.Suite)
		}
	}
	return nil
}

// evalsSection is the Evals section of the body ("" when none was posted).
func evalsSection(e *Evals) string {
	if e == nil || len(e.Suites) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Evals\n\n")
	b.WriteString("The last scheduled eval run (docs/eval.md): each golden suite against its floor")
	if e.Run != "" {
		fmt.Fprintf(&b, " ([the run](%s))", e.Run)
	}
	b.WriteString(". The next run replaces this section.\n\n")
	b.WriteString("| suite | score | floor | passed | cases | tokens in / out | spend | model | run started |\n|---|---:|---:|---|---:|---:|---:|---|---|\n")
	for _, s := range e.Suites {
		if s.Problem != "" {
			fmt.Fprintf(&b, "| %s | — | — | ❌ no report: %s | — | — | — | — | — |\n", s.Suite, cell(s.Problem))
			continue
		}
		passed := "✅ yes"
		if !s.Passed {
			passed = "❌ below the floor"
		}
		model := "— (no model)"
		switch {
		case s.Model != "" && s.Provider != "":
			model = fmt.Sprintf("`%s` (%s)", s.Model, s.Provider)
		case s.Model != "":
			model = fmt.Sprintf("`%s`", s.Model)
		case s.Provider != "":
			model = s.Provider
		}
		started := "—"
		if !s.Started.IsZero() {
			started = stamp(s.Started)
		}
		fmt.Fprintf(&b, "| %s | %.4f | %.4f | %s | %d | %d / %d | %s | %s | %s |\n",
			s.Suite, s.Score, s.Floor, passed, s.Cases, s.TokensIn, s.TokensOut, usd(s.USD), model, started)
	}
	b.WriteString("\n")
	return b.String()
}
