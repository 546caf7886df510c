package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Options tune a run of the suite.
type Options struct {
	// Seeds is how many seeds run (FirstSeed…FirstSeed+Seeds-1); each plays
	// every scenario twice.
	Seeds int
	// FirstSeed is the first seed played (0 is 1). TestFaultsRun plays seed
	// 1, so .ci/run plays from seed 2 and no history is played twice over.
	FirstSeed int64
	// Only, when set, keeps the scenarios whose name contains it.
	Only string
	// Dir holds the histories' worlds ("" is a temporary directory).
	Dir string
	// Progress receives one line per history; nil discards it.
	Progress io.Writer
	// NoGitHubRetry turns the GitHub client's transient retries off in
	// every Job and report run: the histories whose recovery is a retry
	// must then fail (TestRecoveryNeedsEvidence).
	NoGitHubRetry bool
	// Cover plays, of each seed, one history of every fault kind and of
	// every recovery branch, chosen by Key, once each, and Extra more chosen
	// by Key, twice each (the per-change sample, docs/testing.md); false
	// plays every history twice.
	Cover bool
	// Key turns the cover's choice (CI passes the commit): the same key
	// plays the same histories.
	Key string
	// Extra is how many histories the cover adds to one of each kind and
	// branch.
	Extra int
}

// DefaultSeeds fits the suite in CI on a 2-core machine (docs/reliability.md).
const DefaultSeeds = 2

// Kind counts one fault kind.
type Kind struct {
	Injected  int `json:"injected"`
	Recovered int `json:"recovered"`
}

// Summary is what `roadmap faults run` prints; --json prints it as is.
type Summary struct {
	Seeds int `json:"seeds"`
	// FirstSeed is the first of the Seeds seeds played.
	FirstSeed int64 `json:"first_seed"`
	Histories int   `json:"histories"`
	Injected  int   `json:"injected"`
	Recovered int   `json:"recovered"`
	// ByKind counts faults by kind; Branches the histories that reached
	// each recovery branch.
	ByKind   map[string]Kind `json:"by_kind"`
	Branches map[string]int  `json:"branches"`
	// WorkRepeated counts passed groups run again; SpendLost the tokens the
	// record lacks; Duplicates duplicate pushes, comments, PRs, dispatches.
	WorkRepeated int      `json:"work_repeated"`
	SpendLost    int64    `json:"spend_lost"`
	Duplicates   int      `json:"duplicates"`
	Violations   []string `json:"violations"`
	// Known are defects the suite still finds, named in the scenarios and
	// not counted as violations; one that no longer shows is a violation.
	Known []string `json:"known"`
	// Cover: the run played the per-change sample (Options.Cover), whose
	// key is Key; Plays counts the plays of histories (twice or once each).
	Cover   bool    `json:"cover,omitempty"`
	Key     string  `json:"key,omitempty"`
	Plays   int     `json:"plays"`
	Seconds float64 `json:"seconds"`
}

// Run plays every scenario of every seed twice (or, with Cover, the
// per-change cover of each seed) and checks each history.
func Run(ctx context.Context, o Options) (*Summary, error) {
	start := time.Now()
	if o.Seeds <= 0 {
		o.Seeds = DefaultSeeds
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	dir := o.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "roadmap-faults-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	if o.FirstSeed <= 0 {
		o.FirstSeed = 1
	}
	s := &Summary{Seeds: o.Seeds, FirstSeed: o.FirstSeed, ByKind: map[string]Kind{}, Branches: map[string]int{}, Violations: []string{}, Known: []string{},
		Cover: o.Cover, Key: o.Key}
	n := 0
	for seed := o.FirstSeed; seed < o.FirstSeed+int64(o.Seeds); seed++ {
		n++
		base, err := play(ctx, filepath.Join(dir, fmt.Sprintf("s%d-base", seed)), scenario{Name: "crash-free", Expect: expectReady}, o.NoGitHubRetry)
		if err != nil {
			return nil, fmt.Errorf("seed %d: the crash-free run: %w", seed, err)
		}
		if bo := check(base.l, base.sc, base.st, base.st); len(bo.Violations) > 1 || len(bo.Violations) == 1 && !strings.Contains(bo.Violations[0], "never injected") {
			for _, v := range bo.Violations {
				s.Violations = append(s.Violations, fmt.Sprintf("seed %d, crash-free: %s", seed, v))
			}
		}
		effects := slices.Clone(base.l.c.log)
		writes := BaselineWrites(base.l.w.fake.Requests())
		// The stage histories' crash-free run: from an issue with no plan.
		sbase, err := play(ctx, filepath.Join(dir, fmt.Sprintf("s%d-stage-base", seed)), scenario{Name: "crash-free (stage)", Expect: expectReady, Stage: true}, o.NoGitHubRetry)
		if err != nil {
			return nil, fmt.Errorf("seed %d: the crash-free run from no plan: %w", seed, err)
		}
		if bo := check(sbase.l, sbase.sc, sbase.st, sbase.st); len(bo.Violations) > 1 || len(bo.Violations) == 1 && !strings.Contains(bo.Violations[0], "never injected") {
			for _, v := range bo.Violations {
				s.Violations = append(s.Violations, fmt.Sprintf("seed %d, crash-free from no plan: %s", seed, v))
			}
		}
		seffects := slices.Clone(sbase.l.c.log[:sbase.l.stageEffects])
		swrites := BaselineWrites(sbase.l.w.fake.Requests()[:sbase.l.stageRequests])
		all := scenarios(seed, effects, writes, recordWrites(base.l.w))
		all = append(all, readScenarios(seed, BaselineReads(base.l.w.fake.Requests()))...)
		// Stage's picks have their own source: the other histories' stay
		// as they were.
		all = append(all, stageScenarios(seed, seffects, swrites, recordWrites(sbase.l.w))...)
		var picks []coverPick
		for _, sc := range all {
			if o.Only != "" && !strings.Contains(sc.Name, o.Only) && sc.Kind != o.Only {
				continue
			}
			picks = append(picks, coverPick{sc: sc, twice: true})
		}
		if o.Cover {
			only := make([]scenario, len(picks))
			for i, p := range picks {
				only[i] = p.sc
			}
			picks = coverScenarios(only, o.Key, o.Extra)
		}
		for _, pk := range picks {
			sc := pk.sc
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			n++
			runs := make([]*played, 1, 2)
			if pk.twice {
				runs = runs[:2]
			}
			for i := range runs {
				p, err := play(ctx, filepath.Join(dir, fmt.Sprintf("h%d-%d", n, i)), sc, o.NoGitHubRetry)
				if err != nil {
					return nil, fmt.Errorf("seed %d, %s: %w", seed, sc.Name, err)
				}
				runs[i] = p
				s.Plays++
			}
			s.Histories++
			want := base.st
			if sc.Stage {
				want = sbase.st
			}
			out := check(runs[0].l, sc, want, runs[0].st)
			if len(runs) == 2 {
				if a, b := runs[0].trace(), runs[1].trace(); a != b {
					out.Violations = append(out.Violations, fmt.Sprintf("not deterministic: two plays left different traces:\n  %s\n  %s", a, b))
					out.Recovered = false
				}
			}
			k := s.ByKind[sc.Kind]
			if out.Injected {
				k.Injected++
				s.Injected++
			}
			if out.Recovered {
				k.Recovered++
				s.Recovered++
				if sc.Branch != "" {
					s.Branches[sc.Branch]++
				}
			}
			s.ByKind[sc.Kind] = k
			s.WorkRepeated += out.Repeated
			s.SpendLost += out.SpendLost
			s.Duplicates += out.Duplicates
			verdict := "ok"
			if sc.Known != "" {
				if len(out.Violations) == 0 {
					out.Violations = []string{"the known defect no longer shows (" + sc.Known + "): remove it from the scenarios"}
				} else {
					s.Known = append(s.Known, fmt.Sprintf("seed %d, %s: %s (%s)", seed, sc.Name, sc.Known, strings.Join(out.Violations, "; ")))
					out.Violations = nil
					verdict = "KNOWN"
				}
			}
			for _, v := range out.Violations {
				s.Violations = append(s.Violations, fmt.Sprintf("seed %d, %s: %s", seed, sc.Name, v))
				verdict = "VIOLATION"
			}
			fmt.Fprintf(o.Progress, "seed %d %-9s %s  [%s]\n", seed, verdict, sc.Name, strings.Join(runs[0].l.trace, "; "))
			for _, r := range runs {
				os.RemoveAll(r.l.w.dir)
			}
		}
		os.RemoveAll(base.l.w.dir)
		os.RemoveAll(sbase.l.w.dir)
	}
	s.Seconds = time.Since(start).Seconds()
	return s, nil
}

// played is one play of a history.
type played struct {
	sc scenario
	l  *life
	st State
}

// trace is the history normalised: what happened, in order, and the end.
func (p *played) trace() string {
	return strings.Join(p.l.trace, "; ") + " | " + strings.Join(p.l.c.log, " ") + " | " + p.st.String()
}

func play(ctx context.Context, dir string, sc scenario, noRetry bool) (*played, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	groups := sc.groups
	if groups == 0 {
		groups = Groups
	}
	convs, err := conversations(groups, sc.mutate)
	if err != nil {
		return nil, err
	}
	if sc.Stage {
		sconvs, err := stageConversations(groups, sc.mutateStage)
		if err != nil {
			return nil, err
		}
		convs = append(convs, sconvs...)
	}
	w, err := newWorld(dir, convs, sc.Stage, groups)
	if err != nil {
		return nil, err
	}
	defer w.close()
	l := &life{w: w, c: newCrasher(sc.arms...), ctx: ctx, noRetry: noRetry}
	l.c.on = l.onEffect
	if sc.setup != nil {
		if err := sc.setup(l); err != nil {
			return nil, err
		}
	}
	if err := l.play(); err != nil {
		if sc.Known == "" {
			return nil, err
		}
		// A known defect may end the history early (a Job or report that
		// fails): it is the defect's violation, listed as known.
		l.playErr = err
	}
	st, err := l.final()
	if err != nil {
		return nil, err
	}
	return &played{sc: sc, l: l, st: st}, nil
}

// Print writes the summary for a person.
func (s *Summary) Print(w io.Writer) {
	if s.Cover {
		fmt.Fprintf(w, "fault injection, the per-change cover (key %q): %d seed(s) from seed %d, %d histories (one of each fault kind and recovery branch, a few more), %d plays, %.0f s\n",
			s.Key, s.Seeds, max(s.FirstSeed, 1), s.Histories, s.Plays, s.Seconds)
	} else {
		fmt.Fprintf(w, "fault injection: %d seed(s) from seed %d, %d histories (each played twice), %.0f s\n", s.Seeds, max(s.FirstSeed, 1), s.Histories, s.Seconds)
	}
	fmt.Fprintf(w, "%-34s %8s %9s\n", "kind", "injected", "recovered")
	for _, k := range slices.Sorted(maps.Keys(s.ByKind)) {
		fmt.Fprintf(w, "%-34s %8d %9d\n", k, s.ByKind[k].Injected, s.ByKind[k].Recovered)
	}
	fmt.Fprintf(w, "%-34s %8d %9d\n", "total", s.Injected, s.Recovered)
	fmt.Fprintf(w, "recovery branches reached: ")
	for i, b := range slices.Sorted(maps.Keys(s.Branches)) {
		if i > 0 {
			fmt.Fprint(w, ", ")
		}
		fmt.Fprintf(w, "%s %d", b, s.Branches[b])
	}
	fmt.Fprintf(w, "\nwork repeated %d, spend lost %d tokens, duplicates %d, violations %d\n",
		s.WorkRepeated, s.SpendLost, s.Duplicates, len(s.Violations))
	for _, v := range s.Violations {
		fmt.Fprintf(w, "VIOLATION %s\n", v)
	}
	for _, k := range s.Known {
		fmt.Fprintf(w, "known defect (not counted): %s\n", k)
	}
}

// JSON is the summary as `--json` prints it.
func (s *Summary) JSON() ([]byte, error) { return json.MarshalIndent(s, "", "  ") }
