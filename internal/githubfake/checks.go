package githubfake

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"unicode/utf8"
)

const docsStatuses = "https://docs.github.com/rest/commits/statuses"

// statusCreate is the request schema of creating a commit status.
var statusCreate = bodySchema{fields: map[string]field{
	"state":       {types: []string{"string"}, enum: []string{"error", "failure", "pending", "success"}},
	"target_url":  kinds("string", "null"),
	"description": kinds("string", "null"),
	"context":     kinds("string"),
}, required: []string{"state"}}

func (f *Fake) createStatus(c *call) reply {
	sha := c.params["sha"]
	if !shaRE().MatchString(sha) {
		return noCommit(sha)
	}
	doc := docsStatuses + "#create-a-commit-status"
	if _, rep, ok := parseBody(c, statusCreate, doc); !ok {
		return rep
	}
	var in struct {
		State       string `json:"state"`
		TargetURL   string `json:"target_url"`
		Description string `json:"description"`
		Context     string `json:"context"`
	}
	json.Unmarshal(c.body, &in)
	if utf8.RuneCountInString(in.Description) > 140 {
		return validation(doc, map[string]any{"resource": "Status", "code": "custom", "field": "description",
			"message": "description is too long (maximum is 140 characters)"})
	}
	if in.Context == "" {
		in.Context = "default"
	}
	if !f.hasCommit(sha) {
		return noCommit(sha)
	}
	s := f.addStatus(strings.ToLower(sha), in.Context, in.State, in.Description, in.TargetURL, c.login)
	return reply{status: http.StatusCreated, body: f.statusJSON(c.base, s, true),
		location: f.repoAPI(c.base) + "/statuses/" + s.SHA}
}

// addStatus stores a status. f.mu is held.
func (f *Fake) addStatus(sha, context, state, description, target, creator string) *Status {
	s := &Status{ID: f.st.id(), SHA: sha, Context: context, State: state, Description: description,
		TargetURL: target, Creator: creator, CreatedAt: f.stamp()}
	f.st.Statuses = append(f.st.Statuses, s)
	return s
}

func (f *Fake) statusesOf(sha string) []*Status {
	var out []*Status
	for _, s := range f.st.Statuses {
		if s.SHA == sha {
			out = append(out, s)
		}
	}
	return out
}

func (f *Fake) listStatuses(c *call) reply {
	sha, ok := f.resolveRef(c.params["ref"])
	if !ok {
		return noCommit(c.params["ref"])
	}
	all := f.statusesOf(sha)
	sort.Slice(all, func(i, j int) bool { return all[i].ID > all[j].ID })
	lo, hi, link := f.paginate(c, len(all))
	out := []any{}
	for _, s := range all[lo:hi] {
		out = append(out, f.statusJSON(c.base, s, true))
	}
	return reply{status: http.StatusOK, body: out, link: link}
}

// combinedStatus is GitHub's combined status: the latest status per context;
// failure if any is error or failure, pending if any is pending or there is
// none, else success.
func (f *Fake) combinedStatus(c *call) reply {
	ref := c.params["ref"]
	sha, ok := f.resolveRef(ref)
	if !ok {
		return noCommit(ref)
	}
	latest := map[string]*Status{}
	for _, s := range f.statusesOf(sha) {
		if cur := latest[s.Context]; cur == nil || s.ID > cur.ID {
			latest[s.Context] = s
		}
	}
	var list []*Status
	for _, s := range latest {
		list = append(list, s)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	state := "success"
	if len(list) == 0 {
		state = "pending"
	}
	for _, s := range list {
		switch s.State {
		case "error", "failure":
			state = "failure"
		case "pending":
			if state != "failure" {
				state = "pending"
			}
		}
	}
	lo, hi, link := f.paginate(c, len(list))
	statuses := []any{}
	for _, s := range list[lo:hi] {
		statuses = append(statuses, f.statusJSON(c.base, s, false))
	}
	api := f.repoAPI(c.base)
	return reply{status: http.StatusOK, link: link, body: map[string]any{
		"state":       state,
		"statuses":    statuses,
		"sha":         sha,
		"total_count": len(list),
		"repository":  f.repoJSON(c.base),
		"commit_url":  api + "/commits/" + sha,
		"url":         api + "/commits/" + ref + "/status",
	}}
}

// listCheckRuns lists a ref's check runs. As on GitHub, filter=latest (the
// default) keeps the newest check run of each name and app: a re-run job's
// check run hides the failed one it replaces; filter=all lists every one.
func (f *Fake) listCheckRuns(c *call) reply {
	f.settleCI()
	sha, ok := f.resolveRef(c.params["ref"])
	if !ok {
		return noCommit(c.params["ref"])
	}
	all := c.query.Get("filter") == "all"
	var list []*CheckRun
	newest := map[string]int64{}
	for _, cr := range f.st.CheckRuns {
		if cr.SHA == sha && cr.ID > newest[cr.App+"\x00"+cr.Name] {
			newest[cr.App+"\x00"+cr.Name] = cr.ID
		}
	}
	for _, cr := range f.st.CheckRuns {
		if cr.SHA == sha && (all || newest[cr.App+"\x00"+cr.Name] == cr.ID) {
			list = append(list, cr)
		}
	}
	lo, hi, link := f.paginate(c, len(list))
	runs := []any{}
	for _, cr := range list[lo:hi] {
		runs = append(runs, f.checkRunJSON(c.base, cr))
	}
	return reply{status: http.StatusOK, link: link, body: map[string]any{"total_count": len(list), "check_runs": runs}}
}
