package job_test

import (
	"context"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/world"
)

// TestOpenScansPushes: the git a Job opens refuses to push a commit that
// holds the Job's token in a form the masker knows (hex here), so whatever
// phase pushes, the secret never reaches the remote.
func TestOpenScansPushes(t *testing.T) {
	const token = "ghs_jobpushscantoken000000000000000000"
	w, fixtures := sampleWorld(t, token)
	ctx := context.Background()
	k, _, err := w.OpenJob(ctx, implement.Phase(), "job", fixtures, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	const branch = "roadmap/1-leak"
	if err := k.Repo.CheckoutBranch(ctx, "origin", branch, "main"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(k.Repo.Dir, "leak.txt"), []byte(hex.EncodeToString([]byte(token))+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Repo.CommitGroup(ctx, 1, git.Message{Subject: "group 1"}); err != nil {
		t.Fatal(err)
	}
	var sp *git.SecretInPush
	if err := k.Repo.Push(ctx, "origin", branch); !errors.As(err, &sp) || sp.File != "leak.txt" {
		t.Fatalf("push = %v, want *git.SecretInPush naming leak.txt", err)
	}
	if out, err := world.Git(w.GitEnv(), w.Remote, "branch", "--list", branch); err != nil || out != "" {
		t.Errorf("the remote has %q (%v), want no %s", out, err, branch)
	}
}

// sampleWorld is the sample repository's world with token as the Job's
// GitHub token, and a folder of replay fixtures for its first group.
func sampleWorld(t *testing.T, token string) (w *world.World, fixtures string) {
	t.Helper()
	return filesWorld(t, token, world.SampleRepo(1))
}

// filesWorld is sampleWorld with files as the repository.
func filesWorld(t *testing.T, token string, files map[string]string) (w *world.World, fixtures string) {
	t.Helper()
	w, err := world.New(world.Options{Dir: t.TempDir(), Owner: "acme", Repo: "widgets", Token: token,
		Files: files, Issue: &githubfake.Issue{Title: world.SampleTitle, Body: "Add greetings.\n", Author: "alice"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	convs, err := world.SampleConversations(1)
	if err != nil {
		t.Fatal(err)
	}
	fixtures = t.TempDir()
	data, err := llm.MarshalConversation(convs[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fixtures, "group-1.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return w, fixtures
}
