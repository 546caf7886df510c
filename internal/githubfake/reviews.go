package githubfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// The pull request reviews and the review comments on lines of a pull
// request's diff, with their threads of replies.

const (
	docsReviews        = "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request"
	docsReviewComments = "https://docs.github.com/rest/pulls/comments"
)

var reviewSchema = bodySchema{fields: map[string]field{
	"commit_id": kinds("string"), "body": kinds("string"), "comments": kinds("array"),
	"event": {types: []string{"string"}, enum: []string{"APPROVE", "REQUEST_CHANGES", "COMMENT"}},
}}

// reviewCommentSchema is create-review-comment's request schema, but for
// commit_id and path, which a reply (in_reply_to) need not send: GitHub
// ignores every field of a reply but body.
var reviewCommentSchema = bodySchema{fields: map[string]field{
	"body": kinds("string"), "commit_id": kinds("string"), "path": kinds("string"), "position": kinds("integer"),
	"side": {types: []string{"string"}, enum: []string{"LEFT", "RIGHT"}}, "line": kinds("integer"), "start_line": kinds("integer"),
	"start_side":   {types: []string{"string"}, enum: []string{"LEFT", "RIGHT", "side"}},
	"in_reply_to":  kinds("integer"),
	"subject_type": {types: []string{"string"}, enum: []string{"line", "file"}},
}, required: []string{"body"}}

var replySchema = bodySchema{fields: map[string]field{"body": kinds("string")}, required: []string{"body"}}

// lineComment is where a new review comment goes, as a request says it.
type lineComment struct {
	Path        string `json:"path"`
	Body        string `json:"body"`
	Line        int    `json:"line"`
	Side        string `json:"side"`
	StartLine   int    `json:"start_line"`
	StartSide   string `json:"start_side"`
	Position    int    `json:"position"`
	SubjectType string `json:"subject_type"`
}

// place checks a new comment against the pull request and fills in the
// defaults (side RIGHT, a line comment); it answers what is wrong, in
// GitHub's words where GitHub's are known. f.mu is held.
func (f *Fake) place(is *Issue, lc *lineComment) (field, why string) {
	switch {
	case lc.Path == "":
		return "path", "path is missing"
	case strings.TrimSpace(lc.Body) == "":
		return "body", "body is missing"
	}
	if lc.SubjectType == "" {
		lc.SubjectType = "line"
	}
	if lc.Side == "" {
		lc.Side = "RIGHT"
	}
	if lc.Line == 0 {
		lc.Line = lc.Position // the fake has no diff positions: a position is read as a line
	}
	if lc.SubjectType == "file" {
		lc.Line, lc.StartLine, lc.StartSide, lc.Side = 0, 0, "", ""
	} else if lc.Line <= 0 {
		return "line", "Line could not be resolved"
	}
	if lc.StartLine != 0 {
		if lc.StartLine >= lc.Line {
			return "start_line", "start_line must precede line"
		}
		if lc.StartSide == "" || lc.StartSide == "side" {
			lc.StartSide = lc.Side
		}
	}
	if files := f.prPaths(f.prEvent("pull_request", "", is)); len(files) > 0 && !slices.Contains(files, lc.Path) {
		return "path", "Path could not be resolved"
	}
	return "", ""
}

// submitReview stores a review with its comments and, when it is
// submitted, records a pull_request_review_comment created event per
// comment and the pull_request_review submitted event. f.mu is held.
func (f *Fake) submitReview(c *call, is *Issue, r *Review, comments []*ReviewComment) {
	f.st.Reviews = append(f.st.Reviews, r)
	for _, rc := range comments {
		rc.ID, rc.Review, rc.PullRequest, rc.Author, rc.CreatedAt = f.st.id(), r.ID, is.Number, r.Author, f.stamp()
		if rc.CommitID == "" {
			rc.CommitID = r.CommitID
		}
		f.st.ReviewComments = append(f.st.ReviewComments, rc)
	}
	if r.State == "PENDING" {
		return
	}
	r.SubmittedAt = f.stamp()
	is.UpdatedAt = r.SubmittedAt
	for _, rc := range comments {
		ev := f.prEvent("pull_request_review_comment", "created", is)
		ev.Review, ev.Comment = r.ID, rc.ID
		f.emit(c, ev)
	}
	ev := f.prEvent("pull_request_review", "submitted", is)
	ev.Review = r.ID
	f.emit(c, ev)
}

// createReview answers POST /repos/{owner}/{repo}/pulls/{n}/reviews. A
// review with an event is submitted: its line comments and the review
// itself are events. One without stays PENDING, its comments unseen by
// others, and a person has at most one pending review of a pull request.
func (f *Fake) createReview(c *call) reply {
	is, ok := f.pull(c)
	if !ok {
		return notFound()
	}
	in, rep, ok := parseBody(c, reviewSchema, docsReviews)
	if !ok {
		return rep
	}
	event, _ := str(in, "event")
	body, _ := str(in, "body")
	commit, _ := str(in, "commit_id")
	if commit == "" {
		commit = f.headSHA(is.Pull)
	}
	unprocessable := func(msg string) reply {
		return reply{status: http.StatusUnprocessableEntity, body: map[string]any{"message": "Unprocessable Entity",
			"errors": []any{msg}, "documentation_url": docsReviews}}
	}
	state := map[string]string{"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED", "": "PENDING"}[event]
	switch {
	case (event == "REQUEST_CHANGES" || event == "COMMENT") && strings.TrimSpace(body) == "":
		return unprocessable("Body is required when using " + event + " events")
	case event != "" && event != "COMMENT" && c.login == is.Author:
		verb := map[string]string{"APPROVE": "approve", "REQUEST_CHANGES": "request changes on"}[event]
		return unprocessable("Review Can not " + verb + " your own pull request")
	case event == "" && slices.ContainsFunc(f.st.Reviews, func(r *Review) bool {
		return r.PullRequest == is.Number && r.Author == c.login && r.State == "PENDING"
	}):
		return unprocessable("User can only have one pending review per pull request")
	}
	var list []lineComment
	if raw, ok := in["comments"]; ok {
		if err := json.Unmarshal(raw, &list); err != nil {
			return invalidRequest(docsReviews, "For 'items', "+compact(raw)+" is not an object.")
		}
	}
	var comments []*ReviewComment
	for i := range list {
		if list[i].Path == "" || list[i].Body == "" {
			missing := map[bool]string{true: "path", false: "body"}[list[i].Path == ""]
			return invalidRequest(docsReviews, fmt.Sprintf("%q wasn't supplied.", missing))
		}
		if _, why := f.place(is, &list[i]); why != "" {
			return unprocessable(why)
		}
		comments = append(comments, newReviewComment(list[i], commit))
	}
	r := &Review{ID: f.st.id(), PullRequest: is.Number, Author: c.login, State: state, Body: body, CommitID: commit}
	f.submitReview(c, is, r, comments)
	return reply{status: http.StatusOK, body: f.reviewJSON(c.base, r)}
}

func newReviewComment(lc lineComment, commit string) *ReviewComment {
	return &ReviewComment{Body: lc.Body, Path: lc.Path, Line: lc.Line, Side: lc.Side, StartLine: lc.StartLine,
		StartSide: lc.StartSide, SubjectType: lc.SubjectType, CommitID: commit}
}

// createPullComment answers POST /repos/{owner}/{repo}/pulls/{n}/comments:
// a comment on a line (or file) of the diff at commit_id, or, with
// in_reply_to, a reply in that comment's thread. Like on GitHub, a single
// comment is a review of its own (COMMENTED).
func (f *Fake) createPullComment(c *call) reply {
	is, ok := f.pull(c)
	if !ok {
		return notFound()
	}
	doc := docsReviewComments + "#create-a-review-comment-for-a-pull-request"
	in, rep, ok := parseBody(c, reviewCommentSchema, doc)
	if !ok {
		return rep
	}
	var lc lineComment
	json.Unmarshal(c.body, &lc)
	if raw, ok := in["in_reply_to"]; ok {
		id, _ := strconv.ParseInt(string(raw), 10, 64)
		root := f.reviewComment(is.Number, id)
		switch {
		case root == nil:
			return notFound()
		case root.InReplyTo != 0:
			// GitHub: "Replies to replies are not supported."
			return validation(doc, map[string]any{"resource": "PullRequestReviewComment", "code": "custom", "field": "in_reply_to",
				"message": "in_reply_to must be a top-level review comment; replies to replies are not supported"})
		}
		return f.reply(c, is, root, lc.Body, doc)
	}
	for _, k := range []string{"commit_id", "path"} {
		if _, ok := in[k]; !ok {
			return invalidRequest(doc, fmt.Sprintf("%q wasn't supplied.", k))
		}
	}
	commit, _ := str(in, "commit_id")
	if !f.hasCommit(commit) {
		return validation(doc, map[string]any{"resource": "PullRequestReviewComment", "code": "custom", "field": "commit_id",
			"message": "commit_id is not part of the pull request"})
	}
	if field, why := f.place(is, &lc); why != "" {
		code := "custom"
		if strings.HasSuffix(why, "is missing") {
			code = "missing_field"
		}
		return validation(doc, map[string]any{"resource": "PullRequestReviewComment", "code": code, "field": field, "message": why})
	}
	rc := newReviewComment(lc, strings.ToLower(commit))
	f.submitReview(c, is, &Review{ID: f.st.id(), PullRequest: is.Number, Author: c.login, State: "COMMENTED", CommitID: rc.CommitID}, []*ReviewComment{rc})
	return reply{status: http.StatusCreated, body: f.reviewCommentJSON(c.base, rc),
		location: fmt.Sprintf("%s/pulls/comments/%d", f.repoAPI(c.base), rc.ID)}
}

// replyPullComment answers POST
// /repos/{owner}/{repo}/pulls/{n}/comments/{id}/replies: a reply to a
// top-level review comment of the pull request (404 for any other id).
func (f *Fake) replyPullComment(c *call) reply {
	is, ok := f.pull(c)
	if !ok {
		return notFound()
	}
	doc := docsReviewComments + "#create-a-reply-for-a-review-comment"
	in, rep, ok := parseBody(c, replySchema, doc)
	if !ok {
		return rep
	}
	id, _ := strconv.ParseInt(c.params["id"], 10, 64)
	root := f.reviewComment(is.Number, id)
	if root == nil || root.InReplyTo != 0 {
		return notFound()
	}
	body, _ := str(in, "body")
	return f.reply(c, is, root, body, doc)
}

// reply adds a reply to root's thread: it has root's place in the diff and
// is a review of its own. f.mu is held.
func (f *Fake) reply(c *call, is *Issue, root *ReviewComment, body, doc string) reply {
	if strings.TrimSpace(body) == "" {
		return validation(doc, map[string]any{"resource": "PullRequestReviewComment", "code": "missing_field", "field": "body"})
	}
	rc := *root
	rc.Body, rc.InReplyTo = body, root.ID
	f.submitReview(c, is, &Review{ID: f.st.id(), PullRequest: is.Number, Author: c.login, State: "COMMENTED", CommitID: root.CommitID}, []*ReviewComment{&rc})
	return reply{status: http.StatusCreated, body: f.reviewCommentJSON(c.base, &rc),
		location: fmt.Sprintf("%s/pulls/comments/%d", f.repoAPI(c.base), rc.ID)}
}

// reviewComment is review comment id of pull request n, nil when there is
// none or it is in a pending review. f.mu is held.
func (f *Fake) reviewComment(n int, id int64) *ReviewComment {
	for _, rc := range f.st.ReviewComments {
		if rc.ID == id && rc.PullRequest == n && !f.pending(rc.Review) {
			return rc
		}
	}
	return nil
}

// pending says whether review id is still PENDING. f.mu is held.
func (f *Fake) pending(id int64) bool {
	r := f.findReview(id)
	return r != nil && r.State == "PENDING"
}

func (f *Fake) findReview(id int64) *Review {
	for _, r := range f.st.Reviews {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// listPullComments answers GET /repos/{owner}/{repo}/pulls/{n}/comments:
// the pull request's review comments of submitted reviews, by ascending
// id, paginated.
func (f *Fake) listPullComments(c *call) reply {
	is, ok := f.pull(c)
	if !ok {
		return notFound()
	}
	return f.commentPage(c, func(rc *ReviewComment) bool { return rc.PullRequest == is.Number && !f.pending(rc.Review) })
}

// listReviewComments answers GET
// /repos/{owner}/{repo}/pulls/{n}/reviews/{id}/comments: a review's
// comments; a pending review is seen by its author only.
func (f *Fake) listReviewComments(c *call) reply {
	is, ok := f.pull(c)
	if !ok {
		return notFound()
	}
	id, _ := strconv.ParseInt(c.params["id"], 10, 64)
	r := f.findReview(id)
	if r == nil || r.PullRequest != is.Number || (r.State == "PENDING" && r.Author != c.login) {
		return notFound()
	}
	return f.commentPage(c, func(rc *ReviewComment) bool { return rc.Review == id })
}

// commentPage is one page of the review comments keep keeps. f.mu is held.
func (f *Fake) commentPage(c *call, keep func(*ReviewComment) bool) reply {
	var list []*ReviewComment
	for _, rc := range f.st.ReviewComments {
		if keep(rc) {
			list = append(list, rc)
		}
	}
	lo, hi, link := f.paginate(c, len(list))
	out := []any{}
	for _, rc := range list[lo:hi] {
		out = append(out, f.reviewCommentJSON(c.base, rc))
	}
	return reply{status: http.StatusOK, body: out, link: link}
}

// listReviews answers GET /repos/{owner}/{repo}/pulls/{n}/reviews: in
// the order they were made; a pending review is seen by its author only.
func (f *Fake) listReviews(c *call) reply {
	is, ok := f.pull(c)
	if !ok {
		return notFound()
	}
	var list []*Review
	for _, r := range f.st.Reviews {
		if r.PullRequest == is.Number && (r.State != "PENDING" || r.Author == c.login) {
			list = append(list, r)
		}
	}
	lo, hi, link := f.paginate(c, len(list))
	out := []any{}
	for _, r := range list[lo:hi] {
		out = append(out, f.reviewJSON(c.base, r))
	}
	return reply{status: http.StatusOK, body: out, link: link}
}

func (f *Fake) reviewJSON(base string, r *Review) map[string]any {
	pr := fmt.Sprintf("%s/pulls/%d", f.repoAPI(base), r.PullRequest)
	html := fmt.Sprintf("%s/pull/%d#pullrequestreview-%d", f.repoHTML(base), r.PullRequest, r.ID)
	m := map[string]any{
		"id": r.ID, "node_id": nodeID("PRR", r.ID), "user": f.userJSON(base, r.Author), "body": r.Body,
		"state": r.State, "html_url": html, "pull_request_url": pr, "commit_id": r.CommitID,
		"author_association": f.authorAssociation(r.Author),
		"_links":             map[string]any{"html": map[string]any{"href": html}, "pull_request": map[string]any{"href": pr}},
	}
	if !r.SubmittedAt.IsZero() {
		m["submitted_at"] = ts(r.SubmittedAt)
	}
	return m
}

// reviewCommentJSON renders a review comment in GitHub's
// pull-request-review-comment form. The fake has no diffs: diff_hunk is a
// one-line hunk at the line, and position is the line.
func (f *Fake) reviewCommentJSON(base string, rc *ReviewComment) map[string]any {
	api := f.repoAPI(base)
	u := fmt.Sprintf("%s/pulls/comments/%d", api, rc.ID)
	pr := fmt.Sprintf("%s/pulls/%d", api, rc.PullRequest)
	html := fmt.Sprintf("%s/pull/%d#discussion_r%d", f.repoHTML(base), rc.PullRequest, rc.ID)
	line, startLine, startSide, side := any(nil), any(nil), any(nil), any(nil)
	position := 1
	if rc.SubjectType != "file" {
		line, side, position = rc.Line, rc.Side, rc.Line
		if rc.StartLine != 0 {
			startLine, startSide = rc.StartLine, rc.StartSide
		}
	}
	m := map[string]any{
		"url": u, "id": rc.ID, "node_id": nodeID("PRRC", rc.ID), "pull_request_review_id": rc.Review,
		"diff_hunk": fmt.Sprintf("@@ -%d,1 +%d,1 @@", position, position), "path": rc.Path,
		"position": position, "original_position": position, "commit_id": rc.CommitID, "original_commit_id": rc.CommitID,
		"user": f.userJSON(base, rc.Author), "body": rc.Body, "created_at": ts(rc.CreatedAt), "updated_at": ts(rc.CreatedAt),
		"html_url": html, "pull_request_url": pr, "author_association": f.authorAssociation(rc.Author),
		"_links": map[string]any{"self": map[string]any{"href": u}, "html": map[string]any{"href": html},
			"pull_request": map[string]any{"href": pr}},
		"start_line": startLine, "original_start_line": startLine, "start_side": startSide,
		"line": line, "original_line": line, "side": side, "subject_type": rc.SubjectType, "reactions": reactions(u),
	}
	if rc.InReplyTo != 0 {
		m["in_reply_to_id"] = rc.InReplyTo
	}
	for _, k := range []string{"line", "original_line", "side"} {
		if m[k] == nil {
			delete(m, k) // not nullable in the schema: a file comment has none
		}
	}
	return m
}
