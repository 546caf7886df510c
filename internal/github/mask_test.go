package github

import (
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/redact"
)

// TestMaskedWrites checks that a ghp_ token, an AWS access key id and a
// configured secret value never reach GitHub, in any text the Client writes.
func TestMaskedWrites(t *testing.T) {
	const (
		ghp    = "ghp_R8x2kQ7vT1mZ9wLp4sYc6bNf3hJd0aGe5uVi"
		akia   = "AKIA2E0A8F3B244C9986"
		secret = "hunter2-staging-db-passphrase"
	)
	masker := redact.New(redact.Config{Secrets: []string{secret}})
	e := newEnv(t, githubfake.Options{}, func(o *Options) { o.Masker = masker })
	leak := "log tail: token " + ghp + " key " + akia + " password " + secret + " end"
	// The person's body holds a secret too: roadmap never writes or masks
	// the body, so it stays as the person wrote it (removing a credential
	// from it is the person's business, not a side effect of a record write).
	personBody := "person\n\n```\npassword: " + secret + "\n```\n"
	n := e.fake.CreateIssue(githubfake.Issue{Title: "t", Body: personBody})

	writes := map[string]func() error{
		// The record comment is written through the same CreateComment
		// and EditComment (internal/recordstore masks its changes first).
		"comment": func() error {
			cm, err := e.c.CreateComment(ctx, n, leak)
			if err != nil {
				return err
			}
			_, err = e.c.EditComment(ctx, cm.ID, "again "+leak)
			return err
		},
		"marker comment": func() error {
			_, err := e.c.UpsertMarkerComment(ctx, n, "<!-- roadmap:status -->", leak)
			return err
		},
		"pull request": func() error {
			pr, err := e.c.CreateDraftPR(ctx, "b", "main", "title "+ghp, leak)
			if err != nil {
				return err
			}
			_, err = e.c.UpdatePR(ctx, pr.Number, "again "+akia, "body "+leak)
			return err
		},
		"status description": func() error {
			return e.c.CreateStatus(ctx, sha1, "roadmap", "failure", secret+" "+akia, "")
		},
		"dispatch input": func() error {
			_, err := e.c.DispatchWorkflow(ctx, "w.yml", "main", map[string]any{"note": leak})
			return err
		},
	}
	for name, write := range writes {
		if err := write(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	var bodies int
	for _, r := range e.fake.Requests() {
		if r.Body == "" {
			continue
		}
		bodies++
		for _, s := range []string{ghp, akia, secret} {
			if strings.Contains(r.Body, s) {
				t.Errorf("%s %s carried %q unmasked: %s", r.Method, r.Path, s, r.Body)
			}
		}
		if !strings.Contains(r.Body, redact.DefaultPlaceholder) {
			t.Errorf("%s %s: no placeholder in %s", r.Method, r.Path, r.Body)
		}
	}
	if is, _ := e.fake.Issue(n); is.Body != personBody {
		t.Errorf("issue body changed to %q, want it byte for byte as the person wrote it", is.Body)
	}
	if got := e.count("PATCH /repos/{owner}/{repo}/issues/{n}"); got != 0 {
		t.Errorf("%d writes of the issue, want none", got)
	}
	if bodies < 6 {
		t.Errorf("only %d writes reached the fake", bodies)
	}
}
