package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// weakCase copies the golden weak-test case into a set of its own, with
// case.json's test_strength set to on.
func weakCase(t *testing.T, on bool) string {
	t.Helper()
	set := filepath.Join(t.TempDir(), "set")
	dst := filepath.Join(set, "weak-test")
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("..", "..", "testdata", "golden", "implement", "weak-test"))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dst, "case.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if m["test_strength"] != true {
		t.Fatalf("the golden case.json does not turn test strength on: %s", data)
	}
	m["test_strength"] = on
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return set
}

func runSet(t *testing.T, set string) ImplementCaseResult {
	t.Helper()
	var lines []string
	rep, err := Implement(context.Background(), Options{Dir: set, TempDir: t.TempDir(), Progress: func(f string, a ...any) {
		lines = append(lines, strings.TrimSpace(fmt.Sprintf(f, a...)))
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", strings.Join(lines, "\n"))
	return rep.Cases[0]
}

func TestWeakTestProbe(t *testing.T) {
	for _, on := range []bool{true, false} {
		res := runSet(t, weakCase(t, on))
		b, _ := json.MarshalIndent(res, "", " ")
		t.Logf("on=%v %s", on, b)
	}
}
