package event

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func envFrom(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFromEnv(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := map[string]string{"GITHUB_REPOSITORY": "octo/app", "GITHUB_RUN_ID": "77", "GITHUB_RUN_ATTEMPT": "2", "GITHUB_ACTOR": "alice"}
	tests := []struct {
		name    string
		event   string
		payload string
		want    Event
	}{
		{
			name:    "labeled issue",
			event:   "issues",
			payload: `{"action":"labeled","issue":{"number":12,"title":"x"},"label":{"name":"roadmap:implement"}}`,
			want:    Event{Name: "issues", Action: "labeled", Owner: "octo", Repo: "app", Issue: 12, Label: "roadmap:implement", Actor: "alice", RunID: 77, RunAttempt: 2},
		},
		{
			name:    "dispatch inputs",
			event:   "workflow_dispatch",
			payload: `{"inputs":{"issue":"31","attempt":3,"dry":true}}`,
			want:    Event{Name: "workflow_dispatch", Owner: "octo", Repo: "app", Issue: 31, Actor: "alice", RunID: 77, RunAttempt: 2, Inputs: map[string]string{"issue": "31", "attempt": "3", "dry": "true"}},
		},
		{
			name:    "comment",
			event:   "issue_comment",
			payload: `{"action":"created","issue":{"number":5},"comment":{"id":9,"body":"use option B","author_association":"MEMBER","user":{"login":"bob","type":"User"}}}`,
			want: Event{Name: "issue_comment", Action: "created", Owner: "octo", Repo: "app", Issue: 5, Actor: "alice", RunID: 77, RunAttempt: 2,
				Comment: &Comment{ID: 9, Body: "use option B", Author: "bob", AuthorAssociation: "MEMBER"}},
		},
		{
			name:    "pull request",
			event:   "pull_request",
			payload: `{"action":"synchronize","pull_request":{"number":4,"head":{"sha":"abc","ref":"roadmap/1-x"},"base":{"ref":"main"}}}`,
			want: Event{Name: "pull_request", Action: "synchronize", Owner: "octo", Repo: "app", Actor: "alice", RunID: 77, RunAttempt: 2,
				PullRequest: &PullRequest{Number: 4, HeadSHA: "abc", HeadRef: "roadmap/1-x", BaseRef: "main"}},
		},
		{
			name:    "pull request from a fork",
			event:   "pull_request",
			payload: `{"action":"opened","pull_request":{"number":5,"head":{"sha":"def","ref":"main","repo":{"full_name":"mallory/app"}},"base":{"ref":"main","repo":{"full_name":"octo/app"}}}}`,
			want: Event{Name: "pull_request", Action: "opened", Owner: "octo", Repo: "app", Actor: "alice", RunID: 77, RunAttempt: 2,
				PullRequest: &PullRequest{Number: 5, HeadSHA: "def", HeadRef: "main", BaseRef: "main", HeadRepo: "mallory/app", BaseRepo: "octo/app"}},
		},
		{
			name:    "pull request from a deleted fork",
			event:   "pull_request",
			payload: `{"action":"synchronize","pull_request":{"number":6,"head":{"sha":"fed","ref":"x","repo":null},"base":{"ref":"main","repo":{"full_name":"octo/app"}}}}`,
			want: Event{Name: "pull_request", Action: "synchronize", Owner: "octo", Repo: "app", Actor: "alice", RunID: 77, RunAttempt: 2,
				PullRequest: &PullRequest{Number: 6, HeadSHA: "fed", HeadRef: "x", BaseRef: "main", BaseRepo: "octo/app"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range base {
				env[k] = v
			}
			env["GITHUB_EVENT_NAME"] = tt.event
			env["GITHUB_EVENT_PATH"] = write(strings.ReplaceAll(tt.name, " ", "_")+".json", tt.payload)
			got, err := FromEnv(envFrom(env))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("event (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFromEnvErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"issue": [`), 0o644)
	if _, err := FromEnv(envFrom(map[string]string{"GITHUB_EVENT_PATH": bad})); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("malformed payload: err = %v, want an error naming the file", err)
	}
	if _, err := FromEnv(envFrom(map[string]string{"GITHUB_RUN_ID": "x"})); err == nil {
		t.Error("bad GITHUB_RUN_ID: want an error")
	}
	ev, err := FromEnv(envFrom(map[string]string{"GITHUB_EVENT_PATH": filepath.Join(dir, "missing.json")}))
	if err != nil || ev == nil {
		t.Errorf("missing payload file: got %v, %v; want an empty event", ev, err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(`{"action":"labeled","issue":{"number":12},"label":{"name":"roadmap:implement"}}`)
	f.Add(`{"inputs":{"issue":"31","attempt":3}}`)
	f.Add(`{"comment":{"body":"\u0000","user":null}}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, s string) {
		var ev Event
		_ = Decode(strings.NewReader(s), &ev)
		if ev.Issue < 0 {
			t.Errorf("negative issue number %d", ev.Issue)
		}
	})
}
