package eval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/gates"
	"github.com/roadmap-dev/roadmap/internal/plan"
)

// ModeJudge is how `eval gates` judges a case: the plan the case holds
// (repo/openspec/changes/<id>) by plan.Validate and the plan gates, as a
// stage round does.
const ModeJudge = "judge"

// StageCaseResult is one case's score and why.
type StageCaseResult struct {
	Name  string  `json:"name"`
	Mode  string  `json:"mode"`
	Score float64 `json:"score"`
	F1    float64 `json:"f1"`
	// Precision and Recall of the produced findings against the expected.
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	// OpenSpecValid is plan.Validate's verdict; WantOpenSpecValid the case's.
	OpenSpecValid     bool      `json:"openspec_valid"`
	WantOpenSpecValid bool      `json:"want_openspec_valid"`
	Expected          []Finding `json:"expected"`
	Produced          []Finding `json:"produced"`
	// Missed are expected findings nothing produced; Unexpected are produced
	// findings no expectation names.
	Missed     []Finding `json:"missed"`
	Unexpected []Finding `json:"unexpected"`
	// Seconds is the case's wall time.
	Seconds float64 `json:"seconds"`
}

// Report is a golden set's result: what `roadmap eval … --json` prints.
type Report[C any] struct {
	Cases  []C     `json:"cases"`
	Score  float64 `json:"score"`
	Floor  float64 `json:"floor"`
	Passed bool    `json:"passed"`
	// Suite (gates, stage, implement), the model the Jobs ran on (empty:
	// none ran, or the replay), its provider, and when the run started
	// (UTC): what `roadmap dashboard eval` shows of a report. The command
	// line sets them (Stamp).
	Suite    string    `json:"suite,omitempty"`
	Model    string    `json:"model,omitempty"`
	Provider string    `json:"provider,omitempty"`
	Started  time.Time `json:"started,omitzero"`
}

// Stamp names the report's suite, model and provider, and when it started.
func (r *Report[C]) Stamp(suite, provider, model string, started time.Time) {
	r.Suite, r.Provider, r.Model, r.Started = suite, provider, model, started.UTC().Truncate(time.Second)
}

// GatesReport is the result of `roadmap eval gates`.
type GatesReport = Report[StageCaseResult]

// Options say where a set is and what it must reach.
type Options struct {
	// Dir is the golden set: a directory per case.
	Dir string
	// Floor is the overall score the set must reach (0 to 1).
	Floor float64
	// TempDir holds each case's work ("" is the system's).
	TempDir string
	// Progress receives a line per case; nil discards them.
	Progress func(format string, args ...any)
	// Models is the model ladder every Job of a case uses (stage's planner
	// and verifier, implement's agent). Empty is the replay provider over
	// each case's recorded exchanges (fixtures/): CI's default.
	Models []config.Model
	// Prices are USD per million tokens by model name, for Models.
	Prices map[string]config.Price
	// Getenv reads the API key a model's provider names (nil: no key).
	Getenv func(string) string
	// Isolation is the OS boundary the Jobs and the judge run model-written
	// code in. "" is `none`, right for the replay alone: its recorded
	// exchanges are the case's own. With Models, the model and what it
	// writes are an attacker's, and this process holds their key, so the
	// command takes the configuration's `isolation` (default `auto`;
	// docs/isolation.md): where no boundary can be set up, no model-written
	// command runs and the case says why.
	Isolation config.Isolation
	// SkipGates are plan gates (gates.Names) `eval gates` leaves out: a
	// way to see that each gate matters to the score.
	SkipGates []string
}

func (o *Options) progress(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(format, args...)
	}
}

// Gates scores the stage golden set in o.Dir by the plan gates: every case
// that holds a plan (no fixtures/) is judged by plan.Validate and the gates
// (less o.SkipGates). A case with fixtures/ is a planner run: `eval stage`
// scores it, this skips it. An error is a set or a case that cannot be read
// or run at all, never a low score.
func Gates(ctx context.Context, o Options) (*GatesReport, error) {
	names, err := caseDirs(o.Dir)
	if err != nil {
		return nil, err
	}
	run, err := gateNames(o.SkipGates)
	if err != nil {
		return nil, err
	}
	rep := &GatesReport{Cases: []StageCaseResult{}, Floor: o.Floor}
	var scores []float64
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if hasFixtures(filepath.Join(o.Dir, name)) {
			o.progress("%-40s skipped: a planner run (fixtures/), scored by eval stage", name)
			continue
		}
		if _, err := os.Lstat(filepath.Join(o.Dir, name, "source.json")); err == nil {
			o.progress("%-40s skipped: a real-world case holds no plan to judge; eval stage runs the planner on it", name)
			continue
		}
		start := time.Now()
		res, err := gatesCase(ctx, o, name, run)
		if err != nil {
			return nil, fmt.Errorf("case %s: %w", name, err)
		}
		res.Seconds = seconds(time.Since(start))
		o.progress("%-40s score %.4f (F1 %.4f, OpenSpec-valid %v, want %v)", name, res.Score, res.F1, res.OpenSpecValid, res.WantOpenSpecValid)
		rep.Cases = append(rep.Cases, res)
		scores = append(scores, res.Score)
	}
	if len(rep.Cases) == 0 {
		return nil, fmt.Errorf("the golden set %s holds no case with a plan to judge (every case has fixtures/ or is a real-world case)", o.Dir)
	}
	rep.Score = Mean(scores)
	rep.Passed = rep.Score >= o.Floor
	return rep, nil
}

// gateNames is every plan gate but those in skip, each of which must name one.
func gateNames(skip []string) ([]string, error) {
	all := gates.Names()
	for _, n := range skip {
		if !slices.Contains(all, n) {
			return nil, fmt.Errorf("no gate named %q (have %s)", n, strings.Join(all, ", "))
		}
	}
	var run []string
	for _, n := range all {
		if !slices.Contains(skip, n) {
			run = append(run, n)
		}
	}
	return run, nil
}

// hasFixtures reports whether a case holds recorded exchanges: a planner run.
func hasFixtures(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, "fixtures"))
	return err == nil && st.IsDir()
}

// seconds is d in seconds, to the hundredth.
func seconds(d time.Duration) float64 { return math.Round(d.Seconds()*100) / 100 }

func gatesCase(ctx context.Context, o Options, name string, run []string) (StageCaseResult, error) {
	dir := filepath.Join(o.Dir, name)
	res := StageCaseResult{Name: name, Mode: ModeJudge}
	src, err := readCaseFile(dir, "issue.md", false)
	if err != nil {
		return res, err
	}
	is, err := ParseIssue(src)
	if err != nil {
		return res, err
	}
	if src, err = readCaseFile(dir, "expected.json", false); err != nil {
		return res, err
	}
	want, err := ParseStageExpected(src)
	if err != nil {
		return res, err
	}
	repoDir := filepath.Join(dir, "repo")
	if st, err := os.Stat(repoDir); err != nil || !st.IsDir() {
		return res, errors.New("no repo/ directory: the repository snapshot")
	}
	produced, valid, err := judge(ctx, repoDir, is, run)
	res.OpenSpecValid = valid
	if err != nil {
		return res, err
	}
	res.Expected, res.WantOpenSpecValid = want.Findings, want.OpenSpecValid
	res.Produced = []Finding{}
	for _, f := range produced {
		if f.Fails() {
			res.Produced = append(res.Produced, Finding{Rule: f.Rule, File: f.File, Line: f.Line})
		}
	}
	f1, p, r := F1(res.Expected, res.Produced)
	res.Score = StageScore(f1, res.OpenSpecValid == res.WantOpenSpecValid)
	res.F1, res.Precision, res.Recall = round(f1), round(p), round(r)
	res.Missed, res.Unexpected = unmatched(res.Expected, res.Produced)
	return res, nil
}

// judge runs what a stage round runs on a plan (stage's default gates:
// plan.Validate, then the plan gates named in run) on the one change in root.
// Premise commands are not run: there is no boundary to run them in here,
// so such a premise is an INFO, never scored.
func judge(ctx context.Context, root string, is Issue, run []string) ([]plan.Finding, bool, error) {
	ids, err := plan.ListChanges(root)
	if err != nil {
		return nil, false, err
	}
	if len(ids) != 1 {
		return nil, false, fmt.Errorf("repo/%s holds %d changes; a case judges exactly one", plan.ChangesDir, len(ids))
	}
	rep, err := plan.Validate(root, ids[0])
	if err != nil {
		return nil, false, err
	}
	if len(run) == 0 {
		// Every gate left out (Check runs them all when named none).
		return rep.Findings, rep.OpenSpecValid(), nil
	}
	found, err := gates.Check(ctx, gates.Input{Issue: &gates.Issue{Number: 1, Title: is.Title, Body: is.Body}, Root: root, ChangeID: ids[0]}, run...)
	if err != nil {
		return nil, false, err
	}
	return append(rep.Findings, found...), rep.OpenSpecValid(), nil
}

// unmatched returns the expected findings no produced one met and the
// produced ones no expectation named, pairing as Match does.
func unmatched(expected, produced []Finding) (missed, unexpected []Finding) {
	usedP := make([]bool, len(produced))
	usedE := make([]bool, len(expected))
	for _, pass := range []bool{true, false} {
		for ei, e := range expected {
			if (e.Line != 0) != pass {
				continue
			}
			for i, p := range produced {
				if !usedP[i] && e.matches(p) {
					usedP[i], usedE[ei] = true, true
					break
				}
			}
		}
	}
	missed, unexpected = []Finding{}, []Finding{}
	for i, e := range expected {
		if !usedE[i] {
			missed = append(missed, e)
		}
	}
	for i, p := range produced {
		if !usedP[i] {
			unexpected = append(unexpected, p)
		}
	}
	return missed, unexpected
}
