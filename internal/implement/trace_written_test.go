package implement_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// tracedJob is a Job wired the way the implement verb wires it: a trace
// recorder writing JSONL to a real file, the Job's number known up front, and
// a replay model that reports its retries to the recorder.
type tracedJob struct {
	*job
	path string
	rec  *trace.Recorder
}

// traceJob rewires j with masker: the recorder, the GitHub client's masker,
// the runner's Mask, and a replay model serving convs through the llm client
// (its retry loop sleeping on the world's clock).
func traceJob(t *testing.T, j *job, convs []*llm.Conversation, masker *redact.Masker) *tracedJob {
	t.Helper()
	w := j.w
	const attempt = 1
	path := filepath.Join(t.TempDir(), fmt.Sprintf("roadmap-trace-%d-%d.jsonl", w.issue, attempt))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	rec, err := trace.NewRecorder(f, masker, w.clock.Now, attempt)
	if err != nil {
		t.Fatal(err)
	}
	fixtures := t.TempDir()
	for _, c := range convs {
		data, err := llm.MarshalConversation(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(fixtures, c.Name+".json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// As the implement verb does: the provider's retries go to the recorder.
	model, err := llm.New(llm.Config{Provider: llm.ProviderReplay, Model: "replay-model", Fixtures: fixtures,
		Prices: map[string]llm.Price{"replay-model": {Input: 1, Output: 10}}},
		llm.WithClock(w.clock),
		llm.WithRetryObserver(func(e agent.RetryEvent) {
			if err := rec.Add(trace.Event{Type: trace.TypeRetry, Reason: e.Reason, Attempt: e.Attempt, Wait: e.Wait}); err != nil {
				t.Errorf("add retry event: %v", err)
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	gh, err := github.New(github.Options{BaseURL: w.base.GitHubURL() + "/", Token: token, Owner: owner, Repo: repo,
		Masker: masker, Clock: w.clock,
		HTTPClient: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}})
	if err != nil {
		t.Fatal(err)
	}
	j.model = &spyModel{Model: model}
	j.opts.Models = []agent.Tier{{Name: "replay-model", Model: j.model}}
	j.opts.GitHub = gh
	j.opts.Trace = rec
	j.opts.Mask = masker.Mask
	j.opts.Attempt = attempt
	return &tracedJob{job: j, path: path, rec: rec}
}

// artifact reads the JSONL file back as a reader of the uploaded artifact would.
func (tj *tracedJob) artifact(t *testing.T) []trace.Event {
	t.Helper()
	f, err := os.Open(tj.path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	events, err := trace.ReadJSONL(f)
	if err != nil {
		t.Fatalf("read the trace artifact: %v", err)
	}
	return events
}

// commitToMain commits files to the remote's main before any Job clones it:
// the plan (tasks.md) and the files its checks read.
func (w *world) commitToMain(files map[string]string) {
	t := w.t
	t.Helper()
	dir := filepath.Join(w.dir, "edit")
	run(t, w.dir, "git", "clone", "-q", w.remote, dir)
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, dir, "git", "add", "-A")
	run(t, dir, "git", "commit", "-q", "-m", "plan and fixtures")
	run(t, dir, "git", "push", "-q", "origin", "main")
}

// recordForm is e as the issue record's bounded copy keeps it: whole seconds.
func recordForm(events []trace.Event) []trace.Event {
	out := make([]trace.Event, len(events))
	for i, e := range events {
		e.Time = e.Time.Truncate(time.Second)
		out[i] = e
	}
	return out
}

// recordTrace parses the record's implement.trace.
func recordTrace(t *testing.T, r *record.Record) trace.RecordCopy {
	t.Helper()
	raw, ok := r.Trace()
	if !ok {
		t.Fatal("the record has no implement.trace")
	}
	rc, err := trace.ParseRecordCopy(string(raw))
	if err != nil {
		t.Fatalf("implement.trace does not parse: %v\n%s", err, raw)
	}
	return rc
}

var digestRE = regexp.MustCompile(`^[0-9a-f]{16}$`)

// canaries is one secret of each kind the masking test plants, built here so
// no token-shaped string is committed.
type canaries struct {
	github, aws, host, ip string
	// secret is a configured secret (redact.Config{Secrets}); it holds a
	// quote and a backslash so its JSON form differs from it.
	secret string
}

func newCanaries() canaries {
	return canaries{
		github: "ghp_" + strings.Repeat("Zq8", 12),
		aws:    "AKIA" + strings.Repeat("Q7XZ", 4),
		host:   "build-7.corp.internal",
		ip:     "10.20.30.40",
		secret: `deploy"key\7781-zeta`,
	}
}

// forms is every text that must not appear in a store: each canary, and the
// configured secret in its base64 and JSON-escaped forms too.
func (c canaries) forms() map[string]string {
	js, _ := json.Marshal(c.secret)
	return map[string]string{
		"github token": c.github, "aws key": c.aws, "private host": c.host, "private ip": c.ip,
		"configured secret": c.secret, "configured secret, base64": base64.StdEncoding.EncodeToString([]byte(c.secret)),
		"configured secret, JSON": strings.Trim(string(js), `"`),
	}
}

// noCanary fails for every canary form found in text.
func noCanary(t *testing.T, where, text string, c canaries) {
	t.Helper()
	for name, form := range c.forms() {
		if strings.Contains(text, form) {
			t.Errorf("%s holds the %s %q", where, name, form)
		}
	}
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTraceMaskingJob plants one canary of each kind where a Job meets
// untrusted text — the model's output (the model name it answers with, a
// tool it names, the arguments of a write), a check command and that
// command's output — and checks that none reaches the three stores: the
// JSONL artifact, the issue record (implement.trace and the whole body) and
// the PR comment; nor the Job's log.
func TestTraceMaskingJob(t *testing.T) {
	c := newCanaries()
	w := newWorld(t, 2, "")
	// Group 2's check names canaries and prints the file the model wrote,
	// then fails: cat has no such files.
	check := fmt.Sprintf("cat secret-out.txt %s %s %s %s", c.github, c.aws, c.host, c.ip)
	w.commitToMain(map[string]string{filepath.Join(planDir, "tasks.md"): "## 1. Greeting 1\n\n" +
		"- [ ] 1.1 Write greeting-1.txt saying hello 1; verify: `grep -q \"hello 1\" greeting-1.txt`\n\n" +
		"## 2. Greeting 2\n\n" +
		"- [ ] 2.1 Write greeting-2.txt saying hello 2; verify: `" + check + "`\n"})

	content := strings.Join([]string{"token " + c.github, "aws " + c.aws, "host " + c.host + " at " + c.ip,
		"configured " + c.secret, "base64 " + base64.StdEncoding.EncodeToString([]byte(c.secret)),
		"json " + strings.Trim(jsonText(t, c.secret), `"`)}, "\n") + "\n"
	usage := `"usage":{"tokens_in":1000,"tokens_out":100}`
	group2 := `{"comment":"written by hand: group 2 meets secrets in the model's output, its tool calls and its check","source":"hand",
"match":"task group 2 of","turns":[
 {"response":{"content":` + jsonText(t, "calling "+c.github) + `,"tool_calls":[{"name":` + jsonText(t, c.github) + `,"arguments":{}}],` + usage + `}},
 {"response":{"model":` + jsonText(t, "replay-model "+c.host) + `,"content":` + jsonText(t, "writing "+c.aws) + `,
   "tool_calls":[{"name":"write_file","arguments":{"path":"secret-out.txt","content":` + jsonText(t, content) + `}}],` + usage + `}},
 {"response":{"tool_calls":[{"name":"finish","arguments":{"summary":` + jsonText(t, "done with "+c.secret) + `}}],` + usage + `}},
 {"response":{"tool_calls":[{"name":"finish","arguments":{"summary":"still done"}}],` + usage + `}}]}`
	conv2, err := llm.ParseConversation("group-2", []byte(group2))
	if err != nil {
		t.Fatal(err)
	}
	convs := w.conversations()
	convs[1] = conv2

	masker := redact.New(redact.Config{Secrets: []string{token, c.secret}})
	tj := traceJob(t, w.newJob(convs), convs, masker)
	res := tj.run()
	if res.Result != record.ResultStopped || res.Failure != "checks_failed" || res.PR == 0 {
		t.Fatalf("result = %s/%s, PR %d; want stopped/checks_failed with a PR\n%s", res.Result, res.Failure, res.PR, tj.log.String())
	}

	artifact, err := os.ReadFile(tj.path)
	if err != nil {
		t.Fatal(err)
	}
	is, _ := w.fake.Issue(w.issue)
	r := w.record()
	rawTrace, _ := r.Trace()
	var comments []string
	for _, n := range []int{w.issue, res.PR} {
		for _, cm := range w.fake.Comments(n) {
			comments = append(comments, cm.Body)
		}
	}
	pr, _ := w.fake.Issue(res.PR)

	noCanary(t, "the JSONL artifact", string(artifact), c)
	noCanary(t, "implement.trace", string(rawTrace), c)
	noCanary(t, "the issue body", is.Body, c)
	noCanary(t, "the PR comments", strings.Join(comments, "\n"), c)
	noCanary(t, "the PR", pr.Title+"\n"+pr.Body, c)
	noCanary(t, "the Job's log", tj.log.String(), c)

	// And the canaries did reach each store, masked: a test whose secrets
	// never got there would pass on a masker that does nothing.
	var maskedModel, maskedTool, maskedCommand bool
	for _, e := range tj.artifact(t) {
		maskedModel = maskedModel || e.Type == trace.TypeModelCall && e.Model == "replay-model "+redact.DefaultPlaceholder
		maskedTool = maskedTool || e.Type == trace.TypeToolCall && e.Tool == redact.DefaultPlaceholder
		maskedCommand = maskedCommand || e.Type == trace.TypeCheckRun && e.ExitCode != 0 &&
			e.Command == "cat secret-out.txt [masked] [masked] [masked] [masked]"
	}
	if !maskedModel || !maskedTool || !maskedCommand {
		t.Errorf("the artifact lacks a masked model name (%v), tool name (%v) or check command (%v):\n%s", maskedModel, maskedTool, maskedCommand, artifact)
	}
	if !strings.Contains(string(rawTrace), `"cmd":"cat secret-out.txt [masked] [masked] [masked] [masked]"`) {
		t.Errorf("implement.trace lacks the masked check command:\n%s", rawTrace)
	}
	if log, _ := r.CheckLog(); strings.Count(log, redact.DefaultPlaceholder) < 7 {
		t.Errorf("implement.check_log should hold the check's output with each canary masked:\n%s", log)
	}
	var marked string
	for _, cm := range w.fake.Comments(res.PR) {
		if strings.Contains(cm.Body, "<!-- roadmap:implement -->") {
			marked = cm.Body
		}
	}
	if !strings.Contains(marked, "`cat secret-out.txt [masked] [masked] [masked] [masked]` (exit 1)") {
		t.Errorf("the PR comment's table lacks the masked failing command:\n%s", marked)
	}
}
