package cli

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// verbNamed is the verb of the table called name.
func verbNamed(t *testing.T, name string) verb {
	t.Helper()
	for _, v := range verbs() {
		if v.name == name {
			return v
		}
	}
	t.Fatalf("no verb %q", name)
	return verb{}
}

// TestActionFlagsAreVerbFlags: each composite action runs its verb with
// flags the verb defines, and every input reaches the run step. A flag
// renamed on one side, or an input the script drops, fails here rather than
// as a usage error in someone's workflow run. The wake action's refresh
// step runs `roadmap dashboard refresh`; an input reaches the action when
// it reaches any of its steps, or a step's if: (refresh-dashboard).
func TestActionFlagsAreVerbFlags(t *testing.T) {
	used := map[string]map[string]bool{} // action → inputs that reach a step
	declared := map[string]map[string]string{}
	for _, tt := range []struct {
		action, step, verb string
		minFlags           int
	}{
		{"stage", "run", "stage", 3}, {"implement", "run", "implement", 3}, {"checks", "run", "checks", 3},
		{"report", "run", "report", 3}, {"wake", "run", "wake", 3}, {"wake", "refresh", "dashboard refresh", 2},
		{"eval", "gates", "eval gates", 3}, {"eval", "stage", "eval stage", 5}, {"eval", "implement", "eval implement", 5},
		{"eval-dashboard", "run", "dashboard eval", 5},
	} {
		verb := tt.verb
		if used[tt.action] == nil {
			used[tt.action] = map[string]bool{}
		}
		used := used[tt.action]
		t.Run(tt.action+"/"+tt.step, func(t *testing.T) {
			fs := verbFlags(verbNamed(t, verb))
			if fs == nil || !fs.HasAvailableFlags() {
				t.Fatalf("roadmap %s defines no flags", verb)
			}
			script, envMap, inputs := actionStep(t, filepath.Join("..", "..", "actions", tt.action, "action.yml"), tt.step)
			declared[tt.action] = inputs
			dir := t.TempDir()
			argsFile := filepath.Join(dir, "args")
			stub := filepath.Join(dir, "roadmap")
			if err := os.WriteFile(stub, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > '"+argsFile+"'\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			vars := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "RUNNER_TEMP=" + dir,
				"GITHUB_OUTPUT=" + filepath.Join(dir, "output")}
			for k, expr := range envMap {
				switch {
				case k == "ROADMAP_BIN":
					vars = append(vars, k+"="+stub)
				case strings.HasPrefix(expr, "${{ inputs.") && strings.HasSuffix(expr, " }}"):
					name := strings.TrimSuffix(strings.TrimPrefix(expr, "${{ inputs."), " }}")
					if _, ok := inputs[name]; !ok {
						t.Errorf("the run step's %s reads inputs.%s, which action.yml does not declare", k, name)
					}
					used[name] = true
					// Every input set, so the flags passed only when set are passed too.
					vars = append(vars, k+"=1")
				}
			}
			// The pin (roadmap-ref, roadmap-repository) is the install
			// step's: which roadmap to download or build.
			_, installEnv, _ := actionStep(t, filepath.Join("..", "..", "actions", tt.action, "action.yml"), "install")
			for _, name := range []string{"roadmap-ref", "roadmap-repository"} {
				if _, ok := inputs[name]; ok && strings.Contains(strings.Join(slices.Collect(maps.Values(installEnv)), "\n"), "inputs."+name+" ") {
					used[name] = true
				}
			}
			cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
			cmd.Dir = dir
			cmd.Env = vars
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("the run step: %v\n%s", err, out)
			}
			args, err := os.ReadFile(argsFile)
			if err != nil {
				t.Fatalf("the run step did not run roadmap: %v", err)
			}
			lines := strings.Split(strings.TrimSpace(string(args)), "\n")
			words := len(strings.Fields(verb))
			if len(lines) < words || strings.Join(lines[:words], " ") != verb {
				t.Fatalf("the %s step ran roadmap %q, want the verb %s first", tt.step, lines, verb)
			}
			flags := 0
			for _, a := range lines[words:] {
				if !strings.HasPrefix(a, "-") {
					continue
				}
				flags++
				name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
				switch f := fs.Lookup(name); {
				case f == nil:
					t.Errorf("the action passes %s, which roadmap %s does not define", a, verb)
				case f.Deprecated != "":
					// An old name, kept working for this action (flagAliases).
					t.Logf("the action passes %s, an old name of roadmap %s's flag (%s)", a, verb, f.Deprecated)
				}
			}
			if flags < tt.minFlags {
				t.Errorf("the action passed %d flags: %q", flags, lines)
			}
		})
	}
	for action, inputs := range declared {
		data, err := os.ReadFile(filepath.Join("..", "..", "actions", action, "action.yml"))
		if err != nil {
			t.Fatal(err)
		}
		for name := range inputs {
			if !used[action][name] && !ifReads(string(data), name) {
				t.Errorf("actions/%s: input %s reaches nothing in its steps", action, name)
			}
		}
	}
}

// ifReads: a step's if: of the action text reads inputs.name.
func ifReads(action, name string) bool {
	for line := range strings.SplitSeq(action, "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "if:") && strings.Contains(l, "inputs."+name+" ") {
			return true
		}
	}
	return false
}
