package review

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/instructions"
)

// DefaultMaxFindings is how many blocking findings a review keeps unless
// Options says: pr-agent's default of 3.
const DefaultMaxFindings = 3

// Bounds on the rest of what a review keeps.
const (
	// maxAdvisory bounds the advisory findings kept.
	maxAdvisory = 10
	// maxRefuted bounds the blocking findings the refuter is shown; the
	// ones past it are demoted before the second call.
	maxRefuted = 10
)

// Input is what the review reads.
type Input struct {
	// Dir is the work tree at the reviewed head: quotes are checked against
	// its files, read inside it through no symlink.
	Dir string
	// Diff is `git diff base` of the change.
	Diff string
	// Plan is the plan's proposal and tasks text (may be empty).
	Plan string
	// Acceptance are the acceptance criteria (may be empty).
	Acceptance []string
	// Tests are the groups' verify commands.
	Tests []string
	// Instructions is the repository's instructions for the diff's files
	// (instructions.Source.Text: read from the base commit, masked,
	// bounded); "" when it has none.
	Instructions string
	// Closed is the ledger: id -> "repaired" | "dismissed by <login>". A
	// closed id is never raised again.
	Closed map[string]string
}

// Options is how the review runs.
type Options struct {
	// Config is the Job's agent config; Models is the reviewer's ladder
	// (review.model). Tools and System are the review's own.
	Config agent.Config
	// MaxFindings is how many blocking findings are kept (default 3); the
	// ones past it are demoted to advisory and counted.
	MaxFindings int
}

// Result is what the review found and what it cost.
type Result struct {
	// Findings are the findings that stand, blocking and advisory, in the
	// reviewer's order.
	Findings []Finding `json:"findings"`
	// Dropped are the entries not kept, each with its reason: malformed,
	// a quote not in the head, closed in the ledger, past a bound.
	Dropped []Dropped `json:"dropped"`
	// Demoted counts blocking findings made advisory by the MaxFindings
	// bound.
	Demoted int `json:"demoted"`
	// Refuted counts blocking findings the refutation pass made advisory.
	Refuted int `json:"refuted"`
	// Usage and Turns sum both calls.
	Usage agent.Spend `json:"usage"`
	Turns int         `json:"turns"`
	// Status is agent.StatusFinished, or the status that stopped a call
	// (budget, model error); Reason says why.
	Status agent.Status `json:"status"`
	Reason string       `json:"reason,omitempty"`
}

// Blocking returns the blocking findings that stand.
func (r Result) Blocking() []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Severity == SeverityBlocking {
			out = append(out, f)
		}
	}
	return out
}

// Run reviews the change: the reviewer's call, the checks on its findings
// (the quote in the head, the ledger, the bounds), and, when a blocking
// finding is left, the refuter's call. The two calls share the step budget
// and count toward the item's. A reviewer's call that ends without an
// answer (a budget, a model error) ends the review with its status and no
// findings; a refuter's leaves the findings unrefuted, with its status: the
// caller decides what a head not fully reviewed means. The error is
// agent.Run's: a configuration error or the context's end.
func Run(ctx context.Context, o Options, in Input) (Result, error) {
	if o.MaxFindings <= 0 {
		o.MaxFindings = DefaultMaxFindings
	}
	h, err := openHead(in.Dir)
	if err != nil {
		return Result{}, fmt.Errorf("review: %w", err)
	}
	defer h.close()
	res := Result{Status: agent.StatusFinished, Findings: []Finding{}, Dropped: []Dropped{}}
	answer, ok, err := res.call(ctx, o.Config, agent.ReviewerTools(), reviewerSystem, reviewerStep(in))
	if err != nil || !ok {
		return res, wrap("reviewer", err)
	}
	found, dropped := ParseFindings(answer)
	res.Dropped = append(res.Dropped, dropped...)
	found = res.keep(found, h, in.Closed)
	found = res.bound(found, maxRefuted)
	if hasBlocking(found) {
		cfg, left := res.second(o.Config)
		if !left {
			res.Findings = res.bound(found, o.MaxFindings)
			return res, nil
		}
		answer, ok, err := res.call(ctx, cfg, agent.RefuterTools(), refuterSystem, refuterStep(in, found))
		if err != nil || !ok {
			// Unrefuted, the findings stand as the reviewer gave them: a
			// blocking one stays blocking. Status says the review stopped.
			res.Findings = res.bound(found, o.MaxFindings)
			return res, wrap("refuter", err)
		}
		found = res.refute(found, answer)
	}
	res.Findings = res.bound(found, o.MaxFindings)
	return res, nil
}

// second is the refuter's config: the step budget is what the reviewer's
// call left of it, and the item's spend counts the reviewer's, so the two
// calls together stay within both. left is false when a bound is used up
// (a zero field would mean no limit): the status then says so.
func (r *Result) second(cfg agent.Config) (agent.Config, bool) {
	b, u := cfg.Budget, r.Usage
	type bound struct {
		limit, used float64
		set         func(float64)
		name        string
	}
	bounds := []bound{
		{float64(b.Turns), float64(r.Turns), func(v float64) { cfg.Budget.Turns = int(v) }, "turns"},
		{float64(b.TokensIn), float64(u.TokensIn), func(v float64) { cfg.Budget.TokensIn = int64(v) }, "tokens in"},
		{float64(b.TokensOut), float64(u.TokensOut), func(v float64) { cfg.Budget.TokensOut = int64(v) }, "tokens out"},
		{b.USD, u.USD, func(v float64) { cfg.Budget.USD = v }, "USD"},
	}
	for _, x := range bounds {
		if x.limit <= 0 {
			continue
		}
		if x.used >= x.limit {
			r.Status, r.Reason = agent.StatusBudgetExhausted, "the reviewer's call used the step's "+x.name+": no refutation pass"
			return cfg, false
		}
		x.set(x.limit - x.used)
	}
	cfg.ItemSpent = cfg.ItemSpent.Add(u)
	return cfg, true
}

func wrap(who string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("review: %s: %w", who, err)
}

// call runs one conversation and adds its spend. ok is false when it ended
// without an answer; res then holds the status and reason.
func (r *Result) call(ctx context.Context, cfg agent.Config, tools []string, system string, step agent.Step) (string, bool, error) {
	cfg.Tools = tools
	cfg.System = system
	cfg.PlanDir = ""
	out, err := agent.Run(ctx, cfg, step)
	r.Usage = r.Usage.Add(out.Usage)
	r.Turns += out.Turns
	if err != nil {
		r.Status, r.Reason = out.Status, out.Reason
		return "", false, err
	}
	if out.Status != agent.StatusFinished {
		r.Status, r.Reason = out.Status, out.Reason
		if r.Reason == "" {
			r.Reason = "the call ended " + string(out.Status)
		}
		return "", false, nil
	}
	return out.Summary, true, nil
}

// keep drops the findings whose quote is not in the head file, those the
// ledger closed, and repeats of one id; the others get the head's lines
// their quote is on.
func (r *Result) keep(fs []Finding, h *head, closed map[string]string) []Finding {
	seen := map[string]bool{}
	var out []Finding
	for _, f := range fs {
		if how := closed[f.ID]; how != "" {
			r.drop(f, "closed in the ledger: "+clean(how, 100))
			continue
		}
		if seen[f.ID] {
			r.drop(f, "the same finding again")
			continue
		}
		ls, err := h.lines(f.File)
		if err != nil {
			r.drop(f, "the file is not readable in the head work tree: "+clean(err.Error(), 200))
			continue
		}
		start, end, ok := locate(ls, f.Quote, f.Start)
		if !ok {
			r.drop(f, "the quote is not in the head file")
			continue
		}
		f.Start, f.End = start, end
		seen[f.ID] = true
		out = append(out, f)
	}
	return out
}

func (r *Result) drop(f Finding, reason string) {
	r.Dropped = append(r.Dropped, Dropped{Finding: f, Reason: reason})
}

// bound keeps at most max blocking findings, in the reviewer's order, and
// demotes the rest to advisory; advisory findings past maxAdvisory are
// dropped.
func (r *Result) bound(fs []Finding, max int) []Finding {
	blocking, advisory := 0, 0
	var out []Finding
	for _, f := range fs {
		if f.Severity == SeverityBlocking {
			if blocking < max {
				blocking++
				out = append(out, f)
				continue
			}
			f.Severity = SeverityAdvisory
			r.Demoted++
		}
		if advisory == maxAdvisory {
			r.drop(f, fmt.Sprintf("more than %d advisory findings", maxAdvisory))
			continue
		}
		advisory++
		out = append(out, f)
	}
	return out
}

// refute makes advisory each blocking finding the refuter refuted, with its
// reason; one without a readable refutation stands.
func (r *Result) refute(fs []Finding, answer string) []Finding {
	ids := map[string]bool{}
	for _, f := range fs {
		if f.Severity == SeverityBlocking {
			ids[f.ID] = true
		}
	}
	vs := parseVerdicts(answer, ids)
	for i, f := range fs {
		if v, ok := vs[f.ID]; ok && v.refuted && f.Severity == SeverityBlocking {
			fs[i].Severity, fs[i].Refuted = SeverityAdvisory, v.reason
			r.Refuted++
		}
	}
	return fs
}

func hasBlocking(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == SeverityBlocking {
			return true
		}
	}
	return false
}

// reviewerStep is the reviewer's first message: the task, then the diff,
// the acceptance criteria, the plan and the tests, by priority.
func reviewerStep(in Input) agent.Step {
	parts := []agent.ContextPart{{Name: "The change (new hunks with head line numbers)", Text: RenderDiff(in.Diff), Priority: 100}}
	if len(in.Acceptance) > 0 {
		parts = append(parts, agent.ContextPart{Name: "The issue's acceptance criteria", Text: bullets(in.Acceptance), Priority: 90})
	}
	if strings.TrimSpace(in.Plan) != "" {
		parts = append(parts, agent.ContextPart{Name: "The plan", Text: cut(in.Plan, maxPlan), Priority: 80})
	}
	if len(in.Tests) > 0 {
		parts = append(parts, agent.ContextPart{Name: "The groups' tests", Text: bullets(in.Tests), Priority: 70})
	}
	parts = append(parts, instructionParts(in, 75)...)
	return agent.Step{Task: reviewerTask, Context: parts}
}

// maxPlan bounds the plan text in the prompt.
const maxPlan = 32 << 10

// refuterStep is the refuter's first message: the blocking findings as
// JSON, then the diff.
func refuterStep(in Input, fs []Finding) agent.Step {
	type shown struct {
		ID      string `json:"id"`
		File    string `json:"file"`
		Start   int    `json:"start"`
		End     int    `json:"end"`
		Kind    string `json:"kind"`
		Title   string `json:"title"`
		Trigger string `json:"trigger"`
		Quote   string `json:"quote"`
	}
	var list []shown
	for _, f := range fs {
		if f.Severity == SeverityBlocking {
			list = append(list, shown{f.ID, f.File, f.Start, f.End, f.Kind, f.Title, f.Trigger, f.Quote})
		}
	}
	data, _ := json.MarshalIndent(list, "", "  ")
	return agent.Step{Task: refuterTask, Context: append([]agent.ContextPart{
		{Name: "The findings", Text: string(data), Priority: 100},
		{Name: "The change (new hunks with head line numbers)", Text: RenderDiff(in.Diff), Priority: 90},
	}, instructionParts(in, 80)...)}
}

// instructionParts are the repository's instructions at priority: a
// convention the change follows is not a finding, and one it breaks may be.
func instructionParts(in Input, priority int) []agent.ContextPart {
	if in.Instructions == "" {
		return nil
	}
	return []agent.ContextPart{{Name: instructions.Title, Text: in.Instructions, Priority: priority}}
}

func bullets(items []string) string {
	var b strings.Builder
	for i, s := range items {
		if i == 50 {
			fmt.Fprintf(&b, "- (and %d more)\n", len(items)-i)
			break
		}
		fmt.Fprintf(&b, "- %s\n", clean(s, 500))
	}
	return b.String()
}
