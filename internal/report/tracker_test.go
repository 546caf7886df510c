package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
)

const trackerLabel = "roadmap:tracker"

// tracker makes a tracker issue with a new sub-issue per title, in order,
// and returns the tracker and its sub-issues. taskList lists them in the
// tracker's body instead of as native sub-issues.
func (e *env) tracker(t *testing.T, taskList bool, titles ...string) (int, []int) {
	t.Helper()
	var subs []int
	var body strings.Builder
	body.WriteString("The epic.\n\n")
	for _, title := range titles {
		n := e.fake.CreateIssue(githubfake.Issue{Title: title, Author: "maintainer"})
		subs = append(subs, n)
		fmt.Fprintf(&body, "- [ ] #%d\n", n)
	}
	tr := e.fake.CreateIssue(githubfake.Issue{Title: "Epic", Author: "maintainer", Labels: []string{"roadmap:stage"}})
	if taskList {
		if err := e.fake.SetIssueBody(tr, "maintainer", body.String()); err != nil {
			t.Fatal(err)
		}
		return tr, subs
	}
	for _, n := range subs {
		if err := e.fake.AddSubIssue(tr, n); err != nil {
			t.Fatal(err)
		}
	}
	return tr, subs
}

// handOver runs report for the stage Job that found tracker n (class
// tracker), with at most maxActive sub-issues active.
func (e *env) handOver(t *testing.T, n, maxActive int) Outcome {
	t.Helper()
	var log bytes.Buffer
	o := e.options(n, 7001)
	o.GitHub, o.Phase, o.Result, o.Failure = e.client(t), PhaseStage, string(record.ResultYielded), string(failure.Tracker)
	o.Reason = fmt.Sprintf("#%d is a tracker: roadmap drives its sub-issues, not the tracker itself", n)
	o.Tracker.MaxActive, o.Log = maxActive, &log
	out, err := Run(ctx, o)
	if err != nil {
		t.Fatalf("report: %v\n%s", err, log.String())
	}
	if out.Action != ActionDrive || out.Tracker == nil {
		t.Fatalf("report's action %q (tracker %v), want drive\n%s", out.Action, out.Tracker, log.String())
	}
	return out
}

// wakeTrackers runs the drive of every labelled tracker, as the caller's
// unblock job does on a person's close or reopening (a fresh Client).
func (e *env) wakeTrackers(t *testing.T, maxActive int, onComplete string) ([]DriveOutcome, string) {
	t.Helper()
	var log bytes.Buffer
	out, err := DriveTrackers(ctx, DriveOptions{GitHub: e.client(t), Workflow: workflow, Ref: ref,
		Tracker: TrackerOptions{MaxActive: maxActive, OnComplete: onComplete}, Mask: e.mask.Mask, Log: &log})
	if err != nil {
		t.Fatalf("DriveTrackers: %v\n%s", err, log.String())
	}
	return out, log.String()
}

// actions is "#n action" of each sub-issue of a drive.
func actions(d DriveOutcome) []string {
	var out []string
	for _, s := range d.SubIssues {
		out = append(out, fmt.Sprintf("#%d %s", s.Issue, s.Action))
	}
	return out
}

func (e *env) closeIssue(t *testing.T, n int) {
	t.Helper()
	if err := e.fake.CloseIssue(n, "completed"); err != nil {
		t.Fatal(err)
	}
}

// TestTrackerDrivesSubIssues: a tracker of three sub-issues, C blocked by
// B, is labelled roadmap:stage; its stage Job hands it over (class
// tracker) and report drives it: A and B start at once (stage: neither has
// a plan), C waits for B; the tracker gets roadmap:tracker and one status
// comment. A wake while B is open starts nothing again. B closed: the next
// drive starts C. The same with the sub-issues named in a task list, and
// a sub-issue whose plan was approved goes on to implement.
func TestTrackerDrivesSubIssues(t *testing.T) {
	for _, taskList := range []bool{false, true} {
		t.Run(map[bool]string{false: "native sub-issues", true: "task list"}[taskList], func(t *testing.T) {
			e := newEnv(t)
			tr, subs := e.tracker(t, taskList, "A", "B", "C")
			a, b, c := subs[0], subs[1], subs[2]
			e.blockedBy(t, c, b)

			out := e.handOver(t, tr, 3)
			d := *out.Tracker
			want := []string{fmt.Sprintf("#%d started", a), fmt.Sprintf("#%d started", b), fmt.Sprintf("#%d waiting", c)}
			if diff := cmp.Diff(want, actions(d)); diff != "" {
				t.Fatalf("the first drive (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{itoa(a) + "/stage", itoa(b) + "/stage"}, e.dispatched(0)); diff != "" {
				t.Errorf("dispatched (-want +got):\n%s", diff)
			}
			if r := d.SubIssues[2].Reason; r != "waiting for #"+itoa(b) {
				t.Errorf("C's reason %q, want waiting for #%d", r, b)
			}
			if !e.hasLabel(tr, trackerLabel) {
				t.Errorf("the tracker's labels %v lack %s", e.fake.Labels(tr), trackerLabel)
			}
			status := e.commentWith(tr, TrackerMarker)
			for _, s := range []string{"0 of 3 sub-issues closed; 2 active (at most 3", "| #" + itoa(c) + " `C` | waiting | waiting for #" + itoa(b) + " |",
				"<!-- started: " + itoa(a) + " " + itoa(b) + " -->"} {
				if !strings.Contains(status, s) {
					t.Errorf("the status comment lacks %q:\n%s", s, status)
				}
			}
			if d.Active != 2 || d.Started != 2 || d.Complete {
				t.Errorf("active %d, started %d, complete %v; want 2, 2, false", d.Active, d.Started, d.Complete)
			}

			// A wake with B open: nothing new, nothing written.
			comments := len(e.fake.Comments(tr))
			ds, log := e.wakeTrackers(t, 3, "")
			if len(ds) != 1 || ds[0].Started != 0 || len(e.fake.Dispatches()) != 2 {
				t.Fatalf("a second drive started %v\n%s", e.dispatched(2), log)
			}
			// The tracker and its children (2: the issue, then its sub-issues
			// or one query for its task list), the status comment (1), and
			// the waiting C's blockers (1: its dependencies; its body names none).
			if ds[0].Requests != 4 {
				t.Errorf("a drive with one sub-issue waiting cost %d counted requests, want 4\n%s", ds[0].Requests, log)
			}
			if len(e.fake.Comments(tr)) != comments || e.commentWith(tr, TrackerMarker) != status {
				t.Errorf("a drive that changed nothing changed the status comment:\n%s", e.commentWith(tr, TrackerMarker))
			}

			// B closed (its PR merged): C starts.
			e.closeIssue(t, b)
			ds, log = e.wakeTrackers(t, 3, "")
			want = []string{fmt.Sprintf("#%d active", a), fmt.Sprintf("#%d done", b), fmt.Sprintf("#%d started", c)}
			if diff := cmp.Diff(want, actions(ds[0])); diff != "" {
				t.Errorf("the drive after B closed (-want +got):\n%s\n%s", diff, log)
			}
			if diff := cmp.Diff([]string{itoa(c) + "/stage"}, e.dispatched(2)); diff != "" {
				t.Errorf("dispatched after B closed (-want +got):\n%s", diff)
			}
			if !strings.Contains(e.commentWith(tr, TrackerMarker), "1 of 3 sub-issues closed; 2 active") {
				t.Errorf("the status comment after B closed:\n%s", e.commentWith(tr, TrackerMarker))
			}
		})
	}

	// A sub-issue whose plan was approved (its record names the plan) goes
	// on to implement; one a person started already (its record has a
	// Job) is active, not started again.
	e := newEnv(t)
	tr, subs := e.tracker(t, false, "planned", "at work", "fresh")
	var planned record.Changes
	planned.SetStagePlan("openspec/changes/add-backoff")
	e.recordOn(t, subs[0], planned)
	var atWork record.Changes
	atWork.SetStageJobs([]record.JobOutcome{{Job: 1, RunID: 5001, Result: record.ResultYielded}})
	e.recordOn(t, subs[1], atWork)
	d := *e.handOver(t, tr, 3).Tracker
	want := []string{fmt.Sprintf("#%d started", subs[0]), fmt.Sprintf("#%d active", subs[1]), fmt.Sprintf("#%d started", subs[2])}
	if diff := cmp.Diff(want, actions(d)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{itoa(subs[0]) + "/implement/1", itoa(subs[2]) + "/stage"}, e.dispatched(0)); diff != "" {
		t.Errorf("dispatched (-want +got):\n%s", diff)
	}
}

// recordOn gives issue n a record comment holding ch, and returns the
// record as written.
func (e *env) recordOn(t *testing.T, n int, ch record.Changes) *record.Record {
	t.Helper()
	rec, _ := record.Parse("")
	if err := rec.Apply(ch); err != nil {
		t.Fatal(err)
	}
	rec.SetView(record.View{})
	text, err := record.RenderComment(rec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.fake.AddComment(n, github.DefaultIdentity, text); err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestTrackerStatusOnClose: the status is evaluated again on every
// sub-issue close and reopening: a close counts it done, a reopening makes
// it active again without a second start; when every sub-issue is closed
// the tracker loses roadmap:tracker and is closed as completed (or, with
// tracker.on_complete comment, only says so). A later drive leaves it.
func TestTrackerStatusOnClose(t *testing.T) {
	for _, onComplete := range []string{"close", "comment"} {
		t.Run(onComplete, func(t *testing.T) {
			e := newEnv(t)
			tr, subs := e.tracker(t, false, "A", "B")
			a, b := subs[0], subs[1]
			e.handOver(t, tr, 3)

			e.closeIssue(t, a)
			ds, _ := e.wakeTrackers(t, 3, onComplete)
			if diff := cmp.Diff([]string{fmt.Sprintf("#%d done", a), fmt.Sprintf("#%d active", b)}, actions(ds[0])); diff != "" {
				t.Errorf("after A closed (-want +got):\n%s", diff)
			}
			if s := e.commentWith(tr, TrackerMarker); !strings.Contains(s, "1 of 2 sub-issues closed; 1 active") || !strings.Contains(s, "| #"+itoa(a)+" `A` | done |") {
				t.Errorf("the status after A closed:\n%s", s)
			}

			if err := e.fake.ReopenIssue(a); err != nil {
				t.Fatal(err)
			}
			ds, _ = e.wakeTrackers(t, 3, onComplete)
			if diff := cmp.Diff([]string{fmt.Sprintf("#%d active", a), fmt.Sprintf("#%d active", b)}, actions(ds[0])); diff != "" {
				t.Errorf("after A reopened (-want +got):\n%s", diff)
			}
			if len(e.fake.Dispatches()) != 2 {
				t.Errorf("a reopening started a sub-issue again: %v", e.dispatched(2))
			}
			if s := e.commentWith(tr, TrackerMarker); !strings.Contains(s, "0 of 2 sub-issues closed; 2 active") {
				t.Errorf("the status after A reopened:\n%s", s)
			}

			e.closeIssue(t, a)
			e.closeIssue(t, b)
			ds, log := e.wakeTrackers(t, 3, onComplete)
			if !ds[0].Complete || ds[0].Closed != (onComplete == "close") {
				t.Errorf("complete %v, closed %v; want complete, closed only with close\n%s", ds[0].Complete, ds[0].Closed, log)
			}
			is, _ := e.fake.Issue(tr)
			if closed := is.State == "closed"; closed != (onComplete == "close") || (closed && is.StateReason != "completed") {
				t.Errorf("the tracker is %s (%s) with on_complete %s", is.State, is.StateReason, onComplete)
			}
			if e.hasLabel(tr, trackerLabel) {
				t.Errorf("a complete tracker keeps %s", trackerLabel)
			}
			// The status says what became of the tracker: closed, or
			// left open by the configuration.
			says := map[string]string{"close": "tracker complete**: all 2 sub-issues are closed, so roadmap closed this tracker.",
				"comment": "tracker complete**: all 2 sub-issues are closed (`tracker.on_complete: comment` leaves it open)."}[onComplete]
			if s := e.commentWith(tr, TrackerMarker); !strings.Contains(s, says) {
				t.Errorf("the status of a complete tracker lacks %q:\n%s", says, s)
			}
			if len(e.fake.Comments(tr)) != 1 {
				t.Errorf("the tracker has %d comments; want the one status comment", len(e.fake.Comments(tr)))
			}
			// Unlabelled now: a later wake drives nothing.
			if ds, _ := e.wakeTrackers(t, 3, onComplete); len(ds) != 0 {
				t.Errorf("a complete tracker was driven again: %+v", ds)
			}
		})
	}
}

// TestTrackerConcurrencyLimit: five sub-issues, none blocked, at most two
// active: the first two in the tracker's order start, the rest are queued;
// each close makes room for exactly one more, and never more than two are
// open and started at once. A drive that only finds the limit reached
// writes nothing; one whose dispatch is refused after it started another
// names that one in its comment, so the next drive does not start it again.
func TestTrackerConcurrencyLimit(t *testing.T) {
	e := newEnv(t)
	tr, subs := e.tracker(t, false, "one", "two", "three", "four", "five")
	d := *e.handOver(t, tr, 2).Tracker
	want := []string{"started", "started", "queued", "queued", "queued"}
	for i, s := range d.SubIssues {
		if s.Action != want[i] {
			t.Errorf("sub-issue %d (#%d): %s, want %s", i+1, s.Issue, s.Action, want[i])
		}
	}
	if r := d.SubIssues[2].Reason; !strings.Contains(r, "2 active") || !strings.Contains(r, "tracker.max_active") {
		t.Errorf("a queued sub-issue's reason %q does not name the limit", r)
	}
	if diff := cmp.Diff([]string{itoa(subs[0]) + "/stage", itoa(subs[1]) + "/stage"}, e.dispatched(0)); diff != "" {
		t.Errorf("dispatched (-want +got):\n%s", diff)
	}

	for i := range subs {
		e.closeIssue(t, subs[i])
		ds, log := e.wakeTrackers(t, 2, "")
		started := e.dispatched(0)
		if n := min(i+3, len(subs)); len(started) != n {
			t.Fatalf("after %d closed: %d started %v, want %d\n%s", i+1, len(started), started, n, log)
		}
		if ds[0].Active > 2 {
			t.Errorf("after %d closed: %d active, above the limit of 2", i+1, ds[0].Active)
		}
		if next := i + 2; next < len(subs) && started[next] != itoa(subs[next])+"/stage" {
			t.Errorf("after %d closed: started %v, want #%d next (the tracker's order)", i+1, started, subs[next])
		}
	}
	is, _ := e.fake.Issue(tr)
	if is.State != "closed" {
		t.Errorf("every sub-issue closed, the tracker is %s", is.State)
	}

	// The limit reached and nothing changed: nothing is written.
	e2 := newEnv(t)
	tr2, _ := e2.tracker(t, false, "one", "two", "three")
	e2.handOver(t, tr2, 1)
	e2.fake.ResetLog()
	e2.wakeTrackers(t, 1, "")
	for _, r := range e2.fake.Requests() {
		if r.Method != "GET" && r.Path != "/graphql" {
			t.Errorf("a drive at its limit wrote: %s %s", r.Method, r.Path)
		}
	}

	// A dispatch refused after the first: the drive fails, and its comment
	// still names the one it started, which the next drive does not start
	// again.
	e3 := newEnv(t)
	tr3, subs3 := e3.tracker(t, false, "one", "two", "three")
	e3.fake.AddFault(githubfake.Rule{Method: "POST", Path: "/repos/acme/widgets/actions/workflows/*/dispatches", Call: 2, Status: 403})
	if _, err := Drive(ctx, DriveOptions{GitHub: e3.client(t), Workflow: workflow, Ref: ref, Mask: e3.mask.Mask}, tr3); err == nil {
		t.Fatal("a drive whose second dispatch was refused did not fail")
	}
	if s := e3.commentWith(tr3, TrackerMarker); !strings.Contains(s, "<!-- started: "+itoa(subs3[0])+" -->") {
		t.Errorf("the failed drive's comment does not name #%d, which it started:\n%s", subs3[0], s)
	}
	e3.fake.ClearFaults()
	if _, err := Drive(ctx, DriveOptions{GitHub: e3.client(t), Workflow: workflow, Ref: ref, Mask: e3.mask.Mask}, tr3); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{itoa(subs3[0]) + "/stage", itoa(subs3[1]) + "/stage", itoa(subs3[2]) + "/stage"}, e3.dispatched(0)); diff != "" {
		t.Errorf("after the failed drive (-want +got):\n%s", diff)
	}
}
