package implement_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// counted returns the requests of reqs that count against the rate limit
// (a 304 is free), by endpoint.
func counted(reqs []githubfake.LoggedRequest) map[string]int {
	out := map[string]int{}
	for _, r := range reqs {
		if r.Status != 304 {
			out[r.Endpoint]++
		}
	}
	return out
}

func countsText(m map[string]int) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var b strings.Builder
	for _, k := range ks {
		fmt.Fprintf(&b, "\n  %-60s %d", k, m[k])
	}
	return b.String()
}

// Gap 8 and seed 001: the counted GitHub requests of a fresh Job, a
// continuation at the same head and one at a new head, endpoint by
// endpoint (and, for each, what TestRequestCount checked of its fresh Job:
// listedOnce). Each Job's fixed cost is reading the issue and its record and
// writing the typed result; the record comment's create, the group and
// phase marks and the PR comment are the extras seed 001 bounds at five.
func TestRequestCountPerEndpoint(t *testing.T) {
	const (
		getIssue     = "GET /repos/{owner}/{repo}/issues/{n}"
		listComments = "GET /repos/{owner}/{repo}/issues/{n}/comments"
		postComment  = "POST /repos/{owner}/{repo}/issues/{n}/comments"
		patchComment = "PATCH /repos/{owner}/{repo}/issues/comments/{id}"
	)
	w := newWorld(t, 1, "")
	var jobs []map[string]int
	var results []string
	runJob := func(prepare func(*job)) *job {
		t.Helper()
		before := len(w.fake.Requests())
		j := w.newJob(w.conversations())
		j.opts.WatchTimeout = time.Minute
		if prepare != nil {
			prepare(j)
		}
		res := j.runWithCIRunning()
		results = append(results, fmt.Sprintf("%s at %s", res.Result, short(res.HeadSHA)))
		if res.Result != record.ResultYielded {
			t.Fatalf("Job %d: %s/%s (%s), want yielded at the watch\n%s", len(jobs)+1, res.Result, res.Failure, res.Reason, j.log.String())
		}
		reqs := w.fake.Requests()[before:]
		jobs = append(jobs, counted(reqs))
		listedOnce(t, w, len(jobs), reqs)
		return j
	}
	first := runJob(nil)
	// The next Job hands over the record comment's id, as the workflow does.
	id := first.outputs["record_comment"]
	var rc int64
	fmt.Sscan(id, &rc)
	runJob(func(j *job) { j.opts.RecordComment = rc })
	// A person pushes a commit to the PR branch: the next Job is at a new head.
	branch := fmt.Sprintf("roadmap/%d-add-greetings", w.issue)
	other := filepath.Join(w.dir, "person")
	run(t, w.dir, "git", "clone", "-q", "-b", branch, w.remote, other)
	os.WriteFile(filepath.Join(other, "NOTES.md"), []byte("a person's note\n"), 0o644)
	run(t, other, "git", "add", "-A")
	run(t, other, "git", "commit", "-q", "-m", "a person's note")
	run(t, other, "git", "push", "-q", "origin", branch)
	third := runJob(func(j *job) { j.opts.RecordComment = rc })
	if len(third.checks.cmds) == 0 {
		t.Errorf("the Job at a new head ran no scoped checks")
	}

	const (
		getComment = "GET /repos/{owner}/{repo}/issues/comments/{id}"
		listPRs    = "GET /repos/{owner}/{repo}/pulls"
		getPR      = "GET /repos/{owner}/{repo}/pulls/{n}"
		createPR   = "POST /repos/{owner}/{repo}/pulls"
		status     = "GET /repos/{owner}/{repo}/commits/{ref}/status"
		checkRuns  = "GET /repos/{owner}/{repo}/commits/{ref}/check-runs"
	)
	// A write of the record costs a conditional read (free after a read,
	// paid after our own PATCH: its ETag is not a GET's) and the PATCH.
	want := []map[string]int{
		// Fresh: the record comment found by one list; two writes (the
		// last group's mark riding with the checked mark, then the
		// result); the PR looked for and opened; its checks polled twice;
		// the PR comment listed and posted; the PR body not written for a
		// yield (a continuation follows).
		{getIssue: 1, listComments: 2, getComment: 1, patchComment: 2, postComment: 1,
			listPRs: 1, createPR: 1, status: 2, checkRuns: 1},
		// Same head: the record read by its id; nothing to do but watch; the
		// result written; the PR comment listed and edited.
		{getIssue: 1, getComment: 1, patchComment: 2, listComments: 1, getPR: 1, status: 1, checkRuns: 1},
		// New head: the person's push reconciled (published_sha), the scoped
		// checks passed there (checked_sha), the result; the PR comment.
		{getIssue: 1, getComment: 3, patchComment: 4, listComments: 1, getPR: 1, status: 2, checkRuns: 1},
	}
	// fixed is each Job's record cost before seed 001's extras: the issue
	// read, the record read (fresh: its list), the marks the work itself
	// needs (fresh: the group mark; new head: the reconcile) and the result.
	fixed := []int{1 + 1 + 1 + 2, 1 + 1 + 1, 1 + 1 + 1 + 2}
	names := []string{"fresh Job", "continuation at the same head", "continuation at a new head"}
	for i, got := range jobs {
		if countsText(got) != countsText(want[i]) {
			t.Errorf("%s (%s): counted requests by endpoint:%s\nwant:%s", names[i], results[i], countsText(got), countsText(want[i]))
		}
		// Seed 001: the PR comment's marker (one list, here also its write)
		// and the phase marks (a read and a PATCH each) add at most five.
		extra := got[getIssue] + got[listComments] + got[getComment] + got[postComment] + got[patchComment] - fixed[i]
		if extra > 5 {
			t.Errorf("%s: %d requests beyond the Job's fixed record cost, want at most 5", names[i], extra)
		}
		t.Logf("%s: %d extra requests (the PR comment and the phase marks)", names[i], extra)
	}
}

// listedOnce is what TestRequestCount checked of a Job's requests reqs (it
// ran a fresh Job of its own, yielding at the watch, which the fresh Job
// here is): every comment list (the issue's, the PR's) is read at most once
// a Job, and the PR comment's marker and the two phase marks cost at most
// five requests over a Job that reads the issue and its record once and
// writes the typed result once (4).
func listedOnce(t *testing.T, w *world, job int, reqs []githubfake.LoggedRequest) {
	t.Helper()
	counts := counted(reqs)
	lists := map[string]int{}
	recordWrites := 0
	for _, r := range reqs {
		if r.Status == 304 {
			continue // free
		}
		if r.Endpoint == "GET /repos/{owner}/{repo}/issues/{n}/comments" {
			lists[r.Path]++
		}
		if (r.Endpoint == "PATCH /repos/{owner}/{repo}/issues/comments/{id}" ||
			r.Endpoint == "POST /repos/{owner}/{repo}/issues/{n}/comments") && strings.Contains(r.Body, "roadmap:record") {
			recordWrites++
		}
	}
	for path, n := range lists {
		if n > 1 {
			t.Errorf("Job %d listed %s %d times, want at most once per Job", job, path, n)
		}
	}
	prLists := len(lists) - lists[fmt.Sprintf("/repos/%s/%s/issues/%d/comments", owner, repo, w.issue)]
	recordReads := counts["GET /repos/{owner}/{repo}/issues/{n}/comments"] - prLists + counts["GET /repos/{owner}/{repo}/issues/comments/{id}"]
	issueReads := counts["GET /repos/{owner}/{repo}/issues/{n}"]
	const baseline = 4
	if extra := prLists + recordReads + issueReads + recordWrites - baseline; extra > 5 {
		t.Errorf("Job %d: the marker and the two phase marks cost %d requests (PR comment lists %d, record reads %d, issue reads %d, record writes %d), want at most 5",
			job, extra, prLists, recordReads, issueReads, recordWrites)
	}
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
