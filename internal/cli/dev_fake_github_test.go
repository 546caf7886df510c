package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
)

// syncBuffer is a bytes.Buffer the verb's goroutine and the test can share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestDevFakeGitHub(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.json")
	seed := githubfake.New(githubfake.Options{Owner: "acme", Repo: "widgets"})
	n := seed.CreateIssue(githubfake.Issue{Title: "Add backoff", Body: "from the saved state"})
	if err := seed.Save(state); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outR, outW := io.Pipe()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"dev", "fake-github", "--addr", "127.0.0.1:0", "--state", state,
			"--owner", "acme", "--repo", "widgets", "--token", "t0k"}, nil, strings.NewReader(""), outW, &stderr)
		outW.Close()
	}()
	rd := bufio.NewReader(outR)
	line, err := rd.ReadString('\n')
	if err != nil {
		t.Fatalf("read the URL line: %v (stderr: %s)", err, stderr.String())
	}
	go io.Copy(io.Discard, rd)
	base := strings.TrimSpace(line)
	if !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("URL line %q", line)
	}

	call := func(method, path, body, token string) (int, map[string]any) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	if st, is := call("GET", "/repos/acme/widgets/issues/1", "", "t0k"); st != 200 || is["body"] != "from the saved state" {
		t.Errorf("GET the saved issue: %d %v", st, is)
	}
	if st, _ := call("GET", "/repos/acme/widgets/issues/1", "", "wrong"); st != 401 {
		t.Errorf("wrong token: %d, want 401", st)
	}
	if st, _ := call("POST", "/repos/acme/widgets/issues/1/comments", `{"body":"written while serving"}`, "t0k"); st != 201 {
		t.Errorf("POST a comment: %d", st)
	}

	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Fatalf("exit %d, want %d (stderr: %s)", code, ExitOK, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not stop when the context ended")
	}
	after := githubfake.New(githubfake.Options{Owner: "acme", Repo: "widgets"})
	if err := after.Load(state); err != nil {
		t.Fatal(err)
	}
	if c := after.Comments(n); len(c) != 1 || c[0].Body != "written while serving" {
		t.Errorf("saved comments %+v: want the one written while serving", c)
	}
}

func TestDevFakeGitHubUsage(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"dev", "fake-github", "extra"},
		{"dev", "fake-github", "--nope"},
		{"dev", "fake-github", "--state", bad, "--addr", "127.0.0.1:0"}, // a state file that is not JSON
	} {
		var out, errb bytes.Buffer
		if code := Main(context.Background(), args, nil, strings.NewReader(""), &out, &errb); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, ExitUsage)
		}
	}
}
