package config

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"gopkg.in/yaml.v3"
)

//go:generate go test -run TestSchemaCurrent -update .

// schemaFile is the JSON Schema of the configuration, generated from Config
// (TestSchemaCurrent keeps it current). Parse validates against it, and an
// editor completes and checks .github/roadmap.yml with it
// (docs/configuration.md).
const schemaFile = "roadmap.schema.json"

// durationDef is the schema's definition of a duration: a schema error
// under it is reported in the duration's own words.
const durationDef = "Duration"

//go:embed roadmap.schema.json
var schemaJSON []byte

type compiled struct {
	schema *jsonschema.Schema
	doc    map[string]any // the schema as data, to list an object's keys
}

var loadSchema = sync.OnceValues(func() (*compiled, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, fmt.Errorf("read the configuration schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	// An absolute URL: a relative one would be taken from the working
	// directory.
	const url = "file:///" + schemaFile
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("load the configuration schema: %w", err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("compile the configuration schema: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(schemaJSON, &m); err != nil {
		return nil, fmt.Errorf("read the configuration schema: %w", err)
	}
	return &compiled{schema: s, doc: m}, nil
})

// checkSchema validates the document against the schema: unknown keys,
// value types and the fixed sets of words (providers, isolation, network).
// The first problem in the file's order is the error, at its line and key.
func checkSchema(file string, doc *yaml.Node) error {
	sc, err := loadSchema()
	if err != nil {
		return err
	}
	inst, err := instance(file, doc)
	if err != nil {
		return err
	}
	var ve *jsonschema.ValidationError
	if err := sc.schema.Validate(inst); !errors.As(err, &ve) {
		return err
	}
	var first *Error
	col := 0
	for _, leaf := range leaves(ve, nil) {
		e, c := sc.explain(file, doc, leaf)
		if first == nil || e.Line < first.Line || (e.Line == first.Line && c < col) {
			first, col = e, c
		}
	}
	return first
}

func leaves(ve *jsonschema.ValidationError, out []*jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(ve.Causes) == 0 {
		return append(out, ve)
	}
	for _, c := range ve.Causes {
		out = leaves(c, out)
	}
	return out
}

// explain turns a schema error into an *Error in the words the
// configuration's reader knows, and the column it is at, to order errors.
func (sc *compiled) explain(file string, doc *yaml.Node, ve *jsonschema.ValidationError) (*Error, int) {
	n, key := locate(doc, ve.InstanceLocation)
	e := &Error{File: file, Line: n.Line, Key: key}
	switch k := ve.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		// The first unknown key as written, at its own line.
		if m := resolve(n); m.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(m.Content); i += 2 {
				if kn := m.Content[i]; slices.Contains(k.Properties, resolve(kn).Value) {
					e.Line, e.Key = kn.Line, join(key, resolve(kn).Value)
					e.Msg = "unknown key (known: " + strings.Join(sc.known(ve.SchemaURL), ", ") + ")"
					return e, kn.Column
				}
			}
		}
		e.Msg = fmt.Sprintf("unknown keys %s", strings.Join(k.Properties, ", "))
	case *kind.Type, *kind.Pattern:
		if strings.HasSuffix(ve.SchemaURL, "#/$defs/"+durationDef) && n.Kind == yaml.ScalarNode {
			e.Msg = durationMsg(n.Value)
			break
		}
		if t, ok := k.(*kind.Type); ok {
			e.Msg = "must be " + typeWords(t.Want) + ", not " + written(n)
		} else {
			e.Msg = fmt.Sprintf("%s does not match %s", written(n), k.(*kind.Pattern).Want)
		}
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = fmt.Sprint(w)
		}
		e.Msg = enumMsg(ve.InstanceLocation, fmt.Sprint(k.Got), want)
	default:
		e.Msg = ve.ErrorKind.LocalizedString(message.NewPrinter(language.English))
	}
	return e, n.Column
}

// enumMsg names the words a key takes. A provider keeps the words its error
// has always had; the network says where wider access is decided.
func enumMsg(loc []string, got string, want []string) string {
	switch {
	case len(loc) == 3 && loc[0] == "models" && loc[2] == "provider":
		return fmt.Sprintf("unknown provider %q (%s)", got, strings.Join(want, ", "))
	case slices.Equal(loc, []string{"sandbox", "network"}):
		return fmt.Sprintf("%q is not %s (anything wider is the runner's firewall: docs/isolation.md)", got, orList(want))
	}
	return fmt.Sprintf("%q is not %s", got, orList(want))
}

func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// typeWords says a JSON Schema type the way YAML's reader calls it.
func typeWords(types []string) string {
	words := make([]string, len(types))
	for i, t := range types {
		switch t {
		case "object":
			words[i] = "a mapping"
		case "array":
			words[i] = "a list"
		case "boolean":
			words[i] = "true or false"
		case "integer":
			words[i] = "an integer"
		default:
			words[i] = "a " + t
		}
	}
	return strings.Join(words, " or ")
}

// written is a value as the reader wrote it: a string quoted, a number or
// a word as is, a mapping or a list by its kind.
func written(n *yaml.Node) string {
	switch n = resolve(n); n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	if n.ShortTag() == "!!str" {
		return strconv.Quote(n.Value)
	}
	return n.Value
}

// durationMsg says why a value is not a duration. A bare number is the usual
// slip (seconds meant), so the message shows the value with a unit.
func durationMsg(v string) string {
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return fmt.Sprintf("%s is not a duration: write it with a unit, such as %ss", v, v)
	}
	return fmt.Sprintf("%q is not a duration (90s, 15m, 2h)", v)
}

// known lists the keys of the object schema at schemaURL (the one that
// refused a key), from the schema itself.
func (sc *compiled) known(schemaURL string) []string {
	_, ptr, _ := strings.Cut(schemaURL, "#")
	obj := sc.doc
	for tok := range strings.SplitSeq(ptr, "/") {
		if tok != "" {
			obj, _ = obj[strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")].(map[string]any)
		}
	}
	props, _ := obj["properties"].(map[string]any)
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// locate finds the node at a schema error's instance location and its dotted
// key (models[1].name); where the path leaves the document, the deepest node
// on it.
func locate(doc *yaml.Node, loc []string) (*yaml.Node, string) {
	n, key := doc, ""
	for _, tok := range loc {
		m := resolve(n)
		var next *yaml.Node
		switch m.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(m.Content); i += 2 {
				if resolve(m.Content[i]).Value == tok {
					next = m.Content[i+1]
				}
			}
			key = join(key, tok)
		case yaml.SequenceNode:
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(m.Content) {
				next = m.Content[i]
			}
			key = fmt.Sprintf("%s[%s]", key, tok)
		}
		if next == nil {
			return n, key
		}
		n = next
	}
	return n, key
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < maxAliasDepth; i++ {
		n = n.Alias
	}
	return n
}

// Bounds on what aliases may expand to: a document that refers to itself, or
// doubles at each alias, would otherwise never finish.
const (
	maxInstanceValues = 1 << 16
	maxAliasDepth     = 100
)

// instance is the document as the generic value a JSON Schema validates.
// A key with no value (`stage:`) is left out, as the decoder leaves its
// default; a number too large for a float stays a number, so the decoder
// reports it as it always has.
func instance(file string, doc *yaml.Node) (any, error) {
	b := &builder{file: file, open: map[*yaml.Node]bool{}}
	return b.value(doc)
}

type builder struct {
	file   string
	values int
	open   map[*yaml.Node]bool // aliases being expanded
	line   int                 // of the outermost alias being expanded
}

func (b *builder) value(n *yaml.Node) (any, error) {
	if b.values++; b.values > maxInstanceValues {
		return nil, &Error{File: b.file, Line: cmp.Or(b.line, n.Line), Msg: fmt.Sprintf("aliases expand the configuration past %d values", maxInstanceValues)}
	}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, nil
		}
		if b.open[n.Alias] || len(b.open) >= maxAliasDepth {
			return nil, &Error{File: b.file, Line: n.Line, Msg: fmt.Sprintf("alias *%s refers to its own value", n.Value)}
		}
		if len(b.open) == 0 {
			b.line = n.Line
			defer func() { b.line = 0 }()
		}
		b.open[n.Alias] = true
		defer delete(b.open, n.Alias)
		return b.value(n.Alias)
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return b.value(n.Content[0])
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			v := n.Content[i+1]
			if resolve(v).ShortTag() == "!!null" {
				continue
			}
			val, err := b.value(v)
			if err != nil {
				return nil, err
			}
			m[resolve(n.Content[i]).Value] = val
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, c := range n.Content {
			val, err := b.value(c)
			if err != nil {
				return nil, err
			}
			s[i] = val
		}
		return s, nil
	}
	return scalar(n), nil
}

func scalar(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool", "!!int", "!!float":
		var v any
		if err := n.Decode(&v); err == nil {
			// JSON has no NaN or infinity: the schema checks such a value
			// is a number, validate says why it is refused.
			if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
				return 0.0
			}
			return v
		}
	case "!!str":
		// yaml reads a plain number out of a float's range (1e400) as a
		// string; it is a number, which the decoder refuses with its value.
		if n.Style == 0 {
			if _, err := strconv.ParseFloat(n.Value, 64); errors.Is(err, strconv.ErrRange) {
				return 0.0
			}
		}
	}
	return n.Value
}
