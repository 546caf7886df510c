package githubfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// maxBody is GitHub's limit on issue, pull request and comment bodies.
const maxBody = 65536

const (
	docsIssues   = "https://docs.github.com/rest/issues/issues"
	docsComments = "https://docs.github.com/rest/issues/comments"
	docsLabels   = "https://docs.github.com/rest/reference/issues#create-a-label"
)

// stamp returns the time of a write: now, but strictly after the previous
// write, so updated_at moves on every write even within one second (GitHub's
// timestamps have second precision). f.mu is held.
func (f *Fake) stamp() time.Time {
	t := f.clock.Now().UTC().Truncate(time.Second)
	if !t.After(f.st.LastWrite) {
		t = f.st.LastWrite.Add(time.Second)
	}
	f.st.LastWrite = t
	return t
}

// paginate applies per_page (default 30, at most 100) and page to n items and
// builds the Link header the way GitHub does: prev, next, last, first, with
// URLs on /repositories/{id} and the request's other query parameters kept.
func (f *Fake) paginate(c *call, n int) (lo, hi int, link string) {
	per := 30
	if v, err := strconv.Atoi(c.query.Get("per_page")); err == nil && v > 0 {
		per = min(v, 100)
	}
	page := 1
	if v, err := strconv.Atoi(c.query.Get("page")); err == nil && v > 0 {
		page = v
	}
	last := max((n+per-1)/per, 1)
	lo = min((page-1)*per, n)
	hi = min(lo+per, n)
	if last == 1 {
		return lo, hi, ""
	}
	var keep []string
	for _, kv := range strings.Split(rawQuery(c), "&") {
		if kv == "" || strings.HasPrefix(kv, "page=") {
			continue
		}
		keep = append(keep, kv)
	}
	pageURL := func(p int) string {
		q := append(append([]string(nil), keep...), "page="+strconv.Itoa(p))
		return fmt.Sprintf("<%s/repositories/%d%s?%s>", c.base, f.opts.RepoID, c.rest, strings.Join(q, "&"))
	}
	var parts []string
	if page > 1 {
		parts = append(parts, pageURL(min(page-1, last))+`; rel="prev"`)
	}
	if page < last {
		parts = append(parts, pageURL(page+1)+`; rel="next"`, pageURL(last)+`; rel="last"`)
	}
	if page > 1 {
		parts = append(parts, pageURL(1)+`; rel="first"`)
	}
	return lo, hi, strings.Join(parts, ", ")
}

func rawQuery(c *call) string {
	// url.Values loses order; GitHub keeps the request's order, so rebuild
	// it from the values in a stable order with per_page first.
	var out []string
	if v, ok := c.query["per_page"]; ok {
		out = append(out, "per_page="+url.QueryEscape(v[0]))
	}
	keys := make([]string, 0, len(c.query))
	for k := range c.query {
		if k != "per_page" && k != "page" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, url.QueryEscape(k)+"="+url.QueryEscape(c.query.Get(k)))
	}
	return strings.Join(out, "&")
}

func (f *Fake) issue(c *call) (*Issue, reply, bool) {
	n, _ := strconv.Atoi(c.params["n"])
	is := f.st.Issues[n]
	if is == nil {
		return nil, notFound(), false
	}
	return is, reply{}, true
}

func tooLong(s string) bool { return utf8.RuneCountInString(s) > maxBody }

func (f *Fake) listIssues(c *call) reply {
	state := c.query.Get("state")
	if state == "" {
		state = "open"
	}
	var want []string
	if l := c.query.Get("labels"); l != "" {
		want = strings.Split(l, ",")
	}
	var list []*Issue
	for _, is := range f.st.Issues {
		if state != "all" && is.State != state {
			continue
		}
		if !hasLabels(is, want) {
			continue
		}
		list = append(list, is)
	}
	asc := c.query.Get("direction") == "asc"
	sort.Slice(list, func(i, j int) bool {
		if asc {
			return list[i].Number < list[j].Number
		}
		return list[i].Number > list[j].Number
	})
	lo, hi, link := f.paginate(c, len(list))
	out := []any{}
	for _, is := range list[lo:hi] {
		out = append(out, f.issueJSON(c.base, is, false))
	}
	return reply{status: http.StatusOK, body: out, link: link}
}

func hasLabels(is *Issue, want []string) bool {
	for _, w := range want {
		found := false
		for _, l := range is.Labels {
			if strings.EqualFold(l, strings.TrimSpace(w)) {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func (f *Fake) createIssue(c *call) reply {
	var in struct {
		Title  *string  `json:"title"`
		Body   string   `json:"body"`
		Labels []string `json:"labels"`
	}
	if err := json.Unmarshal(c.body, &in); err != nil {
		return errorReply(http.StatusBadRequest, "Problems parsing JSON")
	}
	if in.Title == nil || *in.Title == "" {
		return validation(docsIssues+"#create-an-issue", map[string]any{"resource": "Issue", "code": "missing_field", "field": "title"})
	}
	if tooLong(in.Body) {
		return validation(docsIssues+"#create-an-issue", issueBodyTooLong())
	}
	is := f.newIssue(Issue{Title: *in.Title, Body: in.Body, Author: c.login})
	for _, l := range in.Labels {
		f.attachLabel(is, l)
	}
	f.issueEvent(c, is, "opened", "")
	for _, l := range is.Labels {
		f.issueEvent(c, is, "labeled", l)
	}
	return reply{status: http.StatusCreated, body: f.issueJSON(c.base, is, true),
		location: fmt.Sprintf("%s/issues/%d", f.repoAPI(c.base), is.Number)}
}

func issueBodyTooLong() map[string]any {
	return map[string]any{"resource": "Issue", "code": "custom", "field": "body",
		"message": fmt.Sprintf("body is too long (maximum is %d characters)", maxBody)}
}

// newIssue stores an issue with the next number. f.mu is held.
func (f *Fake) newIssue(in Issue) *Issue {
	t := f.stamp()
	is := &Issue{
		Number: f.st.NextNumber, ID: f.st.id(), Title: in.Title, Body: in.Body,
		State: in.State, Author: in.Author, CreatedAt: t, UpdatedAt: t, Pull: in.Pull,
	}
	if is.State == "" {
		is.State = "open"
	}
	if is.Author == "" {
		is.Author = f.opts.Login
	}
	f.st.NextNumber++
	f.st.Issues[is.Number] = is
	for _, l := range in.Labels {
		f.attachLabel(is, l)
	}
	return is
}

func (f *Fake) getIssue(c *call) reply {
	is, rep, ok := f.issue(c)
	if !ok {
		return rep
	}
	return reply{status: http.StatusOK, body: f.issueJSON(c.base, is, true)}
}

// issuePatch is the request schema of PATCH /repos/{owner}/{repo}/issues/{n}.
var issuePatch = bodySchema{fields: map[string]field{
	"title":        kinds("string", "integer", "null"),
	"body":         kinds("string", "null"),
	"assignee":     kinds("string", "null"),
	"state":        {types: []string{"string"}, enum: []string{"open", "closed"}},
	"state_reason": {types: []string{"string", "null"}, enum: []string{"completed", "not_planned", "duplicate", "reopened"}},
	"milestone":    kinds("string", "integer", "null"),
	"labels":       kinds("array"),
	"assignees":    kinds("array"),
}}

func (f *Fake) editIssue(c *call) reply {
	is, rep, ok := f.issue(c)
	if !ok {
		return rep
	}
	doc := docsIssues + "#update-an-issue"
	in, rep, ok := parseBody(c, issuePatch, doc)
	if !ok {
		return rep
	}
	var labels []string
	if raw, ok := in["labels"]; ok {
		var items []json.RawMessage
		json.Unmarshal(raw, &items)
		if labels, ok = labelNames(items); !ok {
			return invalidRequest(doc, "For 'items', a label is neither a name nor an object with one.")
		}
		if labels == nil {
			labels = []string{}
		}
	}
	title, hasTitle := str(in, "title")
	if rawType(in["title"]) == "integer" {
		title = strings.TrimSpace(string(in["title"]))
	}
	if hasTitle && title == "" {
		return validation(doc, map[string]any{"resource": "Issue", "code": "missing_field", "field": "title"})
	}
	body, hasBody := str(in, "body")
	if hasBody && tooLong(body) {
		return validation(doc, issueBodyTooLong())
	}
	state, hasState := str(in, "state")
	reason, _ := str(in, "state_reason")
	edited := (hasTitle && title != is.Title) || (hasBody && body != is.Body)
	oldLabels := slices.Clone(is.Labels)
	stateAction := ""
	if hasTitle {
		is.Title = title
	}
	if hasBody {
		is.Body = body
	}
	if labels != nil {
		is.Labels = nil
		for _, l := range labels {
			f.attachLabel(is, l)
		}
	}
	t := f.stamp()
	// state_reason is ignored unless state changes, as documented.
	if hasState && state != is.State {
		is.State = state
		is.ClosedAt = time.Time{}
		is.StateReason = "reopened"
		if is.State == "closed" {
			is.ClosedAt = t
			is.StateReason = "completed"
		}
		if reason != "" {
			is.StateReason = reason
		}
		stateAction = map[string]string{"closed": "closed", "open": "reopened"}[is.State]
	}
	is.UpdatedAt = t
	if edited {
		f.issueEvent(c, is, "edited", "")
	}
	f.labelEvents(c, is, oldLabels)
	if stateAction != "" {
		f.issueEvent(c, is, stateAction, "")
	}
	return reply{status: http.StatusOK, body: f.issueJSON(c.base, is, true)}
}

func (f *Fake) listComments(c *call) reply {
	is, rep, ok := f.issue(c)
	if !ok {
		return rep
	}
	var list []*Comment
	for _, cm := range f.st.Comments {
		if cm.Issue == is.Number {
			list = append(list, cm)
		}
	}
	lo, hi, link := f.paginate(c, len(list))
	out := []any{}
	for _, cm := range list[lo:hi] {
		out = append(out, f.commentJSON(c.base, cm))
	}
	return reply{status: http.StatusOK, body: out, link: link}
}

// listRepoComments lists the comments on every issue and pull request of
// the repository, as GitHub's "List issue comments for a repository" does:
// by ascending id by default; sort (created, updated) with direction (asc,
// desc; asc when absent, and ignored without sort); since keeps the
// comments last updated at or after the time; per_page and page with Link.
func (f *Fake) listRepoComments(c *call) reply {
	doc := docsComments + "#list-issue-comments-for-a-repository"
	var since time.Time
	if v := c.query.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return validation(doc, map[string]any{"resource": "IssueComment", "code": "invalid", "field": "since"})
		}
		since = t
	}
	sortBy := c.query.Get("sort")
	switch sortBy {
	case "", "created", "updated":
	default:
		return validation(doc, map[string]any{"resource": "IssueComment", "code": "invalid", "field": "sort"})
	}
	desc := false
	if sortBy != "" {
		switch c.query.Get("direction") {
		case "", "asc":
		case "desc":
			desc = true
		default:
			return validation(doc, map[string]any{"resource": "IssueComment", "code": "invalid", "field": "direction"})
		}
	}
	var list []*Comment
	for _, cm := range f.st.Comments {
		if since.IsZero() || !cm.UpdatedAt.Before(since) {
			list = append(list, cm)
		}
	}
	key := func(cm *Comment) time.Time {
		switch sortBy {
		case "created":
			return cm.CreatedAt
		case "updated":
			return cm.UpdatedAt
		}
		return time.Time{}
	}
	sort.SliceStable(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if ka, kb := key(a), key(b); !ka.Equal(kb) {
			return ka.Before(kb) != desc
		}
		return (a.ID < b.ID) != desc
	})
	lo, hi, link := f.paginate(c, len(list))
	out := []any{}
	for _, cm := range list[lo:hi] {
		out = append(out, f.commentJSON(c.base, cm))
	}
	return reply{status: http.StatusOK, body: out, link: link}
}

func commentTooLong() map[string]any {
	return map[string]any{"resource": "IssueComment", "code": "unprocessable", "field": "data",
		"message": fmt.Sprintf("Body is too long (maximum is %d characters)", maxBody)}
}

var commentSchema = bodySchema{fields: map[string]field{"body": kinds("string")}, required: []string{"body"}}

func (f *Fake) commentBody(c *call, doc string) (string, reply, bool) {
	in, rep, ok := parseBody(c, commentSchema, doc)
	if !ok {
		return "", rep, false
	}
	body, _ := str(in, "body")
	if strings.TrimSpace(body) == "" {
		return "", validation(doc, map[string]any{"resource": "IssueComment", "code": "missing_field", "field": "body"}), false
	}
	if tooLong(body) {
		return "", validation(doc, commentTooLong()), false
	}
	return body, reply{}, true
}

func (f *Fake) createComment(c *call) reply {
	is, rep, ok := f.issue(c)
	if !ok {
		return rep
	}
	body, rep, ok := f.commentBody(c, docsComments+"#create-an-issue-comment")
	if !ok {
		return rep
	}
	cm := f.newComment(is, c.login, body)
	f.emit(c, &Event{Name: "issue_comment", Action: "created", Number: is.Number})
	return reply{status: http.StatusCreated, body: f.commentJSON(c.base, cm),
		location: fmt.Sprintf("%s/issues/comments/%d", f.repoAPI(c.base), cm.ID)}
}

// newComment stores a comment; a new comment also moves the issue's
// updated_at, as on GitHub. f.mu is held.
func (f *Fake) newComment(is *Issue, login, body string) *Comment {
	t := f.stamp()
	cm := &Comment{ID: f.st.id(), Issue: is.Number, Author: login, Body: body, CreatedAt: t, UpdatedAt: t}
	f.st.Comments = append(f.st.Comments, cm)
	is.UpdatedAt = t
	return cm
}

func (f *Fake) comment(c *call) (*Comment, bool) {
	id, _ := strconv.ParseInt(c.params["id"], 10, 64)
	for _, cm := range f.st.Comments {
		if cm.ID == id {
			return cm, true
		}
	}
	return nil, false
}

func (f *Fake) getComment(c *call) reply {
	cm, ok := f.comment(c)
	if !ok {
		return notFound()
	}
	return reply{status: http.StatusOK, body: f.commentJSON(c.base, cm)}
}

func (f *Fake) editComment(c *call) reply {
	cm, ok := f.comment(c)
	if !ok {
		return notFound()
	}
	body, rep, ok := f.commentBody(c, docsComments+"#update-an-issue-comment")
	if !ok {
		return rep
	}
	changed := cm.Body != body
	cm.Body = body
	cm.UpdatedAt = f.stamp()
	if changed {
		f.emit(c, &Event{Name: "issue_comment", Action: "edited", Number: cm.Issue})
	}
	return reply{status: http.StatusOK, body: f.commentJSON(c.base, cm)}
}

// labelEvents records a labeled event for each label is has and did not
// have (old), and an unlabeled one for each it lost. f.mu is held.
func (f *Fake) labelEvents(c *call, is *Issue, old []string) {
	has := func(list []string, l string) bool {
		return slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, l) })
	}
	for _, l := range old {
		if !has(is.Labels, l) {
			f.issueEvent(c, is, "unlabeled", l)
		}
	}
	for _, l := range is.Labels {
		if !has(old, l) {
			f.issueEvent(c, is, "labeled", l)
		}
	}
}

// Labels.

func (f *Fake) findLabel(name string) *Label {
	for _, l := range f.st.Labels {
		if strings.EqualFold(l.Name, name) {
			return l
		}
	}
	return nil
}

// attachLabel puts a label on an issue, creating the repository label as
// GitHub does when it does not exist. f.mu is held.
func (f *Fake) attachLabel(is *Issue, name string) {
	l := f.findLabel(name)
	if l == nil {
		l = &Label{ID: f.st.id(), Name: name, Color: "ededed"}
		f.st.Labels = append(f.st.Labels, l)
	}
	for _, have := range is.Labels {
		if strings.EqualFold(have, l.Name) {
			return
		}
	}
	is.Labels = append(is.Labels, l.Name)
}

func (f *Fake) issueLabels(c *call, is *Issue) reply {
	out := []any{}
	for _, name := range is.Labels {
		if l := f.findLabel(name); l != nil {
			out = append(out, f.labelJSON(c.base, l))
		}
	}
	return reply{status: http.StatusOK, body: out}
}

func (f *Fake) listIssueLabels(c *call) reply {
	is, rep, ok := f.issue(c)
	if !ok {
		return rep
	}
	return f.issueLabels(c, is)
}

func (f *Fake) addIssueLabels(c *call) reply {
	is, rep, ok := f.issue(c)
	if !ok {
		return rep
	}
	// GitHub's schema is {"labels": [at least one name or {"name": …}]};
	// its prose also allows a bare array of names, which go-github sends.
	doc := "https://docs.github.com/rest/issues/labels#add-labels-to-an-issue"
	var names []string
	var bare []json.RawMessage
	if err := json.Unmarshal(c.body, &bare); err == nil {
		if len(bare) == 0 {
			return invalidRequest(doc, "[] is not an object.")
		}
		var ok bool
		if names, ok = labelNames(bare); !ok {
			return invalidRequest(doc, fmt.Sprintf("%s is not an object.", compact(c.body)))
		}
	} else {
		in, rep, ok := parseBody(c, bodySchema{fields: map[string]field{"labels": kinds("array")}}, doc)
		if !ok {
			return rep
		}
		if raw, ok := in["labels"]; ok {
			var items []json.RawMessage
			json.Unmarshal(raw, &items)
			if len(items) == 0 {
				return invalidRequest(doc, "For 'properties/labels', [] has fewer items than 1.")
			}
			if names, ok = labelNames(items); !ok {
				return invalidRequest(doc, fmt.Sprintf("For 'properties/labels', %s is not a list of names.", compact(raw)))
			}
		}
	}
	for _, n := range names {
		if n == "" || utf8.RuneCountInString(n) > 50 {
			return validation(doc, map[string]any{"resource": "Label", "code": "invalid", "field": "name"})
		}
	}
	oldLabels := slices.Clone(is.Labels)
	for _, n := range names {
		f.attachLabel(is, n)
	}
	if len(names) > 0 {
		is.UpdatedAt = f.stamp()
	}
	f.labelEvents(c, is, oldLabels)
	return f.issueLabels(c, is)
}

func (f *Fake) removeIssueLabel(c *call) reply {
	is, rep, ok := f.issue(c)
	if !ok {
		return rep
	}
	name := c.params["name"]
	for i, have := range is.Labels {
		if strings.EqualFold(have, name) {
			is.Labels = append(is.Labels[:i:i], is.Labels[i+1:]...)
			is.UpdatedAt = f.stamp()
			f.issueEvent(c, is, "unlabeled", have)
			return f.issueLabels(c, is)
		}
	}
	return reply{status: http.StatusNotFound, body: map[string]any{
		"message": "Label does not exist", "documentation_url": "https://docs.github.com/rest/issues/labels#remove-a-label-from-an-issue",
	}}
}

func (f *Fake) listLabels(c *call) reply {
	lo, hi, link := f.paginate(c, len(f.st.Labels))
	out := []any{}
	for _, l := range f.st.Labels[lo:hi] {
		out = append(out, f.labelJSON(c.base, l))
	}
	return reply{status: http.StatusOK, body: out, link: link}
}

var colorRE = lazyRegexp(`^[0-9a-fA-F]{6}$`)

func (f *Fake) createLabel(c *call) reply {
	var in struct {
		Name        string  `json:"name"`
		Color       *string `json:"color"`
		Description string  `json:"description"`
	}
	if err := json.Unmarshal(c.body, &in); err != nil {
		return errorReply(http.StatusBadRequest, "Problems parsing JSON")
	}
	if in.Name == "" {
		return validation(docsLabels, map[string]any{"resource": "Label", "code": "missing_field", "field": "name"})
	}
	color := "ededed"
	if in.Color != nil {
		color = strings.TrimPrefix(*in.Color, "#")
		if !colorRE().MatchString(color) {
			return validation(docsLabels, map[string]any{"resource": "Label", "code": "invalid", "field": "color"})
		}
	}
	if utf8.RuneCountInString(in.Name) > 50 {
		return validation(docsLabels, map[string]any{"resource": "Label", "code": "invalid", "field": "name"})
	}
	if f.findLabel(in.Name) != nil {
		return validation(docsLabels, map[string]any{"resource": "Label", "code": "already_exists", "field": "name"})
	}
	l := &Label{ID: f.st.id(), Name: in.Name, Color: color, Description: in.Description}
	f.st.Labels = append(f.st.Labels, l)
	return reply{status: http.StatusCreated, body: f.labelJSON(c.base, l),
		location: f.repoAPI(c.base) + "/labels/" + url.PathEscape(l.Name)}
}

func (f *Fake) getLabel(c *call) reply {
	l := f.findLabel(c.params["name"])
	if l == nil {
		return notFound()
	}
	return reply{status: http.StatusOK, body: f.labelJSON(c.base, l)}
}

func (f *Fake) editLabel(c *call) reply {
	l := f.findLabel(c.params["name"])
	if l == nil {
		return notFound()
	}
	var in struct {
		NewName     *string `json:"new_name"`
		Color       *string `json:"color"`
		Description *string `json:"description"`
	}
	if err := json.Unmarshal(c.body, &in); err != nil {
		return errorReply(http.StatusBadRequest, "Problems parsing JSON")
	}
	if in.Color != nil {
		color := strings.TrimPrefix(*in.Color, "#")
		if !colorRE().MatchString(color) {
			return validation(docsLabels, map[string]any{"resource": "Label", "code": "invalid", "field": "color"})
		}
		l.Color = color
	}
	if in.NewName != nil && *in.NewName != l.Name {
		if other := f.findLabel(*in.NewName); other != nil && other != l {
			return validation(docsLabels, map[string]any{"resource": "Label", "code": "already_exists", "field": "name"})
		}
		for _, is := range f.st.Issues {
			for i, have := range is.Labels {
				if strings.EqualFold(have, l.Name) {
					is.Labels[i] = *in.NewName
				}
			}
		}
		l.Name = *in.NewName
	}
	if in.Description != nil {
		l.Description = *in.Description
	}
	return reply{status: http.StatusOK, body: f.labelJSON(c.base, l)}
}

func (f *Fake) deleteLabel(c *call) reply {
	l := f.findLabel(c.params["name"])
	if l == nil {
		return notFound()
	}
	for i, have := range f.st.Labels {
		if have == l {
			f.st.Labels = append(f.st.Labels[:i:i], f.st.Labels[i+1:]...)
			break
		}
	}
	for _, is := range f.st.Issues {
		for i, have := range is.Labels {
			if strings.EqualFold(have, l.Name) {
				is.Labels = append(is.Labels[:i:i], is.Labels[i+1:]...)
				break
			}
		}
	}
	return reply{status: http.StatusNoContent}
}
