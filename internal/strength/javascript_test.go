package strength

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/policy"
	"github.com/roadmap-dev/roadmap/internal/sandbox/sandboxtest"
)

// The JavaScript sample: a CommonJS package with add, and a change that
// adds clamp and unused and exports them.
const (
	jsBase = "function add(a, b) {\n  return a + b;\n}\n\nmodule.exports = { add };\n"
	// The change's lines of code, by the StrykerJS mutator chosen for each:
	//   function clamp / function unused   BlockStatement (unused's not covered)
	//   if (v < lo), if (v > hi)           ConditionalExpression
	//   return lo, return hi, return v     nothing to mutate (3 skipped)
	//   return a - b                       ArithmeticOperator (not covered)
	//   module.exports = { … }             ObjectLiteral
	jsHead = `function add(a, b) {
  return a + b;
}

function clamp(v, lo, hi) {
  if (v < lo) {
    return lo;
  }
  if (v > hi) {
    return hi;
  }
  return v;
}

function unused(a, b) {
  return a - b;
}

module.exports = { add, clamp, unused };
`
	jsPackage = `{"name": "calc", "private": true, "scripts": {"test": "node --test"}}` + "\n"
	jsAddTest = "const test = require('node:test');\nconst assert = require('node:assert');\nconst { add } = require('./calc');\n\n" +
		"test('add', () => {\n  assert.strictEqual(add(2, 3), 5);\n});\n"
	// jsWeakTest runs clamp and checks nothing but that calc.js on disk is
	// the change: a mutant the tests could read would be killed.
	jsWeakTest = `const test = require('node:test');
const fs = require('node:fs');
const { clamp } = require('./calc');

test('clamp', () => {
  clamp(5, 0, 10);
});

test('the source on disk is the change', () => {
  const src = fs.readFileSync(require.resolve('./calc'), 'utf8');
  if (src.includes('(true)') || src.includes('{}')) {
    throw new Error('a mutant is on disk');
  }
});
`
	// jsStrongTest pins every path of clamp. It also fails if it can read a
	// mutant on disk or roadmap's state in its environment.
	jsStrongTest = `const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const { clamp } = require('./calc');

test('clamp', () => {
  assert.strictEqual(clamp(5, 1, 10), 5);
  assert.strictEqual(clamp(-1, 1, 10), 1);
  assert.strictEqual(clamp(11, 1, 10), 10);
});

test('the mutants are out of sight', () => {
  const src = fs.readFileSync(require.resolve('./calc'), 'utf8');
  assert.ok(!src.includes('(true)') && !src.includes('{}'), 'a mutant is on disk');
  assert.deepStrictEqual(Object.keys(process.env).filter((k) => k.startsWith('ROADMAP') || k === 'NODE_OPTIONS'), []);
});
`
	// jsVMTest loads calc.js itself, as jest's module registry does (read
	// and compiled by the test runner, not by node's loaders): no mutant can
	// reach it.
	jsVMTest = `const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');

function load() {
  const file = path.join(__dirname, 'calc.js');
  const module = { exports: {} };
  const fn = vm.compileFunction(fs.readFileSync(file, 'utf8'), ['exports', 'require', 'module', '__filename', '__dirname'], { filename: file });
  fn(module.exports, require, module, file, __dirname);
  return module.exports;
}

test('clamp', () => {
  const { clamp } = load();
  assert.strictEqual(clamp(5, 1, 10), 5);
  assert.strictEqual(clamp(-1, 1, 10), 1);
  assert.strictEqual(clamp(11, 1, 10), 10);
});
`
	// jsBabelTrap is a Babel configuration that Babel would run if the
	// mutator looked for one in the tree.
	jsBabelTrap = "require('fs').writeFileSync(__dirname + '/babel-ran', 'the mutator ran the project\\'s babel.config.js');\nmodule.exports = {};\n"
)

// testInstrumenter is the instrumenter scripts/npm-tools.sh installs into
// tools/npm (make test runs it first).
func testInstrumenter(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("no node on the PATH")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("no npm on the PATH")
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "tools", "npm", "node_modules", "@stryker-mutator", "instrumenter"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "package.json")); err != nil {
		t.Skip("StrykerJS's instrumenter is not installed: run scripts/npm-tools.sh (make test runs it)")
	}
	return dir
}

// jsSample is a CommonJS package with jsBase committed and files written
// over it, its tests run by `npm test` (node --test) under the default
// policy.
func jsSample(t *testing.T, files map[string]string) (*sample, Options) {
	t.Helper()
	instr := testInstrumenter(t)
	s := &sample{t: t, dir: t.TempDir()}
	s.environ = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "GOCACHE=" + sandboxtest.RunnerGoCache(t)}
	s.git("init", "--quiet", "--initial-branch=main")
	s.write(map[string]string{"calc.js": jsBase, "package.json": jsPackage, "add.test.js": jsAddTest, "babel.config.js": jsBabelTrap})
	s.git("add", "--all")
	s.git("commit", "--quiet", "-m", "base")
	s.base = s.git("rev-parse", "HEAD")
	s.write(files)
	b := sandboxtest.None(t, s.dir, s.environ)
	o := Options{Dir: s.dir, Base: s.base, Runner: checks.PolicyRunner(policy.Default(), b), Split: policy.Split,
		GitEnv: s.environ, Instrumenter: instr, LookPath: exec.LookPath}
	return s, o
}

// TestStrengthJavaScript: one JavaScript change, measured with a weak test
// (it runs clamp and checks nothing: below the floor, the survivors go back
// as diffs) and a strong one (every covered mutant killed). The mutants are
// StrykerJS's, one per changed covered line, served to node through the
// hook; the tree is as it was after each.
func TestStrengthJavaScript(t *testing.T) {
	t.Run("weak", func(t *testing.T) {
		t.Parallel()
		s, o := jsSample(t, map[string]string{"calc.js": jsHead, "clamp.test.js": jsWeakTest})
		before := s.snapshot()
		rep, err := Run(context.Background(), o, DefaultFloor)
		if err != nil {
			t.Fatal(err)
		}
		// clamp(5, 0, 10) runs clamp's body, both ifs and `return v`; the
		// empty exports kill; unused never runs.
		want := counts{Generated: 6, Killed: 1, Survived: 3, NotCovered: 2, Skipped: 3, Score: 0.25}
		if diff := cmp.Diff(want, countsOf(rep)); diff != "" {
			t.Errorf("counts (-want +got):\n%s\n%s", diff, rep.Summary())
		}
		if !strings.Contains(rep.Reason, "below the floor") {
			t.Errorf("reason %q does not say the score is below the floor", rep.Reason)
		}
		if !slices.Equal(rep.Tests, []string{DefaultJavaScriptTest}) {
			t.Errorf("tests %q, want the default %q", rep.Tests, DefaultJavaScriptTest)
		}
		task := rep.RepairTask(0)
		for _, want := range []string{"add a test that fails on this mutant", "-  if (v < lo) {\n+  if (true) {\n", "(ConditionalExpression)", "(BlockStatement)"} {
			if !strings.Contains(task, want) {
				t.Errorf("repair task lacks %q:\n%s", want, task)
			}
		}
		if len(rep.Unsupported) != 0 || len(rep.NotMeasured) != 0 {
			t.Errorf("JavaScript files said unsupported or not measured: %v %v", rep.Unsupported, rep.NotMeasured)
		}
		if diff := cmp.Diff(before, s.snapshot()); diff != "" {
			t.Errorf("the work tree is not as it was (-before +after):\n%s", diff)
		}
	})

	t.Run("strong", func(t *testing.T) {
		t.Parallel()
		s, o := jsSample(t, map[string]string{"calc.js": jsHead, "clamp.test.js": jsStrongTest})
		o.Tests = []string{"npm test"}
		before := s.snapshot()
		rep, err := Run(context.Background(), o, DefaultFloor)
		if err != nil {
			t.Fatal(err)
		}
		want := counts{Generated: 6, Killed: 4, NotCovered: 2, Skipped: 3, Score: 1, Passed: true}
		if diff := cmp.Diff(want, countsOf(rep)); diff != "" {
			t.Errorf("counts (-want +got):\n%s\n%s", diff, rep.Summary())
		}
		for _, m := range rep.Mutants {
			if m.Status == Killed && m.Test != "npm test" {
				t.Errorf("%s:%d killed by %q", m.File, m.Line, m.Test)
			}
		}
		if diff := cmp.Diff(before, s.snapshot()); diff != "" {
			t.Errorf("the work tree is not as it was (-before +after):\n%s", diff)
		}
	})

	t.Run("an ES module", func(t *testing.T) {
		t.Parallel()
		esm := strings.Replace(jsHead, "module.exports = { add, clamp, unused };", "export { add, clamp, unused };", 1)
		test := strings.NewReplacer("const test = require('node:test');", "import test from 'node:test';",
			"const assert = require('node:assert');", "import assert from 'node:assert';",
			"const fs = require('node:fs');", "import fs from 'node:fs';",
			"const { clamp } = require('./calc');", "import { clamp } from './calc.js';",
			"require.resolve('./calc')", "new URL('./calc.js', import.meta.url)").Replace(jsStrongTest)
		s, o := jsSample(t, map[string]string{"calc.js": esm, "clamp.test.js": test, "add.test.js": "// gone\n",
			"package.json": strings.Replace(jsPackage, `"private": true`, `"private": true, "type": "module"`, 1)})
		before := s.snapshot()
		rep, err := Run(context.Background(), o, DefaultFloor)
		if err != nil {
			t.Fatal(err)
		}
		// The export list has nothing to mutate.
		want := counts{Generated: 5, Killed: 3, NotCovered: 2, Skipped: 4, Score: 1, Passed: true}
		if diff := cmp.Diff(want, countsOf(rep)); diff != "" {
			t.Errorf("counts (-want +got):\n%s\n%s", diff, rep.Summary())
		}
		if diff := cmp.Diff(before, s.snapshot()); diff != "" {
			t.Errorf("the work tree is not as it was (-before +after):\n%s", diff)
		}
	})

	t.Run("a module loaded around node's loaders", func(t *testing.T) {
		t.Parallel()
		_, o := jsSample(t, map[string]string{"calc.js": jsHead, "clamp.test.js": jsVMTest, "add.test.js": "// gone\n"})
		rep, err := Run(context.Background(), o, DefaultFloor)
		if err != nil {
			t.Fatal(err)
		}
		// Covered (node's coverage sees the compiled function) but never
		// served: no verdict, no score.
		want := counts{Generated: 6, NotCovered: 2, Errors: 4, Skipped: 3}
		if diff := cmp.Diff(want, countsOf(rep)); diff != "" {
			t.Errorf("counts (-want +got):\n%s\n%s", diff, rep.Summary())
		}
		for _, m := range rep.Mutants {
			if m.Status == Error && !strings.Contains(m.Note, "loaded no mutant") {
				t.Errorf("%s:%d: note %q", m.File, m.Line, m.Note)
			}
		}
		if !strings.Contains(rep.Reason, "0 mutants ran") {
			t.Errorf("reason %q", rep.Reason)
		}
	})

	t.Run("without the instrumenter, and TypeScript", func(t *testing.T) {
		t.Parallel()
		_, o := jsSample(t, map[string]string{"calc.js": jsHead, "clamp.test.js": jsStrongTest, "src/app.ts": "export const x: number = 1;\n"})
		o.Instrumenter = filepath.Join(t.TempDir(), "none")
		rep, err := Run(context.Background(), o, DefaultFloor)
		if err != nil {
			t.Fatal(err)
		}
		want := []NotMeasured{
			{Language: "JavaScript", Files: []string{"calc.js"}, Why: "StrykerJS instrumenter not installed"},
			{Language: "TypeScript", Files: []string{"src/app.ts"}, Why: whyTypeScript},
		}
		if diff := cmp.Diff(want, rep.NotMeasured); diff != "" {
			t.Errorf("not measured (-want +got):\n%s", diff)
		}
		if rep.Generated != 0 || rep.Passed || rep.Score != 0 || len(rep.Unsupported) != 0 {
			t.Errorf("without the instrumenter: %+v", rep)
		}
		if s := rep.Summary(); !strings.Contains(s, "not measured, no score: StrykerJS instrumenter not installed (JavaScript: calc.js)") {
			t.Errorf("summary:\n%s", s)
		}
	})
}

// TestJSHookReachesChildren: the hook serves the mutant to the process it
// starts in and to every child it starts through child_process, the
// synchronous ways too, with the state out of each one's process.env, and
// it leaves a process with no state alone.
func TestJSHookReachesChildren(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on the PATH")
	}
	dir := t.TempDir()
	orig := []byte("module.exports = { v: 1 + 1 };\n")
	main := `const cp = require('node:child_process');
const child = [process.execPath, ['-e', 'console.log(require("./m").v, Object.keys(process.env).filter((k) => /ROADMAP|NODE_OPTIONS/.test(k)).length)']];
const out = [
  require('./m').v + ' ' + Object.keys(process.env).filter((k) => /ROADMAP|NODE_OPTIONS/.test(k)).length,
  cp.execFileSync(...child, { encoding: 'utf8' }).trim(),
  cp.execFileSync(...child, { encoding: 'utf8', env: { PATH: process.env.PATH } }).trim(),
  cp.spawnSync(...child, { encoding: 'utf8' }).stdout.trim(),
  cp.execSync(JSON.stringify(process.execPath) + ' -e \'console.log(require("./m").v)\'', { encoding: 'utf8' }).trim(),
];
cp.execFile(...child, (err, stdout) => {
  out.push(stdout.trim());
  console.log(out.join('|'));
});
`
	for name, body := range map[string]string{".h/hook.cjs": jsHookCJS, ".h/hook.mjs": jsHookMJS, "m.js": string(orig), "main.js": main} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, ".h", jsSeenDir), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(env ...string) string {
		t.Helper()
		cmd := exec.Command(node, "main.js")
		cmd.Dir = dir
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	mutant := bytes.Replace(orig, []byte("1 + 1"), []byte("1 - 1"), 1)
	h := &jsHideout{hideout: &hideout{name: ".h"}}
	st, err := json.Marshal(jsMutation("m.js", orig, mutant))
	if err != nil {
		t.Fatal(err)
	}
	h.state = st
	if got, want := run(h.env()...), "0 0|0 0|0 0|0 0|0|0 0"; got != want {
		t.Errorf("with the mutant: %q, want %q", got, want)
	}
	seen, err := os.ReadDir(filepath.Join(dir, ".h", jsSeenDir))
	if err != nil || len(seen) != 6 {
		t.Errorf("seen/ holds %d pids (%v), want 6: one per process that loaded m.js", len(seen), err)
	}
	if got, want := run("NODE_OPTIONS=--require ./.h/hook.cjs"), "2 1|2 1|2 0|2 1|2|2 1"; got != want {
		t.Errorf("the hook without state: %q, want %q (the original, NODE_OPTIONS as it was)", got, want)
	}
}

// TestStrykerPinnedForTests: the instrumenter the tests run
// (tools/npm/package.json and its lockfile) is the release init's setup
// installs (StrykerVersion).
func TestStrykerPinnedForTests(t *testing.T) {
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	for file, into := range map[string]any{"package.json": &pkg, "package-lock.json": &lock} {
		b, err := os.ReadFile(filepath.Join("..", "..", "tools", "npm", file))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, into); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	const name = "@stryker-mutator/instrumenter"
	if got := pkg.Dependencies[name]; got != StrykerVersion {
		t.Errorf("tools/npm/package.json pins %s %q, want %s", name, got, StrykerVersion)
	}
	if got := lock.Packages["node_modules/"+name].Version; got != StrykerVersion {
		t.Errorf("tools/npm/package-lock.json locks %s %q, want %s", name, got, StrykerVersion)
	}
}
