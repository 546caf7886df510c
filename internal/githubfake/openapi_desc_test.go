package githubfake

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// descriptionFile is GitHub's REST description for api.github.com as the
// pinned @octokit/openapi package ships it (tools/npm/package.json). The
// form with $refs is read, not the dereferenced one: kin-openapi resolves
// the refs itself, and the file is a sixth of the size (13 MB, not 73 MB).
const descriptionFile = "tools/npm/node_modules/@octokit/openapi/generated/api.github.com.json"

var description struct {
	once sync.Once
	doc  *openapi3.T
	err  error
	skip string
}

// loadDescription returns the part of the pinned description the product
// uses: the operations in ops with every component they reach. It skips the
// test only when Node.js is absent (then scripts/npm-tools.sh cannot have
// installed the package); with Node present a missing file is a failure.
func loadDescription(t *testing.T, ops []specOp) *openapi3.T {
	t.Helper()
	description.once.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			description.err = err
			return
		}
		path := filepath.Join(root, descriptionFile)
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			if _, lerr := exec.LookPath("node"); lerr != nil {
				description.skip = "Node.js is absent, so GitHub's OpenAPI description (@octokit/openapi, tools/npm) is not installed: the fake is not checked against it"
				return
			}
			description.err = errors.New(path + " is missing: run scripts/npm-tools.sh (make unit runs it)")
			return
		}
		if err != nil {
			description.err = err
			return
		}
		description.doc, description.err = pruneAndLoad(data, ops)
	})
	if description.skip != "" {
		t.Skip(description.skip)
	}
	if description.err != nil {
		t.Fatalf("GitHub's OpenAPI description: %v", description.err)
	}
	return description.doc
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// pruneAndLoad keeps the description's info, the operations in ops and the
// components they reach, and loads that with kin-openapi. Loading all 800
// paths would cost seconds (many more under -race) for nothing.
func pruneAndLoad(data []byte, ops []specOp) (*openapi3.T, error) {
	var full map[string]any
	if err := json.Unmarshal(data, &full); err != nil {
		return nil, err
	}
	paths, _ := full["paths"].(map[string]any)
	keptPaths := map[string]any{}
	for _, op := range ops {
		item, _ := paths[op.path].(map[string]any)
		if item == nil || item[strings.ToLower(op.method)] == nil {
			return nil, errors.New("the description has no " + op.method + " " + op.path)
		}
		kept, _ := keptPaths[op.path].(map[string]any)
		if kept == nil {
			kept = map[string]any{}
			if p, ok := item["parameters"]; ok {
				kept["parameters"] = p
			}
			keptPaths[op.path] = kept
		}
		kept[strings.ToLower(op.method)] = item[strings.ToLower(op.method)]
	}
	// Follow every $ref from the kept operations to a fixed point.
	comps, _ := full["components"].(map[string]any)
	keptComps := map[string]map[string]any{}
	var queue []any
	queue = append(queue, keptPaths)
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				parts := strings.Split(strings.TrimPrefix(ref, "#/components/"), "/")
				if len(parts) == 2 {
					if keptComps[parts[0]] == nil {
						keptComps[parts[0]] = map[string]any{}
					}
					if _, seen := keptComps[parts[0]][parts[1]]; !seen {
						kind, _ := comps[parts[0]].(map[string]any)
						target := kind[parts[1]]
						if target == nil {
							return nil, errors.New("dangling $ref " + ref)
						}
						keptComps[parts[0]][parts[1]] = target
						queue = append(queue, target)
					}
				}
			}
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				queue = append(queue, v[k])
			}
		case []any:
			queue = append(queue, v...)
		}
	}
	// The shared error shapes are used for statuses an operation does not list.
	for _, name := range []string{"basic-error", "validation-error"} {
		if keptComps["schemas"] == nil {
			keptComps["schemas"] = map[string]any{}
		}
		keptComps["schemas"][name] = comps["schemas"].(map[string]any)[name]
	}
	small := map[string]any{
		"openapi":    full["openapi"],
		"info":       full["info"],
		"paths":      keptPaths,
		"components": keptComps,
	}
	out, err := json.Marshal(small)
	if err != nil {
		return nil, err
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(out)
	if err != nil {
		return nil, err
	}
	return doc, nil
}

// specOp is one operation of the description: method and templated path.
type specOp struct{ method, path string }
