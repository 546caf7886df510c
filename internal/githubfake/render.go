package githubfake

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// The functions here render the fake's records in GitHub's JSON shapes, with
// the same field names and JSON types as the recorded exchanges in
// ../shared/github-fixtures (TestFakeConformance holds them to it). Values
// that GitHub returns as null when empty are nil here too.

func ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nodeID(prefix string, id int64) string {
	return prefix + "_kwDO" + base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("%d", id)))
}

// userID gives each login a stable id. f.mu is held.
func (f *Fake) userID(login string) int64 {
	if id, ok := f.st.Users[login]; ok {
		return id
	}
	id := int64(len(f.st.Users) + 1)
	f.st.Users[login] = id
	return id
}

func (f *Fake) userJSON(base, login string) map[string]any {
	id := f.userID(login)
	typ := "User"
	if strings.HasSuffix(login, "[bot]") {
		typ = "Bot"
	}
	u := base + "/users/" + url.PathEscape(login)
	return map[string]any{
		"login":               login,
		"id":                  id,
		"node_id":             nodeID("U", id),
		"avatar_url":          fmt.Sprintf("%s/avatars/u/%d?v=4", base, id),
		"gravatar_id":         "",
		"url":                 u,
		"html_url":            base + "/" + url.PathEscape(login),
		"followers_url":       u + "/followers",
		"following_url":       u + "/following{/other_user}",
		"gists_url":           u + "/gists{/gist_id}",
		"starred_url":         u + "/starred{/owner}{/repo}",
		"subscriptions_url":   u + "/subscriptions",
		"organizations_url":   u + "/orgs",
		"repos_url":           u + "/repos",
		"events_url":          u + "/events{/privacy}",
		"received_events_url": u + "/received_events",
		"type":                typ,
		"site_admin":          false,
	}
}

func (f *Fake) repoAPI(base string) string {
	return base + "/repos/" + f.opts.Owner + "/" + f.opts.Repo
}

func (f *Fake) repoHTML(base string) string {
	return base + "/" + f.opts.Owner + "/" + f.opts.Repo
}

func (f *Fake) authorAssociation(login string) string {
	switch f.st.Permissions[login] {
	case "admin", "maintain", "write":
		if strings.EqualFold(login, f.opts.Owner) {
			return "OWNER"
		}
		return "COLLABORATOR"
	}
	return "NONE"
}

func reactions(u string) map[string]any {
	return map[string]any{
		"url": u + "/reactions", "total_count": 0, "+1": 0, "-1": 0, "laugh": 0,
		"hooray": 0, "confused": 0, "heart": 0, "rocket": 0, "eyes": 0,
	}
}

func (f *Fake) labelJSON(base string, l *Label) map[string]any {
	return map[string]any{
		"id":          l.ID,
		"node_id":     nodeID("LA", l.ID),
		"url":         f.repoAPI(base) + "/labels/" + url.PathEscape(l.Name),
		"name":        l.Name,
		"color":       l.Color,
		"default":     l.Default,
		"description": nullable(l.Description),
	}
}

// issueJSON renders an issue; single adds the fields GitHub sends only for
// one issue (closed_by), not in lists.
func (f *Fake) issueJSON(base string, is *Issue, single bool) map[string]any {
	api := f.repoAPI(base)
	u := fmt.Sprintf("%s/issues/%d", api, is.Number)
	labels := []any{}
	for _, name := range is.Labels {
		if l := f.findLabel(name); l != nil {
			labels = append(labels, f.labelJSON(base, l))
		}
	}
	comments := 0
	for _, c := range f.st.Comments {
		if c.Issue == is.Number {
			comments++
		}
	}
	m := map[string]any{
		"url":                      u,
		"repository_url":           api,
		"labels_url":               u + "/labels{/name}",
		"comments_url":             u + "/comments",
		"events_url":               u + "/events",
		"html_url":                 fmt.Sprintf("%s/issues/%d", f.repoHTML(base), is.Number),
		"id":                       is.ID,
		"node_id":                  nodeID("I", is.ID),
		"number":                   is.Number,
		"title":                    is.Title,
		"user":                     f.userJSON(base, is.Author),
		"labels":                   labels,
		"state":                    is.State,
		"locked":                   false,
		"assignee":                 nil,
		"assignees":                []any{},
		"milestone":                nil,
		"comments":                 comments,
		"created_at":               ts(is.CreatedAt),
		"updated_at":               ts(is.UpdatedAt),
		"closed_at":                ts(is.ClosedAt),
		"author_association":       f.authorAssociation(is.Author),
		"active_lock_reason":       nil,
		"body":                     nullable(is.Body),
		"reactions":                reactions(u),
		"timeline_url":             u + "/timeline",
		"performed_via_github_app": nil,
		"state_reason":             nullable(is.StateReason),
		"sub_issues_summary":       f.subIssuesSummary(is),
		"parent_issue_url":         nil,
	}
	if !f.opts.NoIssueDependencies {
		m["issue_dependencies_summary"] = f.dependenciesSummary(is)
	}
	if is.Parent != 0 {
		m["parent_issue_url"] = fmt.Sprintf("%s/issues/%d", api, is.Parent)
	}
	if single {
		m["closed_by"] = nil
	}
	if is.Pull != nil {
		pu := fmt.Sprintf("%s/pulls/%d", api, is.Number)
		html := fmt.Sprintf("%s/pull/%d", f.repoHTML(base), is.Number)
		m["draft"] = is.Pull.Draft
		m["pull_request"] = map[string]any{
			"url": pu, "html_url": html, "diff_url": html + ".diff", "patch_url": html + ".patch", "merged_at": ts(is.Pull.MergedAt),
		}
	}
	return m
}

func (f *Fake) commentJSON(base string, c *Comment) map[string]any {
	api := f.repoAPI(base)
	u := fmt.Sprintf("%s/issues/comments/%d", api, c.ID)
	return map[string]any{
		"url":                      u,
		"html_url":                 fmt.Sprintf("%s/issues/%d#issuecomment-%d", f.repoHTML(base), c.Issue, c.ID),
		"issue_url":                fmt.Sprintf("%s/issues/%d", api, c.Issue),
		"id":                       c.ID,
		"node_id":                  nodeID("IC", c.ID),
		"user":                     f.userJSON(base, c.Author),
		"created_at":               ts(c.CreatedAt),
		"updated_at":               ts(c.UpdatedAt),
		"author_association":       f.authorAssociation(c.Author),
		"body":                     c.Body,
		"reactions":                reactions(u),
		"performed_via_github_app": nil,
	}
}

func (f *Fake) repoJSON(base string) map[string]any {
	api := f.repoAPI(base)
	m := map[string]any{
		"id":          f.opts.RepoID,
		"node_id":     nodeID("R", f.opts.RepoID),
		"name":        f.opts.Repo,
		"full_name":   f.opts.Owner + "/" + f.opts.Repo,
		"private":     false,
		"owner":       f.userJSON(base, f.opts.Owner),
		"html_url":    f.repoHTML(base),
		"description": nil,
		"fork":        false,
		"url":         api,
	}
	for _, k := range []string{
		"forks", "keys{/key_id}", "collaborators{/collaborator}", "teams", "hooks",
		"issue_events:issues/events{/number}", "events", "assignees{/user}", "branches{/branch}",
		"tags", "blobs:git/blobs{/sha}", "git_tags:git/tags{/sha}", "git_refs:git/refs{/sha}",
		"trees:git/trees{/sha}", "statuses{/sha}", "languages", "stargazers", "contributors",
		"subscribers", "subscription", "commits{/sha}", "git_commits:git/commits{/sha}",
		"comments{/number}", "issue_comment:issues/comments{/number}", "contents/{+path}",
		"compare/{base}...{head}", "merges", "archive:{archive_format}{/ref}", "downloads",
		"issues{/number}", "pulls{/number}", "milestones{/number}",
		"notifications{?since,all,participating}", "labels{/name}", "releases{/id}", "deployments",
	} {
		name, p, explicit := strings.Cut(k, ":")
		if !explicit {
			p = k
			name = k
			if i := strings.IndexAny(name, "{/"); i >= 0 {
				name = name[:i]
			}
		}
		if name == "statuses" {
			p = "statuses/{sha}"
		}
		m[name+"_url"] = api + "/" + p
	}
	return m
}

// fullRepoJSON is the repository as a pull request's head and base carry it
// (GitHub's "repository" schema): the minimal form and the counts, flags and
// clone URLs.
func (f *Fake) fullRepoJSON(base string) map[string]any {
	m := f.repoJSON(base)
	host := strings.TrimPrefix(strings.TrimPrefix(base, "https://"), "http://")
	full := f.opts.Owner + "/" + f.opts.Repo
	for k, v := range map[string]any{
		"clone_url": f.repoHTML(base) + ".git", "git_url": "git://" + host + "/" + full + ".git",
		"ssh_url": "git@" + host + ":" + full + ".git", "svn_url": f.repoHTML(base), "mirror_url": nil,
		"homepage": nil, "language": nil, "license": nil, "default_branch": f.opts.DefaultBranch,
		"forks": 0, "forks_count": 0, "open_issues": 0, "open_issues_count": 0, "size": 0,
		"stargazers_count": 0, "watchers": 0, "watchers_count": 0,
		"has_downloads": true, "has_issues": true, "has_projects": true, "has_wiki": true, "has_pages": false,
		"archived": false, "disabled": false, "visibility": "public",
		"pushed_at": ts(f.st.LastWrite), "created_at": ts(repoCreated), "updated_at": ts(repoCreated),
	} {
		m[k] = v
	}
	return m
}

// repoCreated is when the fake's repository was made.
var repoCreated = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func (f *Fake) statusJSON(base string, s *Status, withCreator bool) map[string]any {
	m := map[string]any{
		"url":         f.repoAPI(base) + "/statuses/" + s.SHA,
		"avatar_url":  base + "/avatars/u/github-actions?v=4",
		"id":          s.ID,
		"node_id":     nodeID("SC", s.ID),
		"state":       s.State,
		"description": nullable(s.Description),
		"target_url":  nullable(s.TargetURL),
		"context":     s.Context,
		"created_at":  ts(s.CreatedAt),
		"updated_at":  ts(s.CreatedAt),
	}
	if withCreator {
		m["creator"] = f.userJSON(base, s.Creator)
	}
	return m
}

func (f *Fake) checkRunJSON(base string, c *CheckRun) map[string]any {
	var completed any
	conclusion := any(nil)
	if c.Status == "completed" {
		completed = ts(f.clock.Now())
		conclusion = c.Conclusion
	}
	u := fmt.Sprintf("%s/check-runs/%d", f.repoAPI(base), c.ID)
	app := f.actionsAppJSON(base)
	details := fmt.Sprintf("%s/runs/%d", f.repoHTML(base), c.ID)
	if j := f.findJob(c.ID); j != nil && c.App == "" {
		details = fmt.Sprintf("%s/actions/runs/%d/job/%d", f.repoHTML(base), j.RunID, j.ID)
	}
	if c.App != "" && c.App != "github-actions" {
		app = f.otherAppJSON(base, c.App)
	}
	str := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	annotations := 0
	if j := f.findJob(c.ID); j != nil {
		annotations = len(j.Annotations)
	}
	return map[string]any{
		"id":           c.ID,
		"head_sha":     c.SHA,
		"node_id":      nodeID("CR", c.ID),
		"external_id":  "",
		"url":          u,
		"html_url":     details,
		"details_url":  details,
		"status":       c.Status,
		"conclusion":   conclusion,
		"started_at":   ts(f.clock.Now()),
		"completed_at": completed,
		"output": map[string]any{
			"title": str(c.Title), "summary": str(c.Summary), "text": str(c.Text), "annotations_count": annotations,
			"annotations_url": u + "/annotations",
		},
		"name":          c.Name,
		"check_suite":   map[string]any{"id": c.ID},
		"app":           app,
		"pull_requests": []any{},
	}
}

// otherAppJSON is an app other than GitHub Actions that made a check run.
func (f *Fake) otherAppJSON(base, slug string) map[string]any {
	return map[string]any{
		"id": 90001, "slug": slug, "node_id": nodeID("A", 90001), "name": slug,
		"owner": f.userJSON(base, slug), "description": "", "external_url": "https://" + slug + ".example.invalid",
		"html_url": base + "/apps/" + slug, "created_at": "2020-01-01T00:00:00Z", "updated_at": "2020-01-01T00:00:00Z",
		"permissions": map[string]any{"checks": "write", "metadata": "read"},
		"events":      []any{"check_run"},
	}
}

// actionsAppJSON is the GitHub Actions app, which owns the check runs of jobs.
func (f *Fake) actionsAppJSON(base string) map[string]any {
	return map[string]any{
		"id": 15368, "slug": "github-actions", "node_id": "MDM6QXBwMTUzNjg=", "name": "GitHub Actions",
		"owner": f.userJSON(base, "github"), "description": "Automate your workflow from idea to production",
		"external_url": "https://help.github.com/en/actions", "html_url": base + "/apps/github-actions",
		"created_at": "2018-07-30T09:30:17Z", "updated_at": "2019-12-10T19:04:12Z",
		"permissions": map[string]any{"actions": "write", "checks": "write", "contents": "write", "issues": "write",
			"metadata": "read", "pull_requests": "write", "statuses": "write"},
		"events": []any{"check_run", "check_suite", "pull_request", "push", "workflow_dispatch"},
	}
}

func (f *Fake) jobJSON(base string, j *Job) map[string]any {
	api := f.repoAPI(base)
	steps := []any{}
	for _, s := range j.Steps {
		var conclusion any
		if s.Conclusion != "" {
			conclusion = s.Conclusion
		}
		steps = append(steps, map[string]any{
			"name": s.Name, "status": s.Status, "conclusion": conclusion, "number": s.Number,
			"started_at": ts(j.StartedAt), "completed_at": nil,
		})
	}
	var conclusion, completed any
	if j.Status == "completed" {
		conclusion = j.Conclusion
		completed = ts(j.StartedAt)
	}
	run := f.findRun(j.RunID)
	branch, workflow := "", ""
	if run != nil {
		branch, workflow = run.HeadBranch, run.WorkflowFile
	}
	return map[string]any{
		"id":                j.ID,
		"run_id":            j.RunID,
		"run_url":           fmt.Sprintf("%s/actions/runs/%d", api, j.RunID),
		"node_id":           nodeID("CR", j.ID),
		"head_sha":          j.HeadSHA,
		"url":               fmt.Sprintf("%s/actions/jobs/%d", api, j.ID),
		"html_url":          fmt.Sprintf("%s/actions/runs/%d/job/%d", f.repoHTML(base), j.RunID, j.ID),
		"status":            j.Status,
		"conclusion":        conclusion,
		"created_at":        ts(j.StartedAt),
		"started_at":        ts(j.StartedAt),
		"completed_at":      completed,
		"name":              j.Name,
		"steps":             steps,
		"check_run_url":     fmt.Sprintf("%s/check-runs/%d", api, j.ID),
		"labels":            []any{"ubuntu-latest"},
		"runner_id":         nil,
		"runner_name":       nil,
		"runner_group_id":   nil,
		"runner_group_name": nil,
		"run_attempt":       max(j.RunAttempt, 1),
		"workflow_name":     workflow,
		"head_branch":       branch,
	}
}

// pullJSON renders a pull request; single is the full "pull-request" form
// of a read or write of one, else the list form.
func (f *Fake) pullJSON(base string, is *Issue, single bool) map[string]any {
	api := f.repoAPI(base)
	p := is.Pull
	u := fmt.Sprintf("%s/pulls/%d", api, is.Number)
	html := fmt.Sprintf("%s/pull/%d", f.repoHTML(base), is.Number)
	repo := f.fullRepoJSON(base)
	labels := []any{}
	for _, name := range is.Labels {
		if l := f.findLabel(name); l != nil {
			labels = append(labels, f.labelJSON(base, l))
		}
	}
	ref := func(branch, sha string) map[string]any {
		return map[string]any{
			"label": f.opts.Owner + ":" + branch, "ref": branch, "sha": sha,
			"user": f.userJSON(base, f.opts.Owner), "repo": repo,
		}
	}
	head := ref(p.Head, f.headSHA(p))
	if p.HeadRepo != "" {
		// A fork's branch: the head names the fork, its owner and its repository.
		owner, name, _ := strings.Cut(p.HeadRepo, "/")
		fork := f.fullRepoJSON(base)
		fork["name"], fork["full_name"], fork["fork"] = name, p.HeadRepo, true
		fork["owner"] = f.userJSON(base, owner)
		fork["id"] = workflowID(p.HeadRepo) // stable, and not the base's
		fork["node_id"] = nodeID("R", fork["id"].(int64))
		head["label"], head["user"], head["repo"] = owner+":"+p.Head, f.userJSON(base, owner), fork
	}
	m := map[string]any{
		"url":                   u,
		"id":                    p.ID,
		"node_id":               p.NodeID,
		"html_url":              html,
		"diff_url":              html + ".diff",
		"patch_url":             html + ".patch",
		"issue_url":             fmt.Sprintf("%s/issues/%d", api, is.Number),
		"number":                is.Number,
		"state":                 is.State,
		"locked":                false,
		"title":                 is.Title,
		"user":                  f.userJSON(base, is.Author),
		"body":                  nullable(is.Body),
		"created_at":            ts(is.CreatedAt),
		"updated_at":            ts(is.UpdatedAt),
		"closed_at":             ts(is.ClosedAt),
		"merged_at":             ts(p.MergedAt),
		"merge_commit_sha":      nullable(p.MergeCommitSHA),
		"assignee":              nil,
		"assignees":             []any{},
		"requested_reviewers":   []any{},
		"requested_teams":       []any{},
		"labels":                labels,
		"milestone":             nil,
		"draft":                 p.Draft,
		"commits_url":           u + "/commits",
		"review_comments_url":   u + "/comments",
		"review_comment_url":    api + "/pulls/comments{/number}",
		"comments_url":          fmt.Sprintf("%s/issues/%d/comments", api, is.Number),
		"statuses_url":          api + "/statuses/" + f.headSHA(p),
		"head":                  head,
		"base":                  ref(p.Base, f.branchSHA(p.Base)),
		"author_association":    f.authorAssociation(is.Author),
		"auto_merge":            nil,
		"active_lock_reason":    nil,
		"merged":                p.Merged,
		"mergeable":             nil,
		"rebaseable":            nil,
		"mergeable_state":       "unknown",
		"merged_by":             f.mergedBy(base, p),
		"comments":              0,
		"review_comments":       0,
		"maintainer_can_modify": false,
		"commits":               1,
		"additions":             0,
		"deletions":             0,
		"changed_files":         0,
		"_links": map[string]any{
			"self": map[string]any{"href": u}, "html": map[string]any{"href": html},
			"issue":           map[string]any{"href": fmt.Sprintf("%s/issues/%d", api, is.Number)},
			"comments":        map[string]any{"href": fmt.Sprintf("%s/issues/%d/comments", api, is.Number)},
			"review_comments": map[string]any{"href": u + "/comments"},
			"review_comment":  map[string]any{"href": api + "/pulls/comments{/number}"},
			"commits":         map[string]any{"href": u + "/commits"},
			"statuses":        map[string]any{"href": api + "/statuses/" + f.headSHA(p)},
		},
	}
	if !single {
		// GitHub's list answer is the "pull-request-simple" schema: no
		// merge state, counts or maintainer flag.
		for _, k := range []string{"merged", "mergeable", "rebaseable", "mergeable_state", "merged_by", "comments",
			"review_comments", "maintainer_can_modify", "commits", "additions", "deletions", "changed_files"} {
			delete(m, k)
		}
	}
	return m
}

// mergedBy is who merged a pull request, null while it is not merged.
func (f *Fake) mergedBy(base string, p *Pull) any {
	if !p.Merged {
		return nil
	}
	return f.userJSON(base, p.MergedBy)
}
