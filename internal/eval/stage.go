package eval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/roadmap-dev/roadmap/internal/gates"
	"github.com/roadmap-dev/roadmap/internal/job"
	"github.com/roadmap-dev/roadmap/internal/job/kernel"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/stage"
)

// The two kinds of stage case.
const (
	// ModeJudge judges the plan the case holds (repo/openspec/changes/<id>)
	// with plan.Validate and the seven plan gates, as a stage round does.
	ModeJudge = "judge"
	// ModeStage runs a whole stage Job (planner, gates, verifier) on the
	// case's recorded exchanges (fixtures/) and scores its last round.
	ModeStage = "stage"
)

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
	// Stage is how the stage Job ended (ModeStage only).
	Stage string `json:"stage_result,omitempty"`
}

// Report is a golden set's result: what `roadmap eval … --json` prints.
type Report[C any] struct {
	Cases  []C     `json:"cases"`
	Score  float64 `json:"score"`
	Floor  float64 `json:"floor"`
	Passed bool    `json:"passed"`
}

// StageReport is the result of `roadmap eval stage`.
type StageReport = Report[StageCaseResult]

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
}

func (o *Options) progress(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(format, args...)
	}
}

// Stage scores the stage golden set in o.Dir. An error is a set or a case
// that cannot be read or run at all, never a low score.
func Stage(ctx context.Context, o Options) (*StageReport, error) {
	names, err := caseDirs(o.Dir)
	if err != nil {
		return nil, err
	}
	rep := &StageReport{Cases: []StageCaseResult{}, Floor: o.Floor}
	var scores []float64
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		res, err := stageCase(ctx, o, name)
		if err != nil {
			return nil, fmt.Errorf("case %s: %w", name, err)
		}
		o.progress("%-40s %s  score %.4f (F1 %.4f, OpenSpec-valid %v, want %v)", name, res.Mode, res.Score, res.F1, res.OpenSpecValid, res.WantOpenSpecValid)
		rep.Cases = append(rep.Cases, res)
		scores = append(scores, res.Score)
	}
	rep.Score = Mean(scores)
	rep.Passed = rep.Score >= o.Floor
	return rep, nil
}

func stageCase(ctx context.Context, o Options, name string) (StageCaseResult, error) {
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
	var settings StageSettings
	if src, err := readCaseFile(dir, "case.json", true); err != nil {
		return res, err
	} else if src != nil {
		if err := strictJSON(src, &settings); err != nil {
			return res, fmt.Errorf("case.json: %w", err)
		}
		if settings.Rounds < 0 || settings.Rounds > 10 {
			return res, errors.New("case.json: rounds must be from 0 to 10")
		}
	}
	repoDir := filepath.Join(dir, "repo")
	if st, err := os.Stat(repoDir); err != nil || !st.IsDir() {
		return res, errors.New("no repo/ directory: the repository snapshot")
	}
	var produced []plan.Finding
	if st, serr := os.Stat(filepath.Join(dir, "fixtures")); serr == nil && st.IsDir() {
		res.Mode = ModeStage
		produced, res.OpenSpecValid, res.Stage, err = runStage(ctx, o, dir, is, settings)
	} else {
		produced, res.OpenSpecValid, err = judge(ctx, repoDir, is)
	}
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
// plan.Validate, then the seven plan gates) on the one change in root.
// Premise commands are not run: there is no boundary to run them in here,
// so such a premise is an INFO, never scored.
func judge(ctx context.Context, root string, is Issue) ([]plan.Finding, bool, error) {
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
	found, err := gates.Check(ctx, gates.Input{Issue: &gates.Issue{Number: 1, Title: is.Title, Body: is.Body}, Root: root, ChangeID: ids[0]})
	if err != nil {
		return nil, false, err
	}
	return append(rep.Findings, found...), rep.OpenSpecValid(), nil
}

// runStage runs one stage Job for the case's issue on its recorded
// exchanges and returns the last round's findings and the plan's verdict.
func runStage(ctx context.Context, o Options, dir string, is Issue, settings StageSettings) ([]plan.Finding, bool, string, error) {
	tmp, err := os.MkdirTemp(o.TempDir, "roadmap-eval-stage-")
	if err != nil {
		return nil, false, "", err
	}
	defer os.RemoveAll(tmp)
	w, err := newWorld(tmp, filepath.Join(dir, "repo"), is)
	if err != nil {
		return nil, false, "", err
	}
	defer w.close()
	j, err := w.openJob(ctx, jobSetup{phase: kernel.Stage, fixtures: filepath.Join(dir, "fixtures")})
	if err != nil {
		return nil, false, "", err
	}
	defer j.kit.Close()
	res, err := j.kit.Stage(ctx, job.StageRun{Rounds: settings.Rounds})
	if err != nil {
		return nil, false, "", fmt.Errorf("stage: %w", err)
	}
	id := stage.ChangeID(w.issue, is.Title)
	if res.Plan != "" {
		id = filepath.Base(res.Plan)
	}
	valid := false
	rep, err := plan.Validate(j.ws, id)
	switch {
	case errors.Is(err, plan.ErrNoChange):
	case err != nil:
		return nil, false, "", err
	default:
		valid = rep.OpenSpecValid()
	}
	return res.Findings, valid, res.Result, nil
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
