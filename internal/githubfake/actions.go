package githubfake

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

const docsDispatch = "https://docs.github.com/rest/actions/workflows#create-a-workflow-dispatch-event"

func (f *Fake) findRun(id int64) *Run {
	for _, r := range f.st.Runs {
		if r.ID == id {
			return r
		}
	}
	return nil
}

func (f *Fake) findJob(id int64) *Job {
	for _, j := range f.st.Jobs {
		if j.ID == id {
			return j
		}
	}
	return nil
}

// dispatch accepts a workflow_dispatch event and creates a queued run. It
// answers 200 with the run's ids when asked for return_run_details (GitHub
// since 2026-02-19), else 204.
// dispatchSchema is the request schema of a workflow dispatch.
var dispatchSchema = bodySchema{fields: map[string]field{
	"ref": kinds("string"), "inputs": kinds("object"), "return_run_details": kinds("boolean"),
}, required: []string{"ref"}}

func (f *Fake) dispatch(c *call) reply {
	if _, rep, ok := parseBody(c, dispatchSchema, docsDispatch); !ok {
		return rep
	}
	var in struct {
		Ref              string         `json:"ref"`
		Inputs           map[string]any `json:"inputs"`
		ReturnRunDetails bool           `json:"return_run_details"`
	}
	json.Unmarshal(c.body, &in)
	if len(in.Inputs) > 25 {
		return reply{status: http.StatusUnprocessableEntity, body: map[string]any{
			"message": "you may only define up to 25 `inputs` for a `workflow_dispatch` event", "documentation_url": docsDispatch,
		}}
	}
	if data, _ := json.Marshal(in.Inputs); utf8.RuneCount(data) > 65535 {
		return reply{status: http.StatusUnprocessableEntity, body: map[string]any{
			"message": "inputs are too large", "documentation_url": docsDispatch,
		}}
	}
	workflow := c.params["workflow"]
	if !f.hasWorkflow(workflow) {
		return notFound()
	}
	if !f.hasRef(in.Ref) {
		return reply{status: http.StatusUnprocessableEntity, body: map[string]any{
			"message": "No ref found for: " + in.Ref, "documentation_url": docsDispatch,
		}}
	}
	if slices.Contains(f.st.Disabled, workflow) {
		return reply{status: http.StatusUnprocessableEntity, body: map[string]any{
			"message": "Cannot trigger a 'workflow_dispatch' on a disabled workflow", "documentation_url": docsDispatch,
		}}
	}
	// GitHub runs the workflow as it is at the ref; when the fake knows the
	// file's content there, it must have the workflow_dispatch trigger.
	branch := strings.TrimPrefix(strings.TrimPrefix(in.Ref, "refs/heads/"), "refs/tags/")
	sha := f.ciHead(in.Ref)
	if w, ok := f.workflowAt(branch, sha, workflow); ok && w.on("workflow_dispatch") == nil {
		return reply{status: http.StatusUnprocessableEntity, body: map[string]any{
			"message": "Workflow does not have 'workflow_dispatch' trigger", "documentation_url": docsDispatch,
		}}
	}
	ev := f.emit(c, &Event{Name: "workflow_dispatch", Ref: in.Ref, SHA: sha, Workflow: workflow, Inputs: in.Inputs})
	t := f.stamp()
	run := &Run{ID: f.st.id(), WorkflowFile: workflow, HeadBranch: strings.TrimPrefix(in.Ref, "refs/heads/"),
		Event: "workflow_dispatch", Status: "queued", Inputs: in.Inputs, CreatedAt: t,
		Actor: c.login, TriggeringActor: c.login, EventID: ev.ID}
	run.DisplayTitle = runName(f.st.RunNames[workflow], in.Inputs)
	f.st.Runs = append(f.st.Runs, run)
	ev.Runs = append(ev.Runs, run.ID)
	f.st.Dispatches = append(f.st.Dispatches, Dispatch{Workflow: workflow, Ref: in.Ref, Inputs: in.Inputs, RunID: run.ID, At: t})
	if f.st.CI[workflow] != nil {
		// A scripted CI runs at once on the branch's head.
		run.HeadSHA, run.RunAttempt = sha, 1
		f.startCIJobs(run, nil)
	}
	if !in.ReturnRunDetails || f.opts.NoRunDetails {
		return reply{status: http.StatusNoContent}
	}
	return reply{status: http.StatusOK, body: map[string]any{
		"workflow_run_id": run.ID,
		"run_url":         fmt.Sprintf("%s/actions/runs/%d", f.repoAPI(c.base), run.ID),
		"html_url":        fmt.Sprintf("%s/actions/runs/%d", f.repoHTML(c.base), run.ID),
	}}
}

func (f *Fake) listJobs(c *call) reply {
	f.settleCI()
	id, _ := strconv.ParseInt(c.params["run_id"], 10, 64)
	if f.findRun(id) == nil {
		return notFound()
	}
	var list []*Job
	for _, j := range f.st.Jobs {
		if j.RunID == id {
			list = append(list, j)
		}
	}
	lo, hi, link := f.paginate(c, len(list))
	jobs := []any{}
	for _, j := range list[lo:hi] {
		jobs = append(jobs, f.jobJSON(c.base, j))
	}
	return reply{status: http.StatusOK, link: link, body: map[string]any{"total_count": len(list), "jobs": jobs}}
}

// checkRunAnnotations lists the annotations of a job's check run (a job's
// check run has the job's id, as on GitHub), paginated.
func (f *Fake) checkRunAnnotations(c *call) reply {
	id, _ := strconv.ParseInt(c.params["id"], 10, 64)
	j := f.findJob(id)
	if j == nil {
		for _, cr := range f.st.CheckRuns {
			if cr.ID == id { // another app's check run: no annotations here
				return reply{status: http.StatusOK, body: []any{}}
			}
		}
		return notFound()
	}
	lo, hi, link := f.paginate(c, len(j.Annotations))
	list := []any{}
	for _, m := range j.Annotations[lo:hi] {
		list = append(list, map[string]any{
			"path": ".github", "blob_href": "", "start_line": 1, "end_line": 1, "start_column": nil, "end_column": nil,
			"annotation_level": "failure", "title": "", "message": m, "raw_details": "",
		})
	}
	return reply{status: http.StatusOK, link: link, body: list}
}

// jobLogs answers 302 with a one-time URL on this server, as GitHub answers
// with a short-lived blob URL. A job still running has no log yet (404).
func (f *Fake) jobLogs(c *call) reply {
	f.settleCI()
	id, _ := strconv.ParseInt(c.params["job_id"], 10, 64)
	j := f.findJob(id)
	if j == nil || j.Status != "completed" {
		return notFound()
	}
	var b [16]byte
	rand.Read(b[:])
	tok := hex.EncodeToString(b[:])
	f.logGrants[tok] = logGrant{job: id, expires: f.clock.Now().Add(time.Minute)}
	return reply{status: http.StatusFound, location: c.base + "/_logs/" + tok}
}

func (f *Fake) serveLogBlob(r *http.Request) reply {
	tok := strings.TrimPrefix(r.URL.Path, "/_logs/")
	f.mu.Lock()
	defer f.mu.Unlock()
	g, ok := f.logGrants[tok]
	delete(f.logGrants, tok)
	if r.Method != http.MethodGet || !ok || !f.clock.Now().Before(g.expires) {
		return reply{status: http.StatusNotFound, raw: []byte("The specified blob does not exist.\n"), ctype: "text/plain"}
	}
	j := f.findJob(g.job)
	if j == nil {
		return reply{status: http.StatusNotFound, raw: []byte("The specified blob does not exist.\n"), ctype: "text/plain"}
	}
	return reply{status: http.StatusOK, raw: []byte(j.Log), ctype: "text/plain; charset=utf-8"}
}

// collaboratorJSON is a user as a collaborator: the user with role_name and
// the permissions it grants.
func (f *Fake) collaboratorJSON(base, login, role string) map[string]any {
	u := f.userJSON(base, login)
	u["role_name"] = role
	rank := map[string]int{"read": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}[role]
	u["permissions"] = map[string]any{"pull": rank >= 1, "triage": rank >= 2, "push": rank >= 3, "maintain": rank >= 4, "admin": rank >= 5}
	return u
}

// permission answers the collaborator permission endpoint: permission holds
// the legacy value (admin, write, read, none), role_name the role.
func (f *Fake) permission(c *call) reply {
	user := c.params["user"]
	role := f.st.Permissions[user]
	if role == "" {
		role = "none"
	}
	legacy := map[string]string{"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read"}[role]
	if legacy == "" {
		legacy = "none"
	}
	return reply{status: http.StatusOK, body: map[string]any{
		"permission": legacy, "role_name": role, "user": f.collaboratorJSON(c.base, user, role),
	}}
}

// getRepo answers GET /repos/{owner}/{repo} (GitHub's "full-repository").
func (f *Fake) getRepo(c *call) reply {
	m := f.fullRepoJSON(c.base)
	m["network_count"], m["subscribers_count"] = 0, 0
	// What GitHub adds for a caller who can read the repository's settings
	// (the recorded get-repository exchange): merge settings, topics, the
	// caller's permissions and the owning organization.
	for k, v := range map[string]any{
		"allow_auto_merge": false, "allow_forking": true, "allow_merge_commit": true, "allow_rebase_merge": true,
		"allow_squash_merge": true, "allow_update_branch": false, "delete_branch_on_merge": false, "is_template": false,
		"use_squash_pr_title_as_default": false, "web_commit_signoff_required": false, "temp_clone_token": "",
		"permissions": map[string]bool{"admin": true, "maintain": true, "push": true, "triage": true, "pull": true},
	} {
		m[k] = v
	}
	m["organization"] = f.userJSON(c.base, f.opts.Owner)
	m["topics"] = append([]string{}, f.st.Topics...)
	// has_discussions is required by the pinned OpenAPI description; the
	// recorded exchange predates it (conformance_test.go newerFields).
	m["has_discussions"] = false
	if m["pushed_at"] == nil { // GitHub's full-repository has it non-null
		m["pushed_at"] = ts(repoCreated)
	}
	return reply{status: http.StatusOK, body: m}
}

// workflowPermissions answers GET /repos/{owner}/{repo}/actions/permissions/workflow.
func (f *Fake) workflowPermissions(c *call) reply {
	p := f.st.WorkflowPermissions
	if p.Default == "" {
		p.Default = "read"
	}
	return reply{status: http.StatusOK, body: map[string]any{
		"default_workflow_permissions": p.Default, "can_approve_pull_request_reviews": p.CanApprove,
	}}
}

// listWorkflowRuns lists a workflow's runs, newest first, paginated, with
// GitHub's event, branch, status and created filters (created takes
// ">=TIME", "<=TIME" or "FROM..TO", times in RFC 3339). A run carries no
// dispatch inputs, as on GitHub; display_title is the run's title (the
// run-name SetRunName gave the workflow, with the dispatch's inputs put in),
// else the workflow's name, as GitHub titles a dispatch without run-name.
//
// GitHub API docs: https://docs.github.com/rest/actions/workflow-runs#list-workflow-runs-for-a-workflow
func (f *Fake) listWorkflowRuns(c *call) reply {
	f.settleCI()
	workflow := c.params["workflow"]
	if !f.hasWorkflow(workflow) {
		return notFound()
	}
	from, to, ok := createdRange(c.query.Get("created"))
	if !ok {
		return reply{status: http.StatusUnprocessableEntity, body: map[string]any{
			"message": "Validation Failed", "documentation_url": "https://docs.github.com/rest/actions/workflow-runs#list-workflow-runs-for-a-workflow"}}
	}
	var list []*Run
	for i := len(f.st.Runs) - 1; i >= 0; i-- {
		r := f.st.Runs[i]
		switch {
		case r.WorkflowFile != workflow,
			c.query.Get("event") != "" && r.Event != c.query.Get("event"),
			c.query.Get("branch") != "" && r.HeadBranch != c.query.Get("branch"),
			c.query.Get("status") != "" && r.Status != c.query.Get("status") && r.Conclusion != c.query.Get("status"),
			!from.IsZero() && r.CreatedAt.Before(from),
			!to.IsZero() && r.CreatedAt.After(to):
			continue
		}
		list = append(list, r)
	}
	lo, hi, link := f.paginate(c, len(list))
	runs := []any{}
	for _, r := range list[lo:hi] {
		runs = append(runs, f.runJSON(c.base, r))
	}
	return reply{status: http.StatusOK, link: link, body: map[string]any{"total_count": len(list), "workflow_runs": runs}}
}

// runName is a dispatched run's title: template with each "{name}"
// replaced by the dispatch input name's value, as GitHub writes it in an
// expression (a number without a fraction as an integer). An unclosed "{"
// stays as it is.
func runName(template string, inputs map[string]any) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(template, '{')
		j := -1
		if i >= 0 {
			j = strings.IndexByte(template[i+1:], '}')
		}
		if j < 0 {
			b.WriteString(template)
			return b.String()
		}
		b.WriteString(template[:i])
		switch v := inputs[template[i+1:i+1+j]].(type) {
		case string:
			b.WriteString(v)
		case float64:
			b.WriteString(strconv.FormatFloat(v, 'f', -1, 64))
		case bool:
			b.WriteString(strconv.FormatBool(v))
		}
		template = template[i+2+j:]
	}
}

// createdRange reads GitHub's created filter: ">=T", ">T", "<=T", "<T",
// "A..B" or a bare time; "" is no bound.
func createdRange(q string) (from, to time.Time, ok bool) {
	parse := func(s string) (time.Time, bool) {
		for _, l := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02"} {
			if t, err := time.Parse(l, s); err == nil {
				return t, true
			}
		}
		return time.Time{}, false
	}
	var a, b string
	switch {
	case q == "":
		return from, to, true
	case strings.HasPrefix(q, ">="), strings.HasPrefix(q, ">"):
		a = strings.TrimLeft(q, ">=")
	case strings.HasPrefix(q, "<="), strings.HasPrefix(q, "<"):
		b = strings.TrimLeft(q, "<=")
	case strings.Contains(q, ".."):
		a, b, _ = strings.Cut(q, "..")
	default:
		a, b = q, q
	}
	if a != "" && a != "*" {
		if from, ok = parse(a); !ok {
			return from, to, false
		}
	}
	if b != "" && b != "*" {
		if to, ok = parse(b); !ok {
			return from, to, false
		}
	}
	return from, to, true
}

// workflowID is a workflow's id: stable for its file name.
func workflowID(file string) int64 {
	var h int64 = 7
	for _, b := range []byte(file) {
		h = (h*31 + int64(b)) % 1_000_000
	}
	return 100_000 + h
}

// runJSON is a workflow run as GitHub renders it, in the runs list and alone.
func (f *Fake) runJSON(base string, r *Run) map[string]any {
	name := strings.TrimSuffix(strings.TrimSuffix(r.WorkflowFile, ".yml"), ".yaml")
	title := r.DisplayTitle
	if strings.TrimSpace(title) == "" {
		title = name
	}
	var concl any
	if r.Status == "completed" {
		concl = r.Conclusion
	}
	api := fmt.Sprintf("%s/actions/runs/%d", f.repoAPI(base), r.ID)
	at := r.CreatedAt.UTC().Format(time.RFC3339)
	out := map[string]any{
		"id": r.ID, "node_id": nodeID("WFR", r.ID), "name": name, "display_title": title, "path": ".github/workflows/" + r.WorkflowFile,
		"run_number": r.ID, "workflow_id": workflowID(r.WorkflowFile),
		"event": r.Event, "status": r.Status, "conclusion": concl, "head_branch": r.HeadBranch, "head_sha": r.HeadSHA,
		"run_attempt": max(r.RunAttempt, 1), "created_at": at, "updated_at": at,
		"url": api, "html_url": fmt.Sprintf("%s/actions/runs/%d", f.repoHTML(base), r.ID),
		"jobs_url": api + "/jobs", "logs_url": api + "/logs", "check_suite_url": f.repoAPI(base) + "/check-suites/" + strconv.FormatInt(r.ID, 10),
		"cancel_url": api + "/cancel", "rerun_url": api + "/rerun", "artifacts_url": api + "/artifacts",
		"workflow_url": fmt.Sprintf("%s/actions/workflows/%d", f.repoAPI(base), workflowID(r.WorkflowFile)),
		"head_commit":  nil, "head_repository": f.repoJSON(base), "repository": f.repoJSON(base), "pull_requests": []any{},
	}
	if r.Actor != "" {
		out["actor"] = f.userJSON(base, r.Actor)
		out["triggering_actor"] = f.userJSON(base, r.TriggeringActor)
	}
	return out
}

// getRun answers GET /repos/{owner}/{repo}/actions/runs/{run_id}: one run,
// 404 when the repository has none with that id.
//
// GitHub API docs: https://docs.github.com/rest/actions/workflow-runs#get-a-workflow-run
func (f *Fake) getRun(c *call) reply {
	f.settleCI()
	id, _ := strconv.ParseInt(c.params["run_id"], 10, 64)
	r := f.findRun(id)
	if r == nil {
		return notFound()
	}
	return reply{status: http.StatusOK, body: f.runJSON(c.base, r)}
}
