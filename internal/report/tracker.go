package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/blockers"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/recordstore"
	"github.com/roadmap-dev/roadmap/internal/tracker"
)

// TrackerMarker marks the status comment roadmap keeps on a tracker it
// drives: one comment, written again in place on every drive that changes
// it.
const TrackerMarker = "<!-- roadmap:tracker -->"

// startedLine opens the status comment's last line, which names the
// sub-issues the drives started: "<!-- started: 4 7 -->". Only roadmap's own
// comment is read back (github.MarkerComment), so a person's text cannot
// make a sub-issue look started.
const startedLine = "<!-- started:"

// maxStarted bounds the started sub-issues read back from the comment.
const maxStarted = 1000

// TrackerOptions are the configuration of a tracker's drive.
type TrackerOptions struct {
	// Label marks a tracker roadmap drives (labels.tracker); "" is
	// roadmap:tracker.
	Label string
	// MaxActive is how many sub-issues are active at once
	// (tracker.max_active); 0 is the default, 3.
	MaxActive int
	// OnComplete is what a complete tracker gets (tracker.on_complete):
	// close (the default) or comment.
	OnComplete string
}

func (t *TrackerOptions) defaults() {
	d := config.Default()
	if t.Label == "" {
		t.Label = d.Labels.Tracker
	}
	if t.MaxActive <= 0 {
		t.MaxActive = d.Tracker.MaxActive
	}
	if t.OnComplete == "" {
		t.OnComplete = d.Tracker.OnComplete
	}
}

// DriveOptions are the inputs of Drive and DriveTrackers.
type DriveOptions struct {
	GitHub *github.Client
	// Workflow and Ref name the caller workflow a sub-issue's Job is
	// dispatched on (the one with workflow_dispatch).
	Workflow string
	Ref      string
	Tracker  TrackerOptions
	// Blockers say when a sub-issue's blockers are met.
	Blockers blockers.Options
	Mask     func(string) string
	Log      io.Writer
	// DryRun decides and says, and dispatches and writes nothing.
	DryRun bool
}

// What a drive did with a sub-issue.
const (
	SubStarted  = "started"        // its next Job was dispatched now
	SubActive   = "active"         // started before and still open
	SubQueued   = "queued"         // its blockers are met; it waits for room (max_active)
	SubWaiting  = "waiting"        // a blocker is open, not planned or refused
	SubCycle    = "cycle"          // it is on a dependency cycle among the sub-issues
	SubStopped  = "stopped"        // a person stopped it; it stays for them
	SubDone     = "done"           // closed as completed
	SubDropped  = "dropped"        // closed as not planned or as a duplicate
	SubSkipped  = "skipped"        // not roadmap's to start: another repository, unreadable, a tracker itself
	SubWouldRun = "would_dispatch" // --dry-run: it would be started now
)

// SubIssue is one sub-issue of a driven tracker and what the drive did.
type SubIssue struct {
	Issue int `json:"issue"`
	// Repo is set for a sub-issue in another repository.
	Repo   string `json:"repo,omitempty"`
	Title  string `json:"title"`
	Action string `json:"action"`
	Reason string `json:"reason,omitempty"`
	// Phase and RunID are the dispatched Job's, for a started one.
	Phase string `json:"phase,omitempty"`
	RunID int64  `json:"run_id,omitempty"`
}

// DriveOutcome is what one drive of a tracker found and did.
type DriveOutcome struct {
	Tracker int    `json:"tracker"`
	Title   string `json:"title"`
	// Complete: every sub-issue is closed (tracker.Check); Closed: the drive
	// closed the tracker (tracker.on_complete close).
	Complete  bool       `json:"complete"`
	Closed    bool       `json:"closed,omitempty"`
	Active    int        `json:"active"`
	MaxActive int        `json:"max_active"`
	Started   int        `json:"started"`
	SubIssues []SubIssue `json:"sub_issues"`
	Notes     []string   `json:"notes,omitempty"`
	Requests  int        `json:"requests"`
}

func (o *DriveOptions) check() error {
	switch {
	case o.GitHub == nil:
		return inputErr(errors.New("drive: a GitHub client is required"))
	case o.Mask == nil:
		return inputErr(errors.New("drive: a masker is required"))
	case o.Workflow == "" || o.Ref == "":
		return inputErr(errors.New("drive: the workflow file and ref to dispatch on are required"))
	}
	o.Tracker.defaults()
	if o.Log == nil {
		o.Log = io.Discard
	}
	return nil
}

// DriveTrackers drives every open issue labelled as a tracker roadmap
// drives (one list request, then Drive for each): `roadmap wake` runs it
// after the unblock, and so does the caller's unblock job on a person's
// close or reopening of any issue.
func DriveTrackers(ctx context.Context, o DriveOptions) ([]DriveOutcome, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	list, err := o.GitHub.LabelledIssues(ctx, o.Tracker.Label)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		fmt.Fprintln(o.Log, o.Mask(fmt.Sprintf("roadmap wake: no tracker to drive (no open issue has %s)", o.Tracker.Label)))
	}
	// One tracker's failure does not keep the others from their drive; the
	// errors are returned together.
	var out []DriveOutcome
	var errs []error
	for _, is := range list {
		d, err := Drive(ctx, o, is.Number)
		out = append(out, d)
		if err != nil {
			fmt.Fprintln(o.Log, o.Mask(fmt.Sprintf("roadmap wake: tracker #%d: %v", is.Number, err)))
			errs = append(errs, fmt.Errorf("tracker #%d: %w", is.Number, err))
		}
	}
	return out, errors.Join(errs...)
}

// Drive drives tracker n's sub-issues (docs/tracker.md, "Driving a
// tracker"). It reads the tracker and its children (tracker.Check) and the
// status comment it keeps there (the sub-issues earlier drives started),
// then decides each open sub-issue of this repository that is not a
// tracker itself and was not started yet: its blockers are read (at most
// two counted requests, as for a waiting item) and decided; the met ones
// start in the tracker's order while fewer than MaxActive sub-issues are
// active (started and still open): each gets its next Job dispatched (stage
// when it has no plan, implement once its plan was approved, as the record
// says). A sub-issue whose record shows a Job already (a person labelled
// it) is taken as started. The status comment is written again when it
// changed; when every sub-issue is closed, the tracker loses its label and
// is closed (OnComplete close) or only says so (comment).
//
// A drive is safe to repeat: a started sub-issue is named in the comment,
// and the one a drive killed between its dispatch and its comment is
// started again only while its Job has not yet written a line (the
// dispatched Job's lease turns the second away).
func Drive(ctx context.Context, o DriveOptions, n int) (out DriveOutcome, err error) {
	if err := o.check(); err != nil {
		return out, err
	}
	gh := o.GitHub
	before := gh.Requests()
	defer func() { out.Requests = gh.Requests().Sub(before).Counted() }()
	logf := func(format string, args ...any) {
		fmt.Fprintln(o.Log, o.Mask(fmt.Sprintf(format, args...)))
	}

	res, err := tracker.Check(ctx, gh, n)
	if err != nil {
		return out, err
	}
	out = DriveOutcome{Tracker: n, Title: res.Title, MaxActive: o.Tracker.MaxActive, Complete: res.Complete,
		SubIssues: []SubIssue{}, Notes: res.Notes}
	prev, found, err := gh.MarkerComment(ctx, n, TrackerMarker)
	if err != nil {
		return out, err
	}
	started := map[int]bool{}
	if found {
		started = parseStarted(prev.Body)
	}

	d := &drive{o: o, gh: gh, started: started, open: map[int]bool{}}
	d.sort(res)
	if err := d.decide(ctx); err != nil {
		return out, err
	}
	if err := d.start(ctx); err != nil {
		out.SubIssues, out.Active, out.Started = d.subs, d.active, d.dispatched
		if !o.DryRun && d.dispatched > 0 {
			// The sub-issues dispatched before the failure are named, so the
			// next drive does not start them again.
			if _, cerr := gh.UpsertMarkerComment(ctx, n, TrackerMarker, statusComment(out, started, o.Tracker)); cerr != nil {
				err = errors.Join(err, fmt.Errorf("tracker #%d: its status comment: %w", n, cerr))
			}
		}
		return out, err
	}
	out.SubIssues, out.Active, out.Started = d.subs, d.active, d.dispatched
	for _, s := range out.SubIssues {
		what := s.Action
		if s.Phase != "" {
			what += " (" + s.Phase + ")"
		}
		logf("roadmap: tracker #%d: sub-issue %s: %s%s", n, subRef(s), what, suffixReason(s.Reason))
	}
	if o.DryRun {
		return out, nil
	}
	// The comment says what the drive is about to do to a complete tracker.
	out.Closed = res.Complete && o.Tracker.OnComplete == config.TrackerClose
	if _, err := gh.UpsertMarkerComment(ctx, n, TrackerMarker, statusComment(out, started, o.Tracker)); err != nil {
		return out, fmt.Errorf("tracker #%d: its status comment: %w", n, err)
	}
	if !res.Complete {
		logf("roadmap: tracker #%d: %d active of at most %d, %d started now", n, out.Active, out.MaxActive, out.Started)
		return out, nil
	}
	// Complete: the label comes off first, so a person's reopening is not
	// driven (and closed) again until they label it anew.
	if err := gh.RemoveLabel(ctx, n, o.Tracker.Label); err != nil {
		return out, err
	}
	if out.Closed {
		if err := gh.CloseIssue(ctx, n, "completed"); err != nil {
			out.Closed = false
			return out, err
		}
	}
	logf("roadmap: tracker #%d: complete: every sub-issue is closed (%d done, %d dropped); %s", n, res.Done, res.Dropped,
		map[bool]string{true: "closed", false: "left open (tracker.on_complete: comment)"}[out.Closed])
	return out, nil
}

// drive is one drive of a tracker while it decides.
type drive struct {
	o       DriveOptions
	gh      *github.Client
	started map[int]bool
	// open are the open sub-issues of this repository: a blocker among
	// them needs no read (Check read it open).
	open map[int]bool
	subs []SubIssue
	// cands are the indexes in subs of the sub-issues the drive may start,
	// in the tracker's order, with each one's body and verdict.
	cands    []int
	bodies   map[int]string
	verdicts map[int]blockers.Verdict
	active   int
	// dispatched is how many Jobs this drive dispatched.
	dispatched int
}

// sort sorts the children into what needs nothing (closed, not roadmap's,
// started) and the candidates.
func (d *drive) sort(res tracker.Result) {
	own := d.gh.FullName()
	d.bodies = map[int]string{}
	for _, c := range res.Children {
		if strings.EqualFold(c.Repo, own) && c.State == tracker.Open {
			d.open[c.Number] = true
		}
	}
	for _, c := range res.Children {
		s := SubIssue{Issue: c.Number, Title: c.Title}
		home := strings.EqualFold(c.Repo, own)
		if !home {
			s.Repo = c.Repo
		}
		switch {
		case c.State == tracker.Done:
			s.Action = SubDone
		case c.State == tracker.Dropped:
			s.Action = SubDropped
		case c.State == tracker.Unverifiable:
			s.Action, s.Reason = SubSkipped, "roadmap's token cannot read it (deleted, a pull request, or another repository)"
		case !home:
			s.Action, s.Reason = SubSkipped, "in another repository: roadmap starts this repository's issues only"
		case c.Tracker != "":
			s.Action, s.Reason = SubSkipped, "a tracker itself ("+c.Tracker+"): its sub-issues are driven here"
		case d.started[c.Number]:
			s.Action = SubActive
			d.active++
		default:
			d.cands = append(d.cands, len(d.subs))
			d.bodies[c.Number] = c.Body
		}
		d.subs = append(d.subs, s)
	}
}

// decide reads each candidate's blockers and decides it; a dependency
// cycle among the candidates is named and none on it starts.
func (d *drive) decide(ctx context.Context) error {
	own := d.gh.FullName()
	d.verdicts = map[int]blockers.Verdict{}
	isCand := map[int]bool{}
	for _, i := range d.cands {
		isCand[d.subs[i].Issue] = true
	}
	graph := map[int][]int{}
	for _, i := range d.cands {
		n := d.subs[i].Issue
		open := map[int]bool{}
		for m := range d.open {
			if m != n {
				open[m] = true
			}
		}
		states, err := tracker.BlockerStates(ctx, d.gh, github.Issue{Number: n, Body: d.bodies[n]}, tracker.BlockerRead{Open: open})
		if err != nil {
			return err
		}
		v := blockers.Decide(blockers.Ref{Repo: own, Number: n}, states, d.o.Blockers)
		for _, r := range v.Waiting {
			if r.Repo == "" && isCand[r.Number] {
				graph[n] = append(graph[n], r.Number)
			}
		}
		d.verdicts[n] = v
	}
	for _, i := range d.cands {
		n := d.subs[i].Issue
		if cycle := blockers.Cycle(graph, n); cycle != nil {
			d.verdicts[n] = d.verdicts[n].WithCycle(cycle)
			d.subs[i].Action, d.subs[i].Reason = SubCycle, blockers.Path(cycle)+" is a dependency cycle: remove one of its references"
		}
	}
	return nil
}

// start starts the met candidates in the tracker's order while there is
// room.
func (d *drive) start(ctx context.Context) error {
	for _, i := range d.cands {
		s := &d.subs[i]
		if s.Action == SubCycle {
			continue
		}
		v := d.verdicts[s.Issue]
		if !v.Met {
			s.Action, s.Reason = SubWaiting, waitReason(v)
			continue
		}
		if d.active >= d.o.Tracker.MaxActive {
			s.Action, s.Reason = SubQueued, fmt.Sprintf("starts when one of the %d active sub-issues is closed (tracker.max_active)", d.active)
			continue
		}
		rc, err := recordstore.New(d.gh).Read(ctx, s.Issue, 0)
		if err != nil {
			return fmt.Errorf("sub-issue #%d: %w", s.Issue, err)
		}
		if ran(rc.Record) {
			// A Job ran for it already (a person labelled it): it is at work,
			// and its own Jobs and report carry it.
			s.Action, s.Reason = SubActive, "its record shows a Job: already at work"
			d.started[s.Issue] = true
			d.active++
			continue
		}
		next := nextFromBlocked(s.Issue, rc, false)
		if next.StoppedBy != "" {
			s.Action, s.Reason = SubStopped, "stopped by "+next.StoppedBy
			continue
		}
		s.Phase = next.Phase
		if d.o.DryRun {
			s.Action = SubWouldRun
			d.active++
			continue
		}
		run, err := dispatchNext(ctx, d.gh, d.o.Workflow, d.o.Ref, next, "")
		if err != nil {
			return fmt.Errorf("tracker: %w", err)
		}
		s.Action, s.RunID = SubStarted, run
		d.started[s.Issue] = true
		d.active++
		d.dispatched++
	}
	return nil
}

// ran reports whether the record has a Job's line, of either phase.
func ran(rec *record.Record) bool {
	impl, _ := rec.Jobs()
	stage, _ := rec.StageJobs()
	return len(impl) > 0 || len(stage) > 0
}

// parseStarted reads the started line of roadmap's own status comment.
func parseStarted(body string) map[int]bool {
	out := map[int]bool{}
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, startedLine)
		if !ok {
			continue
		}
		rest, _ = strings.CutSuffix(rest, "-->")
		for _, f := range strings.Fields(rest) {
			if n, err := strconv.Atoi(f); err == nil && n > 0 && len(out) < maxStarted {
				out[n] = true
			}
		}
	}
	return out
}

func subRef(s SubIssue) string {
	if s.Repo != "" {
		return fmt.Sprintf("%s#%d", s.Repo, s.Issue)
	}
	return fmt.Sprintf("#%d", s.Issue)
}

// statusComment is the tracker's status comment: a line of counts, one row
// per sub-issue with what roadmap does about it, how to stop the drive, and
// the started line.
func statusComment(out DriveOutcome, started map[int]bool, t TrackerOptions) string {
	var b strings.Builder
	closed := 0
	for _, s := range out.SubIssues {
		if s.Action == SubDone || s.Action == SubDropped {
			closed++
		}
	}
	b.WriteString(TrackerMarker + "\n")
	switch {
	case out.Complete && out.Closed:
		fmt.Fprintf(&b, "**roadmap · tracker complete**: all %d sub-issues are closed, so roadmap closed this tracker.\n\n", len(out.SubIssues))
	case out.Complete:
		fmt.Fprintf(&b, "**roadmap · tracker complete**: all %d sub-issues are closed (`tracker.on_complete: comment` leaves it open).\n\n", len(out.SubIssues))
	default:
		fmt.Fprintf(&b, "**roadmap · tracker**: %d of %d sub-issues closed; %d active (at most %d at once, `tracker.max_active`).\n\n",
			closed, len(out.SubIssues), out.Active, out.MaxActive)
	}
	if len(out.SubIssues) > 0 {
		b.WriteString("| sub-issue | state | why |\n|---|---|---|\n")
		for _, s := range out.SubIssues {
			// Started now or before, it is active: the comment changes when
			// a sub-issue's state does, not on every drive.
			what := s.Action
			if what == SubStarted {
				what = SubActive
			}
			fmt.Fprintf(&b, "| %s %s | %s | %s |\n", subRef(s), cell(s.Title), what, plainCell(s.Reason))
		}
		b.WriteString("\n")
	}
	for _, n := range out.Notes {
		b.WriteString("Note: " + plainCell(n) + "\n\n")
	}
	if !out.Complete {
		fmt.Fprintf(&b, "A sub-issue starts when its blockers are closed and there is room; a person's close of any issue "+
			"(a merge that fixes it too) starts the next. Remove the `%s` label to stop the drive (docs/tracker.md).\n", t.Label)
	}
	var nums []int
	for n := range started {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	line := startedLine
	for _, n := range nums {
		line += " " + strconv.Itoa(n)
	}
	b.WriteString(line + " -->\n")
	return b.String()
}

// plainCell is roadmap's own text for one cell of a Markdown table (a
// title, anyone's text, goes through cell: a code span).
func plainCell(s string) string {
	s = strings.NewReplacer("\n", " ", "\r", " ", "|", `\|`).Replace(s)
	return strings.TrimSpace(s)
}
