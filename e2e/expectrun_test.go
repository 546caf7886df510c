//go:build unix

package e2e

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/redact"
)

// TestExpectRunNamesTheRule: the scheduler starts only what the fake says
// GitHub would start. The roadmap:stage label added with the workflow's
// GITHUB_TOKEN (how report once returned an item to stage) starts no run,
// and a scenario expecting one fails naming the rule; the same label from a
// person starts the caller. No act: it always runs.
func TestExpectRunNamesTheRule(t *testing.T) {
	caller, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "examples", "roadmap-caller.yml"))
	if err != nil {
		t.Fatal(err)
	}
	const workflowTok, personTok = "ghs_workflowtoken000000000000000000000", "ghp_alicetoken0000000000000000000000000"
	f := githubfake.New(githubfake.Options{Token: workflowTok, Owner: "acme", Repo: "widgets"})
	f.SetWorkflowFile("", "roadmap-caller.yml", string(caller))
	f.AddIdentity(personTok, githubfake.Identity{Login: "alice", Kind: githubfake.PersonalToken})
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	n := f.CreateIssue(githubfake.Issue{Title: "Add greetings", Author: "alice"})
	client := func(tok string) *github.Client {
		gh, err := github.New(github.Options{BaseURL: srv.URL + "/", Token: tok, Owner: "acme", Repo: "widgets",
			Masker: redact.New(redact.Config{Secrets: []string{tok}}), HTTPClient: &http.Client{Timeout: 10 * time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		return gh
	}

	if err := client(workflowTok).AddLabels(t.Context(), n, "roadmap:stage"); err != nil {
		t.Fatal(err)
	}
	_, _, err = expectRun(f, "roadmap-caller.yml", "issues")
	if err == nil || !strings.Contains(err.Error(), "caused by GITHUB_TOKEN, starts no workflow run") {
		t.Fatalf("a label by the workflow's token: error %v, want it to name GitHub's rule", err)
	}

	gh := client(personTok)
	if err := gh.RemoveLabel(t.Context(), n, "roadmap:stage"); err != nil {
		t.Fatal(err)
	}
	if err := gh.AddLabels(t.Context(), n, "roadmap:stage"); err != nil {
		t.Fatal(err)
	}
	run, ev, err := expectRun(f, "roadmap-caller.yml", "issues")
	if err != nil {
		t.Fatalf("a person's label: %v", err)
	}
	if ev.Actor != "alice" || ev.Label != "roadmap:stage" || run.Status != "in_progress" {
		t.Errorf("run %+v of event %+v, want alice's roadmap:stage label, in progress", run, ev)
	}
	if _, _, err := expectRun(f, "roadmap-caller.yml", "issues"); err == nil {
		t.Error("a second run was started for one label")
	}
}
