package plan

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// MetadataFile is a change's optional metadata file.
const MetadataFile = ".openspec.yaml"

// builtinSchemas are the workflow schemas OpenSpec ships. A project may add
// its own under openspec/schemas/<name>/.
var builtinSchemas = []string{"spec-driven"}

// metadata is what roadmap reads of .openspec.yaml.
type metadata struct {
	present bool
	err     string // why the file is not valid change metadata; "" when it is
	schema  string
	parsed  map[string]*yaml.Node
	yamlErr bool
	raw     string
}

var createdRe = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// readMetadata reads and checks a change's .openspec.yaml against OpenSpec's
// ChangeMetadataSchema (src/core/change-metadata/schema.ts).
func readMetadata(t *tree, changeDir string) (metadata, error) {
	src, err := t.readFile(path.Join(changeDir, MetadataFile))
	if errors.Is(err, fs.ErrNotExist) {
		return metadata{}, nil
	}
	if err != nil {
		return metadata{}, fmt.Errorf("read %s: %w", MetadataFile, err)
	}
	m := metadata{present: true, raw: string(src), parsed: map[string]*yaml.Node{}}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		m.yamlErr = true
		m.err = "the file is not valid YAML"
		return m, nil
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		m.err = "Invalid input: expected object, received " + yamlKind(&doc)
		return m, nil
	}
	mp := doc.Content[0]
	for i := 0; i+1 < len(mp.Content); i += 2 {
		m.parsed[mp.Content[i].Value] = mp.Content[i+1]
	}
	check := func(key, want string) string {
		n, ok := m.parsed[key]
		if !ok {
			return ""
		}
		if got := yamlKind(n); got != want {
			return fmt.Sprintf("%s: Invalid input: expected %s, received %s", key, want, got)
		}
		return ""
	}
	// Zod reports the first failing field in the schema's own order.
	if _, ok := m.parsed["schema"]; !ok {
		m.err = "schema: Invalid input: expected string, received undefined"
		return m, nil
	}
	if m.err = check("schema", "string"); m.err != "" {
		return m, nil
	}
	m.schema = m.parsed["schema"].Value
	if m.schema == "" {
		m.err = "schema: schema is required"
		return m, nil
	}
	if m.err = check("created", "string"); m.err != "" {
		return m, nil
	}
	if n, ok := m.parsed["created"]; ok && !createdRe.MatchString(n.Value) {
		m.err = "created: created must be YYYY-MM-DD format"
		return m, nil
	}
	for _, k := range []string{"skip_specs", "retire_capabilities"} {
		if m.err = check(k, "boolean"); m.err != "" {
			return m, nil
		}
	}
	if !knownSchema(t, m.schema) {
		m.err = fmt.Sprintf("schema: unknown schema '%s'", m.schema)
	}
	return m, nil
}

func knownSchema(t *tree, name string) bool {
	for _, s := range builtinSchemas {
		if s == name {
			return true
		}
	}
	st, err := t.stat(path.Join("openspec", "schemas", name))
	return err == nil && st.IsDir()
}

// yamlKind names a node's type as Zod names a JavaScript value's. The YAML
// reader OpenSpec uses reads timestamps as strings.
func yamlKind(n *yaml.Node) string {
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return "undefined"
		}
		n = n.Content[0]
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "object"
	case yaml.SequenceNode:
		return "array"
	case yaml.AliasNode:
		return yamlKind(n.Alias)
	}
	switch n.Tag {
	case "!!bool":
		return "boolean"
	case "!!int", "!!float":
		return "number"
	case "!!null":
		return "null"
	}
	return "string"
}

// flag is the state of a boolean marker (skip_specs, retire_capabilities) as
// OpenSpec's readBooleanMarker reads it.
func (m metadata) flag(key string) (declared bool, invalid string) {
	if !m.present {
		return false, ""
	}
	if m.yamlErr {
		mentioned := regexp.MustCompile(`(?m)^\s*(?:'` + key + `'|"` + key + `"|` + key + `)\s*:`).MatchString(m.raw)
		if mentioned {
			return false, "the file is not valid YAML"
		}
		return false, ""
	}
	n, ok := m.parsed[key]
	if m.err != "" && !strings.HasPrefix(m.err, "schema: unknown schema") {
		if ok && !(n.Kind == yaml.ScalarNode && n.Tag == "!!bool" && n.Value == "false") {
			return false, m.err
		}
		return false, ""
	}
	if !ok || !(n.Tag == "!!bool" && isYAMLTrue(n.Value)) {
		return false, ""
	}
	if m.err != "" {
		return false, m.err
	}
	return true, ""
}

func isYAMLTrue(v string) bool { return v == "true" || v == "True" || v == "TRUE" }
