package githubfake

import (
	"net/url"
	"regexp"
	"strings"
	"sync"
)

type handlerFunc func(f *Fake, c *call) reply

type route struct {
	method   string
	endpoint string // the templated path, as logged and counted
	re       *regexp.Regexp
	names    []string
	handler  handlerFunc
	write    bool // content-creating: counts against the secondary limit
	graphql  bool
}

// routes is the route table, built on first use: compiling its templates
// costs every roadmap invocation time and memory (`roadmap version`
// included), and only the fake's users need it.
var routes = sync.OnceValue(buildRoutes)

func buildRoutes() []*route {
	var routes []*route
	add := func(method, tmpl string, h handlerFunc) {
		re, names := compileTemplate(tmpl)
		routes = append(routes, &route{
			method: method, endpoint: tmpl, re: re, names: names, handler: h,
			write: method != "GET" && method != "HEAD",
		})
	}
	const repo = "/repos/{owner}/{repo}"
	add("GET", repo, (*Fake).getRepo)
	add("GET", repo+"/actions/permissions/workflow", (*Fake).workflowPermissions)
	add("GET", repo+"/issues", (*Fake).listIssues)
	add("POST", repo+"/issues", (*Fake).createIssue)
	add("GET", repo+"/issues/comments", (*Fake).listRepoComments)
	add("GET", repo+"/issues/comments/{id}", (*Fake).getComment)
	add("PATCH", repo+"/issues/comments/{id}", (*Fake).editComment)
	add("GET", repo+"/issues/{n}", (*Fake).getIssue)
	add("PATCH", repo+"/issues/{n}", (*Fake).editIssue)
	add("GET", repo+"/issues/{n}/comments", (*Fake).listComments)
	add("POST", repo+"/issues/{n}/comments", (*Fake).createComment)
	add("GET", repo+"/issues/{n}/sub_issues", (*Fake).listSubIssues)
	add("POST", repo+"/issues/{n}/sub_issues", (*Fake).addSubIssue)
	add("DELETE", repo+"/issues/{n}/sub_issue", (*Fake).removeSubIssue)
	add("GET", repo+"/issues/{n}/dependencies/blocked_by", listDependencies(false))
	add("POST", repo+"/issues/{n}/dependencies/blocked_by", (*Fake).addBlockedBy)
	add("DELETE", repo+"/issues/{n}/dependencies/blocked_by/{id}", (*Fake).removeBlockedBy)
	add("GET", repo+"/issues/{n}/dependencies/blocking", listDependencies(true))
	add("GET", repo+"/issues/{n}/labels", (*Fake).listIssueLabels)
	add("POST", repo+"/issues/{n}/labels", (*Fake).addIssueLabels)
	add("DELETE", repo+"/issues/{n}/labels/{name}", (*Fake).removeIssueLabel)
	add("GET", repo+"/labels", (*Fake).listLabels)
	add("POST", repo+"/labels", (*Fake).createLabel)
	add("GET", repo+"/labels/{name}", (*Fake).getLabel)
	add("PATCH", repo+"/labels/{name}", (*Fake).editLabel)
	add("DELETE", repo+"/labels/{name}", (*Fake).deleteLabel)
	add("GET", repo+"/pulls", (*Fake).listPulls)
	add("POST", repo+"/pulls", (*Fake).createPull)
	add("GET", repo+"/pulls/{n}", (*Fake).getPull)
	add("PATCH", repo+"/pulls/{n}", (*Fake).editPull)
	add("POST", repo+"/statuses/{sha}", (*Fake).createStatus)
	add("GET", repo+"/commits/{ref}/statuses", (*Fake).listStatuses)
	add("GET", repo+"/commits/{ref}/status", (*Fake).combinedStatus)
	add("GET", repo+"/commits/{ref}/check-runs", (*Fake).listCheckRuns)
	add("POST", repo+"/actions/workflows/{workflow}/dispatches", (*Fake).dispatch)
	add("PUT", repo+"/actions/workflows/{workflow}/disable", setWorkflowEnabled(false))
	add("PUT", repo+"/actions/workflows/{workflow}/enable", setWorkflowEnabled(true))
	add("POST", repo+"/dispatches", (*Fake).repositoryDispatch)
	add("POST", repo+"/actions/runs/{run_id}/approve", (*Fake).approveRun)
	add("GET", repo+"/pulls/{n}/merge", (*Fake).checkMerged)
	add("PUT", repo+"/pulls/{n}/merge", (*Fake).mergePull)
	add("GET", repo+"/pulls/{n}/reviews", (*Fake).listReviews)
	add("POST", repo+"/pulls/{n}/reviews", (*Fake).createReview)
	add("GET", repo+"/pulls/{n}/reviews/{id}/comments", (*Fake).listReviewComments)
	add("GET", repo+"/pulls/{n}/comments", (*Fake).listPullComments)
	add("POST", repo+"/pulls/{n}/comments", (*Fake).createPullComment)
	add("POST", repo+"/pulls/{n}/comments/{id}/replies", (*Fake).replyPullComment)
	add("GET", repo+"/actions/workflows/{workflow}/runs", (*Fake).listWorkflowRuns)
	add("GET", repo+"/actions/runs/{run_id}/jobs", (*Fake).listJobs)
	add("GET", repo+"/actions/runs/{run_id}", (*Fake).getRun)
	add("GET", repo+"/actions/jobs/{job_id}/logs", (*Fake).jobLogs)
	add("GET", repo+"/actions/jobs/{job_id}", (*Fake).getJob)
	add("POST", repo+"/actions/runs/{run_id}/rerun-failed-jobs", (*Fake).rerunFailedJobs)
	add("GET", repo+"/check-runs/{id}/annotations", (*Fake).checkRunAnnotations)
	add("GET", repo+"/collaborators/{user}/permission", (*Fake).permission)
	add("POST", "/graphql", (*Fake).graphql)
	routes[len(routes)-1].graphql = true
	routes[len(routes)-1].write = false // a query is a read; isMutation decides
	return routes
}

// compileTemplate turns "/repos/{owner}/{repo}/issues/{n}" into a regexp.
// Numeric names ({n}, {id}, {run_id}, {job_id}) match digits; {ref} matches
// the rest of the path, slashes included, because branch names have them.
func compileTemplate(tmpl string) (*regexp.Regexp, []string) {
	var names []string
	var b strings.Builder
	b.WriteString("^")
	for _, seg := range strings.Split(strings.TrimPrefix(tmpl, "/"), "/") {
		b.WriteString("/")
		if name, ok := strings.CutPrefix(seg, "{"); ok {
			name = strings.TrimSuffix(name, "}")
			names = append(names, name)
			switch name {
			case "n", "id", "run_id", "job_id":
				b.WriteString(`(\d+)`)
			case "ref":
				b.WriteString(`(.+)`)
			default:
				b.WriteString(`([^/]+)`)
			}
			continue
		}
		b.WriteString(regexp.QuoteMeta(seg))
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String()), names
}

// match finds the route for an escaped request path and its unescaped params.
func match(method, escapedPath string) (*route, map[string]string) {
	for _, rt := range routes() {
		if rt.method != method {
			continue
		}
		m := rt.re.FindStringSubmatch(escapedPath)
		if m == nil {
			continue
		}
		params := map[string]string{}
		for i, name := range rt.names {
			v, err := url.PathUnescape(m[i+1])
			if err != nil {
				return nil, nil
			}
			params[name] = v
		}
		return rt, params
	}
	return nil, nil
}
