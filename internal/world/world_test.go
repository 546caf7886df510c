package world_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/job"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/world"
)

const token = "ghs_worldtesttoken00000000000000000000"

var t0 = time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)

func newWorld(t *testing.T, o world.Options) *world.World {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	o.Owner, o.Repo, o.Token = "acme", "widgets", token
	w, err := world.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

func git(t *testing.T, w *world.World, dir string, args ...string) string {
	t.Helper()
	out, err := world.Git(w.GitEnv(), dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNewSeedsTheItem: the sample repository is main on the remote, and the
// issue and its record comment are on the fake, read by the real client.
func TestNewSeedsTheItem(t *testing.T) {
	record := "**roadmap** · staged\n\n<!-- roadmap:record v1\nstage.plan: " + world.SamplePlanDir + "\n-->"
	w := newWorld(t, world.Options{Start: t0, Files: world.SampleRepo(2), SeedMessage: "the sample",
		Issue:         &githubfake.Issue{Title: world.SampleTitle, Body: "Add greetings.\n", Author: "alice"},
		RecordComment: record})

	files := strings.Fields(git(t, w, w.Remote, "ls-tree", "-r", "--name-only", "main"))
	want := []string{"README.md", world.SamplePlanDir + "/proposal.md", world.SamplePlanDir + "/tasks.md"}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("main's files (-want +got):\n%s", diff)
	}
	if got := git(t, w, w.Remote, "log", "-1", "--format=%s %an", "main"); got != "the sample roadmap" {
		t.Errorf("main's commit = %q, want the seed message by roadmap", got)
	}
	tasks := git(t, w, w.Remote, "show", "main:"+world.SamplePlanDir+"/tasks.md")
	if !strings.Contains(tasks, "## 2. Greeting 2") || strings.Contains(tasks, "## 3.") {
		t.Errorf("the plan has not two groups:\n%s", tasks)
	}

	gh, err := w.GitHub(http.DefaultTransport)
	if err != nil {
		t.Fatal(err)
	}
	is, err := gh.Issue(context.Background(), w.Issue)
	if err != nil {
		t.Fatal(err)
	}
	if is.Title != world.SampleTitle || is.Body != "Add greetings.\n" || is.Author != "alice" {
		t.Errorf("issue %d = %+v, want the one filed", w.Issue, is)
	}
	c, ok := w.RecordComment()
	if !ok || c.Body != record {
		t.Errorf("record comment = %q (found %v), want %q", c.Body, ok, record)
	}
	if got := w.Clock.Now(); !got.Equal(t0) {
		t.Errorf("the clock reads %v, want %v", got, t0)
	}
	if got, want := w.Branch(), "roadmap/1-add-greetings"; got != want {
		t.Errorf("Branch() = %q, want %q", got, want)
	}
}

// TestWorkspaceAndCI: a workspace is a clone of main; a pushed branch gets
// one passing status.
func TestWorkspaceAndCI(t *testing.T) {
	w := newWorld(t, world.Options{Files: map[string]string{"a/b.txt": "b\n"},
		Issue: &githubfake.Issue{Title: "Add b", Author: "alice"}})
	ws, err := w.Workspace("job-1")
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(ws, "a", "b.txt")); err != nil || string(data) != "b\n" {
		t.Fatalf("the workspace's a/b.txt = %q, %v", data, err)
	}
	if w.RemoteHead(w.Branch()) != "" {
		t.Fatal("the work branch is on the remote before a push")
	}
	git(t, w, ws, "checkout", "-q", "-b", w.Branch())
	git(t, w, ws, "commit", "-q", "--allow-empty", "-m", "work")
	git(t, w, ws, "push", "-q", "origin", w.Branch())
	head := git(t, w, ws, "rev-parse", "HEAD")
	if got := w.RemoteHead(w.Branch()); got != head {
		t.Fatalf("RemoteHead = %q, want the pushed %q", got, head)
	}
	// A remote whose refs git packed answers the same (packed-refs).
	git(t, w, w.Remote, "pack-refs", "--all")
	if _, err := os.Stat(filepath.Join(w.Remote, "refs", "heads", filepath.FromSlash(w.Branch()))); err == nil {
		t.Fatal("git pack-refs --all left the branch's loose ref")
	}
	if got := w.RemoteHead(w.Branch()); got != head {
		t.Fatalf("RemoteHead of a packed ref = %q, want %q", got, head)
	}
	if got := w.RemoteHead("no-such-branch"); got != "" {
		t.Fatalf("RemoteHead of a branch the remote has not = %q, want none", got)
	}
	w.PassCI(w.Branch(), "tests passed")
	w.PassCI(w.Branch(), "tests passed")
	if st := w.Fake.Statuses(head); len(st) != 1 {
		t.Errorf("the head has %d statuses, want 1", len(st))
	}
}

// TestGitEnvAt: with a commit date the same seed has the same sha in two
// worlds, and the host's git and GitHub variables stay out.
func TestGitEnvAt(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "ghs_host")
	t.Setenv("GIT_DIR", "/nowhere")
	sha := func() string {
		w := newWorld(t, world.Options{CommitDate: t0, Files: world.SampleRepo(1)})
		return git(t, w, w.Remote, "rev-parse", "main")
	}
	if a, b := sha(), sha(); a != b {
		t.Errorf("the seed's sha differs between two worlds: %s and %s", a, b)
	}
	for _, kv := range world.GitEnvAt(t0) {
		if strings.HasPrefix(kv, "GITHUB_TOKEN=") || strings.HasPrefix(kv, "GIT_DIR=") {
			t.Errorf("the git environment carries the host's %s", kv)
		}
	}
}

const greeting = `{"comment":"written by hand for the world's test","source":"hand","match":"say hello","turns":[
 {"response":{"tool_calls":[{"name":"finish","arguments":{"summary":"hello"}}],"usage":{"tokens_in":10,"tokens_out":1}}}]}`

func ask(t *testing.T, m agent.Model) agent.ModelResponse {
	t.Helper()
	res, err := m.Complete(context.Background(), agent.ModelRequest{Model: world.ModelName,
		Messages: []agent.Message{{Role: agent.RoleUser, Content: "say hello"}}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestModelServer: the replay model answers over the OpenAI-compatible API,
// each chat request seen first and delayed by the latency.
func TestModelServer(t *testing.T) {
	c, err := llm.ParseConversation("greeting", []byte(greeting))
	if err != nil {
		t.Fatal(err)
	}
	var seen atomic.Int64
	w := newWorld(t, world.Options{Replay: llm.NewReplay([]*llm.Conversation{c}), ModelLatency: 50 * time.Millisecond,
		OnModelRequest: func(body []byte) {
			if strings.Contains(string(body), "say hello") {
				seen.Add(1)
			}
		}})
	m, err := llm.New(llm.Config{Provider: llm.ProviderOpenAICompatible, BaseURL: w.ModelURL(), Model: world.ModelName})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res := ask(t, m)
	if len(res.Message.ToolCalls) != 1 || res.Message.ToolCalls[0].Name != "finish" {
		t.Errorf("the model answered %+v, want the recorded finish", res.Message)
	}
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Errorf("the answer took %v, less than the latency", took)
	}
	if seen.Load() != 1 || w.Replay.Stats().Calls != 1 {
		t.Errorf("hook saw %d requests, replay served %d calls; want 1 and 1", seen.Load(), w.Replay.Stats().Calls)
	}
}

// TestSetup: a Job opened with job.Open from the world's Setup stands in a
// fresh clone, with the replay model over its fixtures as its one tier and a
// client of the fake, as the binary's would.
func TestSetup(t *testing.T) {
	w := newWorld(t, world.Options{Start: t0, Files: world.SampleRepo(1), ModelPrice: llm.Price{Input: 1, Output: 10},
		Issue: &githubfake.Issue{Title: world.SampleTitle, Author: "alice"}})
	fixtures := filepath.Join(w.Dir, "fixtures")
	if err := world.WriteFiles(fixtures, map[string]string{"greeting.json": greeting}); err != nil {
		t.Fatal(err)
	}
	ws, err := w.Workspace("job-1")
	if err != nil {
		t.Fatal(err)
	}
	s := w.Setup(implement.Phase(), ws, fixtures)
	var spy *world.Spy
	s.WrapModel = func(m agent.Model) agent.Model { spy = &world.Spy{Model: m}; return spy }
	k, err := job.Open(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if k.Repo.Dir != ws {
		t.Errorf("the Job's repository is %s, want the workspace %s", k.Repo.Dir, ws)
	}
	if _, err := os.Stat(filepath.Join(ws, "README.md")); err != nil {
		t.Errorf("the workspace is not a clone of main: %v", err)
	}
	if len(k.Tiers) != 1 || k.Tiers[0].Name != world.ModelName || spy == nil {
		t.Fatalf("tiers %+v; want the one replay model, wrapped", k.Tiers)
	}
	calls := 0
	spy.Before = func(n int, _ agent.ModelRequest) { calls = n }
	if res := ask(t, k.Tiers[0].Model); res.Usage.USD == 0 {
		t.Errorf("the call cost nothing; want the model's price")
	}
	if calls != 1 || len(spy.Requests()) != 1 {
		t.Errorf("the spy saw call %d and kept %d requests, want 1 and 1", calls, len(spy.Requests()))
	}
	if _, err := k.GitHub.Issue(context.Background(), w.Issue); err != nil {
		t.Errorf("the Job's client cannot read the issue: %v", err)
	}
}
