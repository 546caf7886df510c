package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/eval/realcase"
	"github.com/roadmap-dev/roadmap/internal/policy"
)

// Bounds on what a golden set's files may be: the set is a directory anyone
// can pass, so nothing in it is trusted to be small.
const (
	maxCaseFile  = 2 << 20 // one file of a case, the snapshot's included
	maxIssueBody = 65536   // GitHub's limit on an issue body, in characters
	maxTitle     = 256     // GitHub's limit on an issue title
	maxCases     = 500     // cases in one set
	maxFindings  = 200     // expected findings of one case
	maxTests     = 1000    // expected tests of one implement case
)

// Issue is a case's issue: issue.md's first line is the title (a leading
// "# " is dropped), the rest the body.
type Issue struct {
	Title string
	Body  string
}

// ParseIssue reads issue.md's text.
func ParseIssue(src []byte) (Issue, error) {
	if !utf8.Valid(src) {
		return Issue{}, errors.New("issue.md is not UTF-8")
	}
	s := strings.ReplaceAll(string(src), "\r\n", "\n")
	title, body, _ := strings.Cut(s, "\n")
	title = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(title), "#"))
	switch {
	case title == "":
		return Issue{}, errors.New("issue.md: the first line, the title, is empty")
	case utf8.RuneCountInString(title) > maxTitle:
		return Issue{}, fmt.Errorf("issue.md: the title is longer than %d characters", maxTitle)
	case utf8.RuneCountInString(body) > maxIssueBody:
		return Issue{}, fmt.Errorf("issue.md: the body is longer than %d characters, GitHub's limit", maxIssueBody)
	}
	return Issue{Title: title, Body: strings.TrimLeft(body, "\n")}, nil
}

// StageExpected is a stage case's expected.json.
type StageExpected struct {
	// OpenSpecValid is plan.Validate's OpenSpec verdict the plan should get
	// (`openspec validate --strict`).
	OpenSpecValid bool `json:"openspec_valid"`
	// Findings are the failing findings (ERROR, WARNING) the plan should
	// get; INFO findings are never scored.
	Findings []Finding `json:"findings"`
}

// ParseStageExpected reads expected.json of a stage case.
func ParseStageExpected(src []byte) (StageExpected, error) {
	var e struct {
		OpenSpecValid *bool     `json:"openspec_valid"`
		Findings      []Finding `json:"findings"`
	}
	if err := strictJSON(src, &e); err != nil {
		return StageExpected{}, fmt.Errorf("expected.json: %w", err)
	}
	if e.OpenSpecValid == nil {
		return StageExpected{}, errors.New("expected.json: openspec_valid is required (true or false)")
	}
	if e.Findings == nil {
		return StageExpected{}, errors.New("expected.json: findings is required (a list, [] for a sound plan)")
	}
	if len(e.Findings) > maxFindings {
		return StageExpected{}, fmt.Errorf("expected.json: more than %d findings", maxFindings)
	}
	for i, f := range e.Findings {
		switch {
		case f.Rule == "" || len(f.Rule) > 200 || strings.ContainsAny(f.Rule, " \t\n"):
			return StageExpected{}, fmt.Errorf("expected.json: findings[%d].rule %q is not a rule name", i, f.Rule)
		case !cleanRel(f.File):
			return StageExpected{}, fmt.Errorf("expected.json: findings[%d].file %q is not a slash path inside the repository", i, f.File)
		case f.Line < 0:
			return StageExpected{}, fmt.Errorf("expected.json: findings[%d].line %d is negative (0 or absent: any line)", i, f.Line)
		}
	}
	return StageExpected{OpenSpecValid: *e.OpenSpecValid, Findings: e.Findings}, nil
}

// StageSettings is a stage case's optional case.json.
type StageSettings struct {
	// Rounds bounds the stage Job's plan rounds (a case with fixtures/);
	// 0 is stage's default.
	Rounds int `json:"rounds"`
}

// ImplementExpected is an implement case's expected.json: the tests, as
// `roadmap ci fail-to-pass` names them (import path, a dot, the test).
type ImplementExpected struct {
	F2P []string `json:"f2p"`
	P2P []string `json:"p2p"`
	// Strength, when set, is the eval's own judgement of the tests at the
	// end: mutants on every line the item changed, main to the head, must
	// be killed at Strength.Floor or more, or the case is NO. Tests that
	// pass and check nothing satisfy F2P; only this fails them.
	Strength *StrengthExpected `json:"strength,omitempty"`
}

// StrengthExpected is the least test strength the item's head must have.
type StrengthExpected struct {
	// Floor is the least share of measured mutants the tests kill (above 0,
	// at most 1).
	Floor float64 `json:"floor"`
}

// ParseImplementExpected reads expected.json of an implement case.
func ParseImplementExpected(src []byte) (ImplementExpected, error) {
	var e ImplementExpected
	if err := strictJSON(src, &e); err != nil {
		return e, fmt.Errorf("expected.json: %w", err)
	}
	if len(e.F2P) == 0 {
		return e, errors.New("expected.json: f2p names no test: an item that fixes nothing cannot be judged")
	}
	if len(e.F2P)+len(e.P2P) > maxTests {
		return e, fmt.Errorf("expected.json: more than %d tests", maxTests)
	}
	for _, t := range append(append([]string{}, e.F2P...), e.P2P...) {
		if t == "" || len(t) > 1024 || strings.ContainsAny(t, " \t\n") {
			return e, fmt.Errorf("expected.json: %q is not a test name", t)
		}
	}
	if e.Strength != nil && !(e.Strength.Floor > 0 && e.Strength.Floor <= 1) {
		return e, errors.New("expected.json: strength.floor must be above 0 and at most 1")
	}
	return e, nil
}

// ImplementSettings is an implement case's optional case.json.
type ImplementSettings struct {
	// Kill, when set, kills the first Job at a model request (the request
	// whose first user message holds Match, at Turn assistant messages) and
	// runs a second Job to continue the item.
	Kill *KillPoint `json:"kill"`
	// CheckLog, when set, is an earlier Job's failing check log, in the
	// record (implement.check_log, with result stopped, failure
	// checks_failed) before the first Job starts.
	CheckLog string `json:"check_log"`
	// RepairRounds bounds a group's repair rounds (0: 2).
	RepairRounds int `json:"repair_rounds"`
	// Test is the test command F2P and P2P are judged with (default
	// `go test -json ./...`).
	Test []string `json:"test"`
	// TestStrength turns implement.test_strength on, with
	// TestStrengthFloor as implement.test_strength_floor (0: the
	// configuration's default).
	TestStrength      bool    `json:"test_strength"`
	TestStrengthFloor float64 `json:"test_strength_floor"`
	// Review turns the review before ready on (review.enabled), with
	// ReviewRounds as review.rounds; the reviewer replays the case's
	// fixtures as the agent does.
	Review       bool `json:"review"`
	ReviewRounds int  `json:"review_rounds"`
	// Policy is the configuration's policy: key (docs/policy.md), as JSON:
	// rows over the default shell policy for the Jobs' commands and the
	// judge's alike. A Python case allows `python3 -m pytest`, as the
	// configuration init writes for a Python repository does; without it
	// the default table refuses python3.
	Policy json.RawMessage `json:"policy"`
}

// policy is the shell policy the case's commands run under: the default
// table with the case's rows (Policy) over it.
func (s ImplementSettings) policy() (*policy.Policy, error) {
	n, err := s.policyNode()
	if err != nil {
		return nil, err
	}
	return policy.ParseNode(n)
}

// policyNode is Policy as the configuration's policy: node (nil without
// one). JSON is YAML, so it decodes as the configuration file would.
func (s ImplementSettings) policyNode() (*yaml.Node, error) {
	if len(s.Policy) == 0 {
		return nil, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(s.Policy, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("not an object, as the configuration's policy: key is")
	}
	return doc.Content[0], nil
}

// KillPoint is where the first Job dies.
type KillPoint struct {
	Match string `json:"match"`
	Turn  int    `json:"turn"`
}

// ParseImplementSettings reads case.json of an implement case.
func ParseImplementSettings(src []byte) (ImplementSettings, error) {
	var s ImplementSettings
	if err := strictJSON(src, &s); err != nil {
		return s, fmt.Errorf("case.json: %w", err)
	}
	switch {
	case s.Kill != nil && (s.Kill.Match == "" || s.Kill.Turn < 0):
		return s, errors.New("case.json: kill needs a match and a turn of 0 or more")
	case s.RepairRounds < 0 || s.RepairRounds > 10:
		return s, errors.New("case.json: repair_rounds must be from 0 to 10")
	case len(s.CheckLog) > 64<<10:
		return s, errors.New("case.json: check_log is longer than 64 KiB")
	case !(s.TestStrengthFloor >= 0 && s.TestStrengthFloor <= 1):
		return s, errors.New("case.json: test_strength_floor must be from 0 to 1")
	case s.ReviewRounds < 0 || s.ReviewRounds > config.MaxReviewRounds:
		return s, fmt.Errorf("case.json: review_rounds must be from 0 to %d", config.MaxReviewRounds)
	}
	if _, err := s.policy(); err != nil {
		return s, fmt.Errorf("case.json: policy: %w", err)
	}
	return s, nil
}

// strictJSON decodes one JSON value into v, refusing unknown fields and
// trailing data.
func strictJSON(src []byte, v any) error {
	if len(src) > maxCaseFile {
		return fmt.Errorf("larger than %d bytes", maxCaseFile)
	}
	return realcase.StrictJSON(src, v)
}

// cleanRel reports whether p is a clean slash path inside a repository.
func cleanRel(p string) bool {
	return p != "" && len(p) <= 1024 && !strings.HasPrefix(p, "/") && !strings.Contains(p, `\`) &&
		path.Clean(p) == p && p != "." && p != ".." && !strings.HasPrefix(p, "../")
}

// readBounded reads a file of at most limit bytes; a larger one is an error.
func readBounded(name string, limit int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, limit)
	}
	return data, nil
}

// caseDirs lists the cases of a set: its subdirectories, sorted by name.
func caseDirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read the golden set: %w", err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the golden set %s holds no case (a directory per case)", dir)
	}
	if len(out) > maxCases {
		return nil, fmt.Errorf("the golden set %s holds more than %d cases", dir, maxCases)
	}
	sort.Strings(out)
	return out, nil
}

// readCaseFile reads name in a case directory; a missing optional file is
// (nil, nil).
func readCaseFile(dir, name string, optional bool) ([]byte, error) {
	data, err := readBounded(filepath.Join(dir, name), maxCaseFile)
	if optional && errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// StageFacts is a stage case's optional facts.json: what a plan for the
// case's issue should say, whoever writes it. `roadmap eval stage` checks
// the plan the planner wrote against it.
type StageFacts struct {
	// Files are repository paths the plan should name.
	Files []string `json:"files"`
	// MinGroups is the least number of task groups tasks.md should have.
	MinGroups int `json:"min_groups"`
	// Tests are test names the plan should name.
	Tests []string `json:"tests"`
	// Avoid is a flaw the plan must not have: a regular expression (Go's
	// syntax) that must not match the plan's text.
	Avoid string `json:"avoid"`
}

// ParseStageFacts reads facts.json of a stage case.
func ParseStageFacts(src []byte) (StageFacts, error) {
	var f StageFacts
	if err := strictJSON(src, &f); err != nil {
		return f, fmt.Errorf("facts.json: %w", err)
	}
	if len(f.Files)+len(f.Tests) > maxFindings {
		return f, fmt.Errorf("facts.json: more than %d files and tests", maxFindings)
	}
	for _, p := range f.Files {
		if !cleanRel(p) {
			return f, fmt.Errorf("facts.json: files: %q is not a slash path inside the repository", p)
		}
	}
	for _, t := range f.Tests {
		if t == "" || len(t) > 200 || strings.ContainsAny(t, " \t\n") {
			return f, fmt.Errorf("facts.json: tests: %q is not a test name", t)
		}
	}
	if f.MinGroups < 0 || f.MinGroups > 100 {
		return f, errors.New("facts.json: min_groups must be from 0 to 100")
	}
	if len(f.Avoid) > 1000 {
		return f, errors.New("facts.json: avoid is longer than 1000 characters")
	}
	if _, err := regexp.Compile(f.Avoid); err != nil {
		return f, fmt.Errorf("facts.json: avoid: %w", err)
	}
	if len(f.Files)+len(f.Tests) == 0 && f.MinGroups == 0 && f.Avoid == "" {
		return f, errors.New("facts.json: names no fact (files, min_groups, tests, avoid)")
	}
	return f, nil
}
