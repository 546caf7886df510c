package eval

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/job"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/stage"
)

// ModeStage is how `eval stage` runs a case: a whole stage Job (planner,
// gates, verifier) on the case's issue and repository.
const ModeStage = "stage"

// The weights of an `eval stage` case's score: a plan with no failing
// finding matters most; OpenSpec validity and the case's facts (when it
// gives facts.json) share the rest. Without facts the two others keep
// their proportion (0.75 and 0.25).
const (
	WeightClean = 0.6
	WeightValid = 0.2
	WeightFacts = 0.2
)

// PlanScore is an `eval stage` case's score from whether the plan had no
// failing finding, whether it is OpenSpec-valid, and the share of the
// case's facts it meets (facts < 0: the case gives none).
func PlanScore(clean, valid bool, facts float64) float64 {
	b := func(x bool) float64 {
		if x {
			return 1
		}
		return 0
	}
	if facts < 0 {
		return round((WeightClean*b(clean) + WeightValid*b(valid)) / (WeightClean + WeightValid))
	}
	return round(WeightClean*b(clean) + WeightValid*b(valid) + WeightFacts*facts)
}

// PlanCaseResult is one `eval stage` case: the plan the planner wrote and
// how it fared.
type PlanCaseResult struct {
	Name  string  `json:"name"`
	Mode  string  `json:"mode"`
	Score float64 `json:"score"`
	// Stage is how the stage Job ended; Plan the change it wrote ("" for
	// none).
	Stage string `json:"stage_result"`
	Plan  string `json:"plan"`
	// Failing are the last round's failing findings (ERROR, WARNING): the
	// gates', plan.Validate's and the verifier's. Clean is none and a plan.
	Failing []Finding `json:"failing"`
	Clean   bool      `json:"clean"`
	// OpenSpecValid is plan.Validate's OpenSpec verdict on the plan.
	OpenSpecValid bool `json:"openspec_valid"`
	// Facts is the plan against the case's facts.json (nil: none given).
	Facts *FactsResult `json:"facts,omitempty"`
	// Spend is what the Job's model calls cost (tokens, USD, calls).
	Spend   record.Spend `json:"spend"`
	Seconds float64      `json:"seconds"`
}

// FactsResult is a plan against a case's facts.
type FactsResult struct {
	// Score is the share of facts met (each file, each test, min_groups
	// and avoid count one).
	Score float64 `json:"score"`
	// Missed says each fact not met.
	Missed []string `json:"missed"`
}

// PlanReport is the result of `roadmap eval stage`.
type PlanReport = Report[PlanCaseResult]

// Stage scores the planner on the stage golden set in o.Dir: for each case
// a stage Job writes a plan for the case's issue on its repository (the
// snapshot without any change under openspec/changes), and the plan is
// scored by the last round's failing findings, OpenSpec validity and the
// case's facts. With the replay provider (o.Models empty) only the cases
// with recorded exchanges (fixtures/) run; with a model every case does.
func Stage(ctx context.Context, o Options) (*PlanReport, error) {
	names, err := caseDirs(o.Dir)
	if err != nil {
		return nil, err
	}
	rep := &PlanReport{Cases: []PlanCaseResult{}, Floor: o.Floor}
	var scores []float64
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if skip, err := realCaseSkip(filepath.Join(o.Dir, name), len(o.Models) > 0); err != nil {
			return nil, fmt.Errorf("case %s: %w", name, err)
		} else if skip != "" {
			o.progress("%-40s skipped: %s", name, skip)
			continue
		}
		if len(o.Models) == 0 && !hasFixtures(filepath.Join(o.Dir, name)) {
			continue
		}
		start := time.Now()
		res, err := planCase(ctx, o, name)
		if err != nil {
			return nil, fmt.Errorf("case %s: %w", name, err)
		}
		res.Seconds = seconds(time.Since(start))
		facts := ""
		if res.Facts != nil {
			facts = fmt.Sprintf(", facts %.2f", res.Facts.Score)
		}
		o.progress("%-40s score %.4f (%s, %d failing, OpenSpec-valid %v%s; %d model calls, %d tokens in, %d out, $%.4f, %.1fs)",
			name, res.Score, res.Stage, len(res.Failing), res.OpenSpecValid, facts, res.Spend.ModelCalls, res.Spend.TokensIn, res.Spend.TokensOut, res.Spend.USD, res.Seconds)
		rep.Cases = append(rep.Cases, res)
		scores = append(scores, res.Score)
	}
	if len(rep.Cases) == 0 {
		return nil, fmt.Errorf("the golden set %s holds no case with recorded exchanges (fixtures/) for the replay provider; name a model to run every case", o.Dir)
	}
	rep.Score = Mean(scores)
	rep.Passed = rep.Score >= o.Floor
	return rep, nil
}

func planCase(ctx context.Context, o Options, name string) (PlanCaseResult, error) {
	dir := filepath.Join(o.Dir, name)
	res := PlanCaseResult{Name: name, Mode: ModeStage, Failing: []Finding{}}
	src, err := readCaseFile(dir, "issue.md", false)
	if err != nil {
		return res, err
	}
	is, err := ParseIssue(src)
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
	var facts *StageFacts
	if src, err := readCaseFile(dir, "facts.json", true); err != nil {
		return res, err
	} else if src != nil {
		f, err := ParseStageFacts(src)
		if err != nil {
			return res, err
		}
		facts = &f
	}
	if st, err := os.Stat(filepath.Join(dir, "repo")); err != nil || !st.IsDir() {
		return res, errors.New("no repo/ directory: the repository snapshot")
	}
	if err := runStage(ctx, o, dir, is, settings, facts, &res); err != nil {
		return res, err
	}
	share := -1.0
	if res.Facts != nil {
		share = res.Facts.Score
	}
	res.Score = PlanScore(res.Clean, res.OpenSpecValid, share)
	return res, nil
}

// runStage runs one stage Job for the case's issue with o's model (the
// case's recorded exchanges by default) and fills res from the plan it
// wrote.
func runStage(ctx context.Context, o Options, dir string, is Issue, settings StageSettings, facts *StageFacts, res *PlanCaseResult) error {
	tmp, err := os.MkdirTemp(o.TempDir, "roadmap-eval-stage-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// The planner writes the plan: a change the snapshot holds (a gates
	// case's) is not given to it.
	w, err := newWorld(tmp, filepath.Join(dir, "repo"), is, plan.ChangesDir+"/")
	if err != nil {
		return err
	}
	defer w.close()
	j, err := w.openJob(ctx, jobSetup{phase: stage.Phase(), fixtures: filepath.Join(dir, "fixtures"), o: &o})
	if err != nil {
		return err
	}
	defer j.kit.Close()
	sr, err := j.kit.Stage(ctx, job.StageRun{Rounds: settings.Rounds})
	if err != nil {
		return fmt.Errorf("stage: %w", err)
	}
	res.Stage, res.Spend = sr.Result, sr.Spend
	for _, f := range sr.Findings {
		if f.Fails() {
			res.Failing = append(res.Failing, Finding{Rule: f.Rule, File: f.File, Line: f.Line})
		}
	}
	id := stage.ChangeID(w.issue, is.Title)
	if sr.Plan != "" {
		id = filepath.Base(sr.Plan)
	}
	rep, err := plan.Validate(j.ws, id)
	switch {
	case errors.Is(err, plan.ErrNoChange):
		// No plan: nothing is clean, valid or met.
		if facts != nil {
			res.Facts = &FactsResult{Missed: []string{"no plan was written"}}
		}
		return nil
	case err != nil:
		return err
	}
	res.Plan = id
	res.OpenSpecValid = rep.OpenSpecValid()
	res.Clean = len(res.Failing) == 0
	if facts != nil {
		if res.Facts, err = checkFacts(j.ws, id, *facts); err != nil {
			return err
		}
	}
	return nil
}

// checkFacts holds the plan openspec/changes/<id> in ws against facts: the
// plan's text is its files' text (proposal, design, tasks, delta specs).
func checkFacts(ws, id string, facts StageFacts) (*FactsResult, error) {
	var text strings.Builder
	root := filepath.Join(ws, plan.ChangeDir("", id))
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := readBounded(p, maxCaseFile)
		if err != nil {
			return err
		}
		text.Write(data)
		text.WriteByte('\n')
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the plan: %w", err)
	}
	all := text.String()
	r := &FactsResult{Missed: []string{}}
	total, met := 0, 0
	check := func(ok bool, missed string) {
		total++
		if ok {
			met++
		} else {
			r.Missed = append(r.Missed, missed)
		}
	}
	for _, f := range facts.Files {
		check(strings.Contains(all, f), "names no "+f)
	}
	for _, t := range facts.Tests {
		check(strings.Contains(all, t), "names no test "+t)
	}
	if facts.MinGroups > 0 {
		groups := 0
		if c, err := plan.LoadChangeIn(ws, plan.ChangeDir("", id)); err == nil && c.Tasks != nil {
			groups = len(c.Tasks.Groups)
		}
		check(groups >= facts.MinGroups, fmt.Sprintf("has %d task group(s), fewer than %d", groups, facts.MinGroups))
	}
	if facts.Avoid != "" {
		re := regexp.MustCompile(facts.Avoid) // ParseStageFacts compiled it
		check(!re.MatchString(all), fmt.Sprintf("has the flaw to avoid (%s matches %q)", facts.Avoid, re.FindString(all)))
	}
	r.Score = round(float64(met) / float64(total))
	return r, nil
}
