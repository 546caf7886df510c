package job

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/blockers"
	"github.com/roadmap-dev/roadmap/internal/gates"
	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/kernel"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/stage"
)

// JobOptions are what both phases take from the Kit and the Setup: the
// Job's identity, its parts, the configuration's budgets and request
// limits. The runner harnesses start from them and vary what a test needs.
func (k *Kit) JobOptions() kernel.Options {
	s, cfg := k.s, k.cfg
	return kernel.Options{
		Phase: s.Phase, Peers: Phases(),
		Issue: s.Issue, RunID: s.RunID, GitHub: k.GitHub, Repo: k.Repo, Remote: s.Remote, Base: s.Base,
		RecordComment: s.RecordComment, RunURL: k.runURL(), Sandbox: k.Sandbox,
		StepBudget: AgentBudget(cfg.Budgets.Step), ItemBudget: AgentBudget(cfg.Budgets.Item),
		MaxOutput: cfg.Models[0].MaxOutput, Window: int64(cfg.Models[0].InputWindow),
		Deadline: s.Deadline, Clock: s.Clock, Unisolated: k.Unisolated, IsolationNote: k.IsolationNote(),
		Log: s.Log, Trace: k.Trace, Mask: k.Masker.Mask, SetOutput: s.SetOutput,
		Blockers: kernel.BlockerOptions{Label: cfg.Labels.Blocked, Met: blockers.Options{NotPlannedMet: cfg.Blockers.NotPlannedMet}},
	}
}

// Phases are the phases whose Jobs run on a Kit, the peers of every Job:
// either may find the other's Job holding an item's lease.
func Phases() []kernel.Phase { return []kernel.Phase{stage.Phase(), implement.Phase()} }

// PhaseNamed is the phase of Phases called name (the zero Phase when none
// is).
func PhaseNamed(name string) kernel.Phase {
	for _, p := range Phases() {
		if p.Name == name {
			return p
		}
	}
	return kernel.Phase{}
}

// runURL links the Job's workflow run on the server the environment names;
// "" when it names none.
func (k *Kit) runURL() string {
	server, repo := k.s.getenv("GITHUB_SERVER_URL"), k.s.getenv("GITHUB_REPOSITORY")
	if server == "" || repo == "" || k.s.RunID <= 0 {
		return ""
	}
	return fmt.Sprintf("%s/%s/actions/runs/%d", strings.TrimSuffix(server, "/"), repo, k.s.RunID)
}

// ImplementRun is what an implement Job takes besides its Setup.
type ImplementRun struct {
	// PlanDir is the OpenSpec change directory ("" takes the record's
	// stage.plan).
	PlanDir string
	// TriggerLabel is the implement label when its `labeled` event started
	// this Job: a Job whose issue no longer has it does not start.
	TriggerLabel string
	// Reopened: a person's reopening of the issue or of the item's PR
	// started this Job (it resumes only an item a closing held).
	Reopened bool
	// Feedback: a person's review of the PR, or a /roadmap fix comment on
	// it, started this Job (a repair Job, docs/review.md).
	Feedback bool
	// NoChecksGrace is how long the watch waits for a first check on the
	// head (0: implement's default).
	NoChecksGrace time.Duration
}

// Implement runs one implement Job on the Kit.
func (k *Kit) Implement(ctx context.Context, run ImplementRun) (implement.Result, error) {
	return implement.Run(ctx, k.ImplementOptions(run))
}

// ImplementOptions are the options Implement runs implement with: the
// configuration's, with what the Kit opened.
func (k *Kit) ImplementOptions(run ImplementRun) implement.Options {
	cfg := k.cfg
	return implement.Options{
		Options: k.JobOptions(),
		Attempt: k.s.Number, PlanDir: run.PlanDir, TriggerLabel: run.TriggerLabel, Reopened: run.Reopened, Feedback: run.Feedback, Models: k.Tiers,
		CheckRunner: k.CheckRunner, Split: policy.Split, CheckCommands: k.Checks, CheckTimeout: cfg.Checks.Timeout,
		BeforeTree: k.beforeTree(), TempDir: k.s.getenv("RUNNER_TEMP"),
		ParallelGroups: cfg.Implement.ParallelGroups, GroupTree: k.groupTree(),
		RepairRounds: cfg.Implement.RepairRounds, PollInterval: cfg.Implement.PollInterval, WatchTimeout: cfg.Implement.WatchTimeout,
		NoChecksGrace: run.NoChecksGrace,
		CIWorkflows:   cfg.Implement.CIWorkflows, ReadyWithoutCI: cfg.Implement.ReadyWithoutCI, CheckReruns: cfg.Implement.CheckReruns,
		MaxGroups:    cfg.Implement.MaxGroups,
		WaitingLabel: cfg.Labels.Waiting,
		NoCIPath:     k.s.PushToken == "" && len(cfg.Implement.CIWorkflows) == 0,
		Review:       k.reviewOptions(),
		Strength:     implement.StrengthOptions{On: cfg.Implement.TestStrength, Floor: cfg.Implement.TestStrengthFloor},
	}
}

// reviewOptions is the review before ready: off unless review.enabled; the
// reviewer is the tier review.model names, else the ladder's last (another
// tier than the implementer starts on, when the ladder has two).
func (k *Kit) reviewOptions() implement.ReviewOptions {
	cfg := k.cfg
	if !cfg.Review.Enabled {
		return implement.ReviewOptions{}
	}
	return implement.ReviewOptions{Models: k.namedTier(cfg.Review.Model), Named: cfg.Review.Model != "", MaxFindings: cfg.Review.MaxFindings, Rounds: cfg.Review.Rounds}
}

// namedTier is the one-tier ladder of the model name names, else the
// ladder's last tier.
func (k *Kit) namedTier(name string) []agent.Tier {
	if i := NamedModel(k.cfg, name); i >= 0 && i < len(k.Tiers) {
		return k.Tiers[i : i+1]
	}
	return k.Tiers[len(k.Tiers)-1:]
}

// StageRun is what a stage Job takes besides its Setup.
type StageRun struct {
	// Rounds bounds the planner's rounds (0: the configuration's
	// stage.rounds).
	Rounds int
	// Gates replaces stage's plan gates (nil: the shipped ones).
	Gates stage.Gates
}

// Stage runs one stage Job on the Kit. The verifier is the tier
// stage.verifier names, else the ladder's last.
func (k *Kit) Stage(ctx context.Context, run StageRun) (stage.Result, error) {
	cfg := k.cfg
	rounds := run.Rounds
	if rounds == 0 {
		rounds = cfg.Stage.Rounds
	}
	verifier := k.namedTier(cfg.Stage.Verifier)
	return stage.Run(ctx, stage.Options{
		Options: k.JobOptions(),
		Planner: k.Tiers, Verifier: verifier, VerifierNamed: cfg.Stage.Verifier != "", Rounds: rounds, Gates: run.Gates, WaitingLabel: cfg.Labels.Waiting,
		GateConfig: gates.Config{VerifyForms: cfg.Gates.VerifyForms, ExtraVerifyForms: cfg.Gates.ExtraVerifyForms, MaxGroups: cfg.Implement.MaxGroups},
	})
}
