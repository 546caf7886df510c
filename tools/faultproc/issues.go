package faultproc

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/faults"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/recordstore"
	"github.com/roadmap-dev/roadmap/internal/report"
)

// The process kinds of issues 46 and 47, played from outside: people's
// acts mid-run, an answer over the limit, a 1,000-comment issue, a list
// that leaves out the record, a person breaking the record block just
// before and just after the Job's first write of it, and a real full disk
// mid-group (disk.go).
func issueScenarios(recordPatch string) []pscenario {
	act := func(kind, act string, end record.Result, class string) pscenario {
		return pscenario{Name: fmt.Sprintf("a person acts (%s) when group 2's agent step starts", act), Kind: kind, end: end, class: class,
			model: func(p *plife, n int) {
				if n == 3 { // group 2's first call: group 1 is pushed, its PR open
					p.faulted.Store(true)
					p.actCalls = n - 1
					if err := faults.PersonActs(p.w, act); err != nil {
						p.note("the person could not act: %v", err)
					}
				}
			}}
	}
	return []pscenario{
		act("proc_person_closes_pr", faults.ActClosePR, record.ResultYielded, "pr_closed"),
		act("proc_person_merges_pr", faults.ActMergePR, record.ResultReturned, "pr_merged"),
		act("proc_person_closes_issue", faults.ActCloseIssue, record.ResultYielded, "issue_closed"),
		{Name: "the model answers group 1 with a body over llm.MaxAnswerBytes", Kind: "proc_answer_over_limit", end: record.ResultStopped, class: "unknown",
			mutate: func(group int, c *llm.Conversation) {
				if group == 1 {
					c.Turns[0].Response.Content = strings.Repeat("all work and no play ", llm.MaxAnswerBytes/20+1)
				}
			}},
		{Name: fmt.Sprintf("an issue with %d comments by people", faults.ManyComments), Kind: "proc_many_comments", budget: true},
		{Name: "the first comment list leaves out the record (a Job handed no record id, no pointer)", Kind: "proc_list_omits_record", omitList: true},
		breaks(recordPatch, "before"),
		breaks(recordPatch, "after"),
		// Group 2's first call: group 1 is pushed, the agent's write meets
		// the full disk. Its last call: the file is written, git's commit
		// meets it.
		diskFull(3, "first model call (the agent's write meets it)"),
		diskFull(4, "last model call (git's commit meets it)"),
	}
}

// diskFull is a real full disk from outside: the first Job's own small disk
// fills when the model server gets its call-th call.
func diskFull(call int, when string) pscenario {
	return pscenario{Name: "the Job's disk fills at group 2's " + when, Kind: "proc_disk_full", diskFull: true,
		model: func(p *plife, n int) {
			if n == call {
				p.fillDisk()
			}
		}}
}

// breaks is a person breaking the record block (faults.BreakRecord) just
// before or just after the fake applies the Job's first PATCH of it.
func breaks(recordPatch, when string) pscenario {
	return pscenario{Name: "a person breaks the record block just " + when + " the Job's first PATCH of it", Kind: "proc_person_breaks_record", breaks: when,
		rules: func(p *plife) []githubfake.Rule {
			f := func() {
				if err := p.w.Fake.EditComment(p.recordID(), faults.BreakRecord); err != nil {
					p.note("the person could not edit the record: %v", err)
					return
				}
				p.broke.Store(true)
			}
			r := githubfake.Rule{Method: http.MethodPatch, Path: recordPatch, Call: 1}
			if when == "before" {
				r.Before = f
			} else {
				r.After = f
			}
			return []githubfake.Rule{r}
		}}
}

// checkIssue holds the histories of issueScenarios to their promises: a
// person's act ends the item as the taxonomy says, never ready, with no
// group pushed and no spend after it; an over-limit answer stops the item
// and is never sent back; a 1,000-comment issue's item stays within the
// item's request budget.
func (p *plife) checkIssue(got pstate, bad func(string, ...any)) {
	if p.sc.end != "" {
		if got.Result != string(p.sc.end) || got.Failure != p.sc.class {
			bad("the item ended %s (promise: %s/%s)", got.Brief(), p.sc.end, p.sc.class)
		}
		if p.ended == string(record.ResultReady) || got.Result == string(record.ResultReady) {
			bad("the item ended ready (promise: never ready after a person's act or a refused answer)")
		}
	}
	if p.actCalls > 0 {
		if _, ok := got.Files["greeting-2.txt"]; ok {
			bad("group 2 was pushed after the person's act (promise: nothing more is pushed)")
		}
		if p.sc.Kind != "proc_person_merges_pr" && !got.PRDraft {
			bad("the PR was marked ready after the person's act (promise: never ready)")
		}
		if n := int(p.calls.Load()) - p.actCalls; n > 2 {
			bad("%d model calls after the person's act (promise: the spend stops within the group)", n)
		}
	}
	if p.sc.mutate != nil {
		asked := slices.IndexFunc(p.w.Replay.Stats().Served, func(s llm.Served) bool { return s.Conversation == "group-1" && s.Turn == 0 })
		if asked < 0 {
			bad("the over-limit answer was never served")
		}
		if m := p.maxModelRequest.Load(); m >= llm.MaxAnswerBytes {
			bad("a model request of %d bytes (promise: a refused answer is never sent again)", m)
		}
	}
	if p.sc.breaks != "" {
		p.checkBroken(bad)
	}
	if p.sc.diskFull && !slices.ContainsFunc(p.outcomes, func(o report.Outcome) bool {
		return o.Class == failure.Killed && o.Action == report.ActionContinue &&
			(o.KillReason == failure.ReasonDiskFull || failure.Classify(failure.Input{Log: strings.NewReader(o.Reason)}).Reason == failure.ReasonDiskFull)
	}) {
		bad("no report continued the item as a full disk (promise: class killed, reason disk_full, a continuation on a fresh runner); reports: %s", briefOutcomes(p.outcomes))
	}
	if p.sc.budget {
		n := 0
		for _, r := range p.w.Fake.Requests() {
			if r.Status != http.StatusNotModified && !strings.HasPrefix(r.Path, "/_logs/") {
				n++
			}
		}
		if n > faults.ItemRequestBudget {
			bad("the item's life cost %d counted GitHub requests (promise: at most %d whatever the issue's comments)", n, faults.ItemRequestBudget)
		}
	}
}

// listProxy stands between the processes and the fake GitHub: the first
// list of the issue's comments it passes on leaves out the record comment,
// as GitHub's eventually consistent lists may (list_omits_record). The
// item's first Job is handed no record id and finds no pointer (the world's
// record predates it), so the list is its only way to the record.
func (p *plife) listProxy() (string, error) {
	target, err := url.Parse(p.w.GitHubURL())
	if err != nil {
		return "", err
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	list := fmt.Sprintf("/repos/%s/%s/issues/%d/comments", faults.Owner, faults.Repo, p.w.Issue)
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Method == http.MethodGet && resp.Request.URL.Path == list && resp.StatusCode == http.StatusOK && !p.faulted.Load() &&
			faults.OmitRecord(resp) > 0 {
			p.faulted.Store(true)
		}
		return nil
	}
	srv := httptest.NewServer(rp)
	p.closeProxy = srv.Close
	return srv.URL, nil
}

// checkBroken holds a person's break of the record to its promises: the
// record reads at the end, no report step failed, and the repair comment
// is there once when the break was seen ("after": the Job's next write
// reads it) and absent when the Job's write went over it unseen ("before":
// the read→PATCH window, docs/record.md).
func (p *plife) checkBroken(bad func(string, ...any)) {
	c, ok := p.w.RecordComment()
	if !ok {
		bad("no record comment at the end")
	} else if _, err := record.Parse(c.Body); err != nil {
		bad("the record does not read at the end (promise: a broken block is repaired): %v", err)
	}
	if p.reportBad != "" {
		bad("a report step failed (promise: report never fails on a broken record): %s", p.reportBad)
	}
	repairs := 0
	for _, c := range p.w.Fake.Comments(p.w.Issue) {
		if strings.Contains(c.Body, recordstore.RepairMarker) {
			repairs++
		}
	}
	want := 1
	if p.sc.breaks == "before" {
		want = 0
	}
	if repairs != want {
		bad("%d repair comments on the issue (promise: %d, a break %s the PATCH)", repairs, want, p.sc.breaks)
	}
}

// briefOutcomes is the report steps' outcomes in a line.
func briefOutcomes(outs []report.Outcome) string {
	var b []string
	for _, o := range outs {
		b = append(b, fmt.Sprintf("%s/%s/%s %s", o.Class, o.KillReason, o.Action, o.Reason))
	}
	return strings.Join(b, "; ")
}
