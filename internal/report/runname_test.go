package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"gopkg.in/yaml.v3"
)

// TestCallerRunName: the callers' run-name, evaluated for each event the
// callers run on, gives the titles report reads the issue back from: a
// dispatched continuation's names its issue (and is what the fake's
// callerRunName gives it in the tests), and a plan approval's names none.
func TestCallerRunName(t *testing.T) {
	root := filepath.Join("..", "..")
	dispatch := func(issue, attempt float64, phase string) map[string]any {
		return map[string]any{
			"github": map[string]any{"event_name": "workflow_dispatch", "event": map[string]any{}},
			"inputs": map[string]any{"issue": issue, "attempt": attempt, "phase": phase, "record-comment": 4711.0},
		}
	}
	onIssue := func(event string) map[string]any {
		return map[string]any{"github": map[string]any{"event_name": event,
			"event": map[string]any{"issue": map[string]any{"number": 12.0}, "label": map[string]any{"name": "roadmap:implement"}}},
			"inputs": map[string]any{}}
	}
	closed := map[string]any{"github": map[string]any{"event_name": "issues",
		"event": map[string]any{"action": "closed", "issue": map[string]any{"number": 12.0}}}, "inputs": map[string]any{}}
	edited := map[string]any{"github": map[string]any{"event_name": "issues",
		"event": map[string]any{"action": "edited", "issue": map[string]any{"number": 3.0}}}, "inputs": map[string]any{}}
	review := map[string]any{"github": map[string]any{"event_name": "pull_request_review",
		"event": map[string]any{"review": map[string]any{"state": "approved"},
			"pull_request": map[string]any{"number": 31.0, "head": map[string]any{"ref": "roadmap/12-webhook-backoff"}}}},
		"inputs": map[string]any{}}
	continuation := strings.NewReplacer("{issue}", "12", "{attempt}", "3").Replace(callerRunName)

	type tc struct {
		name  string
		ctx   map[string]any
		want  string
		issue int
	}
	common := []tc{
		{"a continuation report dispatches", dispatch(12, 3, "implement"), continuation, 12},
		{"a stage continuation", dispatch(12, 2, "stage"), "roadmap #12 stage Job 2", 12},
		{"a person's dispatch", dispatch(12, 0, "implement"), "roadmap #12 implement", 12},
		{"a label", onIssue("issues"), "roadmap #12 labeled", 12},
		{"a comment", onIssue("issue_comment"), "roadmap #12 comment", 12},
	}
	for _, file := range []string{"docs/examples/roadmap-caller.yml", "internal/adopt/caller.yml", "docs/examples/roadmap-steps.yml"} {
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		var wf struct {
			RunName string `yaml:"run-name"`
			On      struct {
				Review *yaml.Node `yaml:"pull_request_review"`
			} `yaml:"on"`
		}
		if err := yaml.Unmarshal(data, &wf); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		cases := common
		if file != "docs/examples/roadmap-steps.yml" {
			cases = append(cases, tc{"a close", closed, "roadmap #12 closed", 12},
				tc{"a box ticked on the dashboard", edited, "roadmap #3 edited", 3})
		}
		if wf.On.Review != nil {
			cases = append(cases, tc{"a plan approval", review, "roadmap review on roadmap/12-webhook-backoff", 0})
		}
		for _, c := range cases {
			got, err := evalTemplate(wf.RunName, c.ctx)
			if err != nil {
				t.Errorf("%s: run-name %q: %v", file, wf.RunName, err)
				continue
			}
			if got != c.want {
				t.Errorf("%s, %s: title %q, want %q", file, c.name, got, c.want)
			}
			if n, _ := runIssue(got); n != c.issue {
				t.Errorf("%s, %s: title %q reads as issue %d, want %d", file, c.name, got, n, c.issue)
			}
		}
	}
}

// evalTemplate evaluates a workflow string with ${{ }} expressions: the
// subset of GitHub's expression language the callers' run-name uses
// (literals, property access, !, ==, !=, && and || with GitHub's
// value-returning semantics, format). Strings compare case-insensitively,
// as on GitHub; values of different types are unequal (GitHub would
// coerce them to numbers; the run-names compare only strings).
func evalTemplate(s string, ctx map[string]any) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${{")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			return "", fmt.Errorf("unclosed ${{ in %q", s)
		}
		b.WriteString(s[:i])
		p := &exprParser{src: s[i+3 : i+j], ctx: ctx}
		v, err := p.parse()
		if err != nil {
			return "", err
		}
		b.WriteString(exprString(v))
		s = s[i+j+2:]
	}
}

type exprParser struct {
	src string
	ctx map[string]any
}

func (p *exprParser) parse() (any, error) {
	v, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.skip(); p.src != "" {
		return nil, fmt.Errorf("unexpected %q", p.src)
	}
	return v, nil
}

func (p *exprParser) skip() { p.src = strings.TrimLeftFunc(p.src, unicode.IsSpace) }

func (p *exprParser) eat(tok string) bool {
	p.skip()
	if strings.HasPrefix(p.src, tok) {
		p.src = p.src[len(tok):]
		return true
	}
	return false
}

func (p *exprParser) or() (any, error) {
	v, err := p.and()
	for err == nil && p.eat("||") {
		var w any
		if w, err = p.and(); !truthy(v) {
			v = w
		}
	}
	return v, err
}

func (p *exprParser) and() (any, error) {
	v, err := p.eq()
	for err == nil && p.eat("&&") {
		var w any
		if w, err = p.eq(); truthy(v) {
			v = w
		}
	}
	return v, err
}

func (p *exprParser) eq() (any, error) {
	v, err := p.unary()
	if err != nil {
		return nil, err
	}
	for _, op := range []string{"==", "!="} {
		if p.eat(op) {
			w, err := p.unary()
			if err != nil {
				return nil, err
			}
			same := v == w
			if a, ok := v.(string); ok {
				b, ok := w.(string)
				same = ok && strings.EqualFold(a, b)
			}
			return same == (op == "=="), nil
		}
	}
	return v, nil
}

func (p *exprParser) unary() (any, error) {
	if p.skip(); strings.HasPrefix(p.src, "!") && !strings.HasPrefix(p.src, "!=") {
		p.src = p.src[1:]
		v, err := p.unary()
		return !truthy(v), err
	}
	return p.primary()
}

func (p *exprParser) primary() (any, error) {
	p.skip()
	switch {
	case p.eat("("):
		v, err := p.or()
		if err == nil && !p.eat(")") {
			err = fmt.Errorf("no ) before %q", p.src)
		}
		return v, err
	case strings.HasPrefix(p.src, "'"):
		var b strings.Builder
		for i := 1; i < len(p.src); i++ {
			if p.src[i] != '\'' {
				b.WriteByte(p.src[i])
				continue
			}
			if i+1 < len(p.src) && p.src[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			p.src = p.src[i+1:]
			return b.String(), nil
		}
		return nil, fmt.Errorf("unclosed string %q", p.src)
	}
	name := p.ident()
	switch name {
	case "":
		return nil, fmt.Errorf("unexpected %q", p.src)
	case "true", "false":
		return name == "true", nil
	case "null":
		return nil, nil
	case "format":
		return p.format()
	}
	if n, err := strconv.ParseFloat(name, 64); err == nil {
		return n, nil
	}
	var v any = p.ctx[name]
	for p.eat(".") {
		m, _ := v.(map[string]any)
		v = m[p.ident()]
	}
	return v, nil
}

func (p *exprParser) ident() string {
	p.skip()
	i := 0
	for i < len(p.src) && (p.src[i] == '_' || p.src[i] == '-' || unicode.IsLetter(rune(p.src[i])) || unicode.IsDigit(rune(p.src[i]))) {
		i++
	}
	name := p.src[:i]
	p.src = p.src[i:]
	return name
}

func (p *exprParser) format() (any, error) {
	if !p.eat("(") {
		return nil, fmt.Errorf("format without ( at %q", p.src)
	}
	var args []any
	for {
		v, err := p.or()
		if err != nil {
			return nil, err
		}
		args = append(args, v)
		if p.eat(")") {
			break
		}
		if !p.eat(",") {
			return nil, fmt.Errorf("format: no , or ) at %q", p.src)
		}
	}
	f, _ := args[0].(string)
	for i, a := range args[1:] {
		f = strings.ReplaceAll(f, "{"+strconv.Itoa(i)+"}", exprString(a))
	}
	return f, nil
}

func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case float64:
		return v != 0
	case string:
		return v != ""
	}
	return true
}

func exprString(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case string:
		return v
	}
	return "Object"
}
