package faults

import (
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// Expected endings of a history.
const (
	// expectReady: the item must end exactly as the crash-free run does.
	expectReady = "ready"
	// expectStop: the fault has no automatic action; the item must stop
	// with the class below, keeping every mark (no work lost, none repeated).
	expectStop = "stop"
	// expectEnd: a person's act ends the item (issue 47): it must end with
	// the result End and the class below, never ready.
	expectEnd = "end"
)

// scenario is one fault placed in one history.
type scenario struct {
	Name string
	// Kind is the fault kind counted in the summary.
	Kind string
	// Branch is the recovery branch the history must reach.
	Branch string
	Expect string
	// Class is the stop's class (expectStop, expectEnd) or report's class of
	// the killed Job (process faults).
	Class string
	// End is the result an expectEnd history ends with.
	End record.Result
	// Known names a defect this history still exposes: its violations are
	// reported as known, not counted, and the suite fails once they vanish
	// (so the entry is removed with the fix).
	Known string
	// arms are kill points; setup installs the rest of the fault.
	arms   []string
	mutate func(group int, c *llm.Conversation)
	setup  func(l *life) error
	// Stage: the history starts from an issue with no plan (stage Jobs,
	// then implement); mutateStage changes stage's conversations.
	Stage       bool
	mutateStage func(name string, c *llm.Conversation)
	// groups is the plan's group count (0: Groups).
	groups int
}

// request is a write the fake received in the crash-free run.
type Request struct {
	Method, Path string
	Call         int // its number among requests with the same method and path
}

// BaselineWrites lists the GitHub writes of the crash-free run.
func BaselineWrites(log []githubfake.LoggedRequest) []Request {
	seen := map[string]int{}
	var out []Request
	for _, r := range log {
		if strings.HasPrefix(r.Path, "/_logs/") {
			continue
		}
		key := r.Method + " " + r.Path
		seen[key]++
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			continue
		}
		out = append(out, Request{Method: r.Method, Path: r.Path, Call: seen[key]})
	}
	return out
}

// BaselineReads lists the GitHub reads of the crash-free run (job logs
// aside: they are fetched from the URL GitHub redirects to).
func BaselineReads(log []githubfake.LoggedRequest) []Request {
	seen := map[string]int{}
	var out []Request
	for _, r := range log {
		if strings.HasPrefix(r.Path, "/_logs/") || r.Method != http.MethodGet {
			continue
		}
		key := r.Method + " " + r.Path
		seen[key]++
		out = append(out, Request{Method: r.Method, Path: r.Path, Call: seen[key]})
	}
	return out
}

// recordWrites tells the writes of the record comment apart in a world
// after its crash-free run: the create of the comment on the issue and each
// PATCH of it (internal/github's WriteRecord, whose recovery is to read the
// record again and apply the change again).
func recordWrites(w *world) func(Request) bool {
	create := fmt.Sprintf("/repos/%s/%s/issues/%d/comments", Owner, Repo, w.issue)
	patch := ""
	if c, ok := w.recordComment(); ok {
		patch = fmt.Sprintf("/repos/%s/%s/issues/comments/%d", Owner, Repo, c.ID)
	}
	return func(r Request) bool {
		return r.Method == http.MethodPost && r.Path == create || r.Method == http.MethodPatch && r.Path == patch
	}
}

// fiveXXBranch is the branch a 502 on r takes: the transport retries an
// idempotent request; a record write is read and applied again; any other
// write fails its Job, and the next one resumes from the last mark.
func fiveXXBranch(r Request, record func(Request) bool) string {
	switch {
	case r.Method == http.MethodPut || r.Method == http.MethodDelete || r.Method == http.MethodGet:
		return "retry"
	case record(r):
		return "reapply_record"
	}
	return "resume_from_mark"
}

// readScenarios put a 502 on one read of the crash-free run (seeded): the
// transport's retry is the recovery, and its event the evidence.
func readScenarios(seed int64, reads []Request) []scenario {
	if len(reads) == 0 {
		return nil
	}
	rng := rand.New(rand.NewSource(2000 + seed))
	r := reads[rng.Intn(len(reads))]
	return []scenario{{Name: fmt.Sprintf("github_5xx_read on %s %s (call %d)", r.Method, r.Path, r.Call), Kind: "github_5xx_read", Branch: "retry", Expect: expectReady,
		setup: func(l *life) error {
			l.w.fake.AddFault(githubfake.Rule{Method: r.Method, Path: r.Path, Call: r.Call, Status: 502})
			return nil
		}}}
}

// kinds the suite must inject at least once; TestFaultsRun holds it to that.
var kinds = []string{
	"crash", "github_5xx", "github_429_retry_after", "github_429", "github_403_secondary_retry_after",
	"github_403_secondary", "github_primary_limit", "github_403_auth", "github_apply_then_fail", "github_5xx_read",
	"git_non_fast_forward", "git_push_rejected", "git_merge_conflict",
	"model_429", "model_500", "model_malformed_tool_call", "model_context_overflow",
	"exit_137", "exit_137_oom", "sigint_sigterm", "concurrent_writers", "person_edits", "config_item_budget",
	"list_omits_record", "many_comments", "disk_full", "answer_over_limit",
	"person_closes_pr", "person_merges_pr", "person_closes_issue", "person_breaks_record",
}

// Recovery branches the suite must reach.
var branches = []string{
	"resume_from_mark", "reconcile", "retry", "wait_rate_limit", "rebase", "stop_auth",
	"conflict_handoff", "stop_needs_person", "agent_repair", "continue_killed", "continue_oom",
	"yield_on_signal", "reapply_record", "trim_context", "continue_disk_full",
}

// scenarios builds the histories of one seed from the crash-free run: its
// effects (crash points) and its GitHub writes (where faults land).
func scenarios(seed int64, effects []string, writes []Request, record func(Request) bool) []scenario {
	rng := rand.New(rand.NewSource(seed))
	var out []scenario
	for _, p := range effects {
		for _, when := range []string{"before", "after"} {
			branch := "resume_from_mark"
			if when == "after" {
				branch = "reconcile"
			}
			out = append(out, scenario{Name: "kill " + when + " " + p, Kind: "crash", Branch: branch, Expect: expectReady,
				arms: []string{when + " " + p}})
		}
	}
	// Effects only a killed Job's report makes: the dispatch of its
	// continuation, killed before and after.
	for _, when := range []string{"before", "after"} {
		out = append(out, scenario{Name: "kill before push#2, then " + when + " dispatch#1", Kind: "crash", Branch: "continue_killed",
			Expect: expectReady, arms: []string{"before push#2", when + " dispatch#1"}})
	}
	pick := func() Request { return writes[rng.Intn(len(writes))] }
	rule := func(r Request, rl githubfake.Rule) githubfake.Rule {
		rl.Method, rl.Path, rl.Call = r.Method, r.Path, r.Call
		return rl
	}
	gh := func(kind, branch string, rl githubfake.Rule) scenario {
		r := pick()
		if branch == "" {
			branch = fiveXXBranch(r, record)
		}
		return scenario{Name: fmt.Sprintf("%s on %s %s (call %d)", kind, r.Method, r.Path, r.Call), Kind: kind, Branch: branch, Expect: expectReady,
			setup: func(l *life) error { l.w.fake.AddFault(rule(r, rl)); return nil }}
	}
	secondary := `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`
	out = append(out,
		gh("github_5xx", "", githubfake.Rule{Status: 502}),
		gh("github_429_retry_after", "wait_rate_limit", githubfake.Rule{Status: 429, Headers: map[string]string{"retry-after": "7"}}),
		gh("github_429", "wait_rate_limit", githubfake.Rule{Status: 429}),
		gh("github_403_secondary_retry_after", "wait_rate_limit", githubfake.Rule{Status: 403, Body: secondary, Headers: map[string]string{"retry-after": "30"}}),
		gh("github_403_secondary", "wait_rate_limit", githubfake.Rule{Status: 403, Body: secondary}),
	)
	pr := pick()
	out = append(out, scenario{Name: fmt.Sprintf("primary limit on %s %s (call %d)", pr.Method, pr.Path, pr.Call), Kind: "github_primary_limit",
		Branch: "wait_rate_limit", Expect: expectReady, setup: func(l *life) error {
			reset := strconv.FormatInt(l.w.clock.Now().Add(90e9).Unix(), 10)
			l.w.fake.AddFault(rule(pr, githubfake.Rule{Status: 403, Headers: map[string]string{
				"x-ratelimit-limit": "1000", "x-ratelimit-remaining": "0", "x-ratelimit-used": "1000", "x-ratelimit-reset": reset},
				Body: `{"message":"API rate limit exceeded for installation.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}`}))
			return nil
		}})
	// A plain 403 stops the item where the item needs the write. A marker
	// comment (the PR's comment, report's comments on the issue) is best
	// effort: its failure is logged and the item goes on, so the auth stop
	// is placed on another write.
	marker := func(r Request) bool {
		return !record(r) && (r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/comments") ||
			r.Method == http.MethodPatch && strings.Contains(r.Path, "/issues/comments/"))
	}
	auth := pick()
	for tries := 0; marker(auth) && tries < 20; tries++ {
		auth = pick()
	}
	out = append(out, scenario{Name: fmt.Sprintf("plain 403 on %s %s (call %d)", auth.Method, auth.Path, auth.Call), Kind: "github_403_auth",
		Branch: "stop_auth", Expect: expectReady, Class: "auth", setup: func(l *life) error {
			l.w.fake.AddFault(rule(auth, githubfake.Rule{Status: 403, Body: `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest"}`}))
			l.afterJob = personRedispatch
			return nil
		}})
	for _, r := range writes {
		branch := "reconcile"
		if record(r) {
			branch = "reapply_record"
		}
		out = append(out, scenario{Name: fmt.Sprintf("apply-then-fail on %s %s (call %d)", r.Method, r.Path, r.Call), Kind: "github_apply_then_fail",
			Branch: branch, Expect: expectReady, setup: func(l *life) error {
				l.w.fake.AddFault(rule(r, githubfake.Rule{ApplyThenFail: true, Status: 502}))
				return nil
			}})
	}

	// Git: another writer pushes to the work branch just before group 2's push.
	out = append(out,
		scenario{Name: "non-fast-forward push (another writer's commit)", Kind: "git_non_fast_forward", Branch: "rebase", Expect: expectReady,
			setup: func(l *life) error {
				l.foreign = map[string]bool{"NOTES.md": true}
				return l.beforePoint("push#2", func() error { return l.foreignCommit("NOTES.md", "a note from another writer\n") })
			}},
		scenario{Name: "push rejected by a hook", Kind: "git_push_rejected", Branch: "stop_needs_person", Expect: expectReady,
			setup: func(l *life) error {
				l.afterJob = personRedispatch
				return l.rejectOnce()
			}},
		scenario{Name: "merge conflict with another writer's commit", Kind: "git_merge_conflict", Branch: "conflict_handoff", Expect: expectReady, Class: "conflict",
			setup: func(l *life) error {
				l.foreign = map[string]bool{}
				return l.beforePoint("push#2", func() error { return l.foreignCommit("greeting-2.txt", "hola 2\n") })
			}},
	)

	// Model: the seed picks the group and the turn.
	g, turn := 1+rng.Intn(Groups), rng.Intn(2)
	at := func(kind, branch string, e llm.InjectedError) scenario {
		return scenario{Name: fmt.Sprintf("%s at group %d turn %d", kind, g, turn), Kind: kind, Branch: branch, Expect: expectReady,
			mutate: func(group int, c *llm.Conversation) {
				if group == g {
					c.Turns[turn].Errors = append(c.Turns[turn].Errors, e)
				}
			}}
	}
	out = append(out,
		at("model_429", "retry", llm.InjectedError{Status: 429, RetryAfter: "3"}),
		at("model_500", "retry", llm.InjectedError{Status: 500}),
		scenario{Name: fmt.Sprintf("malformed tool call at group %d", g), Kind: "model_malformed_tool_call", Branch: "agent_repair", Expect: expectReady,
			mutate: func(group int, c *llm.Conversation) {
				if group == g {
					bad := llm.Turn{Response: llm.Response{ToolCalls: []llm.FixtureToolCall{{Name: "write_file", Arguments: `{"path": "greeting-`}},
						Usage: llm.FixtureUsage{TokensIn: 1000, TokensOut: 100}}}
					c.Turns = append([]llm.Turn{bad}, c.Turns...)
				}
			}},
	)

	// A context overflow: the provider refuses the group's last request as
	// over the model's context (HTTP 400, context_length_exceeded), after
	// the agent read the plan's tasks; the agent cuts the old tool output
	// below the refused request and asks again.
	overflow := `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9371 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`
	out = append(out, scenario{Name: fmt.Sprintf("context overflow at group %d (after a read of the plan)", g), Kind: "model_context_overflow",
		Branch: "trim_context", Expect: expectReady,
		mutate: func(group int, c *llm.Conversation) {
			if group != g {
				return
			}
			read := llm.Turn{Response: llm.Response{ToolCalls: []llm.FixtureToolCall{{Name: "read_file", Arguments: llm.Arguments(`{"path":"` + PlanDir + `/tasks.md"}`)}},
				Usage: llm.FixtureUsage{TokensIn: 1000, TokensOut: 100}}}
			c.Turns = append([]llm.Turn{read}, c.Turns...)
			last := len(c.Turns) - 1
			c.Turns[last].Errors = append(c.Turns[last].Errors, llm.InjectedError{Status: 400, Body: overflow})
		}})

	// Processes: the runner's kill, with and without the kernel's word.
	kp := effects[rng.Intn(len(effects))]
	out = append(out,
		scenario{Name: "exit 137 without OOM evidence, before " + kp, Kind: "exit_137", Branch: "continue_killed", Expect: expectReady, Class: "killed",
			arms: []string{"before " + kp}},
		scenario{Name: "exit 137 with OOM evidence, before " + kp, Kind: "exit_137_oom", Branch: "continue_oom", Expect: expectReady, Class: "oom",
			arms: []string{"before " + kp}, setup: func(l *life) error {
				l.logExtra = "Out of memory: Killed process 4242 (roadmap) total-vm:8123456kB, anon-rss:7012345kB\n"
				return nil
			}},
		scenario{Name: "SIGINT after commit#2, then SIGTERM 7.5 s later and the kill 2.5 s after (the runner's timings)", Kind: "sigint_sigterm",
			Branch: "yield_on_signal", Expect: expectReady, setup: func(l *life) error {
				l.signal = make(chan struct{})
				l.sigTerm, l.sigKill = sigTerm, sigKill
				return l.afterPoint("commit#2", func() error {
					close(l.signal)
					if l.interrupt != nil {
						l.interrupt()
					}
					return nil
				})
			}},
	)

	// The wiring: the configuration's item budget (budgets.item) must reach
	// the runner, as job.Open passes it in the binary. A Job wired without it
	// runs on and ends ready: a violation.
	out = append(out, scenario{Name: "the configuration's item budget (budgets.item.tokens_in: 1) stops the item", Kind: "config_item_budget",
		Branch: "stop_budget", Expect: expectStop, Class: "budget_exhausted", setup: func(l *life) error {
			l.configure = func(c *config.Config) { c.Budgets.Item = config.Budget{TokensIn: 1} }
			return nil
		}})

	// People and other writers.
	out = append(out,
		scenario{Name: "another writer edits the record just before the Job reads it", Kind: "concurrent_writers", Expect: expectReady,
			setup: func(l *life) error {
				l.keep = append(l.keep, "note.other")
				l.w.fake.AddFault(githubfake.Rule{Method: http.MethodGet, Path: "/repos/" + Owner + "/" + Repo + "/issues/comments/*", Call: 1 + rng.Intn(2),
					Before: func() { l.writerEdited = true; l.editRecord("note.other: written by another writer") }})
				return nil
			}},
		// Inside the window between the Job's read and its PATCH GitHub
		// gives no way to keep another writer's key (no compare-and-swap;
		// docs/github.md, TestWriteRecordResidualWindows): the promise is
		// that everything else holds — the Job's own marks, the final state,
		// no work repeated — and the key is not counted on.
		scenario{Name: "another writer edits the record between the Job's read and its PATCH (the documented window)", Kind: "concurrent_writers",
			Expect: expectReady,
			setup: func(l *life) error {
				l.windowKeys = append(l.windowKeys, "note.other")
				l.w.fake.AddFault(githubfake.Rule{Method: http.MethodPatch, Path: "/repos/" + Owner + "/" + Repo + "/issues/comments/*", Call: 1 + rng.Intn(2),
					Before: func() { l.writerEdited = true; l.editRecord("note.other: written by another writer") }})
				return nil
			}},
		scenario{Name: "a person edits the issue body and the record comment mid-run", Kind: "person_edits", Expect: expectReady,
			setup: func(l *life) error {
				l.keep = append(l.keep, "person.note")
				return l.afterPoint("push#1", func() error {
					l.w.body += "\nEdited by the person mid-run: also say goodbye later.\n"
					if err := l.w.fake.SetIssueBody(l.w.issue, "alice", l.w.body); err != nil {
						return err
					}
					l.editRecord("person.note: keep this line")
					return nil
				})
			}},
	)
	// Issue 46's faults on what roadmap does not control, and issue 47's
	// people (limits.go, people.go).
	out = append(out, limitScenarios(g)...)
	return append(out, peopleScenarios()...)
}

// personRedispatch is a person answering a stop: the fault is gone (the
// fake's rules are one-shot), so they dispatch the item again.
func personRedispatch(l *life, je jobEnd) bool {
	if je.Result.Result != "stopped" || l.redispatched {
		return false
	}
	l.redispatched = true
	l.note("a person dispatches the item again after the stop")
	return true
}

// beforePoint runs f just before an effect of the history.
func (l *life) beforePoint(point string, f func() error) error {
	l.hooks = append(l.hooks, hook{point: point, f: f})
	return nil
}

// afterPoint runs f just after an effect of the history.
func (l *life) afterPoint(point string, f func() error) error {
	l.hooks = append(l.hooks, hook{point: point, done: true, f: f})
	return nil
}

// foreignCommit pushes a commit of another writer to the work branch.
func (l *life) foreignCommit(name, text string) error {
	w := l.w
	dir := filepath.Join(w.dir, "other-writer")
	if _, err := gitIn(w.dir, "clone", "-q", "-b", w.branch, w.remote, dir); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", "another writer"}, {"push", "-q", "origin", w.branch}} {
		if _, err := gitIn(dir, args...); err != nil {
			return err
		}
	}
	return nil
}

// rejectOnce installs a pre-receive hook on the remote that refuses the next
// push of a branch, as a server-side policy would (the item's lease is
// let through).
func (l *life) rejectOnce() error {
	marker := filepath.Join(l.w.dir, "rejected-once")
	hook := "#!/bin/sh\ngrep -q ' refs/heads/' || exit 0\nif [ ! -e '" + marker + "' ]; then touch '" + marker + "'; echo 'push refused by the repository policy' >&2; exit 1; fi\nexit 0\n"
	return os.WriteFile(filepath.Join(l.w.remote, "hooks", "pre-receive"), []byte(hook), 0o755)
}

// editRecord adds a line to the record block, as another trusted writer would.
func (l *life) editRecord(line string) {
	c, ok := l.w.recordComment()
	if !ok {
		return
	}
	l.w.fake.EditComment(c.ID, func(cur string) string {
		return strings.Replace(cur, "<!-- roadmap:record v1\n", "<!-- roadmap:record v1\n"+line+"\n", 1)
	})
}
