package githubfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// field is what GitHub's request schema allows for one body field: the JSON
// types ("string", "integer", "boolean", "object", "array", "null") and, for
// strings, the allowed values.
type field struct {
	types []string
	enum  []string
}

func kinds(ts ...string) field { return field{types: ts} }

// bodySchema is the part of an operation's request schema the fake checks:
// each field's type and enum, and the required fields. Fields it does not
// name are accepted and ignored, as GitHub does.
type bodySchema struct {
	fields   map[string]field
	required []string
}

// parseBody decodes a request body as a JSON object and checks it against
// s, the way GitHub refuses a body its schema rejects: 400 for JSON that
// does not parse, 422 "Invalid request." naming the property otherwise.
func parseBody(c *call, s bodySchema, doc string) (map[string]json.RawMessage, reply, bool) {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(c.body, &in); err != nil {
		var v any
		if json.Unmarshal(c.body, &v) != nil {
			return nil, errorReply(http.StatusBadRequest, "Problems parsing JSON"), false
		}
		return nil, invalidRequest(doc, fmt.Sprintf("%s is not an object.", compact(c.body))), false
	}
	for _, k := range s.required {
		if _, ok := in[k]; !ok {
			return nil, invalidRequest(doc, fmt.Sprintf("%q wasn't supplied.", k)), false
		}
	}
	for k, raw := range in {
		f, ok := s.fields[k]
		if !ok {
			continue
		}
		t := rawType(raw)
		if !slices.Contains(f.types, t) && !(t == "integer" && slices.Contains(f.types, "number")) {
			return nil, invalidRequest(doc, fmt.Sprintf("For 'properties/%s', %s is not %s.", k, compact(raw), article(f.types))), false
		}
		if t == "string" && f.enum != nil {
			var v string
			json.Unmarshal(raw, &v)
			if !slices.Contains(f.enum, v) {
				return nil, invalidRequest(doc, fmt.Sprintf("For 'properties/%s', %s is not a member of [%s].", k, compact(raw), quoteAll(f.enum))), false
			}
		}
	}
	return in, reply{}, true
}

// invalidRequest is GitHub's answer to a body its schema rejects.
func invalidRequest(doc, why string) reply {
	return reply{status: http.StatusUnprocessableEntity, body: map[string]any{
		"message": "Invalid request.\n\n" + why, "documentation_url": doc,
	}}
}

func rawType(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "null":
		return "null"
	case s == "true" || s == "false":
		return "boolean"
	case strings.HasPrefix(s, `"`):
		return "string"
	case strings.HasPrefix(s, "{"):
		return "object"
	case strings.HasPrefix(s, "["):
		return "array"
	case strings.ContainsAny(s, ".eE"):
		return "number"
	}
	return "integer"
}

func compact(raw []byte) string {
	s := strings.TrimSpace(string(raw))
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return s
}

func article(types []string) string {
	var parts []string
	for _, t := range types {
		if t == "integer" || t == "object" || t == "array" {
			parts = append(parts, "an "+t)
		} else {
			parts = append(parts, "a "+t)
		}
	}
	return strings.Join(parts, " or ")
}

func quoteAll(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = `"` + v + `"`
	}
	return strings.Join(q, ", ")
}

// str decodes a field known to be a string or null ("" for null or absent).
func str(in map[string]json.RawMessage, k string) (string, bool) {
	raw, ok := in[k]
	if !ok {
		return "", false
	}
	var s *string
	json.Unmarshal(raw, &s)
	if s == nil {
		return "", true
	}
	return *s, true
}

// labelNames reads add-labels' items: names, or objects with a name.
func labelNames(raw []json.RawMessage) ([]string, bool) {
	var out []string
	for _, r := range raw {
		switch rawType(r) {
		case "string":
			var s string
			json.Unmarshal(r, &s)
			out = append(out, s)
		case "object":
			var o map[string]json.RawMessage
			json.Unmarshal(r, &o)
			if rawType(o["name"]) != "string" {
				return nil, false
			}
			var s string
			json.Unmarshal(o["name"], &s)
			out = append(out, s)
		default:
			return nil, false
		}
	}
	return out, true
}
