package demotest

import (
	"context"
	"time"

	"github.com/roadmap-dev/roadmap/internal/demo"
)

// pythonIssueBody is the Python sample's issue as a person files it.
const pythonIssueBody = "The greet package greets by name but cannot bid farewell, and `hello()` needs a name even when there is nobody to name.\n" + `
## Acceptance

- goodbye("Ada") returns "Goodbye, Ada!".
- hello() with no name returns "Hello, world!"; hello("Ada") still returns "Hello, Ada!".
- The README documents goodbye and the default name.
`

// pythonItem is the Python sample: a greet package with hello and its
// pytest test under tests/, configured by pyproject.toml. Its checks run
// pytest through python3 (python3 -m pytest), which the default shell
// policy refuses as an interpreter: the configuration allows it for pytest
// alone, as roadmap init writes it for a Python repository.
var pythonItem = demo.Sample{FS: samples, Root: "testdata/python", Title: "Add greetings", Body: pythonIssueBody,
	Seed: "greet: hello and its test", Reads: "greet/__init__.py",
	Finish: "wrote the plan: goodbye, hello's default name, the README",
	Acceptance: `[{"criterion": 1, "group": 1, "reason": "group 1 tests and implements goodbye"},` +
		`{"criterion": 2, "group": 2, "reason": "group 2 gives hello a default name and keeps the named greeting"},` +
		`{"criterion": 3, "group": 3, "reason": "group 3 documents goodbye and the default name in the README"}]`,
	Checks: `checks:
  commands: ["python3 -m pytest -q"]
policy:
  programs:
    # The default table refuses interpreters; this row allows the tests alone.
    python3:
      allow: true
      args: ["-m pytest"]
`,
	CI: "python3 -m pytest passed"}

// NewPythonIssueWorld is demo.NewIssueWorld for a Python project: a greet
// package (greet/__init__.py, hello) with its pytest test in
// tests/test_greet.py and pytest configured in pyproject.toml; an issue
// asking for goodbye and a default name for hello, labelled roadmap:stage,
// with no plan. The replay model's planner writes the plan
// (testdata/python/repo/openspec/changes/add-greetings: three groups whose
// verify commands are python3 -m pytest node ids), and its implement agent
// writes the Python code and tests group by group. The checks run
// python3 -m pytest -q: the python3 on the Jobs' PATH must have pytest.
func NewPythonIssueWorld(ctx context.Context, dir string, latency time.Duration) (*demo.World, error) {
	return demo.NewSampleWorld(ctx, dir, latency, pythonItem, false, nil)
}

// PythonSample is the Python sample, for tests that lay it out otherwise
// than NewPythonIssueWorld (roadmap try's, as a user's checkout).
func PythonSample() demo.Sample { return pythonItem }
