package githubfake

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

const docsMerge = docsPulls + "#merge-a-pull-request"

var mergeSchema = bodySchema{fields: map[string]field{
	"commit_title": kinds("string"), "commit_message": kinds("string"), "sha": kinds("string"),
	"merge_method": {types: []string{"string"}, enum: []string{"merge", "squash", "rebase"}},
}}

// errConflict is a merge git cannot make without a person: GitHub's merge
// button is greyed out and the API answers 405.
var errConflict = errors.New("merge conflict")

// mergePull answers PUT /repos/{owner}/{repo}/pulls/{n}/merge. The base
// branch moves to a new commit (a real one on the git remote), the pull
// request is closed as merged, and the push to the base and the
// pull_request closed event (merged) are recorded, both caused by the
// merger, so a person's merge starts runs and GITHUB_TOKEN's does not; the
// issues its title or body closes ("Fixes #12") close, by the merger too.
func (f *Fake) mergePull(c *call) reply {
	is, ok := f.pull(c)
	if !ok {
		return notFound()
	}
	if len(bytes.TrimSpace(c.body)) == 0 || string(bytes.TrimSpace(c.body)) == "null" {
		c.body = []byte("{}") // the body is optional and nullable
	}
	in, rep, ok := parseBody(c, mergeSchema, docsMerge)
	if !ok {
		return rep
	}
	method, _ := str(in, "merge_method")
	if method == "" {
		method = "merge"
	}
	title, _ := str(in, "commit_title")
	message, _ := str(in, "commit_message")
	want, _ := str(in, "sha")
	p := is.Pull
	switch {
	case c.kind == PersonalToken && !f.canWrite(c.login):
		return reply{status: http.StatusForbidden, body: map[string]any{
			"message": "Must have write access to the repository to merge pull requests.", "documentation_url": docsMerge}}
	case p.Merged:
		return reply{status: http.StatusMethodNotAllowed, body: map[string]any{
			"message": "Pull Request is not mergeable", "documentation_url": docsMerge}}
	case is.State != "open":
		return reply{status: http.StatusMethodNotAllowed, body: map[string]any{
			"message": "Pull Request is not mergeable", "documentation_url": docsMerge}}
	case p.Draft:
		return reply{status: http.StatusMethodNotAllowed, body: map[string]any{
			"message": "Pull Request is still a draft", "documentation_url": docsMerge}}
	case p.HeadRepo != "" && f.opts.GitRemote != "":
		// The fake holds no fork's commits: it cannot make the merge.
		return reply{status: http.StatusMethodNotAllowed, body: map[string]any{
			"message": "Pull Request is not mergeable", "documentation_url": docsMerge}}
	}
	head := f.headSHA(p)
	if want != "" && !strings.EqualFold(want, head) {
		return reply{status: http.StatusConflict, body: map[string]any{
			"message": "Head branch was modified. Review and try the merge again.", "documentation_url": docsMerge}}
	}
	if title == "" {
		title = fmt.Sprintf("Merge pull request #%d from %s:%s", is.Number, f.headOwner(p), p.Head)
		if method == "squash" {
			title = fmt.Sprintf("%s (#%d)", is.Title, is.Number)
		}
	}
	if message == "" && method == "merge" {
		message = is.Title
	}
	ref := "refs/heads/" + p.Base
	before := f.branchSHA(p.Base)
	var after string
	var paths []string
	if f.opts.GitRemote != "" {
		sha, err := f.gitMerge(method, before, head, title, message, c.login)
		if errors.Is(err, errConflict) {
			return reply{status: http.StatusMethodNotAllowed, body: map[string]any{
				"message": "Pull Request is not mergeable", "documentation_url": docsMerge}}
		}
		if err == nil {
			err = f.moveRef(ref, sha, before)
		}
		if err != nil {
			return errorReply(http.StatusInternalServerError, "the fake could not merge: "+err.Error())
		}
		after, paths = sha, f.gitChanged(ref, before, sha)
	} else {
		after = madeUpSHA(fmt.Sprintf("merge #%d %s %s %s", is.Number, method, before, head))
		paths = append([]string{}, f.st.RefPaths["refs/heads/"+p.Head]...)
		f.st.Commits = append(f.st.Commits, after)
		if f.st.RefPaths == nil {
			f.st.RefPaths = map[string][]string{}
		}
		for _, q := range paths {
			f.st.RefPaths[ref] = appendNew(f.st.RefPaths[ref], q)
		}
	}
	if f.st.Refs == nil {
		f.st.Refs = map[string]string{}
	}
	f.st.Refs[ref] = after
	now := f.stamp()
	p.HeadSHA = head // the head stays where it was merged from
	p.Merged, p.MergedAt, p.MergedBy, p.MergeCommitSHA = true, now, c.login, after
	is.State, is.ClosedAt, is.UpdatedAt = "closed", now, now
	f.pushEvents(c.login, c.kind, ref, before, after, paths)
	ev := f.prEvent("pull_request", "closed", is)
	ev.Merged = true
	f.emit(c, ev)
	f.closeLinked(c, is)
	return reply{status: http.StatusOK, body: map[string]any{
		"sha": after, "merged": true, "message": "Pull Request successfully merged"}}
}

// checkMerged answers GET /repos/{owner}/{repo}/pulls/{n}/merge: 204 when
// the pull request was merged, else 404.
func (f *Fake) checkMerged(c *call) reply {
	is, ok := f.pull(c)
	if !ok || !is.Pull.Merged {
		return notFound()
	}
	return reply{status: http.StatusNoContent}
}

// canWrite says whether a person may push to the repository: its owner, or
// a collaborator with write, maintain or admin. f.mu is held.
func (f *Fake) canWrite(login string) bool {
	if strings.EqualFold(login, f.opts.Owner) {
		return true
	}
	switch f.st.Permissions[login] {
	case "write", "maintain", "admin":
		return true
	}
	return false
}

// headOwner is the owner of the repository a pull request's head is in.
func (f *Fake) headOwner(p *Pull) string {
	if owner, _, ok := strings.Cut(p.HeadRepo, "/"); ok {
		return owner
	}
	return f.opts.Owner
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// gitMerge makes the commit a merge of head into base creates on the git
// remote, as GitHub's merge methods do, and moves nothing: merge is a
// commit with both parents, squash one commit with the merged tree on
// base, rebase each commit of base..head replayed on base. The committer
// is GitHub and the time the fake's clock. f.mu is held.
func (f *Fake) gitMerge(method, base, head, title, message, login string) (string, error) {
	at := strconv.FormatInt(f.clock.Now().Unix(), 10) + " +0000"
	env := func(name, email, date string) []string {
		return []string{"GIT_AUTHOR_NAME=" + name, "GIT_AUTHOR_EMAIL=" + email, "GIT_AUTHOR_DATE=" + date,
			"GIT_COMMITTER_NAME=GitHub", "GIT_COMMITTER_EMAIL=noreply@github.com", "GIT_COMMITTER_DATE=" + at}
	}
	person := env(login, login+"@users.noreply.github.com", at)
	msg := title
	if message != "" {
		msg += "\n\n" + message
	}
	switch method {
	case "merge", "squash":
		tree, err := f.mergeTree(base, head)
		if err != nil {
			return "", err
		}
		parents := []string{"-p", base, "-p", head}
		if method == "squash" {
			parents = parents[:2]
		}
		return f.git(person, append(append([]string{"commit-tree", tree}, parents...), "-m", msg)...)
	}
	return f.gitRebase(base, head, env("", "", ""))
}

// gitRebase replays base..head on base, as GitHub's rebase merge does: in a
// worktree of the remote kept only for it, cherry-picking each commit
// (authors kept, GitHub the committer). A commit that does not apply is
// errConflict. f.mu is held.
func (f *Fake) gitRebase(base, head string, committer []string) (string, error) {
	tmp, err := os.MkdirTemp("", "githubfake-rebase-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	wt := filepath.Join(tmp, "wt")
	if _, err := f.git(nil, "worktree", "add", "-q", "--detach", wt, base); err != nil {
		return "", err
	}
	defer f.git(nil, "worktree", "remove", "--force", wt)
	in := func(args ...string) (string, error) {
		cmd := exec.Command("git", append([]string{"-C", wt}, args...)...)
		cmd.Env = append(cmd.Environ(), committer[3:]...) // the committer's name, email and date
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if out, err := in("cherry-pick", "--allow-empty", base+".."+head); err != nil {
		in("cherry-pick", "--abort")
		if strings.Contains(out, "conflict") || strings.Contains(out, "CONFLICT") {
			return "", errConflict
		}
		return "", fmt.Errorf("git cherry-pick: %w: %s", err, out)
	}
	return in("rev-parse", "HEAD")
}

// mergeTree is the tree of merging theirs into ours, or errConflict. f.mu
// is held.
func (f *Fake) mergeTree(ours, theirs string) (string, error) {
	out, err := f.git(nil, "merge-tree", "--write-tree", "--no-messages", ours, theirs)
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return "", errConflict
	}
	if err != nil {
		return "", err
	}
	tree, _, _ := strings.Cut(out, "\n")
	return tree, nil
}

// git runs git on the remote with extra environment and returns its
// trimmed output.
func (f *Fake) git(env []string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"--git-dir", f.opts.GitRemote}, args...)...)
	if env != nil {
		cmd.Env = append(cmd.Environ(), env...)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return strings.TrimSpace(string(out)), fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// moveRef points ref of the git remote at sha when it still points at old.
func (f *Fake) moveRef(ref, sha, old string) error {
	_, err := f.git(nil, "update-ref", ref, sha, old)
	return err
}
