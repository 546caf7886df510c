package policy

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Defaults when a table leaves a limit unset.
const (
	DefaultTimeout    = 10 * time.Minute
	DefaultOutputTail = 64 << 10
	DefaultOutputHead = 8 << 10
)

//go:embed default.yaml
var defaultYAML []byte

// Policy is the shell policy table. The zero value refuses every program.
type Policy struct {
	// Timeout bounds one process; a row may override it.
	Timeout time.Duration `yaml:"timeout,omitempty"`
	// OutputHead and OutputTail are how many bytes of a process's combined
	// output are kept from its start and from its end; what lies between is
	// cut and the cut is noted in the output.
	OutputHead int `yaml:"output_head,omitempty"`
	OutputTail int `yaml:"output_tail,omitempty"`
	// Programs is the table, one row per program.
	Programs Rows `yaml:"programs"`
}

// Rows is the table's rows. In YAML it is a list of rows, or a mapping from
// program name to the rest of the row ({go: {allow: true}}), whichever reads
// better in a configuration file.
type Rows []Row

// UnmarshalYAML accepts both the list and the mapping form. A decoder's
// strict mode does not reach inside a custom unmarshaler, so unknown fields
// are refused here by hand: a typo such as "allowed:" must not silently leave
// a program refused.
func (rs *Rows) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		if n.Kind != yaml.SequenceNode {
			return fmt.Errorf("line %d: programs must be a list or a mapping", n.Line)
		}
		for _, item := range n.Content {
			if err := knownKeys(item, rowKeys); err != nil {
				return err
			}
			var r Row
			if err := item.Decode(&r); err != nil {
				return err
			}
			*rs = append(*rs, r)
		}
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if err := knownKeys(n.Content[i+1], rowKeys); err != nil {
			return err
		}
		var r Row
		if err := n.Content[i+1].Decode(&r); err != nil {
			return err
		}
		if r.Program != "" && r.Program != n.Content[i].Value {
			return fmt.Errorf("line %d: row %q names program %q", n.Content[i].Line, n.Content[i].Value, r.Program)
		}
		r.Program = n.Content[i].Value
		*rs = append(*rs, r)
	}
	return nil
}

// Row is one program's line of the table.
type Row struct {
	Program string `yaml:"program"`
	Allow   bool   `yaml:"allow"`
	// Reason is shown with a refusal of the whole row (Allow false).
	Reason string `yaml:"reason,omitempty"`
	// Args are the allowed forms: when non-empty, one must match.
	Args []string `yaml:"args,omitempty,flow"`
	// Deny are refused forms, checked before Args.
	Deny []Pattern `yaml:"deny,omitempty"`
	// Values are options whose next argument is a value (a search pattern, a
	// format), so it is not checked as a path.
	Values []string `yaml:"values,omitempty,flow"`
	// Options is how the program reads its options: SyntaxWords (""),
	// SyntaxGNU ("gnu") or SyntaxGo ("go"). It decides which spellings an
	// option word of a form matches (bundles, abbreviations, one dash or two).
	Options string `yaml:"options,omitempty"`

	Timeout    time.Duration `yaml:"timeout,omitempty"`
	OutputHead int           `yaml:"output_head,omitempty"`
	OutputTail int           `yaml:"output_tail,omitempty"`
}

// Pattern is a refused form and why. In YAML it is either a string (the form)
// or a mapping {args, reason, unless}.
type Pattern struct {
	Args   string `yaml:"args"`
	Reason string `yaml:"reason,omitempty"`
	// Unless is a form that, when it also matches, lifts the refusal: grep -r
	// is refused unless --exclude-dir=.git keeps it out of the repository.
	Unless string `yaml:"unless,omitempty"`
}

// UnmarshalYAML accepts a bare string as a pattern without a reason.
func (p *Pattern) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		p.Args = n.Value
		return nil
	}
	if err := knownKeys(n, []string{"args", "reason", "unless"}); err != nil {
		return err
	}
	type plain Pattern
	return n.Decode((*plain)(p))
}

var rowKeys = []string{"program", "allow", "reason", "args", "deny", "values", "options", "timeout", "output_head", "output_tail"}

// knownKeys refuses a mapping key outside keys, naming its line.
func knownKeys(n *yaml.Node, keys []string) error {
	if n.Kind != yaml.MappingNode {
		return nil // Decode reports the type error
	}
	for i := 0; i < len(n.Content); i += 2 {
		if k := n.Content[i]; !slices.Contains(keys, k.Value) {
			return fmt.Errorf("line %d: field %s not found (the fields are %s)", k.Line, k.Value, strings.Join(keys, ", "))
		}
	}
	return nil
}

// Refusal is the error for anything the policy does not allow: a program, an
// argument form, a path, or shell syntax. Row and Rule name what refused it.
type Refusal struct {
	Row    string // the program row, "" when the refusal is not a row's
	Rule   string // e.g. `no row`, `program refused`, `deny "push"`, `args`, `path`, `shell syntax`
	Reason string // for the model: why, and what to do instead
}

func (r *Refusal) Error() string {
	var b strings.Builder
	b.WriteString("refused by the shell policy")
	if r.Row != "" {
		fmt.Fprintf(&b, " (row %q", r.Row)
		if r.Rule != "" {
			fmt.Fprintf(&b, ", rule %s", r.Rule)
		}
		b.WriteString(")")
	} else if r.Rule != "" {
		fmt.Fprintf(&b, " (%s)", r.Rule)
	}
	if r.Reason != "" {
		b.WriteString(": ")
		b.WriteString(r.Reason)
	}
	return b.String()
}

// Refused marks the error as a refusal for packages that cannot import this
// one (the agent checks for this method through errors.As).
func (r *Refusal) Refused() bool { return true }

// Default returns the built-in table (default.yaml, shown in docs/policy.md).
func Default() *Policy {
	p, err := parse(defaultYAML)
	if err != nil {
		// The embedded table is checked by TestDefaultParses; reaching this is
		// a build of broken source, not a runtime condition.
		panic(fmt.Sprintf("policy: the built-in default table is invalid: %v", err))
	}
	return p
}

// DefaultYAML returns the text of the built-in table, for a user to copy.
func DefaultYAML() []byte { return bytes.Clone(defaultYAML) }

// config is the file a user writes: rows that override or extend the default.
type config struct {
	// Replace drops the default table: the file is the whole policy.
	Replace bool `yaml:"replace"`
	Policy  `yaml:",inline"`
}

// Parse reads a policy file. Its rows replace the default rows of the same
// program and add new ones; with `replace: true` the file is the whole table.
// Limits left unset keep the default's.
func Parse(data []byte) (*Policy, error) {
	return parseOver(data, nil)
}

// parseOver is Parse with the rows of under laid on the default table
// before the file's own (a file with `replace: true` drops both).
func parseOver(data, under []byte) (*Policy, error) {
	c, err := decodeConfig(data)
	if err != nil {
		return nil, err
	}
	base := &Policy{}
	if !c.Replace {
		base = Default()
		if len(under) > 0 {
			u, err := decodeConfig(under)
			if err != nil {
				return nil, err
			}
			base = overlay(base, u)
		}
	}
	base = overlay(base, c)
	if err := base.Validate(); err != nil {
		return nil, fmt.Errorf("parse shell policy: %w", err)
	}
	return base, nil
}

func decodeConfig(data []byte) (config, error) {
	var c config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	// An empty file decodes as io.EOF: no overrides.
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return c, fmt.Errorf("parse shell policy: %w", err)
	}
	if err := c.Policy.Validate(); err != nil {
		return c, fmt.Errorf("parse shell policy: %w", err)
	}
	return c, nil
}

// overlay sets c's limits and rows on base: a row replaces base's row of
// the same program, or is added.
func overlay(base *Policy, c config) *Policy {
	if c.Timeout != 0 {
		base.Timeout = c.Timeout
	}
	if c.OutputHead != 0 {
		base.OutputHead = c.OutputHead
	}
	if c.OutputTail != 0 {
		base.OutputTail = c.OutputTail
	}
	for _, r := range c.Programs {
		replaced := false
		for i := range base.Programs {
			if base.Programs[i].Program == r.Program {
				base.Programs[i] = r
				replaced = true
				break
			}
		}
		if !replaced {
			base.Programs = append(base.Programs, r)
		}
	}
	return base
}

// ParseNode is Parse for the policy section of a larger YAML file (the
// repository's configuration hands it over as a node). An empty node is the
// default.
func ParseNode(n *yaml.Node) (*Policy, error) {
	return ParseNodeOver(n, nil)
}

// ParseNodeOver is ParseNode with the rows of under (a policy file's text)
// between the default table and the section's own: the rows a toolchain
// detected at run time needs (internal/adopt), which a row the section
// writes for the same program replaces. With `replace: true` the section
// is the whole table and under is not read.
func ParseNodeOver(n *yaml.Node, under []byte) (*Policy, error) {
	var data []byte
	if n != nil && n.Kind != 0 {
		// Through text, so unknown fields are refused as in a file of its own
		// (Node.Decode has no strict mode).
		var err error
		if data, err = yaml.Marshal(n); err != nil {
			return nil, fmt.Errorf("parse shell policy: %w", err)
		}
	}
	return parseOver(data, under)
}

func parse(data []byte) (*Policy, error) {
	var p Policy
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// Validate checks the table: named rows, no duplicates, valid forms.
func (p *Policy) Validate() error {
	if p.Timeout < 0 || p.OutputHead < 0 || p.OutputTail < 0 {
		return errors.New("timeout and output caps must not be negative")
	}
	seen := map[string]bool{}
	for i, r := range p.Programs {
		where := fmt.Sprintf("row %d (%q)", i+1, r.Program)
		if r.Program == "" {
			return fmt.Errorf("row %d: program is empty", i+1)
		}
		if strings.ContainsAny(r.Program, "/\\ \t\n") {
			return fmt.Errorf("%s: program must be a bare name, not a path", where)
		}
		if seen[r.Program] {
			return fmt.Errorf("%s: program appears twice", where)
		}
		seen[r.Program] = true
		if r.Timeout < 0 || r.OutputHead < 0 || r.OutputTail < 0 {
			return fmt.Errorf("%s: timeout and output caps must not be negative", where)
		}
		if !slices.Contains(syntaxes, r.Options) {
			return fmt.Errorf("%s: options %q is not one of %q, %q", where, r.Options, SyntaxGNU, SyntaxGo)
		}
		forms := append([]string(nil), r.Args...)
		for _, d := range r.Deny {
			forms = append(forms, d.Args)
			if d.Unless != "" {
				forms = append(forms, d.Unless)
			}
		}
		for _, f := range forms {
			words := strings.Fields(f)
			if len(words) == 0 {
				return fmt.Errorf("%s: empty form", where)
			}
			for _, w := range words {
				if _, err := path.Match(w, ""); err != nil {
					return fmt.Errorf("%s: form %q: bad pattern %q", where, f, w)
				}
			}
		}
	}
	return nil
}

// Row returns the row for a program, or nil.
func (p *Policy) Row(program string) *Row {
	for i := range p.Programs {
		if p.Programs[i].Program == program {
			return &p.Programs[i]
		}
	}
	return nil
}

// Check says whether argv may run: nil, or a *Refusal naming the row and rule.
// Of paths it checks only what needs no workspace: a value glued to a short
// option (sort -uo.git/config) that has a ".." element, lies in .git or is
// absolute. Run checks the other path arguments against the workspace.
func (p *Policy) Check(argv []string) error {
	if len(argv) == 0 || argv[0] == "" {
		return &Refusal{Rule: "empty", Reason: "no command given"}
	}
	prog := argv[0]
	if strings.ContainsAny(prog, "/\\") {
		return &Refusal{Rule: "program by path",
			Reason: fmt.Sprintf("%q is a path; run programs by name, as the policy table lists them", prog)}
	}
	row := p.Row(prog)
	if row == nil {
		return &Refusal{Rule: "no row",
			Reason: fmt.Sprintf("%q is not in the policy table; allowed programs: %s", prog, strings.Join(p.allowed(), ", "))}
	}
	if !row.Allow {
		reason := row.Reason
		if reason == "" {
			reason = fmt.Sprintf("%q is refused", prog)
		}
		return &Refusal{Row: prog, Rule: "program refused", Reason: reason}
	}
	args := argv[1:]
	for _, d := range row.Deny {
		if row.matchForm(d.Args, args) && (d.Unless == "" || !row.matchForm(d.Unless, args)) {
			reason := d.Reason
			if reason == "" {
				reason = fmt.Sprintf("%q matches a refused form", strings.Join(argv, " "))
			}
			return &Refusal{Row: prog, Rule: fmt.Sprintf("deny %q", d.Args), Reason: reason}
		}
	}
	if arg, why := row.gluedPath(args); arg != "" {
		return &Refusal{Row: prog, Rule: "path",
			Reason: fmt.Sprintf("argument %q: the value glued to its option %s", arg, why)}
	}
	if len(row.Args) > 0 {
		for _, f := range row.Args {
			if row.matchForm(f, args) {
				return nil
			}
		}
		return &Refusal{Row: prog, Rule: "args",
			Reason: fmt.Sprintf("%s accepts only these forms: %s", prog, strings.Join(row.Args, ", "))}
	}
	return nil
}

func (p *Policy) allowed() []string {
	var names []string
	for _, r := range p.Programs {
		if r.Allow {
			names = append(names, r.Program)
		}
	}
	sort.Strings(names)
	return names
}

// limits returns the timeout and output caps for a program.
func (p *Policy) limits(program string) (timeout time.Duration, head, tail int) {
	timeout, head, tail = p.Timeout, p.OutputHead, p.OutputTail
	if r := p.Row(program); r != nil {
		if r.Timeout > 0 {
			timeout = r.Timeout
		}
		if r.OutputHead > 0 {
			head = r.OutputHead
		}
		if r.OutputTail > 0 {
			tail = r.OutputTail
		}
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if head <= 0 {
		head = DefaultOutputHead
	}
	if tail <= 0 {
		tail = DefaultOutputTail
	}
	return timeout, head, tail
}
