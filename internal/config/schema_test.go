package config

import (
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/invopop/jsonschema"
	"gopkg.in/yaml.v3"
)

var update = flag.Bool("update", false, "rewrite "+schemaFile+" from Config (go generate ./internal/config)")

// TestSchemaCurrent regenerates the schema from Config and its comments and
// fails when the committed file differs: Parse validates against the
// committed file and editors complete from it, so a key added to Config
// without `go generate` would be refused as unknown.
func TestSchemaCurrent(t *testing.T) {
	got, err := generateSchema()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(schemaFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(string(schemaJSON), string(got)); diff != "" {
		t.Errorf("%s is stale: run go generate ./internal/config (-committed +generated):\n%s", schemaFile, diff)
	}
}

// generateSchema reflects Config with its yaml key names and its field
// comments as descriptions. Every object refuses keys it does not list
// (the reflector's default), and nothing is required: every key has a
// default.
func generateSchema() ([]byte, error) {
	r := &jsonschema.Reflector{
		FieldNameTag:               "yaml",
		RequiredFromJSONSchemaTags: true,
		ExpandedStruct:             true,
		Anonymous:                  true,
		Mapper:                     schemaFor,
	}
	if err := r.AddGoComments("github.com/roadmap-dev/roadmap/internal/config", "./"); err != nil {
		return nil, err
	}
	// A comment's line breaks are the source's width, not the editor's.
	for k, v := range r.CommentMap {
		r.CommentMap[k] = strings.Join(strings.Fields(v), " ")
	}
	s := r.Reflect(&Config{})
	s.Title = "roadmap configuration (" + DefaultPath + ")"
	s.Definitions[durationDef] = &jsonschema.Schema{
		Type:        "string",
		Pattern:     `^[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`,
		Description: "A Go duration with its unit: 90s, 15m, 2h, 1h30m.",
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// schemaFor gives the types the reflector cannot read: a duration is written
// as a string with a unit, and the policy table is internal/policy's to check.
// Each call returns a new schema, since the reflector writes the field's
// description into it.
func schemaFor(t reflect.Type) *jsonschema.Schema {
	switch t {
	case reflect.TypeFor[time.Duration]():
		return &jsonschema.Schema{Ref: "#/$defs/" + durationDef}
	case reflect.TypeFor[yaml.Node]():
		return &jsonschema.Schema{}
	}
	return nil
}
