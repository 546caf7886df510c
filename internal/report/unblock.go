package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/blockers"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/recordstore"
	"github.com/roadmap-dev/roadmap/internal/tracker"
)

// DefaultBlockedLabel is the label of an item that waits for its blockers
// when UnblockOptions name none: the default configuration's labels.blocked.
var DefaultBlockedLabel = config.Default().Labels.Blocked

// CycleMarker marks the comment roadmap keeps on each issue of a dependency
// cycle among waiting items: written once, the same on every wake.
const CycleMarker = "<!-- roadmap:blocked-cycle -->"

// UnblockOptions are the inputs of Unblock (`roadmap wake`, and
// `roadmap wake --unblock-only` when a person closes an issue).
type UnblockOptions struct {
	GitHub *github.Client
	// Workflow and Ref name the caller workflow a met item's Job is
	// dispatched on (the one with workflow_dispatch).
	Workflow string
	Ref      string
	// Label is the waiting label (labels.blocked); "" is roadmap:blocked.
	Label string
	// Labels.Implement marks an item whose plan was approved.
	Labels   Labels
	Blockers blockers.Options
	Mask     func(string) string
	Log      io.Writer
	// DryRun decides and says, and dispatches and writes nothing.
	DryRun bool
}

// What Unblock did with a waiting item.
const (
	UnblockDispatched = WakeDispatched
	UnblockWaiting    = "waiting" // a blocker is still open, not planned, or refused
	UnblockCycle      = "cycle"   // the item is on a dependency cycle among waiting items
	UnblockStopped    = WakeStopped
	UnblockDryRun     = WakeDryRun
)

// UnblockItem is one waiting item and what Unblock did with it.
type UnblockItem struct {
	Issue int `json:"issue"`
	// WaitsFor are the blockers still open; NotPlanned those closed as not
	// planned (met only with blockers.not_planned_met).
	WaitsFor   []string `json:"waits_for,omitempty"`
	NotPlanned []string `json:"not_planned,omitempty"`
	// Phase and Attempt are the next Job's, for a met item.
	Phase   string `json:"phase,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
	// Wave is the met item's wave (blockers.Order), from 1.
	Wave   int    `json:"wave,omitempty"`
	Action string `json:"action"`
	Reason string `json:"reason,omitempty"`
	RunID  int64  `json:"run_id,omitempty"`
}

// UnblockOutcome is what Unblock found and did.
type UnblockOutcome struct {
	Items      []UnblockItem `json:"items"`
	Dispatched int           `json:"dispatched"`
	Requests   int           `json:"requests"`
}

// waiter is a labelled item while Unblock decides it.
type waiter struct {
	issue   github.Issue
	states  []blockers.State
	verdict blockers.Verdict
	cycle   []int
}

// Unblock starts the items whose last blocker is met: it lists the open
// issues with the blocked label (one request; each carries its body), reads
// each one's blockers (GitHub's dependencies, one request, and the states of
// the body's references that are neither among them nor waiting items
// themselves, one query when there are any: at most 2 counted requests per
// waiting item) and decides it (blockers.Decide). A dependency cycle among
// the waiting items is named on each of its issues in a comment roadmap
// keeps, and they keep waiting. The met items start in the order of
// blockers.Order, a wave at once (their claims are their Jobs' business):
// each gets its next Job dispatched (stage with no plan, implement once one
// was approved: the phase of the Job that yielded, as Wake reads it) and
// loses the label, so a second Unblock leaves it.
func Unblock(ctx context.Context, o UnblockOptions) (out UnblockOutcome, err error) {
	switch {
	case o.GitHub == nil:
		return out, inputErr(errors.New("unblock: a GitHub client is required"))
	case o.Mask == nil:
		return out, inputErr(errors.New("unblock: a masker is required"))
	case o.Workflow == "" || o.Ref == "":
		return out, inputErr(errors.New("unblock: the workflow file and ref to dispatch on are required"))
	}
	if o.Label == "" {
		o.Label = DefaultBlockedLabel
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	o.Labels.defaults()
	before := o.GitHub.Requests()
	defer func() { out.Requests = o.GitHub.Requests().Sub(before).Counted() }()
	logf := func(format string, args ...any) {
		fmt.Fprintln(o.Log, o.Mask(fmt.Sprintf(format, args...)))
	}

	issues, err := o.GitHub.LabelledIssues(ctx, o.Label)
	if err != nil {
		return out, err
	}
	if len(issues) == 0 {
		logf("roadmap wake: no item waits for its blockers (no open issue has %s)", o.Label)
		return out, nil
	}
	waiting := map[int]bool{}
	for _, is := range issues {
		waiting[is.Number] = true
	}
	var ws []*waiter
	graph := map[int][]int{} // a waiting item → the waiting items it waits for
	for _, is := range issues {
		w := &waiter{issue: is}
		if w.states, err = tracker.BlockerStates(ctx, o.GitHub, is, tracker.BlockerRead{Open: waiting}); err != nil {
			return out, err
		}
		w.verdict = blockers.Decide(blockers.Ref{Repo: o.GitHub.FullName(), Number: is.Number}, w.states, o.Blockers)
		for _, r := range w.verdict.Waiting {
			if r.Repo == "" && waiting[r.Number] {
				graph[is.Number] = append(graph[is.Number], r.Number)
			}
		}
		ws = append(ws, w)
	}

	var met []int
	byIssue := map[int]*waiter{}
	for _, w := range ws {
		byIssue[w.issue.Number] = w
		if w.cycle = blockers.Cycle(graph, w.issue.Number); w.cycle != nil {
			w.verdict = w.verdict.WithCycle(w.cycle)
			continue
		}
		if w.verdict.Met {
			met = append(met, w.issue.Number)
		}
	}
	waves, err := blockers.Order(met, graph)
	if err != nil {
		return out, err // unreachable: a met item waits for no open issue
	}
	wave := map[int]int{}
	for i, wv := range waves {
		for _, n := range wv {
			wave[n] = i + 1
		}
	}
	// The met items first, wave by wave; then the rest, oldest first.
	slices.SortStableFunc(ws, func(a, b *waiter) int {
		wa, wb := wave[a.issue.Number], wave[b.issue.Number]
		switch {
		case wa == wb:
			return 0
		case wa == 0:
			return 1
		case wb == 0:
			return -1
		}
		return wa - wb
	})
	for _, w := range ws {
		it := UnblockItem{Issue: w.issue.Number, Wave: wave[w.issue.Number],
			WaitsFor: refStrings(w.verdict.Waiting), NotPlanned: refStrings(w.verdict.NotPlanned)}
		switch {
		case w.cycle != nil:
			it.Action, it.Reason = UnblockCycle, blockers.Path(w.cycle)
			if !o.DryRun {
				if err := nameCycle(ctx, o.GitHub, w); err != nil {
					logf("roadmap wake: issue #%d: name its dependency cycle: %v", it.Issue, err)
				}
			}
		case !w.verdict.Met:
			it.Action, it.Reason = UnblockWaiting, waitReason(w.verdict)
		default:
			rc, err := recordstore.New(o.GitHub).Read(ctx, it.Issue, 0)
			if err != nil {
				out.Items = append(out.Items, it)
				return out, fmt.Errorf("issue %d: %w", it.Issue, err)
			}
			next := nextFromBlocked(it.Issue, rc, slices.Contains(w.issue.Labels, o.Labels.Implement))
			it.Phase, it.Attempt = next.Phase, next.Attempt
			switch {
			case next.StoppedBy != "":
				it.Action, it.Reason = UnblockStopped, "stopped by "+next.StoppedBy
			case o.DryRun:
				it.Action = UnblockDryRun
			default:
				run, err := dispatchNext(ctx, o.GitHub, o.Workflow, o.Ref, next, o.Label)
				if err != nil {
					out.Items = append(out.Items, it)
					return out, fmt.Errorf("unblock: %w", err)
				}
				it.Action, it.RunID = UnblockDispatched, run
				out.Dispatched++
			}
		}
		what := ""
		if it.Phase != "" {
			what = " (" + it.Phase + ")"
		}
		logf("roadmap wake: issue #%d%s: %s%s", it.Issue, what, it.Action, suffixReason(it.Reason))
		out.Items = append(out.Items, it)
	}
	return out, nil
}

func refStrings(refs []blockers.Ref) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.String())
	}
	return out
}

// waitReason says why an item keeps waiting.
func waitReason(v blockers.Verdict) string {
	var parts []string
	if len(v.Waiting) > 0 {
		parts = append(parts, "waiting for "+strings.Join(refStrings(v.Waiting), ", "))
	}
	if len(v.NotPlanned) > 0 {
		parts = append(parts, "closed as not planned: "+strings.Join(refStrings(v.NotPlanned), ", "))
	}
	for _, r := range v.Unmerged {
		parts = append(parts, blockers.UnmergedWhy(r))
	}
	for _, p := range v.Refused {
		parts = append(parts, p.Why)
	}
	return strings.Join(parts, "; ")
}

// nameCycle keeps one comment on the item naming its cycle: the same text
// on every wake, so a wake writes it once and then only reads it.
func nameCycle(ctx context.Context, gh *github.Client, w *waiter) error {
	why := ""
	for _, p := range w.verdict.Refused {
		if strings.Contains(p.Why, blockers.Path(w.cycle)) {
			why = p.Why
		}
	}
	body := CycleMarker + "\n**roadmap: this issue waits for its blockers, and cannot start.** " + why +
		" The references are GitHub's issue dependencies (\"Blocked by\") and the \"Blocked by #N\" lines of the issues' bodies; roadmap reads them again on every wake."
	_, err := gh.UpsertMarkerComment(ctx, w.issue.Number, CycleMarker, body)
	return err
}

// nextFromBlocked is the Job a met item goes on with: the phase of the Job
// that yielded (waitingFrom); an item no Job has a line for yet goes on to
// implement when its plan was approved (it has the implement label, or its
// record names a plan), to stage otherwise.
func nextFromBlocked(n int, rc recordstore.RecordComment, implementLabel bool) WaitingItem {
	it := waitingFrom(n, rc)
	impl, _ := rc.Record.Jobs()
	stage, _ := rc.Record.StageJobs()
	if len(impl) == 0 && len(stage) == 0 {
		_, planned := rc.Record.StagePlan()
		if !planned && !implementLabel {
			it.Phase, it.Attempt = PhaseStage, 0
		}
	}
	return it
}
