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
	"github.com/roadmap-dev/roadmap/internal/dashboard"
)

// The workflows a user runs roadmap with: the reusable workflows, the
// example callers, and what init writes. Each job that runs a roadmap verb
// (through an action, or by calling a reusable workflow) must declare
// exactly the permissions its verb's calls need (permissions.go).

const root = "../.."

// defaultProvider is the provider init sets up when none is named.
var defaultProvider, _ = FindProvider(DefaultProvider)

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
	Run  string `yaml:"run"`
}

type action struct {
	Outputs map[string]yaml.Node `yaml:"outputs"`
}

// roadmapAction matches a step's use of one of roadmap's verb actions.
// Inside the reusable workflows they are roadmap's checkout at the pinned
// commit (./.roadmap-run/roadmap, docs/install.md "A pin pins everything").
var roadmapAction = regexp.MustCompile(`^(?:roadmap-dev/roadmap/|\./(?:\.roadmap-run/roadmap/)?)actions/(stage|implement|report|checks|eval-dashboard|eval|wake)(?:@|$)`)

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
	for _, f := range files(Pin{Ref: "v1"}, "main", goToolchain(), CI{}, 1, "openai/gpt-4o-mini", defaultProvider) {
		if strings.HasSuffix(f.path, ".yml") && strings.HasPrefix(f.path, ".github/workflows/") {
			out["init/"+f.path] = []byte(f.text)
		}
	}
	// The checks workflow of each other toolchain, as init/<name>/<path>.
	for name, tc := range sampleToolchains {
		for _, f := range files(Pin{Ref: "v1"}, "main", tc, CI{}, 1, "", defaultProvider) {
			if f.path == ChecksPath {
				out["init/"+name+"/"+f.path] = []byte(f.text)
			}
		}
	}
	if len(out) < 5 {
		t.Fatalf("found only %d workflow files under %s", len(out), root)
	}
	return out
}

// sampleToolchains are the toolchains besides Go whose checks workflow
// init writes with its own setup steps.
var sampleToolchains = map[string]Toolchain{
	"python":         pythonToolchain("pyproject.toml", true, false),
	"python-version": pythonToolchain("requirements.txt", true, true),
	"npm":            nodeToolchain("package-lock.json", ".nvmrc"),
	"npm-nolock":     nodeToolchain("", ""),
	"pnpm":           nodeToolchain("pnpm-lock.yaml", ""),
	"yarn":           nodeToolchain("yarn.lock", ".node-version"),
	"rust":           rustToolchain(false),
	"rust-pinned":    rustToolchain(true),
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

// jobVerbs are the verbs a job's steps run. The reusable workflows' pin job,
// which reads the Actions OIDC token, counts as the verb "pin".
func jobVerbs(j *job) []string {
	var out []string
	for _, s := range j.Steps {
		if m := roadmapAction.FindStringSubmatch(s.Uses); m != nil {
			out = append(out, m[1])
		}
		if strings.Contains(s.Run, "ACTIONS_ID_TOKEN_REQUEST_URL") {
			out = append(out, "pin")
		}
	}
	return out
}

// pinPermissions is what the pin job needs: the OIDC token, which names the
// commit of roadmap the caller called. No other job may have it.
var pinPermissions = map[string]string{"id-token": "write"}

// need is what a job must declare: the union of its verbs' permissions, or
// of the called reusable workflow's jobs' (their verbs', or what a job that
// runs none declares).
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
			n, runs := need(t, all, cj)
			if !runs {
				// A called job that runs no roadmap verb (sweep-status.yml's)
				// needs what it declares, and the caller must grant it.
				n = cj.Permissions
			}
			merge(n)
		}
		return out, true
	}
	verbs := jobVerbs(j)
	for _, v := range verbs {
		if v == "pin" {
			merge(pinPermissions)
			continue
		}
		merge(Permissions(v))
	}
	return out, len(verbs) > 0
}

func TestWorkflowPermissions(t *testing.T) {
	all := parseWorkflows(t)
	checked := map[string]bool{}
	for name, w := range all {
		for id, j := range w.Jobs {
			want, runs := need(t, all, j)
			if !runs {
				continue
			}
			checked[name+": "+id] = true
			if diff := cmp.Diff(want, j.Permissions); diff != "" {
				t.Errorf("%s: job %s: permissions (-what its verbs call +declared):\n%s", name, id, diff)
			}
		}
	}
	// roadmap.yml's three jobs, roadmap-checks.yml's, and the callers' jobs
	// that run roadmap: the one that calls roadmap.yml for stage or
	// implement (granting what all three of its jobs declare), the approved
	// plan's, the answer's, and the unblock's (wake, as the wake workflow's).
	for _, want := range []string{
		".github/workflows/roadmap.yml: stage",
		".github/workflows/roadmap.yml: implement",
		".github/workflows/roadmap.yml: report",
		".github/workflows/roadmap.yml: pin",
		".github/workflows/roadmap-checks.yml: checks",
		".github/workflows/roadmap-checks.yml: pin",
		"docs/examples/roadmap-caller.yml: roadmap",
		"docs/examples/roadmap-caller.yml: implement-approved",
		"docs/examples/roadmap-caller.yml: answer",
		"docs/examples/roadmap-caller.yml: unblock",
		"init/.github/workflows/roadmap.yml: roadmap",
		"init/.github/workflows/roadmap.yml: implement-approved",
		"init/.github/workflows/roadmap.yml: answer",
		"init/.github/workflows/roadmap.yml: unblock",
		"init/.github/workflows/roadmap-wake.yml: wake",
		"docs/examples/roadmap-wake.yml: wake",
		"init/.github/workflows/roadmap-eval.yml: eval",
		"init/.github/workflows/roadmap-eval.yml: dashboard",
		"docs/examples/roadmap-eval.yml: eval",
		"docs/examples/roadmap-eval.yml: dashboard",
		"init/python/.github/workflows/roadmap-checks.yml: checks",
		"init/pnpm/.github/workflows/roadmap-checks.yml: checks",
		"init/rust/.github/workflows/roadmap-checks.yml: checks",
	} {
		if !checked[want] {
			t.Errorf("%s was not checked: it is missing, or runs no roadmap verb", want)
		}
	}
	if len(checked) < 10 {
		t.Errorf("checked %d jobs, want every job that runs roadmap (at least 10)", len(checked))
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
		{"wake", map[string]string{"actions": "write", "contents": "read", "issues": "write"}},
		{"eval", map[string]string{"contents": "read", "models": "read"}},
		{"eval-dashboard", map[string]string{"contents": "read", "issues": "write"}},
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
// configuration's (config.Default().Labels), the one place they live, or
// the dashboard issue's, which no configuration renames (dashboard.Label).
func TestWorkflowLabels(t *testing.T) {
	l := config.Default().Labels
	known := map[string]bool{l.Stage: true, l.Implement: true, l.NeedsInput: true, l.Stopped: true, l.Stop: true, l.Waiting: true,
		dashboard.Label: true}
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
	want := strings.NewReplacer("name: roadmap-caller\n", "name: roadmap\n", "@v0.1.0", "@REF", "dashboard: 1 ", "dashboard: DASHBOARD_ISSUE ", "roadmap-caller.yml", "roadmap.yml").Replace(body(string(ex)))
	if got := body(callerYAML); got != want {
		t.Errorf("internal/adopt/caller.yml and docs/examples/roadmap-caller.yml differ past their headers; make them the same:\n%s", cmp.Diff(want, got))
	}
}

// TestInitWakeIsTheExample: the wake workflow init writes is the example's,
// with init's names.
func TestInitWakeIsTheExample(t *testing.T) {
	ex, err := os.ReadFile(filepath.Join(root, "docs", "examples", "roadmap-wake.yml"))
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
	want := strings.NewReplacer("@v0.1.0", "@REF", "dashboard: 1 ", "dashboard: DASHBOARD_ISSUE ", "roadmap-caller.yml", "roadmap.yml").Replace(body(string(ex)))
	if got := body(wakeYAML); got != want {
		t.Errorf("internal/adopt/wake.yml and docs/examples/roadmap-wake.yml differ past their headers; make them the same:\n%s", cmp.Diff(want, got))
	}
}

// TestInitEvalIsTheExample: the eval workflow init writes is the example's,
// with init's names.
func TestInitEvalIsTheExample(t *testing.T) {
	ex, err := os.ReadFile(filepath.Join(root, "docs", "examples", "roadmap-eval.yml"))
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
	want := strings.NewReplacer("@v0.1.0", "@REF", "dashboard: 1 ", "dashboard: DASHBOARD_ISSUE ", "model: openai/gpt-4o-mini", "model: EVAL_MODEL").Replace(body(string(ex)))
	if got := body(evalYAML); got != want {
		t.Errorf("internal/adopt/eval.yml and docs/examples/roadmap-eval.yml differ past their headers; make them the same:\n%s", cmp.Diff(want, got))
	}
}

// TestEvalWorkflowTokens: in the scheduled eval workflow the token reaches
// the model's steps only in the job that cannot write issues, and the job
// that can write issues runs no model; GITHUB_TOKEN is passed only where
// the github-models provider reads it (actions/eval's stage and implement
// steps), never to the gates or a step of the workflow's own.
func TestEvalWorkflowTokens(t *testing.T) {
	var w struct {
		Jobs map[string]struct {
			Permissions map[string]string `yaml:"permissions"`
			Steps       []struct {
				Uses string            `yaml:"uses"`
				With map[string]string `yaml:"with"`
				Env  map[string]string `yaml:"env"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(evalYAML), &w); err != nil {
		t.Fatal(err)
	}
	for id, j := range w.Jobs {
		models, issues := j.Permissions["models"] != "", j.Permissions["issues"] != ""
		if models && issues {
			t.Errorf("job %s can both call the model and write issues", id)
		}
		for _, s := range j.Steps {
			for k, v := range s.Env {
				if strings.Contains(v, "token") || strings.Contains(v, "secrets.") || k == "GITHUB_TOKEN" {
					t.Errorf("job %s: a step of the workflow's own gets a token in %s", id, k)
				}
			}
			for k, v := range s.With {
				if strings.Contains(v, "token") || strings.Contains(v, "secrets.") {
					t.Errorf("job %s: %s gets a token in %s", id, s.Uses, k)
				}
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(root, "actions", "eval", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Runs struct {
			Steps []struct {
				ID  string            `yaml:"id"`
				Env map[string]string `yaml:"env"`
			} `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range a.Runs.Steps {
		for k, v := range s.Env {
			if k == "GITHUB_TOKEN" || strings.Contains(v, "github-token") {
				got = append(got, s.ID+":"+k)
			}
		}
	}
	sort.Strings(got)
	if want := []string{"implement:GITHUB_TOKEN", "stage:GITHUB_TOKEN"}; !cmp.Equal(got, want) {
		t.Errorf("actions/eval passes the token to %v, want %v (the github-models provider's variable, in the model's steps only)", got, want)
	}
}

// rawJob is a job as written, with its condition and its steps' inputs.
type rawJob struct {
	If    string            `yaml:"if"`
	Needs yaml.Node         `yaml:"needs"`
	With  map[string]string `yaml:"with"`
	Steps []struct {
		ID   string            `yaml:"id"`
		With map[string]string `yaml:"with"`
	} `yaml:"steps"`
}

type rawWorkflow struct {
	On struct {
		Call struct {
			Outputs map[string]struct {
				Value string `yaml:"value"`
			} `yaml:"outputs"`
		} `yaml:"workflow_call"`
	} `yaml:"on"`
	Jobs map[string]rawJob `yaml:"jobs"`
}

func readRaw(t *testing.T, path string) rawWorkflow {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	var w rawWorkflow
	if err := yaml.Unmarshal(b, &w); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return w
}

// cond evaluates a job's if: (an expression with or without ${{ }}).
func cond(t *testing.T, expr string, ctx exprCtx) bool {
	t.Helper()
	if expr == "" {
		return true
	}
	expr = strings.TrimSpace(expr)
	if strings.HasPrefix(expr, "${{") && strings.HasSuffix(expr, "}}") {
		expr = expr[3 : len(expr)-2]
	}
	v, err := evalExpr(expr, ctx)
	if err != nil {
		t.Fatal(err)
	}
	return truthy(v)
}

// pinSHA is the commit the pin job read from the OIDC token.
const pinSHA = "0123456789abcdef0123456789abcdef01234567"

// TestRoadmapWorkflowPhases: roadmap.yml runs stage or implement by its phase
// input, and report after either, with the inputs of the job that ran — also
// when that job was killed and wrote no outputs, and the skipped one has none.
func TestRoadmapWorkflowPhases(t *testing.T) {
	w := readRaw(t, ".github/workflows/roadmap.yml")
	var report map[string]string
	for _, s := range w.Jobs["report"].Steps {
		if s.ID == "report" {
			report = s.With
		}
	}
	if report == nil {
		t.Fatal("roadmap.yml's report job has no step report")
	}
	var needs []string
	rj := w.Jobs["report"]
	if err := rj.Needs.Decode(&needs); err != nil || !cmp.Equal(needs, []string{"pin", "stage", "implement"}) {
		t.Errorf("report needs %v, want [pin stage implement] (%v)", needs, err)
	}
	// After either Job, whatever its result; not when the pin failed (there
	// is no roadmap to run it with).
	if rj.If != "always() && needs.pin.result == 'success'" {
		t.Errorf("report runs if %q, want always() && needs.pin.result == 'success'", w.Jobs["report"].If)
	}

	stageOut := map[string]any{"result": "staged", "failure": "", "plan": "openspec/changes/x", "pr": "12",
		"record_comment": "901", "spend": `{"usd":0.1}`, "job": "2"}
	implOut := map[string]any{"result": "ready", "failure": "", "group": "3", "head_sha": "abc", "spend": `{"usd":0.5}`,
		"attempt": "4", "pr": "13", "reason": "", "record_comment": "902"}
	// GitHub gives a skipped job's outputs as empty; act (the e2e) leaves
	// them as their unevaluated templates. Either way report must read none
	// of them, so here each is a value no expectation holds.
	unread := map[string]any{}
	for _, o := range []map[string]any{stageOut, implOut} {
		for k := range o {
			unread[k] = "${{ steps.skipped.outputs." + k + " }}"
		}
	}
	skipped := map[string]any{"result": "skipped", "outputs": unread}
	common := map[string]string{"issue": "7", "identity": "github-actions[bot]", "workflow": "roadmap-caller.yml",
		"dashboard": "0", "day-budget-usd": "2.5", "config": "",
		"roadmap-ref": pinSHA, "roadmap-repository": "roadmap-dev/roadmap"}
	for _, tt := range []struct {
		name             string
		phase            any // the phase input; nil as a caller that sets none (the default)
		stage, implement map[string]any
		want             map[string]string
	}{
		{"stage staged", "stage",
			map[string]any{"result": "success", "outputs": stageOut}, skipped,
			map[string]string{"phase": "stage", "job-name": "stage", "job-result": "success", "result": "staged",
				"failure": "", "spend": `{"usd":0.1}`, "pr": "12", "attempt": "2", "record-comment": "901",
				"group": "", "head-sha": "", "reason": ""}},
		{"stage killed", "stage",
			map[string]any{"result": "cancelled", "outputs": map[string]any{}}, skipped,
			map[string]string{"phase": "stage", "job-name": "stage", "job-result": "cancelled", "result": "",
				"failure": "", "spend": "", "pr": "", "attempt": "", "record-comment": "55",
				"group": "", "head-sha": "", "reason": ""}},
		// A runner that writes empty outputs rather than none.
		{"stage killed, empty outputs", "stage",
			map[string]any{"result": "failure", "outputs": map[string]any{"result": "", "job": "", "record_comment": ""}}, skipped,
			map[string]string{"phase": "stage", "job-name": "stage", "job-result": "failure", "result": "",
				"failure": "", "spend": "", "pr": "", "attempt": "", "record-comment": "55",
				"group": "", "head-sha": "", "reason": ""}},
		{"implement ready", "implement",
			skipped, map[string]any{"result": "success", "outputs": implOut},
			map[string]string{"phase": "implement", "job-name": "implement", "job-result": "success", "result": "ready",
				"failure": "", "spend": `{"usd":0.5}`, "pr": "13", "attempt": "4", "record-comment": "902",
				"group": "3", "head-sha": "abc", "reason": ""}},
		// A phase that is not stage runs implement, and report is told so.
		{"implement, an unknown phase", "deploy",
			skipped, map[string]any{"result": "success", "outputs": implOut},
			map[string]string{"phase": "implement", "job-name": "implement", "job-result": "success", "result": "ready",
				"failure": "", "spend": `{"usd":0.5}`, "pr": "13", "attempt": "4", "record-comment": "902",
				"group": "3", "head-sha": "abc", "reason": ""}},
		{"implement killed, no phase given", nil,
			skipped, map[string]any{"result": "failure", "outputs": map[string]any{}},
			map[string]string{"phase": "implement", "job-name": "implement", "job-result": "failure", "result": "",
				"failure": "", "spend": "", "pr": "", "attempt": "", "record-comment": "55",
				"group": "", "head-sha": "", "reason": ""}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			phase := tt.phase
			if phase == nil {
				phase = "implement" // the input's default, as GitHub fills it in
			}
			ctx := exprCtx{
				"inputs": map[string]any{"issue": 7.0, "phase": phase, "record-comment": 55.0, "identity": "github-actions[bot]",
					"dispatch-workflow": "roadmap-caller.yml", "dashboard": 0.0, "day-budget-usd": 2.5, "config": ""},
				"needs": map[string]any{"stage": tt.stage, "implement": tt.implement,
					"pin": map[string]any{"result": "success", "outputs": map[string]any{"sha": pinSHA, "repository": "roadmap-dev/roadmap"}}},
			}
			// Which of stage and implement runs.
			ran := map[string]bool{"stage": cond(t, w.Jobs["stage"].If, ctx), "implement": cond(t, w.Jobs["implement"].If, ctx)}
			wantRan := map[string]bool{"stage": phase == "stage", "implement": phase != "stage"}
			if !cmp.Equal(ran, wantRan) {
				t.Errorf("phase %v: jobs run %v, want %v", phase, ran, wantRan)
			}
			got := map[string]string{}
			for k, v := range report {
				s, err := interpolate(v, ctx)
				if err != nil {
					t.Fatalf("report's %s: %v", k, err)
				}
				got[k] = s
			}
			want := map[string]string{}
			for k, v := range common {
				want[k] = v
			}
			for k, v := range tt.want {
				want[k] = v
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("report's inputs (-want +got):\n%s", diff)
			}

			// The workflow's outputs are the job's that ran.
			jobs := map[string]any{"report": map[string]any{"outputs": map[string]any{"action": "none"}}}
			for _, j := range []string{"stage", "implement"} {
				jobs[j] = map[string]any{"outputs": unread}
				if ran[j] {
					jobs[j] = map[string]any{"outputs": prop(ctx["needs"], j).(map[string]any)["outputs"]}
				}
			}
			outs := map[string]string{}
			for k, o := range w.On.Call.Outputs {
				s, err := interpolate(o.Value, exprCtx{"jobs": jobs, "inputs": ctx["inputs"]})
				if err != nil {
					t.Fatalf("output %s: %v", k, err)
				}
				outs[k] = s
			}
			wantOuts := map[string]string{"result": want["result"], "pr": want["pr"], "action": "none"}
			if diff := cmp.Diff(wantOuts, outs); diff != "" {
				t.Errorf("roadmap.yml's outputs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCallerPhase: the callers run roadmap.yml's stage on the roadmap:stage
// label and on a dispatch with phase stage (report's continuation of a stage
// Job), implement on the roadmap:implement label and any other dispatch, and
// nothing on other events; the approved plan and the answer keep their jobs.
func TestCallerPhase(t *testing.T) {
	labelled := func(l string) exprCtx {
		return exprCtx{"github": map[string]any{"event_name": "issues", "event": map[string]any{
			"action": "labeled", "label": map[string]any{"name": l}, "issue": map[string]any{"number": 7.0}}},
			"inputs": map[string]any{}}
	}
	dispatched := func(phase string) exprCtx {
		return exprCtx{"github": map[string]any{"event_name": "workflow_dispatch", "event": map[string]any{}},
			"inputs": map[string]any{"issue": 7.0, "phase": phase, "attempt": 2.0, "record-comment": 901.0}}
	}
	comment := exprCtx{"github": map[string]any{"event_name": "issue_comment", "event": map[string]any{
		"issue": map[string]any{"number": 7.0, "labels": []any{}}}}, "inputs": map[string]any{}}
	for _, path := range []string{"docs/examples/roadmap-caller.yml", "internal/adopt/caller.yml"} {
		w := readRaw(t, path)
		var callers []string
		for id, j := range w.Jobs {
			if j.With != nil && reusable.MatchString(jobUses(t, path, id)) && strings.Contains(jobUses(t, path, id), "/roadmap.yml") {
				callers = append(callers, id)
			}
		}
		sort.Strings(callers)
		if !cmp.Equal(callers, []string{"implement-approved", "roadmap"}) {
			t.Errorf("%s: jobs calling roadmap.yml = %v, want implement-approved and roadmap", path, callers)
		}
		j := w.Jobs["roadmap"]
		for _, tt := range []struct {
			name  string
			ctx   exprCtx
			phase string // "" when the job must not run
		}{
			{"label roadmap:stage", labelled("roadmap:stage"), "stage"},
			{"label roadmap:implement", labelled("roadmap:implement"), "implement"},
			{"another label", labelled("bug"), ""},
			{"dispatch phase stage", dispatched("stage"), "stage"},
			{"dispatch phase implement", dispatched("implement"), "implement"},
			{"a comment", comment, ""},
		} {
			runs := cond(t, j.If, tt.ctx)
			if runs != (tt.phase != "") {
				t.Errorf("%s: %s: the roadmap job runs = %v, want %v", path, tt.name, runs, tt.phase != "")
				continue
			}
			if !runs {
				continue
			}
			got, err := interpolate(j.With["phase"], tt.ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.phase {
				t.Errorf("%s: %s: phase = %q, want %q", path, tt.name, got, tt.phase)
			}
			if issue, _ := interpolate(j.With["issue"], tt.ctx); issue != "7" {
				t.Errorf("%s: %s: issue = %q, want 7", path, tt.name, issue)
			}
		}
	}
}

// TestCallerPeopleTriggers: the people's acts the caller routes to a Job
// (docs/install.md, "Triggers"). A reopened issue that carries the
// implement label resumes the item, any other reopened issue starts no
// Job; a reopened roadmap PR starts implement (the Job resumes only an
// item its closing held); on a roadmap PR, an approval starts implement, a review asking
// for changes (or commenting on lines) starts the repair Job on the ready PR
// only, never on the draft (the plan under review), and a /roadmap fix
// comment on a PR starts it, another comment does not. A person's close or
// reopening of any issue starts the unblock job alone (the items waiting
// for it, the trackers' status). A person's edit of the dashboard issue (a
// ticked box) starts the answer job alone; a bot's edit of it (roadmap's
// own refresh) and an edit of any other issue start no job.
func TestCallerPeopleTriggers(t *testing.T) {
	reopened := func(labels ...any) exprCtx {
		return exprCtx{"github": map[string]any{"event_name": "issues", "event": map[string]any{"action": "reopened",
			"issue": map[string]any{"number": 7.0, "labels": labelObjects(labels)}}}, "inputs": map[string]any{}}
	}
	review := func(state string, draft bool) exprCtx {
		return exprCtx{"github": map[string]any{"event_name": "pull_request_review", "repository": "acme/widgets", "event": map[string]any{
			"action": "submitted", "review": map[string]any{"state": state},
			"pull_request": map[string]any{"draft": draft, "head": map[string]any{"ref": "roadmap/7-greet", "repo": map[string]any{"full_name": "acme/widgets"}}}}}}
	}
	prReopened := func(ref, repo string) exprCtx {
		return exprCtx{"github": map[string]any{"event_name": "pull_request", "repository": "acme/widgets", "event": map[string]any{
			"action": "reopened", "pull_request": map[string]any{"draft": true, "head": map[string]any{"ref": ref, "repo": map[string]any{"full_name": repo}}}}}}
	}
	closed := func(labels ...any) exprCtx {
		return exprCtx{"github": map[string]any{"event_name": "issues", "event": map[string]any{"action": "closed",
			"issue": map[string]any{"number": 7.0, "labels": labelObjects(labels)}}}, "inputs": map[string]any{}}
	}
	labelled := exprCtx{"github": map[string]any{"event_name": "issues", "event": map[string]any{"action": "labeled",
		"label": map[string]any{"name": "roadmap:stage"}, "issue": map[string]any{"number": 7.0, "labels": labelObjects([]any{"roadmap:stage"})}}},
		"inputs": map[string]any{}}
	prComment := func(body string) exprCtx {
		return exprCtx{"github": map[string]any{"event_name": "issue_comment", "event": map[string]any{"action": "created",
			"issue": map[string]any{"number": 9.0, "pull_request": map[string]any{"url": "x"}}, "comment": map[string]any{"body": body}}}}
	}
	// An edit of an issue's body (a box ticked on the dashboard) by a
	// sender: a person is a User; GITHUB_TOKEN (github-actions[bot]) and a
	// GitHub App's token (roadmap's own refresh of the body) a Bot.
	edited := func(senderType string, labels ...any) exprCtx {
		return exprCtx{"github": map[string]any{"event_name": "issues", "event": map[string]any{"action": "edited",
			"issue":  map[string]any{"number": 3.0, "labels": labelObjects(labels)},
			"sender": map[string]any{"login": "alice", "type": senderType}}}, "inputs": map[string]any{}}
	}
	for _, path := range []string{"docs/examples/roadmap-caller.yml", "internal/adopt/caller.yml"} {
		w := readRaw(t, path)
		for _, tt := range []struct {
			name string
			job  string
			ctx  exprCtx
			want bool
		}{
			{"an implement item's issue reopened", "roadmap", reopened("roadmap:implement"), true},
			{"another issue reopened", "roadmap", reopened("bug"), false},
			{"a plan approved", "approved", review("approved", true), true},
			{"changes requested on the ready PR", "approved", review("changes_requested", false), true},
			{"lines commented on the ready PR", "approved", review("commented", false), true},
			{"changes requested on the draft", "approved", review("changes_requested", true), false},
			{"/roadmap fix on a PR", "approved", prComment("/roadmap fix the typo"), true},
			{"a comment on a PR", "approved", prComment("looks good"), false},
			{"/roadmap fix on a PR, for the answer job", "answer", prComment("/roadmap fix the typo"), false},
			{"a roadmap PR reopened", "approved", prReopened("roadmap/7-greet", "acme/widgets"), true},
			{"another PR reopened", "approved", prReopened("fix-typo", "acme/widgets"), false},
			{"a fork's roadmap/ branch reopened", "approved", prReopened("roadmap/7-greet", "mallory/widgets"), false},
			{"a roadmap PR reopened, for the roadmap job", "roadmap", prReopened("roadmap/7-greet", "acme/widgets"), false},
			{"an issue closed", "unblock", closed("bug"), true},
			{"an implement item's issue closed", "unblock", closed("roadmap:implement"), true},
			{"an implement item's issue closed, for the roadmap job", "roadmap", closed("roadmap:implement"), false},
			{"an issue closed, for the answer job", "answer", closed("roadmap:stop"), false},
			{"an issue labelled, for the unblock job", "unblock", labelled, false},
			{"an issue reopened, for the unblock job (a tracker's status)", "unblock", reopened("bug"), true},
			{"a roadmap PR reopened, for the unblock job", "unblock", prReopened("roadmap/7-greet", "acme/widgets"), false},
			{"a person's edit of the dashboard (a ticked box)", "answer", edited("User", "roadmap:dashboard"), true},
			{"a bot's edit of the dashboard (roadmap's refresh)", "answer", edited("Bot", "roadmap:dashboard"), false},
			{"a person's edit of another issue", "answer", edited("User", "roadmap:implement"), false},
			{"a person's edit of the dashboard, for the roadmap job", "roadmap", edited("User", "roadmap:dashboard"), false},
			{"a person's edit of an item's issue, for the roadmap job", "roadmap", edited("User", "roadmap:implement"), false},
			{"a person's edit of the dashboard, for the unblock job", "unblock", edited("User", "roadmap:dashboard"), false},
			{"a person's edit of the dashboard, for the approved job", "approved", edited("User", "roadmap:dashboard"), false},
		} {
			if got := cond(t, w.Jobs[tt.job].If, tt.ctx); got != tt.want {
				t.Errorf("%s: %s: job %s runs = %v, want %v", path, tt.name, tt.job, got, tt.want)
			}
		}
	}
}

// labelObjects are an issue's labels as the event carries them.
func labelObjects(names []any) []any {
	var out []any
	for _, n := range names {
		out = append(out, map[string]any{"name": n})
	}
	return out
}

// jobUses is a job's uses: line.
func jobUses(t *testing.T, path, id string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := yaml.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	return w.Jobs[id].Uses
}

// TestPinJobsAgree: roadmap.yml and roadmap-checks.yml read the pinned
// commit with the same pin job (it cannot be shared: nothing of roadmap can
// be used before the pin is known), and every job after it that runs
// roadmap checks roadmap out at the pin and uses its actions from there,
// never a roadmap-dev/roadmap reference of its own (which would run a
// moving tag whatever the caller pinned).
func TestPinJobsAgree(t *testing.T) {
	type anyWorkflow struct {
		Jobs map[string]map[string]any `yaml:"jobs"`
	}
	read := func(path string) anyWorkflow {
		b, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Fatal(err)
		}
		var w anyWorkflow
		if err := yaml.Unmarshal(b, &w); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return w
	}
	main, checks := read(".github/workflows/roadmap.yml"), read(".github/workflows/roadmap-checks.yml")
	for _, key := range []string{"permissions", "outputs", "steps", "timeout-minutes"} {
		if diff := cmp.Diff(main.Jobs["pin"][key], checks.Jobs["pin"][key]); diff != "" || main.Jobs["pin"][key] == nil {
			t.Errorf("the pin jobs' %s differ (-roadmap.yml +roadmap-checks.yml):\n%s", key, diff)
		}
	}
	for name, w := range map[string]anyWorkflow{"roadmap.yml": main, "roadmap-checks.yml": checks} {
		for id, j := range w.Jobs {
			if id == "pin" {
				continue
			}
			steps, _ := j["steps"].([]any)
			pinned := false
			for _, s := range steps {
				st, _ := s.(map[string]any)
				uses, _ := st["uses"].(string)
				with, _ := st["with"].(map[string]any)
				if strings.HasPrefix(uses, "roadmap-dev/roadmap") {
					t.Errorf("%s: job %s uses %s: inside the reusable workflows roadmap runs from the pinned checkout", name, id, uses)
				}
				if with["ref"] == "${{ needs.pin.outputs.sha }}" && with["path"] == ".roadmap-run/roadmap" {
					pinned = true
				}
				if strings.HasPrefix(uses, "./.roadmap-run/roadmap/actions/") {
					if !pinned {
						t.Errorf("%s: job %s uses %s before checking roadmap out at the pin", name, id, uses)
					}
					if with["roadmap-ref"] != "${{ needs.pin.outputs.sha }}" {
						t.Errorf("%s: job %s: %s's roadmap-ref is %v, want the pin's sha (the install step builds or downloads that)", name, id, uses, with["roadmap-ref"])
					}
				}
			}
		}
	}
}

// TestConfigNamesItsSchema: the configuration init writes names the schema of
// the roadmap version its workflows pin, at a path the repository holds.
func TestConfigNamesItsSchema(t *testing.T) {
	for _, f := range files(Pin{Ref: "v1.2.3"}, "main", goToolchain(), CI{}, 1, "", defaultProvider) {
		if f.path != ConfigPath {
			continue
		}
		first, _, _ := strings.Cut(f.text, "\n")
		want := "# yaml-language-server: $schema=" + SchemaURL("v1.2.3")
		if first != want {
			t.Fatalf("first line of %s = %q, want %q", ConfigPath, first, want)
		}
		rel := first[strings.Index(first, "/v1.2.3/")+len("/v1.2.3/"):]
		if _, err := os.Stat(filepath.Join("..", "..", rel)); err != nil {
			t.Errorf("the schema the modeline names is not in the repository: %v", err)
		}
		if _, err := config.Parse(ConfigPath, []byte(f.text)); err != nil {
			t.Errorf("the configuration init writes does not parse: %v", err)
		}
		return
	}
	t.Fatalf("files wrote no %s", ConfigPath)
}

// TestPythonCallerIsTheExample: the Python example caller is
// docs/examples/roadmap-caller.yml with its own name and the setup input,
// so a trigger or a job the main example gains reaches it too (it had
// fallen two issues behind).
func TestPythonCallerIsTheExample(t *testing.T) {
	read := func(path string) string {
		b, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		_, body, ok := strings.Cut(s, "\nname: ")
		if !ok {
			t.Fatalf("%s: no name: line", path)
		}
		_, body, _ = strings.Cut(body, "\n")
		return body
	}
	want := strings.NewReplacer(
		"      dispatch-workflow: roadmap-caller.yml\n",
		"      dispatch-workflow: roadmap-caller-python.yml\n      # The repository's setup action (a folder with an action.yml): pytest for python3.\n      setup: .github/actions/roadmap-setup\n",
		"          workflow: roadmap-caller.yml\n", "          workflow: roadmap-caller-python.yml\n",
	).Replace(read("docs/examples/roadmap-caller.yml"))
	if diff := cmp.Diff(want, read("docs/examples/roadmap-caller-python.yml")); diff != "" {
		t.Errorf("docs/examples/roadmap-caller-python.yml is not the example caller with its name and setup (-want +got):\n%s", diff)
	}
}

// TestInitWritesTwoTierLadder: the configuration init writes holds the
// two-tier ladder of the provider it sets up, for every provider init
// offers: config.InitLadders' models, each naming the variable its key is
// read from; with no provider named, GitHub Models'.
func TestInitWritesTwoTierLadder(t *testing.T) {
	for _, p := range Providers {
		for _, f := range files(Pin{Ref: "v1.2.3"}, "main", goToolchain(), CI{}, 1, "", p) {
			if f.path != ConfigPath {
				continue
			}
			cfg, err := config.Parse(ConfigPath, []byte(f.text))
			if err != nil {
				t.Fatalf("%s: %v", p.Name, err)
			}
			want := config.InitLadders[p.Name]
			if got := modelNames(cfg.Models); len(got) != 2 || got[0] == got[1] || strings.Join(got, ",") != strings.Join(modelNames(want), ",") {
				t.Errorf("%s: init's ladder = %v, want the two tiers %v", p.Name, got, modelNames(want))
			}
			for _, m := range cfg.Models {
				if m.Provider != p.Name || m.APIKeyEnv != p.KeyEnv {
					t.Errorf("%s: tier %s is provider %q reading %q, want %q reading %q", p.Name, m.Name, m.Provider, m.APIKeyEnv, p.Name, p.KeyEnv)
				}
			}
		}
	}
	if defaultProvider.Name != "github-models" {
		t.Errorf("init without --provider sets up %q, want github-models (the workflows' token reaches it)", defaultProvider.Name)
	}
}

func modelNames(ms []config.Model) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return out
}
