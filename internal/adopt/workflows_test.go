package adopt

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/roadmap-dev/roadmap/internal/config"
)

// The workflows a user runs roadmap with: the reusable workflows, the
// example callers, and what init writes. Each job that runs a roadmap verb
// (through an action, or by calling a reusable workflow) must declare
// exactly the permissions its verb's calls need (permissions.go).

const root = "../.."

type workflow struct {
	On   yaml.Node       `yaml:"on"`
	Jobs map[string]*job `yaml:"jobs"`
}

type job struct {
	Uses        string            `yaml:"uses"`
	Permissions map[string]string `yaml:"permissions"`
	Concurrency yaml.Node         `yaml:"concurrency"`
	Outputs     map[string]string `yaml:"outputs"`
	Steps       []step            `yaml:"steps"`
}

type step struct {
	ID   string `yaml:"id"`
	Uses string `yaml:"uses"`
}

type action struct {
	Outputs map[string]yaml.Node `yaml:"outputs"`
}

// roadmapAction matches a step's use of one of roadmap's verb actions.
var roadmapAction = regexp.MustCompile(`^(?:roadmap-dev/roadmap/|\./)actions/(stage|implement|report|checks)(?:@|$)`)

// reusable matches a job's call of one of roadmap's reusable workflows.
var reusable = regexp.MustCompile(`^(?:roadmap-dev/roadmap/|\./)\.github/workflows/([a-z-]+\.yml)(?:@|$)`)

// workflowFiles are the files checked, by name: the repository's workflows
// and examples, and the files init writes (as init/<path>).
func workflowFiles(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, pat := range []string{".github/workflows/*.yml", "docs/examples/*.yml"} {
		names, err := filepath.Glob(filepath.Join(root, pat))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, n)
			out[filepath.ToSlash(rel)] = b
		}
	}
	for _, f := range files("v1", "main") {
		if strings.HasSuffix(f.path, ".yml") && strings.HasPrefix(f.path, ".github/workflows/") {
			out["init/"+f.path] = []byte(f.text)
		}
	}
	if len(out) < 5 {
		t.Fatalf("found only %d workflow files under %s", len(out), root)
	}
	return out
}

func parseWorkflows(t *testing.T) map[string]*workflow {
	t.Helper()
	out := map[string]*workflow{}
	for name, b := range workflowFiles(t) {
		var w workflow
		if err := yaml.Unmarshal(b, &w); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = &w
	}
	return out
}

// jobVerbs are the verbs a job's steps run.
func jobVerbs(j *job) []string {
	var out []string
	for _, s := range j.Steps {
		if m := roadmapAction.FindStringSubmatch(s.Uses); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// need is what a job must declare: the union of its verbs' permissions, or
// of the called reusable workflow's jobs'.
func need(t *testing.T, all map[string]*workflow, j *job) (map[string]string, bool) {
	t.Helper()
	out := map[string]string{}
	merge := func(m map[string]string) {
		for k, v := range m {
			if out[k] != "write" {
				out[k] = v
			}
		}
	}
	if m := reusable.FindStringSubmatch(j.Uses); m != nil {
		called, ok := all[".github/workflows/"+m[1]]
		if !ok {
			t.Errorf("a job calls %s, which is not in .github/workflows", j.Uses)
			return nil, false
		}
		for _, cj := range called.Jobs {
			n, _ := need(t, all, cj)
			merge(n)
		}
		return out, true
	}
	verbs := jobVerbs(j)
	for _, v := range verbs {
		merge(Permissions(v))
	}
	return out, len(verbs) > 0
}

func TestWorkflowPermissions(t *testing.T) {
	all := parseWorkflows(t)
	checked := 0
	for name, w := range all {
		for id, j := range w.Jobs {
			want, runs := need(t, all, j)
			if !runs {
				continue
			}
			checked++
			if diff := cmp.Diff(want, j.Permissions); diff != "" {
				t.Errorf("%s: job %s: permissions (-what its verbs call +declared):\n%s", name, id, diff)
			}
		}
	}
	// roadmap.yml's two jobs, roadmap-stage.yml's, roadmap-checks.yml's, and
	// the callers' jobs that run roadmap.
	if checked < 10 {
		t.Errorf("checked %d jobs, want every job that runs roadmap (at least 10)", checked)
	}
}

// TestPermissionsTable: each verb needs what its documented job does.
func TestPermissionsTable(t *testing.T) {
	for _, tt := range []struct {
		verb string
		want map[string]string
	}{
		{"report", map[string]string{"actions": "write", "checks": "read", "contents": "read", "issues": "write", "pull-requests": "read", "statuses": "write"}},
		{"checks", map[string]string{"contents": "read", "statuses": "write"}},
		{"stage", map[string]string{"contents": "write", "issues": "write", "pull-requests": "write", "models": "read"}},
		{"implement", map[string]string{"actions": "write", "checks": "read", "contents": "write", "issues": "write", "models": "read", "pull-requests": "write", "statuses": "read"}},
	} {
		if diff := cmp.Diff(tt.want, Permissions(tt.verb)); diff != "" {
			t.Errorf("Permissions(%s) (-want +got):\n%s", tt.verb, diff)
		}
	}
	if Permissions("nope") != nil || Allows("report", "POST /repos/{owner}/{repo}/pulls") || !Allows("report", "POST /repos/{owner}/{repo}/statuses/{sha}") {
		t.Error("Permissions or Allows answer for calls not in the table")
	}
}

// outputsRead matches an expression's read of an output.
var outputsRead = regexp.MustCompile(`\b(needs|steps|jobs)\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)`)

// TestWorkflowOutputsDeclared: every needs.J.outputs.X, steps.S.outputs.X
// (of roadmap's actions) and jobs.J.outputs.X a workflow reads is declared.
func TestWorkflowOutputsDeclared(t *testing.T) {
	actionOutputs := map[string]map[string]bool{}
	for _, verb := range Verbs() {
		b, err := os.ReadFile(filepath.Join(root, "actions", verb, "action.yml"))
		if err != nil {
			t.Fatal(err)
		}
		var a action
		if err := yaml.Unmarshal(b, &a); err != nil {
			t.Fatalf("actions/%s/action.yml: %v", verb, err)
		}
		actionOutputs[verb] = map[string]bool{}
		for k := range a.Outputs {
			actionOutputs[verb][k] = true
		}
	}
	files := workflowFiles(t)
	reads := 0
	for name, text := range files {
		var w workflow
		if err := yaml.Unmarshal(text, &w); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for id, j := range w.Jobs {
			steps := map[string]string{} // step id → verb
			for _, s := range j.Steps {
				if m := roadmapAction.FindStringSubmatch(s.Uses); m != nil && s.ID != "" {
					steps[s.ID] = m[1]
				}
			}
			for _, m := range outputsRead.FindAllStringSubmatch(jobText(t, text, id), -1) {
				kind, from, out := m[1], m[2], m[3]
				switch kind {
				case "needs":
					reads++
					if up, ok := w.Jobs[from]; !ok || up.Outputs[out] == "" {
						t.Errorf("%s: job %s reads needs.%s.outputs.%s, which job %s does not declare", name, id, from, out, from)
					}
				case "steps":
					verb, ok := steps[from]
					if !ok {
						continue
					}
					reads++
					if !actionOutputs[verb][out] {
						t.Errorf("%s: job %s reads steps.%s.outputs.%s, which actions/%s/action.yml does not declare", name, id, from, out, verb)
					}
				}
			}
		}
		// The workflow_call outputs read jobs.J.outputs.X.
		for _, m := range outputsRead.FindAllStringSubmatch(string(text), -1) {
			if m[1] != "jobs" {
				continue
			}
			reads++
			if j, ok := w.Jobs[m[2]]; !ok || j.Outputs[m[3]] == "" {
				t.Errorf("%s: reads jobs.%s.outputs.%s, which job %s does not declare", name, m[2], m[3], m[2])
			}
		}
	}
	if reads < 20 {
		t.Errorf("found %d output reads, want the workflows' (at least 20)", reads)
	}
}

// jobText is the YAML text of one job, re-encoded, for the regexp.
func jobText(t *testing.T, text []byte, id string) string {
	t.Helper()
	var raw struct {
		Jobs map[string]any `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(text, &raw); err != nil {
		t.Fatal(err)
	}
	b, err := yaml.Marshal(raw.Jobs[id])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestWorkflowLabels: the label names the workflows match on are the
// configuration's (config.Default().Labels), the one place they live.
func TestWorkflowLabels(t *testing.T) {
	l := config.Default().Labels
	known := map[string]bool{l.Stage: true, l.Implement: true, l.NeedsInput: true, l.Stopped: true}
	lit := regexp.MustCompile(`'(roadmap:[a-z-]+)'`)
	seen := map[string]bool{}
	for name, text := range workflowFiles(t) {
		for _, m := range lit.FindAllStringSubmatch(string(text), -1) {
			seen[m[1]] = true
			if !known[m[1]] {
				t.Errorf("%s matches the label %q, which is not one of the configuration's labels %v", name, m[1], l)
			}
		}
	}
	var got []string
	for k := range seen {
		got = append(got, k)
	}
	sort.Strings(got)
	if len(got) < 3 {
		t.Errorf("labels matched by the workflows = %v, want stage, implement and needs-input", got)
	}
}

// TestReportNotReplacedByConcurrency: GitHub keeps one pending run per
// concurrency group and cancels it for a newer one. A job that runs report
// (after implement, or on a person's answer) must not sit in a group where a
// later run can replace it: no group, or one unique to the comment or run.
func TestReportNotReplacedByConcurrency(t *testing.T) {
	all := parseWorkflows(t)
	n := 0
	for name, w := range all {
		for id, j := range w.Jobs {
			if !strings.Contains(strings.Join(jobVerbs(j), " "), "report") {
				continue
			}
			n++
			var c struct {
				Group string `yaml:"group"`
			}
			switch j.Concurrency.Kind {
			case 0:
				continue
			case yaml.ScalarNode:
				c.Group = j.Concurrency.Value
			default:
				if err := j.Concurrency.Decode(&c); err != nil {
					t.Fatal(err)
				}
			}
			if !strings.Contains(c.Group, "github.event.comment.id") && !strings.Contains(c.Group, "github.run_id") {
				t.Errorf("%s: job %s runs report in the concurrency group %q, where a later run replaces a queued one", name, id, c.Group)
			}
		}
	}
	if n < 4 {
		t.Errorf("found %d jobs that run report, want roadmap.yml's and the callers' answer jobs (at least 4)", n)
	}
}

// TestInitCallerIsTheExample: the caller init writes is the example caller
// of the docs, with init's names: one source for both.
func TestInitCallerIsTheExample(t *testing.T) {
	ex, err := os.ReadFile(filepath.Join(root, "docs", "examples", "roadmap-caller.yml"))
	if err != nil {
		t.Fatal(err)
	}
	body := func(s string) string {
		i := strings.Index(s, "\nname: ")
		if i < 0 {
			t.Fatalf("no name: line in\n%s", s)
		}
		return s[i+1:]
	}
	want := strings.NewReplacer("name: roadmap-caller\n", "name: roadmap\n", "@v1", "@REF", "roadmap-caller.yml", "roadmap.yml").Replace(body(string(ex)))
	if got := body(callerYAML); got != want {
		t.Errorf("internal/adopt/caller.yml and docs/examples/roadmap-caller.yml differ past their headers; make them the same:\n%s", cmp.Diff(want, got))
	}
}
