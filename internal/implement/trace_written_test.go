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
