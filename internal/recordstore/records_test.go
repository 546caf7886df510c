package recordstore

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// recordBody renders a record comment whose one Job line names run.
func recordBody(t *testing.T, run int64) string {
	t.Helper()
	var c record.Changes
	c.SetJobs([]record.JobOutcome{{Job: 1, RunID: run}})
	body, err := record.Update("", c)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// runOf is the run id of the record's one Job line.
func runOf(ir ItemRecord) int64 {
	if ir.Record == nil {
		return -1
	}
	jobs, _ := ir.Record.Jobs()
	if len(jobs) != 1 {
		return -1
	}
	return jobs[0].RunID
}

// TestRecords reads every item's record with the repository-wide comment
// list: 150 record comments are two list requests (100 a page); a record
// block in another user's comment is not a record; of two record comments
// on one issue the oldest is the record; since leaves out comments not
// updated since; an unchanged second read is free (304s).
func TestRecords(t *testing.T) {
	e := newEnv(t, githubfake.Options{})
	// An issue whose record comment is older than since.
	old := e.fake.CreateIssue(githubfake.Issue{Title: "old"})
	e.fake.AddComment(old, github.DefaultIdentity, recordBody(t, 9999))
	e.clock.Advance(time.Hour)
	since := e.clock.Now()

	want := map[int]int64{}
	for i := 1; i <= 148; i++ {
		n := e.fake.CreateIssue(githubfake.Issue{Title: "item"})
		e.fake.AddComment(n, "alice", "a person's comment")
		e.fake.AddComment(n, github.DefaultIdentity, recordBody(t, int64(n)))
		want[n] = int64(n)
	}
	// Two record comments by roadmap on one issue: the oldest is the record.
	dup := e.fake.CreateIssue(githubfake.Issue{Title: "dup"})
	e.fake.AddComment(dup, github.DefaultIdentity, recordBody(t, 1))
	e.fake.AddComment(dup, github.DefaultIdentity, recordBody(t, 2))
	want[dup] = 1
	// A record block written by someone else: not a record.
	forged := e.fake.CreateIssue(githubfake.Issue{Title: "forged"})
	e.fake.AddComment(forged, "mallory", recordBody(t, 666))
	// A record comment that does not parse is reported, not dropped silently.
	broken := e.fake.CreateIssue(githubfake.Issue{Title: "broken"})
	e.fake.AddComment(broken, github.DefaultIdentity, "<!-- roadmap:record v1\nimplement.jobs: [not json\n-->")
	want[broken] = -1

	e.fake.ResetLog()
	before := e.c.Requests()
	got, err := Records(ctx, e.c, since)
	if err != nil {
		t.Fatal(err)
	}
	runs := map[int]int64{}
	for _, ir := range got {
		runs[ir.Issue] = runOf(ir)
		if ir.Issue == broken && ir.Problem == "" {
			t.Errorf("issue %d: a record that does not parse has no problem", broken)
		}
		if ir.UpdatedAt.Before(since) {
			t.Errorf("issue %d: updated at %v, before since %v", ir.Issue, ir.UpdatedAt, since)
		}
	}
	if diff := cmp.Diff(want, runs); diff != "" {
		t.Errorf("records by issue (-want +got):\n%s", diff)
	}
	// 148*2 + 2 + 1 + 1 = 300 comments updated since: 3 pages of 100. The
	// 150 record comments by roadmap are among them.
	const list = "GET /repos/{owner}/{repo}/issues/comments"
	if n := e.count(list); n != 3 {
		t.Errorf("list requests = %d, want 3 (300 comments, 100 a page)", n)
	}
	if spent := e.c.Requests().Sub(before); spent.Counted() != 3 {
		t.Errorf("counted requests = %d, want 3", spent.Counted())
	}

	// Nothing changed: every page is a conditional GET answered 304.
	before = e.c.Requests()
	if _, err := Records(ctx, e.c, since); err != nil {
		t.Fatal(err)
	}
	if spent := e.c.Requests().Sub(before); spent.Counted() != 0 || spent.NotModified != 3 {
		t.Errorf("unchanged read: %d counted, %d not modified; want 0, 3", spent.Counted(), spent.NotModified)
	}
}
