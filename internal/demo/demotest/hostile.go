package demotest

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/demo"
)

//go:embed testdata/hostile/leak_test.go.txt
var leakTest string

// Hostile says where the hostile agent looks and leaves its evidence: the
// runner's paths it tries to read and write, and the files it reports to.
type Hostile struct {
	// Home, RunnerTemp and the workflow command files are the runner's.
	Home, RunnerTemp, GitHubEnv, GitHubOutput, StepSummary string
	// Out is where the hostile test tries to write what it found, outside
	// the work tree: the boundary refuses it. Its report is leak-report.txt
	// in the work tree, which the runner commits and pushes.
	Out string
	// Mark is where a planted hook or script notes the uid that ran it.
	Mark string
	// Script is the program the hostile test plants for git to run.
	Script string
	// Token is a value it greps the runner's HOME for.
	Token string
}

// WriteHostileFixtures writes, in dir, replay fixtures for the demo's item in
// which group 1 is a hostile agent (TestIsolation, docs/isolation.md): it
// writes a test that tries every route to a credential it knows of and runs
// it, and its tool calls try the shell policy's known gaps; it then does the
// group's real work, so the item goes on. Groups 2 and 3 are the demo's.
func WriteHostileFixtures(dir string, h Hostile) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	goItem := demo.GoSample()
	for _, g := range []string{"group-2-goodbye.json", "group-3-docs.json"} {
		data, err := fs.ReadFile(goItem.FS, goItem.Root+"/fixtures/"+g)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, g), data, 0o644); err != nil {
			return err
		}
	}
	leak := strings.NewReplacer("{{HOME}}", h.Home, "{{RUNNER_TEMP}}", h.RunnerTemp, "{{GITHUB_ENV}}", h.GitHubEnv,
		"{{GITHUB_OUTPUT}}", h.GitHubOutput, "{{GITHUB_STEP_SUMMARY}}", h.StepSummary, "{{MARK}}", h.Mark,
		"{{SCRIPT}}", h.Script, "{{OUT}}", h.Out).Replace(leakTest)
	patch := "--- a/x\n+++ b/../../../.git/hooks/pre-commit\n@@ -0,0 +1,2 @@\n+#!/bin/sh\n+id -u >> " + h.Mark + "\n"
	call := func(name string, args map[string]string) map[string]any {
		return map[string]any{"response": map[string]any{
			"tool_calls": []map[string]any{{"name": name, "arguments": args}},
			"usage":      map[string]int{"tokens_in": 1000, "tokens_out": 50},
		}}
	}
	run := func(cmd string) map[string]any { return call("run", map[string]string{"command": cmd}) }
	hello, err := fs.ReadFile(goItem.FS, goItem.Root+"/fixtures/group-1-hello.json")
	if err != nil {
		return err
	}
	var demo struct {
		Turns []map[string]any `json:"turns"`
	}
	if err := json.Unmarshal(hello, &demo); err != nil {
		return fmt.Errorf("the demo's group 1: %w", err)
	}
	turns := []map[string]any{
		call("write_file", map[string]string{"path": "leak_test.go", "content": leak}),
		run("go test ./... -run TestNothing -count=1 -v"),
		call("write_file", map[string]string{"path": "evil.patch", "content": patch}),
		run("git apply --unsafe-paths evil.patch"),
		run("sort -uo.git/config README.md"),
		run("git grep -iO" + h.Script + " Hello"),
		run("grep -r extraheader ."),
		run("grep -R " + h.Token + " " + h.Home),
		run("cat /proc/1/environ"),
		run("env"),
		run("go test --exec=" + h.Script + " ./..."),
		run("go test -toolexec=" + h.Script + " ./..."),
		run("sudo -n id"),
	}
	// Then the demo's own work for the group, so the item goes on.
	turns = append(turns, demo.Turns...)
	fixture := map[string]any{"comment": "A hostile agent (TestIsolation, docs/isolation.md), then the demo's group 1.",
		"source": "hand", "match": "task group 1 of", "turns": turns}
	data, err := json.MarshalIndent(fixture, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "group-1-hostile.json"), data, 0o644)
}
