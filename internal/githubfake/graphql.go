package githubfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// graphql serves the one GraphQL operation the product uses:
//
//	mutation($input:MarkPullRequestReadyForReviewInput!){
//	  markPullRequestReadyForReview(input:$input){pullRequest{id,isDraft}}}
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
	const op = "markPullRequestReadyForReview"
	i := strings.Index(in.Query, op)
	if !strings.HasPrefix(strings.TrimSpace(in.Query), "mutation") || i < 0 {
		return gqlErr("", "the fake GitHub serves only the markPullRequestReadyForReview mutation")
	}
	sel, err := parseSelection(in.Query[i+len(op):])
	if err != nil {
		return gqlErr("", "Parse error: "+err.Error())
	}
	var input struct {
		PullRequestID    string `json:"pullRequestId"`
		ClientMutationID string `json:"clientMutationId"`
	}
	if raw, ok := in.Variables["input"]; ok {
		if err := json.Unmarshal(raw, &input); err != nil {
			return gqlErr("", "Variable $input of type MarkPullRequestReadyForReviewInput! was provided invalid value")
		}
	}
	if input.PullRequestID == "" {
		return gqlErr("", "Variable $input of type MarkPullRequestReadyForReviewInput! was provided invalid value")
	}
	var pr *Issue
	for _, is := range f.st.Issues {
		if is.Pull != nil && is.Pull.NodeID == input.PullRequestID {
			pr = is
		}
	}
	if pr == nil {
		rep := gqlErr("NOT_FOUND", fmt.Sprintf("Could not resolve to a node with the global id of '%s'", input.PullRequestID))
		rep.body.(map[string]any)["data"] = map[string]any{op: nil}
		return rep
	}
	if pr.Pull.Draft {
		pr.Pull.Draft = false
		pr.UpdatedAt = f.stamp()
		f.issueEvent(c, pr, "ready_for_review", "")
	}
	out := map[string]any{}
	for _, field := range sel {
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
				case "title":
					obj["title"] = pr.Title
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
			return gqlErr("", fmt.Sprintf("Field '%s' doesn't exist on type 'MarkPullRequestReadyForReviewPayload'", field.name))
		}
	}
	return reply{status: http.StatusOK, body: map[string]any{"data": map[string]any{op: out}}}
}

type gqlField struct {
	name string
	sub  []gqlField
}

// parseSelection reads "(args){a,b{c}}" — the arguments are skipped, the
// selection set is returned. It is a small parser for the queries githubv4
// writes, not a GraphQL parser.
func parseSelection(s string) ([]gqlField, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "(") {
		end := strings.IndexByte(s, ')')
		if end < 0 {
			return nil, fmt.Errorf("unclosed arguments")
		}
		s = strings.TrimSpace(s[end+1:])
	}
	p := &selParser{s: s}
	fields, err := p.set(0)
	if err != nil {
		return nil, err
	}
	return fields, nil
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
