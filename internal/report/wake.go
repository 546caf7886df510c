package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"time"

	"github.com/roadmap-dev/roadmap/internal/clock"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/ledger"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/recordstore"
	"github.com/roadmap-dev/roadmap/internal/text"
)

// WakeOptions are the inputs of Wake (`roadmap wake`, on the schedule
// `roadmap init` writes).
type WakeOptions struct {
	GitHub *github.Client
	// Workflow and Ref name the caller workflow a woken item's Job is
	// dispatched on (the one with workflow_dispatch).
	Workflow string
	Ref      string
	// Dashboard and DayBudget are the day's ledger and budget; with no
	// dashboard the ledger is the ledger issue (internal/ledger), and with
	// a zero budget, or no ledger yet, every due item is dispatched.
	Dashboard int
	DayBudget ledger.Budget
	Labels    Labels
	Clock     Clock
	Mask      func(string) string
	Log       io.Writer
	// DryRun decides and says, and dispatches nothing.
	DryRun bool
}

// What Wake did with a waiting item.
const (
	WakeDispatched = "dispatched"
	WakeNotYet     = "not_yet"     // item.wake_at has not come
	WakeOverBudget = "over_budget" // the day's budget left does not reach it
	WakeStopped    = "stopped"     // a person stopped it; it stays waiting for them
	WakeDryRun     = "would_dispatch"
)

// WaitingItem is an item waiting for the day's budget, as its record says.
type WaitingItem struct {
	Issue int `json:"issue"`
	// Phase is the phase of the Job that yielded: stage or implement.
	Phase string `json:"phase"`
	// Attempt is the next implement Job's number (0 for stage).
	Attempt int       `json:"attempt,omitempty"`
	WakeAt  time.Time `json:"wake_at,omitzero"`
	// Estimate is the USD the item's last Job spent: what its next one is
	// taken to cost against the day's budget.
	Estimate float64 `json:"estimate_usd"`
	// StoppedBy: a person stopped the item.
	StoppedBy string `json:"stopped_by,omitempty"`
	// Since orders the items: when the yield's Job ran (its run id; ids grow).
	since         int64
	recordComment int64
}

// WakeItem is one item and what Wake did with it.
type WakeItem struct {
	WaitingItem
	Action string `json:"action"`
	Reason string `json:"reason,omitempty"`
	RunID  int64  `json:"run_id,omitempty"`
}

// WakeOutcome is what Wake found and did; `roadmap wake --json` prints it.
type WakeOutcome struct {
	Day string `json:"day"`
	// Spent is the day's spend in the ledger when Wake looked (once).
	Spent      record.Spend  `json:"spent"`
	Budget     ledger.Budget `json:"budget"`
	Items      []WakeItem    `json:"items"`
	Dispatched int           `json:"dispatched"`
	Requests   int           `json:"requests"`
}

// Waiting lists the items waiting for the day's budget: the open issues
// with the waiting label (one request), each with what its record says
// (one read each: item.wake_at, the phase and number of the Job that
// yielded, the spend of its last Job), waiting longest first.
func Waiting(ctx context.Context, gh *github.Client, label string) ([]WaitingItem, error) {
	issues, err := gh.LabelledIssues(ctx, label)
	if err != nil {
		return nil, err
	}
	var out []WaitingItem
	for _, is := range issues {
		it, err := waitingItem(ctx, gh, is.Number)
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	sort.SliceStable(out, func(a, b int) bool {
		if !out[a].WakeAt.Equal(out[b].WakeAt) {
			return out[a].WakeAt.Before(out[b].WakeAt)
		}
		if out[a].since != out[b].since {
			return out[a].since < out[b].since
		}
		return out[a].Issue < out[b].Issue
	})
	return out, nil
}

// waitingItem reads what issue n's record says of its wait: one read.
func waitingItem(ctx context.Context, gh *github.Client, n int) (WaitingItem, error) {
	rc, err := recordstore.New(gh).Read(ctx, n, 0)
	if err != nil {
		return WaitingItem{}, fmt.Errorf("issue %d: %w", n, err)
	}
	return waitingFrom(n, rc), nil
}

// waitingFrom is what issue n's record comment says of its wait.
func waitingFrom(n int, rc recordstore.RecordComment) WaitingItem {
	rec := rc.Record
	it := WaitingItem{Issue: n, recordComment: rc.ID}
	it.WakeAt, _ = rec.WakeAt()
	it.StoppedBy, _ = rec.StoppedBy()
	impl, _ := rec.Jobs()
	stage, _ := rec.StageJobs()
	last, lastStage := newest(impl), newest(stage)
	it.Phase = PhaseImplement
	if lastStage.RunID > last.RunID || (len(impl) == 0 && len(stage) > 0) {
		it.Phase, last = PhaseStage, lastStage
	}
	if it.Phase == PhaseImplement {
		n, _ := rec.Attempt()
		for _, l := range impl {
			n = max(n, l.Job)
		}
		it.Attempt = n + 1
	}
	it.Estimate, it.since = last.Spend.USD, last.RunID
	return it
}

func newest(lines []record.JobOutcome) record.JobOutcome {
	var n record.JobOutcome
	for _, l := range lines {
		if l.RunID > n.RunID || (l.RunID == n.RunID && l.Job > n.Job) {
			n = l
		}
	}
	return n
}

// Wake dispatches the items waiting for the day's budget whose wake_at has
// come: it checks the day's budget once, then dispatches them waiting
// longest first, each taken to cost what its last Job spent, as long as the
// day's budget left covers them (the first due item whenever any is left).
// Each dispatched item loses the waiting label, so a second wake does not
// dispatch it again; a Job that starts on its own (a person's label, a
// dispatch) removes the label itself. An item a person stopped stays.
func Wake(ctx context.Context, o WakeOptions) (out WakeOutcome, err error) {
	switch {
	case o.GitHub == nil:
		return WakeOutcome{}, inputErr(errors.New("wake: a GitHub client is required"))
	case o.Mask == nil:
		return WakeOutcome{}, inputErr(errors.New("wake: a masker is required"))
	case o.Workflow == "" || o.Ref == "":
		return WakeOutcome{}, inputErr(errors.New("wake: the workflow file and ref to dispatch on are required"))
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	o.Labels.defaults()
	before := o.GitHub.Requests()
	now := o.Clock.Now().UTC()
	out = WakeOutcome{Day: ledger.Day(now), Budget: o.DayBudget}
	defer func() { out.Requests = o.GitHub.Requests().Sub(before).Counted() }()
	logf := func(format string, args ...any) {
		fmt.Fprintln(o.Log, o.Mask(fmt.Sprintf(format, args...)))
	}

	items, err := Waiting(ctx, o.GitHub, o.Labels.Waiting)
	if err != nil {
		return out, err
	}
	if len(items) == 0 {
		logf("roadmap wake: no item waits for the day's budget (no open issue has %s)", o.Labels.Waiting)
		return out, nil
	}
	left := -1.0 // unlimited
	where := 0
	if !o.DayBudget.Zero() {
		if where, err = ledger.Find(ctx, o.GitHub, o.Dashboard); err != nil {
			return out, err
		}
	}
	if where > 0 {
		spent, ok, err := ledger.Check(ctx, o.GitHub, where, out.Day, o.DayBudget, nil)
		if err != nil {
			return out, err
		}
		out.Spent = spent
		switch {
		case !ok:
			left = 0
		case o.DayBudget.USD > 0:
			left = o.DayBudget.USD - spent.USD
		}
		logf("roadmap wake: %s: the day's spend is %s", out.Day, ledger.Text(spent, o.DayBudget))
	}
	first := true
	for _, it := range items {
		w := WakeItem{WaitingItem: it}
		switch {
		case it.StoppedBy != "":
			w.Action, w.Reason = WakeStopped, fmt.Sprintf("stopped by %s", it.StoppedBy)
		case !it.WakeAt.IsZero() && now.Before(it.WakeAt):
			w.Action, w.Reason = WakeNotYet, "waits until "+it.WakeAt.Format(time.RFC3339)
		case left == 0 || (left > 0 && !first && it.Estimate > left):
			w.Action = WakeOverBudget
			w.Reason = fmt.Sprintf("its last Job spent %s; the day's budget has %s left", text.USD(it.Estimate), text.USD(max(left, 0)))
		case o.DryRun:
			w.Action, first = WakeDryRun, false
			if left > 0 {
				left = max(left-it.Estimate, 0)
			}
		default:
			run, err := wakeOne(ctx, o, it)
			if err != nil {
				out.Items = append(out.Items, w)
				return out, err
			}
			w.Action, w.RunID, first = WakeDispatched, run, false
			out.Dispatched++
			if left > 0 {
				left = max(left-it.Estimate, 0)
			}
		}
		what := "stage"
		if it.Phase == PhaseImplement {
			what = fmt.Sprintf("implement Job %d", it.Attempt)
		}
		logf("roadmap wake: issue #%d (%s): %s%s", it.Issue, what, w.Action, suffixReason(w.Reason))
		out.Items = append(out.Items, w)
	}
	return out, nil
}

func suffixReason(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}

// wakeOne dispatches a waiting item's next Job and takes the waiting label
// off, so the next wake leaves it.
func wakeOne(ctx context.Context, o WakeOptions, it WaitingItem) (int64, error) {
	return dispatchNext(ctx, o.GitHub, o.Workflow, o.Ref, it, o.Labels.Waiting)
}

// dispatchNext dispatches a waiting item's next Job on workflow at ref and
// takes label off (none when ""), so the next wake leaves it.
func dispatchNext(ctx context.Context, gh *github.Client, workflow, ref string, it WaitingItem, label string) (int64, error) {
	inputs := map[string]any{"issue": strconv.Itoa(it.Issue), "phase": it.Phase}
	if it.Phase == PhaseImplement {
		inputs["attempt"] = strconv.Itoa(it.Attempt)
	}
	if it.recordComment != 0 {
		inputs["record-comment"] = strconv.FormatInt(it.recordComment, 10)
	}
	res, err := gh.DispatchWorkflow(ctx, workflow, ref, inputs)
	if err != nil {
		return 0, fmt.Errorf("wake issue %d: dispatch: %w", it.Issue, err)
	}
	if label == "" {
		return res.RunID, nil
	}
	if err := gh.RemoveLabel(ctx, it.Issue, label); err != nil {
		return res.RunID, fmt.Errorf("wake issue %d: dispatched run %d, then: %w", it.Issue, res.RunID, err)
	}
	return res.RunID, nil
}
