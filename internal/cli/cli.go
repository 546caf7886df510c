package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/sandbox"
	"github.com/spf13/pflag"
)

// Exit codes. Scripts depend on them; docs/cli.md documents them.
const (
	// ExitOK: the command did what was asked.
	ExitOK = 0
	// ExitFindings: the command ran and its answer is negative (findings,
	// a failed check, a score below the floor, a stop).
	ExitFindings = 1
	// ExitUsage: the command line or an input file is wrong.
	ExitUsage = 2
	// ExitInternal: something broke that is not the caller's fault.
	ExitInternal = 3
	// ExitAuth: a verb that talks to GitHub found no token (GH_TOKEN,
	// GITHUB_TOKEN, or the gh CLI's login). The gh CLI uses 4 too.
	ExitAuth = 4
)

// Env is what a verb may touch. Nothing in a verb reads os.* directly.
type Env struct {
	Args   []string
	Vars   map[string]string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer

	// probe, when set, replaces the machine's answers to the isolation
	// boundary's checks (tests of the fail-closed path).
	probe *sandbox.Probe

	// ghAuthToken asks the gh CLI for its login's token; nil runs
	// `gh auth token`. Tests replace it.
	ghAuthToken func(ctx context.Context) (string, error)

	// collect, when set, receives the flag set of the verb instead of a
	// run (verbFlags: shell completion and the flag-name checks).
	collect func(*pflag.FlagSet)

	// repoDir is the work tree whose origin remote names the repository
	// when neither -R nor GITHUB_REPOSITORY does; "" is the workspace.
	repoDir string

	// verb is the verb running ("explain", "record show"), for Errorf.
	verb string
	// authMissing is set when gitHubClient found no token.
	authMissing bool

	// f is the verb's Factory (factory.go), made on first use.
	f *Factory

	// ctx is the running verb's context, for what runs beside it (the
	// --jq filter).
	ctx context.Context
	// jq, with --jq, is the filter between the verb and stdout (jq.go).
	jq *jqWriter
}

// Getenv returns the value of an environment variable, "" when unset.
func (e *Env) Getenv(key string) string { return e.Vars[key] }

// Errorf prints a message for a person on stderr. Messages carry errors,
// plan text and check logs, so each of its lines is made plain: none can be
// a workflow command.
//
// Each message starts with the verb it comes from ("roadmap explain: …"),
// once: a message that already starts with that prefix, with "roadmap: "
// or with the verb's own "explain: " does not get a second one.
func (e *Env) Errorf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	prefix := "roadmap: "
	if e.verb != "" {
		prefix = "roadmap " + e.verb + ": "
	}
	msg = strings.TrimPrefix(msg, prefix)
	msg = strings.TrimPrefix(msg, "roadmap: ")
	if e.verb != "" {
		msg = strings.TrimPrefix(msg, e.verb+": ")
	}
	msg = prefix + msg
	for _, line := range strings.Split(msg, "\n") {
		fmt.Fprintln(e.Stderr, actionsio.PlainLine(line))
	}
}

// JSON writes v to stdout as indented JSON followed by a newline.
func (e *Env) JSON(v any) int {
	enc := json.NewEncoder(e.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		e.Errorf("write json: %v", err)
		return ExitInternal
	}
	return ExitOK
}

// verb is one command of the table below. name may be two words ("record show").
type verb struct {
	name    string
	summary string
	run     func(ctx context.Context, env *Env, args []string) int
}

// verbs is the whole command line. Each entry's run function lives in a file of
// its own, named after the verb.
func verbs() []verb {
	return []verb{
		{"version", "print the version", runVersion},
		{"stage", "run one stage Job: from an issue to a checked plan in a draft PR", runStage},
		{"implement", "run one implement Job for an issue", runImplement},
		{"report", "read how an implement Job ended and take the one action its class has", runReport},
		{"wake", "dispatch the items waiting for the day's budget, oldest first, within it", runWake},
		{"checks", "run the plan's group checks on a PR head and set the roadmap/checks status", runChecks},
		{"review", "the independent review of a PR's change: typed findings, refuted or upheld, against the plan and the issue", runReview},
		{"demo", "the whole life of an item, locally, against the fakes", runDemo},
		{"try", "the life of an item on your own checkout, locally: a fake GitHub, a scratch remote, never your repository", runTry},
		{"mask", "mask secrets: stdin to stdout", runMask},
		{"explain", "what ran for an issue, what it cost, what waits", runExplain},
		{"console", "one item's timeline across its Jobs; --follow shows what lands as a Job runs", runConsole},
		{"metrics", "pipeline outcomes across items: states, success rate, spend per ready item, stops by class", runMetrics},
		{"tracker status", "is a tracker issue complete: every sub-issue and task-list reference closed, nested trackers included", runTrackerStatus},
		{"dashboard refresh", "rebuild the dashboard issue from every item's record: one list request per 100 comments, a write only when it changed", runDashboardRefresh},
		{"dashboard eval", "post eval reports (roadmap eval … --json) to the dashboard issue's Evals section, replacing the last run's", runDashboardEval},
		{"init", "set a repository up: workflows, configuration, labels, and what a person must still do", runInit},
		{"record show", "parse the record of an issue body", runRecordShow},
		{"plan validate", "check an OpenSpec change: openspec validate --strict, then roadmap's plan rules and plan gates", runPlanValidate},
		{"classify", "classify a failed Job from its log", runClassify},
		{"eval gates", "score the plan gates on the stage golden set's plans: findings by F1, plus OpenSpec validity", runEvalGates},
		{"eval stage", "the planner on the stage golden set (replay, or --provider/--model): findings, OpenSpec validity, facts", runEvalStage},
		{"eval implement", "the implement golden set through the implement Job (replay, or --provider/--model): FULL, PARTIAL or NO", runEvalImplement},
		{"faults run", "the fault-injection suite: kills at every durable effect, GitHub, git, model and process faults", runFaultsRun},
		{"ci fail-to-pass", "run the tests at --base and at HEAD: F2P, P2P and broken P2P", runCIFailToPass},
		{"ci test-strength", "mutants of the lines changed since --base, run against the tests: killed, survived, score", runCITestStrength},
		{"dev replay-model", "serve recorded model exchanges over the OpenAI API", runDevReplayModel},
		{"dev fake-github", "run the fake GitHub as a server", runDevFakeGitHub},
	}
}

// Main runs the roadmap command line and returns its exit code.
// At a terminal, workflow commands are rendered for a person (terminal.go).
func Main(ctx context.Context, args, environ []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := newEnv(args, environ, stdin, stdout, stderr)
	flush := env.terminalOutput()
	defer flush()
	return run(ctx, env)
}

// newEnv is the Env of one command line; environ is KEY=VALUE lines.
func newEnv(args, environ []string, stdin io.Reader, stdout, stderr io.Writer) *Env {
	env := &Env{Args: args, Vars: map[string]string{}, Stdin: stdin, Stdout: stdout, Stderr: stderr}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env.Vars[k] = v
		}
	}
	return env
}

// runVerb runs one verb of the table with its own arguments. Errorf names
// the verb from here on, and a verb that gave up for want of a token
// (gitHubClient found none) exits ExitAuth whatever code it chose: the
// verbs map every setup error to ExitUsage, and a missing login is not one.
//
// With --jq the filter ends here, after the verb: what is left of the
// output is filtered and a failure of the filter is said.
func (e *Env) runVerb(ctx context.Context, v verb, args []string) int {
	e.verb, e.ctx = v.name, ctx
	code := v.run(ctx, e, args)
	if e.authMissing && code == ExitUsage {
		code = ExitAuth
	}
	if e.jq != nil {
		code = e.jq.finish(e, code)
		e.Stdout, e.jq = e.jq.out, nil
	}
	return code
}

// exitCodesLine is the help's list of exit codes; docs/cli.md says the same.
const exitCodesLine = "exit codes: 0 ok, 1 negative result, 2 usage or input error, 3 internal failure, 4 no GitHub login"
