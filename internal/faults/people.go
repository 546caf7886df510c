package faults

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
	theworld "github.com/roadmap-dev/roadmap/internal/world"
)

// People's acts on the item mid-run (issue 47): a person with write access
// closes the PR, merges it, or closes the issue, through the fake's HTTP API
// with their own token, as they would on GitHub. The in-process histories
// and the process suite play the same acts.
const (
	ActClosePR    = "close_pr"
	ActMergePR    = "merge_pr"
	ActCloseIssue = "close_issue"
)

// personToken is alice's (the issue's author, with write access).
const personToken = "ghp_faultsAlicePersonalToken000000000000"

// PersonActs does act on the item of w as alice. It fails when the item
// has no PR yet (the act is placed after the PR's creation).
func PersonActs(w *theworld.World, act string) error {
	w.Fake.AddIdentity(personToken, githubfake.Identity{Login: "alice", Kind: githubfake.PersonalToken})
	w.Fake.SetPermission("alice", "write")
	if act == ActCloseIssue {
		_, err := personDo(w, http.MethodPatch, fmt.Sprintf("/repos/%s/%s/issues/%d", Owner, Repo, w.Issue), `{"state":"closed"}`)
		return err
	}
	pr := 0
	for n := 1; ; n++ {
		is, ok := w.Fake.Issue(n)
		if !ok {
			break
		}
		if is.Pull != nil && strings.HasPrefix(is.Pull.Head, fmt.Sprintf("roadmap/%d-", w.Issue)) {
			pr = n
		}
	}
	if pr == 0 {
		return fmt.Errorf("alice: the item has no PR to %s", act)
	}
	path := fmt.Sprintf("/repos/%s/%s/pulls/%d", Owner, Repo, pr)
	if act == ActClosePR {
		_, err := personDo(w, http.MethodPatch, path, `{"state":"closed"}`)
		return err
	}
	// GitHub merges no draft: alice marks it ready first, then merges.
	got, err := personDo(w, http.MethodGet, path, "")
	if err != nil {
		return err
	}
	q := `{"query":"mutation($input:MarkPullRequestReadyForReviewInput!){markPullRequestReadyForReview(input:$input){pullRequest{isDraft}}}","variables":{"input":{"pullRequestId":"` + fmt.Sprint(got["node_id"]) + `"}}}`
	if _, err := personDo(w, http.MethodPost, "/graphql", q); err != nil {
		return err
	}
	merged, err := personDo(w, http.MethodPut, path+"/merge", `{}`)
	if err != nil {
		return err
	}
	if merged["merged"] != true {
		return fmt.Errorf("alice: PR #%d not merged: %v", pr, merged)
	}
	return nil
}

// personDo sends one request as alice and returns the answer's JSON object.
func personDo(w *theworld.World, method, path, body string) (map[string]any, error) {
	req, err := http.NewRequest(method, w.GitHubURL()+path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "token "+personToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("alice: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return nil, fmt.Errorf("alice: %s %s: %d %s", method, path, resp.StatusCode, data)
	}
	out := map[string]any{}
	_ = json.Unmarshal(data, &out)
	return out, nil
}

// peopleScenarios are issue 47's people acting mid-run, and a person
// breaking the record block just before and just after a write of it.
func peopleScenarios() []scenario {
	act := func(kind, act string, end record.Result, class failure.Class) scenario {
		return scenario{Name: fmt.Sprintf("a person %s after the PR's creation, before group 2's push", strings.ReplaceAll(kind[len("person_"):], "_", " ")),
			Kind: kind, Expect: expectEnd, End: end, Class: string(class),
			setup: func(l *life) error {
				return l.afterPoint(EffPRNew+"#1", func() error {
					l.acted, l.actCalls = act, l.w.replay.Stats().Calls
					return PersonActs(l.w.base, act)
				})
			}}
	}
	out := []scenario{
		act("person_closes_pr", ActClosePR, record.ResultYielded, failure.PRClosed),
		act("person_merges_pr", ActMergePR, record.ResultReturned, failure.PRMerged),
		act("person_closes_issue", ActCloseIssue, record.ResultYielded, failure.IssueClosed),
	}
	// A person's malformed edit to the record block (a key line without
	// its value, the block's end gone) is never fatal: the store repairs
	// the block from the last good record and keeps the person's text
	// outside it (issue 46, item 3).
	// Just before the write, the Job's write replaces the block (the
	// documented window); just after it, the Job's next write must read a
	// block it cannot parse.
	for _, when := range []string{"before", "after"} {
		sc := scenario{Name: "a person breaks the record block just " + when + " the Job's first record write", Kind: "person_breaks_record", Expect: expectReady,
			setup: func(l *life) error {
				l.broken = true
				f := func() error { l.breakRecord(); return nil }
				if when == "before" {
					return l.beforePoint(EffRecord+"#1", f)
				}
				return l.afterPoint(EffRecord+"#1", f)
			}}
		out = append(out, sc)
	}
	return out
}

// breakRecord is a person's malformed edit of the record block: a key with
// no value and the block's closing line cut.
func (l *life) breakRecord() {
	c, ok := l.w.recordComment()
	if !ok {
		return
	}
	l.w.fake.EditComment(c.ID, BreakRecord)
}

// BreakRecord is a person's malformed edit of a record comment's body: a
// key with no value, and the block's closing line cut. The process suite
// makes the same edit.
func BreakRecord(body string) string {
	body = strings.Replace(body, "<!-- roadmap:record v1\n", "<!-- roadmap:record v1\nimplement.group:\n", 1)
	return strings.Replace(body, "\n-->", "\n", 1)
}
