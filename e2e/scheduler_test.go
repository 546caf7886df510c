//go:build unix

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/demo"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
)

// The scenarios do not decide which workflow run starts next: GitHub does.
// The fake GitHub decides it by GitHub's documented rules
// (internal/githubfake/triggers.go, docs/fake-github.md), and nextRun plays
// GitHub's runners: it takes the oldest run the fake queued (NextRun), runs
// that workflow under act with the event that started it, and finishes it
// in the fake with act's conclusion. A scenario that expects a run GitHub
// would not start fails, naming the rule the fake noted.

// person is someone with a token of their own acting on GitHub: their
// labels, reviews and comments are events that start runs, unlike the
// workflow's GITHUB_TOKEN's.
type person struct {
	it    *item
	login string
	token string
	gh    *github.Client
}

// person registers login with role (admin, write, read, …) and a personal
// access token the fake knows as theirs.
func (it *item) person(login, role string) *person {
	t := it.t
	t.Helper()
	tok := "ghp_" + login + strings.Repeat("0", max(36-len(login), 1))
	it.w.Fake.AddIdentity(tok, githubfake.Identity{Login: login, Kind: githubfake.PersonalToken})
	it.w.Fake.SetPermission(login, role)
	gh, err := github.New(github.Options{BaseURL: it.apiURL + "/", Token: tok, Owner: demo.Owner, Repo: demo.Repo,
		Identity: login, Masker: redact.New(redact.Config{Secrets: []string{tok}}),
		HTTPClient: &http.Client{Timeout: 20 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	it.mu.Lock()
	if it.persons == nil {
		it.persons = map[string]bool{}
	}
	it.persons[login] = true
	it.mu.Unlock()
	return &person{it: it, login: login, token: tok, gh: gh}
}

// do runs what the person does; book leaves their requests out of the
// item's, whichever run they fall in.
func (p *person) do(what string, f func(ctx context.Context, gh *github.Client) error) {
	p.it.t.Helper()
	if err := f(p.it.t.Context(), p.gh); err != nil {
		p.it.t.Fatalf("%s %s: %v", p.login, what, err)
	}
	p.it.logf("%s %s", p.login, what)
}

// label adds label to the issue (removing it first when the issue has it:
// GitHub sends labeled only for a label that was not there).
func (p *person) label(n int, label string) {
	p.do("labels #"+fmt.Sprint(n)+" "+label, func(ctx context.Context, gh *github.Client) error {
		is, err := gh.Issue(ctx, n)
		if err != nil {
			return err
		}
		for _, l := range is.Labels {
			if l == label {
				if err := gh.RemoveLabel(ctx, n, label); err != nil {
					return err
				}
			}
		}
		return gh.AddLabels(ctx, n, label)
	})
}

// comment comments body on issue n.
func (p *person) comment(n int, body string) {
	p.do(fmt.Sprintf("comments %q on #%d", firstLine(body), n), func(ctx context.Context, _ *github.Client) error {
		return p.post(ctx, fmt.Sprintf("/repos/%s/%s/issues/%d/comments", demo.Owner, demo.Repo, n), map[string]any{"body": body})
	})
}

// approve approves pull request n.
func (p *person) approve(n int) {
	p.do(fmt.Sprintf("approves PR #%d", n), func(ctx context.Context, _ *github.Client) error {
		return p.post(ctx, fmt.Sprintf("/repos/%s/%s/pulls/%d/reviews", demo.Owner, demo.Repo, n), map[string]any{"event": "APPROVE"})
	})
}

// post sends a person's write the product has no method for (a comment of
// their own, a review) as GitHub's REST API takes it.
func (p *person) post(ctx context.Context, path string, body any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.it.apiURL+path, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+p.token)
	req.Header.Set("Accept", "application/vnd.github+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<12))
		return fmt.Errorf("POST %s: %s: %s", path, resp.Status, msg)
	}
	return nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// ranRun is one run the scheduler ran: the fake's run, the event that
// started it, and act's result.
type ranRun struct {
	*actRun
	run githubfake.Run
	ev  githubfake.Event
}

// nextRun runs the next run GitHub would start: the oldest queued one. It
// must be of workflow (a file name) started by event; when nothing is
// queued, or the run is another, the test fails with what the fake noted
// for the latest events: the rule that kept GitHub from starting it.
// during, if set, runs while act does, with the run's id.
func (it *item) nextRun(name, workflow, event string, during func(ctx context.Context, s *Started, runID int64)) *ranRun {
	it.t.Helper()
	return it.runTaken(it.takeRun(name, workflow, event), during)
}

// takenRun is a run taken from GitHub's queue (takeRun), not yet run.
type takenRun struct {
	tr  trigger
	run githubfake.Run
	ev  githubfake.Event
}

// takeRun takes the next run GitHub would start, as nextRun does, and
// makes its trigger; runTaken runs it. Between the two a scenario can
// give the run a token of its own (runToken) to run it at once with
// another.
func (it *item) takeRun(name, workflow, event string) *takenRun {
	t := it.t
	t.Helper()
	run, ev, err := expectRun(it.w.Fake, workflow, event)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	it.checkoutRunHead(name, run)
	tr := trigger{name: name, event: ev.Name, payload: it.payload(ev), runID: run.ID, actor: ev.Actor, workflow: run.WorkflowFile}
	if ev.Name == "schedule" {
		// act finds no job for a schedule event ("Could not find any
		// stages to run"): the scheduled workflow runs as the dispatch it
		// also declares. The fake's run is the schedule's.
		tr.event, tr.payload = "workflow_dispatch", nil
		it.logf("%s: act cannot start a schedule event; %s runs as workflow_dispatch", name, workflow)
	}
	if tr.event == "workflow_dispatch" {
		tr.payload = nil
		tr.inputs = map[string]string{}
		for k, v := range ev.Inputs {
			tr.inputs[k] = fmt.Sprint(v)
		}
	}
	return &takenRun{tr: tr, run: run, ev: ev}
}

// checkoutRunHead brings the user's repository, which act copies into each
// run's workspace (act checks out nothing of the repository under test),
// to the commit a run on main runs at, when main moved on without it: a
// merge made on GitHub. GitHub's runner checks the run's head_sha out; a
// run whose head is not ahead of the copy leaves it as it is.
func (it *item) checkoutRunHead(name string, run githubfake.Run) {
	t := it.t
	t.Helper()
	if run.HeadBranch != "main" || run.HeadSHA == "" || run.HeadSHA == it.caller.SHA {
		return
	}
	ctx := t.Context()
	if _, err := git(ctx, "--git-dir", it.w.Remote, "merge-base", "--is-ancestor", it.caller.SHA, run.HeadSHA); err != nil {
		return
	}
	for _, args := range [][]string{
		{"-C", it.caller.Dir, "fetch", "--quiet", "origin", "main"},
		{"-C", it.caller.Dir, "checkout", "--quiet", "-B", "main", run.HeadSHA},
	} {
		if _, err := git(ctx, args...); err != nil {
			t.Fatalf("%s: check out main at %s: %v", name, short(run.HeadSHA), err)
		}
	}
	it.logf("%s: main moved on to %s since %s; the run's workspace is at it", name, short(run.HeadSHA), short(it.caller.SHA))
	it.caller.SHA = run.HeadSHA
}

// runTaken runs a taken run under act and finishes it in the fake with
// act's conclusion. during, if set, runs while act does, with the run's id.
func (it *item) runTaken(tk *takenRun, during func(ctx context.Context, s *Started, runID int64)) *ranRun {
	t := it.t
	t.Helper()
	tr, run, ev := tk.tr, tk.run, tk.ev
	pushes := it.watchPushes()
	r := it.run(tr, func(ctx context.Context, s *Started) {
		if during != nil {
			during(ctx, s, run.ID)
		}
	})
	pushes()
	conclusion := "success"
	if r.ExitCode != 0 {
		conclusion = "failure"
	}
	if err := it.w.Fake.FinishRun(run.ID, conclusion); err != nil {
		t.Fatal(err)
	}
	return &ranRun{actRun: r, run: run, ev: ev}
}

// noMoreRuns wants nothing queued: no run GitHub would start is left.
func (it *item) noMoreRuns(why string) {
	it.t.Helper()
	if q := it.w.Fake.QueuedRuns(); len(q) != 0 {
		var names []string
		for _, r := range q {
			names = append(names, fmt.Sprintf("%s on %s (run %d)", r.WorkflowFile, r.Event, r.ID))
		}
		it.t.Errorf("%s: GitHub would still start %s", why, strings.Join(names, ", "))
	}
}

// expectRun takes the next run GitHub would start (NextRun) and wants it
// to be of workflow, started by event. When nothing is queued, or the run
// is another, the error holds what the fake noted for the latest events:
// the rule that kept GitHub from starting the run.
func expectRun(f *githubfake.Fake, workflow, event string) (githubfake.Run, githubfake.Event, error) {
	if q := f.QueuedRuns(); len(q) > 0 && (q[0].WorkflowFile != workflow || q[0].Event != event) {
		return githubfake.Run{}, githubfake.Event{}, fmt.Errorf("the next run GitHub would start is %s on %s (run %d), not %s on %s:\n%s",
			q[0].WorkflowFile, q[0].Event, q[0].ID, workflow, event, eventNotes(f, 6))
	}
	run, ev, ok := f.NextRun()
	if !ok {
		return run, ev, fmt.Errorf("the scenario expects a run of %s on %s, but GitHub would start none:\n%s", workflow, event, eventNotes(f, 6))
	}
	return run, ev, nil
}

// eventNotes is the last n events the fake saw, with the runs they started
// and its notes on why a workflow did not run.
func (it *item) eventNotes(n int) string { return eventNotes(it.w.Fake, n) }

func eventNotes(f *githubfake.Fake, n int) string {
	evs := f.Events()
	if len(evs) > n {
		evs = evs[len(evs)-n:]
	}
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, "  event %s", ev.Name)
		if ev.Action != "" {
			fmt.Fprintf(&b, ".%s", ev.Action)
		}
		fmt.Fprintf(&b, " by %s (%s)", ev.Actor, ev.Kind)
		if ev.Label != "" {
			fmt.Fprintf(&b, " label %s", ev.Label)
		}
		fmt.Fprintf(&b, ": runs %v\n", ev.Runs)
		for _, note := range ev.Notes {
			fmt.Fprintf(&b, "    %s\n", note)
		}
	}
	return b.String()
}

// pushToken is the token roadmap's pushes are made with: the workflow's
// own unless the scenario passes a push token.
func (it *item) pushWith() string {
	if it.pushToken != "" {
		return it.pushToken
	}
	return demo.Token
}

// watchPushes tells the fake of every push to the git remote while a run
// goes, with the pusher's token (GitHub sees the push as it happens); the
// returned func stops it and tells the fake of the last ones.
func (it *item) watchPushes() func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	tell := func() {
		evs, err := it.w.Fake.Pushed(it.pushWith())
		if err != nil {
			it.t.Errorf("tell the fake of a push: %v", err)
		}
		for _, ev := range evs {
			it.logf("push %s → %s by %s (%s): runs %v %v", ev.Ref, short(ev.SHA), ev.Actor, ev.Kind, ev.Runs, ev.Notes)
		}
	}
	go func() {
		defer close(done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				tell()
			}
		}
	}()
	return func() {
		cancel()
		<-done
		tell()
	}
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// payload is the webhook payload of ev, as GitHub would deliver it to the
// run, from what the fake holds.
func (it *item) payload(ev githubfake.Event) map[string]any {
	repo := map[string]any{"full_name": demo.Owner + "/" + demo.Repo, "name": demo.Repo, "owner": map[string]any{"login": demo.Owner}}
	p := map[string]any{"sender": map[string]any{"login": ev.Actor, "type": senderType(ev.Kind)}, "repository": repo}
	if ev.Action != "" {
		p["action"] = ev.Action
	}
	issue := func() map[string]any {
		is, _ := it.w.Fake.Issue(ev.Number)
		var labels []any
		for _, l := range it.w.Fake.Labels(ev.Number) {
			labels = append(labels, map[string]any{"name": l})
		}
		state := is.State
		if state == "" {
			state = "open"
		}
		m := map[string]any{"number": ev.Number, "title": is.Title, "body": is.Body, "state": state,
			"labels": labels, "user": map[string]any{"login": is.Author}}
		if is.Pull != nil {
			m["pull_request"] = map[string]any{"url": fmt.Sprintf("%s/repos/%s/%s/pulls/%d", it.apiURL, demo.Owner, demo.Repo, ev.Number)}
		}
		return m
	}
	switch ev.Name {
	case "issues":
		p["issue"] = issue()
		if ev.Label != "" {
			p["label"] = map[string]any{"name": ev.Label}
		}
	case "issue_comment":
		p["issue"] = issue()
		// The event's comment: the newest by its actor.
		var c githubfake.Comment
		for _, cm := range it.w.Fake.Comments(ev.Number) {
			if cm.Author == ev.Actor {
				c = cm
			}
		}
		p["comment"] = map[string]any{"id": c.ID, "body": c.Body, "author_association": "MEMBER",
			"user": map[string]any{"login": c.Author, "type": senderType(ev.Kind)}}
	case "pull_request", "pull_request_review":
		is, _ := it.w.Fake.Issue(ev.Number)
		p["pull_request"] = map[string]any{"number": ev.Number, "title": is.Title, "draft": is.Pull.Draft,
			"user": map[string]any{"login": is.Author},
			"head": map[string]any{"ref": ev.Head, "sha": ev.SHA, "repo": repo},
			"base": map[string]any{"ref": ev.Base, "repo": repo}}
		if ev.Name == "pull_request_review" {
			state := ""
			for _, r := range it.w.Fake.Reviews(ev.Number) {
				if r.Author == ev.Actor {
					state = strings.ToLower(r.State)
				}
			}
			p["review"] = map[string]any{"state": state, "user": map[string]any{"login": ev.Actor}}
		}
	case "schedule":
		p["schedule"] = ev.Cron
	case "push":
		p["ref"], p["after"], p["before"] = ev.Ref, ev.SHA, ev.Before
	}
	return p
}

func senderType(k githubfake.Kind) string {
	if k == githubfake.PersonalToken {
		return "User"
	}
	return "Bot"
}

// workflowFile is the caller's file name, as the fake knows its runs.
func (it *item) workflowFile() string { return filepath.Base(it.workflow) }

// baselinePushes tells the fake of the remote's refs as they are before
// the item starts (the workflow's token: no run), so later pushes are the
// item's.
func (it *item) baselinePushes() {
	it.t.Helper()
	if _, err := it.w.Fake.Pushed(demo.Token); err != nil {
		it.t.Fatal(err)
	}
}

// roadmapClient is a client as roadmap's workflows have it: the
// workflow's GITHUB_TOKEN (its events start no run).
func (it *item) roadmapClient() *github.Client {
	it.t.Helper()
	gh, err := github.New(github.Options{BaseURL: it.apiURL + "/", Token: demo.Token, Owner: demo.Owner, Repo: demo.Repo,
		Masker: redact.New(redact.Config{Secrets: []string{demo.Token}}), HTTPClient: &http.Client{Timeout: 20 * time.Second}})
	if err != nil {
		it.t.Fatal(err)
	}
	return gh
}

// editRecord applies ch to the item's record comment, as an earlier Job's
// report would have left it.
func (it *item) editRecord(ch record.Changes) {
	it.t.Helper()
	id, _ := strconv.ParseInt(it.recordCommentID(), 10, 64)
	err := it.w.Fake.EditComment(id, func(cur string) string {
		out, err := record.Update(cur, ch)
		if err != nil {
			it.t.Fatalf("the record: %v", err)
		}
		return out
	})
	if err != nil {
		it.t.Fatal(err)
	}
}

// pushConfig appends lines to the implement section of the user's
// .github/roadmap.yml on main, committed and pushed by p (a push GitHub
// sees as theirs).
func (it *item) pushConfig(p *person, implementLines string) {
	t := it.t
	t.Helper()
	ctx := t.Context()
	path := filepath.Join(it.caller.Dir, ".github", "roadmap.yml")
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(old), "implement:\n", "implement:\n"+implementLines, 1)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-C", it.caller.Dir, "commit", "--quiet", "--no-verify", "--all", "--message", "roadmap: " + strings.TrimSpace(implementLines)},
		{"-C", it.caller.Dir, "push", "--quiet", "origin", "main"},
	} {
		if _, err := git(ctx, args...); err != nil {
			t.Fatalf("%s's push: %v", p.login, err)
		}
	}
	sha, err := git(ctx, "-C", it.caller.Dir, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	it.caller.SHA = strings.TrimSpace(sha)
	if _, err := it.w.Fake.Pushed(p.token); err != nil {
		t.Fatal(err)
	}
	it.logf("%s pushed %s to main: implement %s", p.login, short(it.caller.SHA), strings.TrimSpace(implementLines))
}
