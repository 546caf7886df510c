package githubfake

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// graphqlQuery serves the one GraphQL query the product sends: the states of
// many issues at once (internal/github's IssueStates), one aliased
// repository per repository and one aliased issue per issue:
//
//	{r0: repository(owner: "acme", name: "widgets"){
//	   i12: issue(number: 12){number,title,state,stateReason,body,subIssuesSummary{total},
//	     closedByPullRequestsReferences(first: 10, includeClosedPrs: true){nodes{number,merged}}}}}
//
// The answer has exactly the fields asked for. An issue the repository does
// not have (or a pull request's number) is null with a NOT_FOUND error, and
// so is a repository other than the fake's, as GitHub answers a repository
// the token cannot see. Any other field is a GraphQL error naming it, as on
// GitHub. Variables are not read: arguments are literals.
func (f *Fake) graphqlQuery(q string, gqlErr func(typ, msg string) reply) reply {
	q = strings.TrimSpace(strings.TrimPrefix(q, "query"))
	if i := strings.IndexByte(q, '{'); i > 0 {
		q = q[i:] // an operation name or variable declarations
	}
	top, err := (&selParser{s: q}).set(0)
	if err != nil {
		return gqlErr("", "Parse error: "+err.Error())
	}
	data := map[string]any{}
	var errs []any
	notFound := func(msg string, path ...string) {
		p := make([]any, len(path))
		for i, s := range path {
			p[i] = s
		}
		errs = append(errs, map[string]any{"type": "NOT_FOUND", "path": p, "message": msg})
	}
	for _, r := range top {
		if r.name != "repository" {
			return gqlErr("", fmt.Sprintf("Field '%s' doesn't exist on type 'Query'", r.name))
		}
		key := nameOf(r)
		args := gqlArgs(r.args)
		owner, name := args["owner"], args["name"]
		if owner == "" || name == "" {
			return gqlErr("", "Field 'repository' is missing required arguments: owner, name")
		}
		if !strings.EqualFold(owner, f.opts.Owner) || !strings.EqualFold(name, f.opts.Repo) {
			notFound(fmt.Sprintf("Could not resolve to a Repository with the name '%s/%s'.", owner, name), key)
			data[key] = nil
			continue
		}
		repo := map[string]any{}
		for _, fld := range r.sub {
			fkey := nameOf(fld)
			switch fld.name {
			case "nameWithOwner":
				repo[fkey] = f.opts.Owner + "/" + f.opts.Repo
			case "issue":
				n, err := strconv.Atoi(gqlArgs(fld.args)["number"])
				if err != nil {
					return gqlErr("", "Argument 'number' on Field 'issue' has an invalid value. Expected type 'Int!'.")
				}
				is := f.st.Issues[n]
				if is == nil || is.Pull != nil {
					notFound(fmt.Sprintf("Could not resolve to an Issue with the number of %d.", n), key, fkey)
					repo[fkey] = nil
					continue
				}
				obj, rep, ok := f.issueNode(is, fld.sub, gqlErr)
				if !ok {
					return rep
				}
				repo[fkey] = obj
			default:
				return gqlErr("", fmt.Sprintf("Field '%s' doesn't exist on type 'Repository'", fld.name))
			}
		}
		data[key] = repo
	}
	body := map[string]any{"data": data}
	if len(errs) > 0 {
		body["errors"] = errs
	}
	return reply{status: http.StatusOK, body: body}
}

func (f *Fake) issueNode(is *Issue, sel []gqlField, gqlErr func(typ, msg string) reply) (map[string]any, reply, bool) {
	obj := map[string]any{}
	for _, s := range sel {
		k := nameOf(s)
		switch s.name {
		case "number":
			obj[k] = is.Number
		case "title":
			obj[k] = is.Title
		case "body":
			obj[k] = is.Body
		case "state":
			obj[k] = strings.ToUpper(is.State)
		case "stateReason":
			obj[k] = nil
			if is.StateReason != "" {
				obj[k] = strings.ToUpper(is.StateReason)
			}
		case "subIssuesSummary":
			sum := f.subIssuesSummary(is)
			out := map[string]any{}
			for _, ss := range s.sub {
				switch ss.name {
				case "total", "completed":
					out[nameOf(ss)] = sum[ss.name]
				case "percentCompleted":
					out[nameOf(ss)] = sum["percent_completed"]
				default:
					return nil, gqlErr("", fmt.Sprintf("Field '%s' doesn't exist on type 'SubIssuesSummary'", ss.name)), false
				}
			}
			obj[k] = out
		case "closedByPullRequestsReferences":
			args := gqlArgs(s.args)
			first, err := strconv.Atoi(args["first"])
			if err != nil || first < 1 || first > 100 {
				return nil, gqlErr("", "closedByPullRequestsReferences: 'first' must be from 1 to 100"), false
			}
			var nodes []any
			for _, pr := range f.closingPulls(is.Number, args["includeClosedPrs"] == "true") {
				node := map[string]any{}
				for _, ps := range s.sub {
					if ps.name != "nodes" {
						return nil, gqlErr("", fmt.Sprintf("Field '%s' is not served on type 'PullRequestConnection' by the fake", ps.name)), false
					}
					for _, pf := range ps.sub {
						switch pf.name {
						case "number":
							node[nameOf(pf)] = pr.Number
						case "merged":
							node[nameOf(pf)] = pr.Pull.Merged
						case "state":
							node[nameOf(pf)] = map[bool]string{true: "MERGED", false: strings.ToUpper(pr.State)}[pr.Pull.Merged]
						default:
							return nil, gqlErr("", fmt.Sprintf("Field '%s' is not served on type 'PullRequest' by the fake", pf.name)), false
						}
					}
				}
				if len(nodes) < first {
					nodes = append(nodes, node)
				}
			}
			conn := map[string]any{}
			for _, ps := range s.sub {
				conn[nameOf(ps)] = nodes
				if nodes == nil {
					conn[nameOf(ps)] = []any{}
				}
			}
			obj[k] = conn
		case "issueDependenciesSummary":
			if f.opts.NoIssueDependencies {
				return nil, gqlErr("", "Field 'issueDependenciesSummary' doesn't exist on type 'Issue'"), false
			}
			sum := f.dependenciesSummary(is)
			out := map[string]any{}
			for _, ss := range s.sub {
				key, ok := map[string]string{"blockedBy": "blocked_by", "blocking": "blocking",
					"totalBlockedBy": "total_blocked_by", "totalBlocking": "total_blocking"}[ss.name]
				if !ok {
					return nil, gqlErr("", fmt.Sprintf("Field '%s' doesn't exist on type 'IssueDependenciesSummary'", ss.name)), false
				}
				out[nameOf(ss)] = sum[key]
			}
			obj[k] = out
		default:
			return nil, gqlErr("", fmt.Sprintf("Field '%s' doesn't exist on type 'Issue'", s.name)), false
		}
	}
	return obj, reply{}, true
}

// nameOf is the key a field has in the answer: its alias, else its name.
func nameOf(f gqlField) string {
	if f.alias != "" {
		return f.alias
	}
	return f.name
}

var gqlArgRE = lazyRegexp(`(\w+)\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+|true|false)`)

// gqlArgs reads literal arguments: strings (unquoted) and integers.
func gqlArgs(s string) map[string]string {
	out := map[string]string{}
	for _, m := range gqlArgRE().FindAllStringSubmatch(s, -1) {
		v := m[2]
		if u, err := strconv.Unquote(v); err == nil {
			v = u
		}
		out[m[1]] = v
	}
	return out
}
