package githubfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// graphql serves the GraphQL mutations the product uses, alone or together
// in one document (GitHub runs a document's mutations in order):
//
//	mutation($input:MarkPullRequestReadyForReviewInput!){
//	  markPullRequestReadyForReview(input:$input){pullRequest{id,isDraft}}}
//	mutation($input:UpdatePullRequestInput!){
//	  updatePullRequest(input:$input){pullRequest{id}}}
//	mutation($input:ConvertPullRequestToDraftInput!){
//	  convertPullRequestToDraft(input:$input){pullRequest{isDraft}}}
//
// It reads the selection set so the answer has exactly the fields asked for,
// which is what GitHub does and what githubv4's decoder requires. Anything
// else is answered with a GraphQL error, as GitHub answers an unknown field.
func (f *Fake) graphql(c *call) reply {
	var in struct {
		Query     string                     `json:"query"`
		Variables map[string]json.RawMessage `json:"variables"`
	}
	if err := json.Unmarshal(c.body, &in); err != nil {
		return errorReply(http.StatusBadRequest, "Problems parsing JSON")
	}
	gqlErr := func(typ, msg string) reply {
		e := map[string]any{"message": msg}
		if typ != "" {
			e["type"] = typ
		}
		return reply{status: http.StatusOK, body: map[string]any{"errors": []any{e}}}
	}
	q := strings.TrimSpace(in.Query)
	if strings.HasPrefix(q, "{") || strings.HasPrefix(q, "query") {
		return f.graphqlQuery(q, gqlErr)
	}
	if !strings.HasPrefix(q, "mutation") {
		return gqlErr("", "the fake GitHub serves only the markPullRequestReadyForReview, updatePullRequest and convertPullRequestToDraft mutations")
	}
	q = strings.TrimSpace(strings.TrimPrefix(q, "mutation"))
	if strings.HasPrefix(q, "(") {
		// The variable declarations.
		end := strings.IndexByte(q, ')')
		if end < 0 {
			return gqlErr("", "Parse error: unclosed variable declarations")
		}
		q = q[end+1:]
	}
	top, err := (&selParser{s: strings.TrimSpace(q)}).set(0)
	if err != nil {
		return gqlErr("", "Parse error: "+err.Error())
	}
	data := map[string]any{}
	for _, m := range top {
		typ := map[string]string{"markPullRequestReadyForReview": "MarkPullRequestReadyForReview", "updatePullRequest": "UpdatePullRequest",
			"convertPullRequestToDraft": "ConvertPullRequestToDraft"}[m.name]
		if typ == "" {
			return gqlErr("", "the fake GitHub serves only the markPullRequestReadyForReview, updatePullRequest and convertPullRequestToDraft mutations")
		}
		var input struct {
			PullRequestID    string  `json:"pullRequestId"`
			ClientMutationID string  `json:"clientMutationId"`
			Body             *string `json:"body"`
		}
		invalid := fmt.Sprintf("Variable $%s of type %sInput! was provided invalid value", m.arg, typ)
		if raw, ok := in.Variables[m.arg]; ok {
			if err := json.Unmarshal(raw, &input); err != nil {
				return gqlErr("", invalid)
			}
		}
		if input.PullRequestID == "" {
			return gqlErr("", invalid)
		}
		var pr *Issue
		for _, is := range f.st.Issues {
			if is.Pull != nil && is.Pull.NodeID == input.PullRequestID {
				pr = is
			}
		}
		if pr == nil {
			rep := gqlErr("NOT_FOUND", fmt.Sprintf("Could not resolve to a node with the global id of '%s'", input.PullRequestID))
			data[m.name] = nil
			rep.body.(map[string]any)["data"] = data
			return rep
		}
		switch m.name {
		case "markPullRequestReadyForReview":
			if pr.Pull.Draft {
				pr.Pull.Draft = false
				pr.UpdatedAt = f.stamp()
				f.issueEvent(c, pr, "ready_for_review", "")
			}
		case "convertPullRequestToDraft":
			if !pr.Pull.Draft {
				pr.Pull.Draft = true
				pr.UpdatedAt = f.stamp()
				f.issueEvent(c, pr, "converted_to_draft", "")
			}
		case "updatePullRequest":
			if input.Body != nil && *input.Body != pr.Body {
				if len([]rune(*input.Body)) > maxBody {
					return gqlErr("UNPROCESSABLE", "Body is too long (maximum is 65536 characters)")
				}
				pr.Body = *input.Body
				pr.UpdatedAt = f.stamp()
				f.issueEvent(c, pr, "edited", "")
			}
		}
		out := map[string]any{}
		for _, field := range m.sub {
			switch field.name {
			case "clientMutationId":
				out["clientMutationId"] = nullable(input.ClientMutationID)
			case "pullRequest":
				obj := map[string]any{}
				for _, sub := range field.sub {
					switch sub.name {
					case "id":
						obj["id"] = pr.Pull.NodeID
					case "isDraft":
						obj["isDraft"] = pr.Pull.Draft
					case "number":
						obj["number"] = pr.Number
					case "headRefOid":
						// Read when the mutation runs: a push just before it
						// shows here, as on GitHub.
						obj["headRefOid"] = f.headSHA(pr.Pull)
					case "title":
						obj["title"] = pr.Title
					case "body":
						obj["body"] = pr.Body
					case "state":
						obj["state"] = strings.ToUpper(pr.State)
					case "url":
						obj["url"] = fmt.Sprintf("%s/pull/%d", f.repoHTML(c.base), pr.Number)
					default:
						return gqlErr("", fmt.Sprintf("Field '%s' doesn't exist on type 'PullRequest'", sub.name))
					}
				}
				out["pullRequest"] = obj
			default:
				return gqlErr("", fmt.Sprintf("Field '%s' doesn't exist on type '%sPayload'", field.name, typ))
			}
		}
		data[m.name] = out
	}
	return reply{status: http.StatusOK, body: map[string]any{"data": data}}
}

type gqlField struct {
	name string
	// alias is the name the answer uses ("i12: issue(number: 12)" → i12),
	// "" when the field has none.
	alias string
	// args is the field's argument list as written, without the parentheses.
	args string
	// arg is the variable of the field's input argument ("input: $x" → x).
	arg string
	sub []gqlField
}

type selParser struct {
	s   string
	pos int
}

func (p *selParser) skip() {
	for p.pos < len(p.s) && strings.ContainsRune(" \t\r\n,", rune(p.s[p.pos])) {
		p.pos++
	}
}

func (p *selParser) set(depth int) ([]gqlField, error) {
	if depth > 10 {
		return nil, fmt.Errorf("selection too deep")
	}
	p.skip()
	if p.pos >= len(p.s) || p.s[p.pos] != '{' {
		return nil, fmt.Errorf("expected '{' at %d", p.pos)
	}
	p.pos++
	var out []gqlField
	for {
		p.skip()
		if p.pos >= len(p.s) {
			return nil, fmt.Errorf("unclosed selection")
		}
		if p.s[p.pos] == '}' {
			p.pos++
			if len(out) == 0 {
				return nil, fmt.Errorf("empty selection")
			}
			return out, nil
		}
		start := p.pos
		for p.pos < len(p.s) && (isIdent(p.s[p.pos])) {
			p.pos++
		}
		if start == p.pos {
			return nil, fmt.Errorf("unexpected %q at %d", p.s[p.pos], p.pos)
		}
		fld := gqlField{name: p.s[start:p.pos]}
		p.skip()
		if p.pos < len(p.s) && p.s[p.pos] == ':' {
			p.pos++
			p.skip()
			start = p.pos
			for p.pos < len(p.s) && isIdent(p.s[p.pos]) {
				p.pos++
			}
			if start == p.pos {
				return nil, fmt.Errorf("expected a field name after alias %q at %d", fld.name, p.pos)
			}
			fld.alias, fld.name = fld.name, p.s[start:p.pos]
			p.skip()
		}
		if p.pos < len(p.s) && p.s[p.pos] == '(' {
			end := strings.IndexByte(p.s[p.pos:], ')')
			if end < 0 {
				return nil, fmt.Errorf("unclosed arguments")
			}
			args := p.s[p.pos+1 : p.pos+end]
			fld.args = args
			if _, v, ok := strings.Cut(args, "$"); ok {
				fld.arg = strings.TrimFunc(v, func(r rune) bool { return !isIdent(byte(r)) })
			}
			p.pos += end + 1
			p.skip()
		}
		if p.pos < len(p.s) && p.s[p.pos] == '{' {
			sub, err := p.set(depth + 1)
			if err != nil {
				return nil, err
			}
			fld.sub = sub
		}
		out = append(out, fld)
	}
}

func isIdent(b byte) bool {
	return b == '_' || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9')
}
