package githubfake

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/rhysd/actionlint"
)

// The Actions OIDC token service: what a job's step reaches through
// ACTIONS_ID_TOKEN_REQUEST_URL and ACTIONS_ID_TOKEN_REQUEST_TOKEN. roadmap's
// reusable workflows read from the token which commit of roadmap the caller
// named (job_workflow_ref, job_workflow_sha), since no context of a called
// workflow says it. GitHub's rules the fake keeps (docs/fake-github.md):
//
//   - A job gets the request variables only with `id-token: write`; a called
//     workflow's jobs only when the calling job or the caller workflow grants
//     it explicitly (GitHub's changelog of 2023-06-15, "Securing OIDC token
//     permissions in reusable workflows"). Without the grant the fake
//     refuses the token (403) — on GitHub the step finds no variables.
//   - job_workflow_ref is the workflow file the job is defined in, with the
//     ref it was called at (refs/tags/v1, refs/heads/main, or the commit
//     SHA the `uses:` named); job_workflow_sha is that ref's commit
//     (GitHub's "OpenID Connect reference", custom claims).

// idTokenPath is where the fake serves the OIDC token service.
const idTokenPath = "/_services/token/idtoken"

// SetCalledRepository gives the fake the refs of another repository
// (owner/name) whose reusable workflows the repository's workflows call,
// full ref name to commit ("refs/tags/v1": sha): the token's
// job_workflow_sha of a called workflow is read from it.
func (f *Fake) SetCalledRepository(name string, refs map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.otherRepos == nil {
		f.otherRepos = map[string]map[string]string{}
	}
	m := map[string]string{}
	for k, v := range refs {
		m[k] = v
	}
	f.otherRepos[strings.ToLower(name)] = m
}

// IDTokenRequest returns what the runner would give run's jobs as
// ACTIONS_ID_TOKEN_REQUEST_URL (a path and query on the fake's address;
// GitHub's already holds a query, so a client appends &audience=…) and
// ACTIONS_ID_TOKEN_REQUEST_TOKEN.
func (f *Fake) IDTokenRequest(runID int64) (path, token string) {
	var b [16]byte
	rand.Read(b[:])
	token = hex.EncodeToString(b[:])
	f.mu.Lock()
	f.idGrants[token] = runID
	f.mu.Unlock()
	return idTokenPath + "?api-version=2.0&run=" + strconv.FormatInt(runID, 10), token
}

// serveIDToken answers a token request: {"value": "<JWT>"}.
func (f *Fake) serveIDToken(r *http.Request) reply {
	if r.Method != http.MethodGet {
		return errorReply(http.StatusMethodNotAllowed, "Method not allowed")
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "bearer ")
	if !ok {
		tok, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	runID, ok := f.idGrants[tok]
	if !ok || r.URL.Query().Get("run") != strconv.FormatInt(runID, 10) {
		return errorReply(http.StatusUnauthorized, "Bad credentials")
	}
	run := f.findRun(runID)
	if run == nil {
		return errorReply(http.StatusNotFound, "Not Found")
	}
	claims, status, msg := f.idClaims(run)
	if status != 0 {
		return errorReply(status, msg)
	}
	claims["iss"] = "http://" + r.Host + "/_services/token"
	if aud := r.URL.Query().Get("audience"); aud != "" {
		claims["aud"] = aud
	} else {
		claims["aud"] = "https://github.com/" + f.opts.Owner
	}
	now := f.clock.Now().Unix()
	claims["iat"], claims["nbf"], claims["exp"] = now, now, now+300
	return reply{status: http.StatusOK, body: map[string]any{"count": 1, "value": signJWT(claims)}}
}

// idClaims are the token's claims for a job of run, or the refusal. f.mu is
// held. The job asking is one of the jobs of the workflow its caller calls
// (the fake cannot tell which job asks): a caller that calls two different
// workflow refs is an error here, not a guess.
func (f *Fake) idClaims(run *Run) (map[string]any, int, string) {
	repo := f.opts.Owner + "/" + f.opts.Repo
	branch := run.HeadBranch
	if branch == "" {
		branch = f.opts.DefaultBranch
	}
	// A dispatched run's workflow is the ref's at the dispatch (the fake
	// keeps no head SHA on it): the branch's head.
	head := run.HeadSHA
	if head == "" {
		head = f.ciHead(branch)
	}
	var caller *workflow
	for _, w := range f.workflowsAt(branch, head) {
		if w.file == run.WorkflowFile {
			caller = &w
			break
		}
	}
	if caller == nil || caller.wf == nil {
		return nil, http.StatusNotFound, "githubfake: the run's workflow file " + run.WorkflowFile + " is unknown or does not parse"
	}
	claims := map[string]any{
		"sub":              "repo:" + repo + ":ref:refs/heads/" + branch,
		"repository":       repo,
		"repository_owner": f.opts.Owner,
		"ref":              "refs/heads/" + branch,
		"sha":              head,
		"run_id":           strconv.FormatInt(run.ID, 10),
		"run_attempt":      strconv.Itoa(max(run.RunAttempt, 1)),
		"event_name":       run.Event,
		"workflow_ref":     repo + "/" + run.WorkflowFile + "@refs/heads/" + branch,
		"workflow_sha":     head,
	}
	// The reusable workflows the caller's jobs call, by `uses:`.
	called := map[string]*actionlint.Job{}
	for _, j := range caller.wf.Jobs {
		if j == nil || j.WorkflowCall == nil || j.WorkflowCall.Uses == nil {
			continue
		}
		uses := j.WorkflowCall.Uses.Value
		if strings.HasPrefix(uses, "./") {
			uses = repo + "/" + strings.TrimPrefix(uses, "./") + "@refs/heads/" + branch
		}
		called[uses] = j
	}
	if len(called) == 0 {
		if !grantsIDToken(caller.wf, nil) {
			return nil, http.StatusForbidden, "githubfake: no job of " + run.WorkflowFile + " has id-token: write"
		}
		claims["job_workflow_ref"], claims["job_workflow_sha"] = claims["workflow_ref"], head
		return claims, 0, ""
	}
	if len(called) > 1 {
		var uses []string
		for u := range called {
			uses = append(uses, u)
		}
		sort.Strings(uses)
		return nil, http.StatusBadRequest, "githubfake: " + run.WorkflowFile + " calls more than one workflow (" + strings.Join(uses, ", ") + "); the fake cannot tell which job asks"
	}
	for uses, j := range called {
		if !grantsIDToken(caller.wf, j) {
			return nil, http.StatusForbidden, "githubfake: the job calling " + uses + " does not grant id-token: write (nor does the workflow)"
		}
		spec, ref, _ := strings.Cut(uses, "@")
		parts := strings.SplitN(spec, "/", 3)
		if len(parts) != 3 {
			return nil, http.StatusBadRequest, "githubfake: " + uses + " is not owner/repo/path@ref"
		}
		sha, full, ok := f.resolveCalled(parts[0]+"/"+parts[1], ref, repo, head)
		if !ok {
			return nil, http.StatusNotFound, fmt.Sprintf("githubfake: %s: ref %s of %s/%s is unknown (SetCalledRepository)", run.WorkflowFile, ref, parts[0], parts[1])
		}
		claims["job_workflow_ref"] = spec + "@" + full
		claims["job_workflow_sha"] = sha
	}
	return claims, 0, ""
}

// resolveCalled finds ref of repository name: a full ref, a branch or tag
// name (refs/heads/ before refs/tags/), or a commit SHA one of its refs
// names (GitHub takes any commit; the fake knows only those). f.mu is held.
func (f *Fake) resolveCalled(name, ref, self, selfSHA string) (sha, full string, ok bool) {
	if strings.EqualFold(name, self) && strings.HasPrefix(ref, "refs/heads/") {
		return selfSHA, ref, true
	}
	refs := f.otherRepos[strings.ToLower(name)]
	for _, full := range []string{ref, "refs/heads/" + ref, "refs/tags/" + ref} {
		if sha, ok := refs[full]; ok {
			return sha, full, true
		}
	}
	if shaRE().MatchString(ref) {
		for _, sha := range refs {
			if sha == ref {
				return sha, sha, true
			}
		}
	}
	return "", "", false
}

// grantsIDToken: the job (nil: any job of wf) or, when the job sets no
// permissions, the workflow sets id-token: write or write-all. GitHub's
// default token permissions never include id-token.
func grantsIDToken(wf *actionlint.Workflow, job *actionlint.Job) bool {
	if job == nil {
		for _, j := range wf.Jobs {
			if j != nil && grantsIDToken(wf, j) {
				return true
			}
		}
		return false
	}
	p := job.Permissions
	if p == nil {
		p = wf.Permissions
	}
	if p == nil {
		return false
	}
	if p.All != nil {
		return p.All.Value == "write-all"
	}
	s, ok := p.Scopes["id-token"]
	return ok && s != nil && s.Value != nil && s.Value.Value == "write"
}

// idKey signs the fake's tokens: they are JWTs in form, verifiable by no one
// outside the fake.
var idKey = func() []byte {
	var b [32]byte
	rand.Read(b[:])
	return b[:]
}()

func signJWT(claims map[string]any) string {
	enc := base64.RawURLEncoding
	header, _ := json.Marshal(map[string]string{"typ": "JWT", "alg": "HS256", "kid": "githubfake"})
	body, _ := json.Marshal(claims)
	signed := enc.EncodeToString(header) + "." + enc.EncodeToString(body)
	mac := hmac.New(sha256.New, idKey)
	mac.Write([]byte(signed))
	return signed + "." + enc.EncodeToString(mac.Sum(nil))
}
