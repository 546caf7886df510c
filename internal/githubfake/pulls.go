package githubfake

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"sort"
	"strings"
)

const docsPulls = "https://docs.github.com/rest/pulls/pulls"

var shaRE = lazyRegexp(`^[0-9a-fA-F]{40}$`)

// headSHA is a pull request's head commit: from the bare repository when
// one is configured and has the branch, else what SetPRHead set, else a
// stable made-up SHA. f.mu is held.
func (f *Fake) headSHA(p *Pull) string {
	if sha := f.gitRevParse(p.Head); sha != "" {
		return sha
	}
	if p.HeadSHA != "" {
		return p.HeadSHA
	}
	if p.HeadRepo != "" {
		return madeUpSHA(p.HeadRepo + ":" + p.Head)
	}
	if sha := f.st.Refs["refs/heads/"+p.Head]; sha != "" {
		return sha
	}
	return madeUpSHA(p.Head)
}

// branchSHA is a branch's commit for refs the fake has no record of.
func (f *Fake) branchSHA(branch string) string {
	if sha := f.gitRevParse(branch); sha != "" {
		return sha
	}
	if sha := f.st.Refs["refs/heads/"+branch]; sha != "" {
		return sha
	}
	return madeUpSHA(branch)
}

func madeUpSHA(ref string) string {
	sum := sha1.Sum([]byte("githubfake ref " + ref))
	return hex.EncodeToString(sum[:])
}

func (f *Fake) gitRevParse(branch string) string {
	if f.opts.GitRemote == "" || branch == "" {
		return ""
	}
	if sha, ok := readBranch(f.opts.GitRemote, branch); ok {
		return sha
	}
	out, err := exec.Command("git", "--git-dir", f.opts.GitRemote, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// resolveRef turns a SHA or a branch name into a commit SHA. f.mu is held.
func (f *Fake) resolveRef(ref string) (string, bool) {
	if shaRE().MatchString(ref) {
		return strings.ToLower(ref), f.hasCommit(ref)
	}
	ref = strings.TrimPrefix(ref, "refs/heads/")
	for _, is := range f.st.Issues {
		if is.Pull != nil && is.Pull.HeadRepo == "" && is.Pull.Head == ref && is.State == "open" {
			return f.headSHA(is.Pull), true
		}
	}
	if sha := f.gitRevParse(ref); sha != "" {
		return sha, true
	}
	return "", false
}

// hasCommit says whether the repository has a commit: one added with
// AddCommit, a pull request's head or base, a SHA with seeded statuses or
// check runs, or a commit of the git remote. f.mu is held.
func (f *Fake) hasCommit(sha string) bool {
	sha = strings.ToLower(sha)
	if slices.Contains(f.st.Commits, sha) {
		return true
	}
	for _, s := range f.st.Refs {
		if s == sha {
			return true
		}
	}
	for _, is := range f.st.Issues {
		if is.Pull != nil && (f.headSHA(is.Pull) == sha || f.branchSHA(is.Pull.Base) == sha) {
			return true
		}
	}
	for _, s := range f.st.Statuses {
		if s.SHA == sha {
			return true
		}
	}
	for _, cr := range f.st.CheckRuns {
		if cr.SHA == sha {
			return true
		}
	}
	if f.opts.GitRemote != "" {
		return exec.Command("git", "--git-dir", f.opts.GitRemote, "cat-file", "-e", sha+"^{commit}").Run() == nil
	}
	return false
}

// hasWorkflow says whether .github/workflows/<file> exists: added with
// AddWorkflow, the workflow of a seeded run, or on the git remote's default
// branch. f.mu is held.
func (f *Fake) hasWorkflow(file string) bool {
	if slices.Contains(f.st.Workflows, file) || f.st.CI[file] != nil {
		return true
	}
	if _, ok := f.st.WorkflowFiles[""][file]; ok {
		return true
	}
	if _, ok := f.st.WorkflowFiles[f.opts.DefaultBranch][file]; ok {
		return true
	}
	for _, r := range f.st.Runs {
		if r.WorkflowFile == file {
			return true
		}
	}
	if f.opts.GitRemote != "" {
		return exec.Command("git", "--git-dir", f.opts.GitRemote, "cat-file", "-e", "HEAD:.github/workflows/"+file).Run() == nil
	}
	return false
}

// hasRef says whether a branch or tag exists: the default branch (main
// without a git remote), a pull request's head or base, a seeded run's
// branch, or a branch or tag of the git remote. f.mu is held.
func (f *Fake) hasRef(ref string) bool {
	name := strings.TrimPrefix(strings.TrimPrefix(ref, "refs/heads/"), "refs/tags/")
	if f.opts.GitRemote == "" && name == "main" {
		return true
	}
	for _, is := range f.st.Issues {
		if is.Pull != nil && ((is.Pull.HeadRepo == "" && is.Pull.Head == name) || is.Pull.Base == name) {
			return true
		}
	}
	for _, r := range f.st.Runs {
		if r.HeadBranch == name {
			return true
		}
	}
	if f.st.Refs["refs/heads/"+name] != "" || f.st.Refs["refs/tags/"+name] != "" {
		return true
	}
	if f.opts.GitRemote != "" {
		for _, full := range []string{"refs/heads/" + name, "refs/tags/" + name} {
			if exec.Command("git", "--git-dir", f.opts.GitRemote, "rev-parse", "--verify", "--quiet", full).Run() == nil {
				return true
			}
		}
	}
	return false
}

func noCommit(ref string) reply {
	return reply{status: http.StatusUnprocessableEntity, body: map[string]any{
		"message": "No commit found for SHA: " + ref, "documentation_url": docsREST,
	}}
}

func (f *Fake) pull(c *call) (*Issue, bool) {
	is, _, ok := f.issue(c)
	if !ok || is.Pull == nil {
		return nil, false
	}
	return is, true
}

func branchOf(head string) string {
	if _, b, ok := strings.Cut(head, ":"); ok {
		return b
	}
	return head
}

// pullCreate and pullPatch are the request schemas of creating and updating
// a pull request.
var (
	pullCreate = bodySchema{fields: map[string]field{
		"title": kinds("string"), "head": kinds("string"), "head_repo": kinds("string"), "base": kinds("string"),
		"body": kinds("string"), "maintainer_can_modify": kinds("boolean"), "draft": kinds("boolean"), "issue": kinds("integer"),
	}, required: []string{"head", "base"}}
	pullPatch = bodySchema{fields: map[string]field{
		"title": kinds("string"), "body": kinds("string"), "base": kinds("string"),
		"state":                 {types: []string{"string"}, enum: []string{"open", "closed"}},
		"maintainer_can_modify": kinds("boolean"),
	}}
)

func (f *Fake) createPull(c *call) reply {
	doc := docsPulls + "#create-a-pull-request"
	_, rep, ok := parseBody(c, pullCreate, doc)
	if !ok {
		return rep
	}
	var in struct {
		Title string `json:"title"`
		Head  string `json:"head"`
		Base  string `json:"base"`
		Body  string `json:"body"`
		Draft bool   `json:"draft"`
	}
	json.Unmarshal(c.body, &in)
	for _, k := range []string{"head", "base", "title"} {
		v := map[string]string{"title": in.Title, "head": in.Head, "base": in.Base}[k]
		if v == "" {
			return validation(doc, map[string]any{"resource": "PullRequest", "code": "missing_field", "field": k})
		}
	}
	if tooLong(in.Body) {
		return validation(doc, map[string]any{"resource": "PullRequest", "code": "custom", "field": "body",
			"message": fmt.Sprintf("body is too long (maximum is %d characters)", maxBody)})
	}
	head := branchOf(in.Head)
	// "owner:branch" with another owner is a branch of that owner's fork.
	headRepo := ""
	if owner, _, ok := strings.Cut(in.Head, ":"); ok && !strings.EqualFold(owner, f.opts.Owner) {
		headRepo = owner + "/" + f.opts.Repo
	}
	for _, is := range f.st.Issues {
		if is.Pull != nil && is.State == "open" && is.Pull.Head == head && is.Pull.HeadRepo == headRepo {
			owner := f.opts.Owner
			if headRepo != "" {
				owner, _, _ = strings.Cut(headRepo, "/")
			}
			return validation(doc, map[string]any{"resource": "PullRequest", "code": "custom",
				"message": fmt.Sprintf("A pull request already exists for %s:%s.", owner, head)})
		}
	}
	if headRepo == "" && f.opts.GitRemote != "" && f.gitRevParse(head) == "" {
		return validation(doc, map[string]any{"resource": "PullRequest", "code": "invalid", "field": "head"})
	}
	id := f.st.id()
	is := f.newIssue(Issue{Title: in.Title, Body: in.Body, Author: c.login,
		Pull: &Pull{ID: id, NodeID: nodeID("PR", id), Head: head, Base: in.Base, Draft: in.Draft, HeadRepo: headRepo}})
	f.issueEvent(c, is, "opened", "")
	return reply{status: http.StatusCreated, body: f.pullJSON(c.base, is, true),
		location: fmt.Sprintf("%s/pulls/%d", f.repoAPI(c.base), is.Number)}
}

func (f *Fake) listPulls(c *call) reply {
	state := c.query.Get("state")
	if state == "" {
		state = "open"
	}
	head, headRepo := c.query.Get("head"), ""
	if head != "" {
		owner, b, ok := strings.Cut(head, ":")
		if ok && !strings.EqualFold(owner, f.opts.Owner) {
			headRepo = owner + "/" + f.opts.Repo // another owner's fork
		}
		head = b
		if !ok {
			head = owner
		}
	}
	base := c.query.Get("base")
	var list []*Issue
	for _, is := range f.st.Issues {
		if is.Pull == nil || (state != "all" && is.State != state) {
			continue
		}
		if head != "" && (is.Pull.Head != head || !strings.EqualFold(is.Pull.HeadRepo, headRepo)) {
			continue
		}
		if base != "" && is.Pull.Base != base {
			continue
		}
		list = append(list, is)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Number > list[j].Number })
	lo, hi, link := f.paginate(c, len(list))
	out := []any{}
	for _, is := range list[lo:hi] {
		out = append(out, f.pullJSON(c.base, is, false))
	}
	return reply{status: http.StatusOK, body: out, link: link}
}

func (f *Fake) getPull(c *call) reply {
	is, ok := f.pull(c)
	if !ok {
		return notFound()
	}
	return reply{status: http.StatusOK, body: f.pullJSON(c.base, is, true)}
}

func (f *Fake) editPull(c *call) reply {
	is, ok := f.pull(c)
	if !ok {
		return notFound()
	}
	doc := docsPulls + "#update-a-pull-request"
	if _, rep, ok := parseBody(c, pullPatch, doc); !ok {
		return rep
	}
	var in struct {
		Title *string `json:"title"`
		Body  *string `json:"body"`
		State *string `json:"state"`
		Base  *string `json:"base"`
	}
	json.Unmarshal(c.body, &in)
	if in.Title != nil && *in.Title == "" {
		return validation(doc, map[string]any{"resource": "PullRequest", "code": "missing_field", "field": "title"})
	}
	if in.Body != nil && tooLong(*in.Body) {
		return validation(doc, map[string]any{"resource": "PullRequest", "code": "custom", "field": "body",
			"message": fmt.Sprintf("body is too long (maximum is %d characters)", maxBody)})
	}
	if in.State != nil && *in.State == "open" && is.Pull.Merged {
		// The fake's wording: GitHub refuses to reopen a merged pull request.
		return validation(doc, map[string]any{"resource": "PullRequest", "code": "custom", "field": "state",
			"message": "state cannot be changed. The pull request has been merged."})
	}
	edited := (in.Title != nil && *in.Title != is.Title) || (in.Body != nil && *in.Body != is.Body) ||
		(in.Base != nil && *in.Base != "" && *in.Base != is.Pull.Base)
	if in.Title != nil {
		is.Title = *in.Title
	}
	if in.Body != nil {
		is.Body = *in.Body
	}
	if in.Base != nil && *in.Base != "" {
		is.Pull.Base = *in.Base
	}
	t := f.stamp()
	stateAction := ""
	if in.State != nil && *in.State != is.State {
		stateAction = map[string]string{"closed": "closed", "open": "reopened"}[*in.State]
	}
	if in.State != nil {
		is.State = *in.State
	}
	is.UpdatedAt = t
	if edited {
		f.issueEvent(c, is, "edited", "")
	}
	if stateAction != "" {
		f.issueEvent(c, is, stateAction, "")
	}
	return reply{status: http.StatusOK, body: f.pullJSON(c.base, is, true)}
}
