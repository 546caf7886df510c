package adopt

import "sort"

// Permission is one GITHUB_TOKEN permission: a scope (issues, contents, …)
// at a level (read or write).
type Permission struct{ Scope, Level string }

// Call is one GitHub endpoint a verb calls, named as the fake GitHub logs it
// ("PATCH /repos/{owner}/{repo}/issues/comments/{id}"), with the permission
// GitHub asks of a workflow's token for it.
type Call struct {
	Endpoint   string
	Permission Permission
}

const repo = "/repos/{owner}/{repo}"

var (
	metadata      = Permission{"metadata", "read"} // every token has it; never declared
	issuesRead    = Permission{"issues", "read"}
	issuesWrite   = Permission{"issues", "write"}
	pullsRead     = Permission{"pull-requests", "read"}
	pullsWrite    = Permission{"pull-requests", "write"}
	statusesRead  = Permission{"statuses", "read"}
	statusesWrite = Permission{"statuses", "write"}
	checksRead    = Permission{"checks", "read"}
	actionsRead   = Permission{"actions", "read"}
	actionsWrite  = Permission{"actions", "write"}
)

// record is how every verb reads and writes the issue record and its marker
// comments.
var record = []Call{
	{"GET " + repo + "/issues/{n}", issuesRead},
	{"GET " + repo + "/issues/{n}/comments", issuesRead},
	{"GET " + repo + "/issues/comments/{id}", issuesRead},
	{"POST " + repo + "/issues/{n}/comments", issuesWrite},
	{"PATCH " + repo + "/issues/comments/{id}", issuesWrite},
}

// blockers are the calls of the check every stage and implement Job makes
// at its start (kernel.(*Job).Blockers, docs/tracker.md "Blockers") beside
// the record's: the issue's dependencies, and roadmap:blocked taken off
// once they are met. The states of the body's references are a GraphQL
// query, and an item that waits gets the label: each verb's table has those
// calls for its own reasons too.
var blockers = []Call{
	{"GET " + repo + "/issues/{n}/dependencies/blocked_by", issuesRead},
	{"DELETE " + repo + "/issues/{n}/labels/{name}", issuesWrite},
}

// verbCalls is, for each verb a workflow job runs, the GitHub endpoints its
// code calls. The e2e fails on a request a job makes that is not here
// (e2e/item_test.go), and TestWorkflowPermissions fails on a job whose
// permissions are not exactly what its verb's calls need.
var verbCalls = map[string][]Call{
	"implement": append(append(append([]Call(nil), record...), blockers...),
		Call{"GET " + repo, metadata},
		Call{"GET " + repo + "/pulls", pullsRead},
		Call{"GET " + repo + "/pulls/{n}", pullsRead},
		Call{"POST " + repo + "/pulls", pullsWrite},
		Call{"PATCH " + repo + "/pulls/{n}", pullsWrite},
		// markPullRequestReadyForReview (convertPullRequestToDraft for a
		// repair), and the PR's checks.
		Call{"POST /graphql", pullsWrite},
		Call{"GET " + repo + "/commits/{ref}/status", statusesRead},
		Call{"GET " + repo + "/commits/{ref}/statuses", statusesRead},
		Call{"GET " + repo + "/commits/{ref}/check-runs", checksRead},
		Call{"GET " + repo + "/check-runs/{id}/annotations", checksRead},
		Call{"POST " + repo + "/actions/workflows/{workflow}/dispatches", actionsWrite},
		Call{"GET " + repo + "/actions/runs/{run_id}/jobs", actionsRead},
		Call{"GET " + repo + "/actions/jobs/{job_id}", actionsRead},
		Call{"GET " + repo + "/actions/jobs/{job_id}/logs", actionsRead},
		Call{"POST " + repo + "/actions/runs/{run_id}/rerun-failed-jobs", actionsWrite},
		// Claims (docs/claims.md): the read of a holder's run, to judge
		// whether its Job lives, and a waiter's labels on itself and on
		// the holder.
		Call{"GET " + repo + "/actions/runs/{run_id}", actionsRead},
		Call{"POST " + repo + "/issues/{n}/labels", issuesWrite},
		// A repair Job (docs/review.md): the PR's reviews and comments on
		// lines (its comments are the record's calls above), each
		// author's permission, and the reply in a line comment's thread
		// (pull-requests: write); back to a draft is the GraphQL call above.
		Call{"GET " + repo + "/pulls/{n}/reviews", pullsRead},
		Call{"GET " + repo + "/pulls/{n}/comments", pullsRead},
		Call{"GET " + repo + "/collaborators/{user}/permission", metadata},
		Call{"POST " + repo + "/pulls/{n}/comments/{id}/replies", pullsWrite},
	),
	"stage": append(append(append([]Call(nil), record...), blockers...),
		Call{"GET " + repo, metadata},
		Call{"GET " + repo + "/pulls", pullsRead},
		Call{"GET " + repo + "/pulls/{n}", pullsRead},
		Call{"POST " + repo + "/pulls", pullsWrite},
		Call{"PATCH " + repo + "/pulls/{n}", pullsWrite},
		// The blockers' check's other calls: the states of the body's
		// references, and roadmap:blocked on an item that waits.
		Call{"POST /graphql", issuesRead},
		Call{"POST " + repo + "/issues/{n}/labels", issuesWrite},
	),
	"report": append(append([]Call(nil), record...),
		Call{"GET " + repo + "/pulls/{n}", pullsRead},
		Call{"POST " + repo + "/issues/{n}/labels", issuesWrite},
		Call{"DELETE " + repo + "/issues/{n}/labels/{name}", issuesWrite},
		// The dashboard issue's body (its alert comments are the record's
		// comment calls above).
		Call{"PATCH " + repo + "/issues/{n}", issuesWrite},
		Call{"POST " + repo + "/statuses/{sha}", statusesWrite},
		Call{"GET " + repo + "/collaborators/{user}/permission", metadata},
		Call{"POST " + repo + "/actions/workflows/{workflow}/dispatches", actionsWrite},
		Call{"GET " + repo + "/actions/runs/{run_id}/jobs", actionsRead},
		Call{"GET " + repo + "/actions/jobs/{job_id}", actionsRead},
		Call{"GET " + repo + "/actions/jobs/{job_id}/logs", actionsRead},
		// A killed Job's annotations, with its log, for the classifier.
		Call{"GET " + repo + "/check-runs/{id}/annotations", checksRead},
		// The wake of the items waiting for this one's claims: the list of
		// the issues labelled roadmap:waiting-claim (docs/claims.md).
		Call{"GET " + repo + "/issues", issuesRead},
		// A tracker's drive (class tracker, report.Drive): its sub-issues,
		// the states of its task list's references (one GraphQL query),
		// and each sub-issue's blockers; the tracker's close is the PATCH
		// above.
		Call{"GET " + repo + "/issues/{n}/sub_issues", issuesRead},
		Call{"POST /graphql", issuesRead},
		Call{"GET " + repo + "/issues/{n}/dependencies/blocked_by", issuesRead},
		// The day ledger's issue, opened on the first booking without a
		// dashboard (internal/ledger); it is found by the list above.
		Call{"POST " + repo + "/issues", issuesWrite},
	),
	// wake lists the waiting items, reads their records and the day's
	// ledger, dispatches them and takes their waiting label off. The wake
	// action's refresh-dashboard step (roadmap dashboard refresh) lists
	// every record comment, reads and writes the dashboard issue's body, and
	// posts and edits its alert comments. Its unblock (report.Unblock)
	// reads each blocked item's issue dependencies and the states of its
	// body's references (one GraphQL query), and keeps a cycle's comment;
	// its trackers' drives read the same and keep a status comment.
	"wake": {
		{"GET " + repo + "/issues", issuesRead},
		// The trackers' drives (report.DriveTrackers): a tracker's
		// sub-issues, and its close (the PATCH below) when complete.
		{"GET " + repo + "/issues/{n}/sub_issues", issuesRead},
		{"GET " + repo + "/issues/{n}/dependencies/blocked_by", issuesRead},
		{"POST /graphql", issuesRead},
		{"GET " + repo + "/issues/{n}/comments", issuesRead},
		{"POST " + repo + "/actions/workflows/{workflow}/dispatches", actionsWrite},
		{"DELETE " + repo + "/issues/{n}/labels/{name}", issuesWrite},
		{"GET " + repo + "/issues/comments", issuesRead},
		{"GET " + repo + "/issues/{n}", issuesRead},
		{"PATCH " + repo + "/issues/{n}", issuesWrite},
		{"POST " + repo + "/issues/{n}/comments", issuesWrite},
		{"PATCH " + repo + "/issues/comments/{id}", issuesWrite},
	},
	// The scheduled eval workflow (roadmap init --eval-workflow): the eval
	// job runs the golden suites against the fake GitHub on loopback and
	// calls no GitHub endpoint; the model is its need below. The dashboard
	// job's post (roadmap dashboard eval) finds the dashboard by its label
	// when not named, reads and writes its body, and fires and resolves its
	// alerts as every update does.
	"eval": {},
	"eval-dashboard": {
		{"GET " + repo + "/issues", issuesRead},
		{"GET " + repo + "/issues/{n}", issuesRead},
		{"PATCH " + repo + "/issues/{n}", issuesWrite},
		{"POST " + repo + "/issues/{n}/comments", issuesWrite},
		{"PATCH " + repo + "/issues/comments/{id}", issuesWrite},
	},
	// The workflows run checks without --issue (the plan from the record),
	// so it reads no issue.
	"checks": {
		{"POST " + repo + "/statuses/{sha}", statusesWrite},
	},
}

// verbNeeds is what a verb's job needs besides the API: the checkout (and
// the push of the work branch), and GitHub Models, the default model.
var verbNeeds = map[string][]Permission{
	"implement": {{"contents", "write"}, {"models", "read"}},
	"stage":     {{"contents", "write"}, {"models", "read"}},
	"report":    {{"contents", "read"}},
	"checks":    {{"contents", "read"}},
	"wake":      {{"contents", "read"}},
	// The eval's stage and implement Jobs call GitHub Models with the job's
	// token; the post reads the configuration.
	"eval":           {{"contents", "read"}, {"models", "read"}},
	"eval-dashboard": {{"contents", "read"}},
}

// Verbs are the verbs a workflow job runs, sorted.
func Verbs() []string {
	out := make([]string, 0, len(verbCalls))
	for v := range verbCalls {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// Allows reports whether verb is known to call endpoint.
func Allows(verb, endpoint string) bool {
	for _, c := range verbCalls[verb] {
		if c.Endpoint == endpoint {
			return true
		}
	}
	return false
}

// Permissions is what a job that runs verb must declare: scope → level, the
// highest level any of its calls needs. metadata is left out: every token
// has it. nil for an unknown verb.
func Permissions(verb string) map[string]string {
	calls, ok := verbCalls[verb]
	if !ok {
		return nil
	}
	out := map[string]string{}
	add := func(p Permission) {
		if p == metadata {
			return
		}
		if out[p.Scope] != "write" {
			out[p.Scope] = p.Level
		}
	}
	for _, c := range calls {
		add(c.Permission)
	}
	for _, p := range verbNeeds[verb] {
		add(p)
	}
	return out
}
