package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/dashboard"
	"github.com/roadmap-dev/roadmap/internal/event"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/items"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// TestDashboardCommandsWritersOnly: boxes ticked on the dashboard by a
// person with write access are carried out (retry, stop, wake now) and
// shown clear again; the same ticks by anyone else change nothing and are
// cleared, and the log says why.
func TestDashboardCommandsWritersOnly(t *testing.T) {
	type world struct {
		e                          *env
		dash, stopped, busy, sleep int
	}
	setup := func(t *testing.T) world {
		e := newEnv(t)
		var w world
		w.e = e
		stopped := endOfJob(t, base(), 2, 9002, record.ResultStopped, "checks_failed", "go test failed", 1)
		w.stopped = e.issue(t, stopped, "roadmap:implement", "roadmap:stopped")
		w.busy = e.issue(t, base(), "roadmap:implement")
		waiting := endOfJob(t, base(), 2, 9003, record.ResultYielded, "day_budget_exhausted", "the day's budget is spent", 1)
		waiting.SetWakeAt(t0.Add(14 * time.Hour))
		w.sleep = e.issue(t, waiting, "roadmap:implement", "roadmap:waiting")
		w.dash = e.fake.CreateIssue(githubfake.Issue{Title: dashboard.Title, Labels: []string{dashboard.Label}, Author: "alice"})
		var lines []dashboard.Line
		for _, n := range []int{w.stopped, w.busy, w.sleep} {
			lines = append(lines, dashboard.LineOf(items.Of(n, "item", e.record(t, n)), t0, nil))
		}
		if _, err := dashboard.Keep(ctx, dashboard.KeepOptions{GitHub: e.client(t), Issue: w.dash, Lines: lines, Now: t0}); err != nil {
			t.Fatal(err)
		}
		return w
	}
	tick := func(t *testing.T, w world, login string) {
		t.Helper()
		if err := w.e.fake.EditIssueBody(w.dash, login, func(cur string) string {
			// The web editor saves CRLF line ends.
			return strings.ReplaceAll(strings.ReplaceAll(cur, "- [ ] ", "- [x] "), "\n", "\r\n")
		}); err != nil {
			t.Fatal(err)
		}
	}
	edit := func(t *testing.T, w world, login string) (DashboardEditOutcome, string) {
		t.Helper()
		var log bytes.Buffer
		ev := &event.Event{Name: "issues", Action: "edited", Issue: w.dash, Actor: login, RunID: 9300}
		out, err := DashboardEdit(ctx, DashboardEditOptions{GitHub: w.e.client(t), Event: ev, Dashboard: w.dash,
			Workflow: workflow, Ref: ref, Clock: w.e.clock, Mask: w.e.mask.Mask, Log: &log})
		if err != nil {
			t.Fatalf("DashboardEdit: %v\n%s", err, log.String())
		}
		return out, log.String()
	}
	body := func(w world) string {
		is, _ := w.e.fake.Issue(w.dash)
		return is.Body
	}

	t.Run("a writer's boxes are carried out", func(t *testing.T) {
		w := setup(t)
		w.e.fake.SetPermission("alice", "write")
		tick(t, w, "alice")
		if n := len(dashboard.Ticked(body(w))); n != 3 {
			t.Fatalf("%d boxes ticked, want retry, stop and wake now", n)
		}
		out, log := edit(t, w, "alice")
		if len(out.Boxes) != 3 || out.Ignored != "" {
			t.Fatalf("boxes %+v, ignored %q; want three carried out\n%s", out.Boxes, out.Ignored, log)
		}
		for _, b := range out.Boxes {
			want := map[string]Action{dashboard.CmdRetry: ActionRetry, dashboard.CmdStop: ActionStop, dashboard.CmdWake: ActionContinue}[b.Verb]
			if b.Action != want {
				t.Errorf("box %s #%d: %s (%s), want %s", b.Verb, b.Issue, b.Action, b.Reason, want)
			}
		}
		if by, _ := w.e.record(t, w.busy).StoppedBy(); by != "alice" {
			t.Errorf("#%d item.stopped_by = %q, want alice", w.busy, by)
		}
		var issues []string
		for _, in := range w.e.dispatchInputs() {
			issues = append(issues, in["issue"].(string))
		}
		if strings.Join(issues, ",") != itoa(w.stopped)+","+itoa(w.sleep) {
			t.Errorf("dispatched %v, want the retried #%d and the woken #%d", issues, w.stopped, w.sleep)
		}
		if w.e.hasLabel(w.sleep, "roadmap:waiting") || w.e.hasLabel(w.stopped, "roadmap:stopped") {
			t.Errorf("labels after the commands: #%d %v, #%d %v", w.sleep, w.e.fake.Labels(w.sleep), w.stopped, w.e.fake.Labels(w.stopped))
		}
		b := body(w)
		if len(dashboard.Ticked(b)) != 0 || !out.Dashboard.Wrote {
			t.Errorf("the boxes are still ticked after they were carried out:\n%s", b)
		}
		if !strings.Contains(b, "| stopped | #"+itoa(w.busy)) {
			t.Errorf("the dashboard does not show #%d stopped:\n%s", w.busy, b)
		}
	})

	for _, tc := range []struct{ who, role string }{{"bob", "read"}, {"carol", "triage"}, {"dependabot[bot]", "write"}} {
		t.Run(tc.who+"'s boxes are ignored and cleared", func(t *testing.T) {
			w := setup(t)
			w.e.fake.SetPermission(tc.who, tc.role)
			before := map[int]string{}
			for _, n := range []int{w.stopped, w.busy, w.sleep} {
				before[n] = w.e.body(t, n)
			}
			tick(t, w, tc.who)
			out, log := edit(t, w, tc.who)
			if out.Ignored == "" || len(out.Boxes) != 0 || !strings.Contains(log, "ignored") {
				t.Errorf("outcome %+v, log %q; want every box ignored, and said", out, log)
			}
			if d := w.e.fake.Dispatches(); len(d) != 0 {
				t.Errorf("a non-writer's box dispatched %v", d)
			}
			for n, b := range before {
				if w.e.body(t, n) != b {
					t.Errorf("a non-writer's box changed #%d's record", n)
				}
			}
			if len(dashboard.Ticked(body(w))) != 0 {
				t.Errorf("the ignored ticks were left on the dashboard")
			}
		})
	}
}
