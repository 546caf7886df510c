package failure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
)

// ghServer answers each issue number with one of GitHub's documented failure
// responses, so the errors below are the ones go-github really returns.
func ghServer(t *testing.T) *httptest.Server {
	t.Helper()
	release := make(chan struct{})
	mux := http.NewServeMux()
	reply := func(status int, hdr map[string]string, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			for k, v := range hdr {
				w.Header().Set(k, v)
			}
			w.WriteHeader(status)
			io.WriteString(w, body)
		}
	}
	mux.Handle("/repos/o/r/issues/1", reply(401, nil, `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest","status":"401"}`))
	mux.Handle("/repos/o/r/issues/2", reply(403, map[string]string{
		"X-RateLimit-Limit": "1000", "X-RateLimit-Remaining": "0", "X-RateLimit-Used": "1000",
		"X-RateLimit-Reset": fmt.Sprint(time.Now().Add(12 * time.Minute).Unix()), "X-RateLimit-Resource": "core",
	}, `{"message":"API rate limit exceeded for installation ID 1.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}`))
	mux.Handle("/repos/o/r/issues/3", reply(403, map[string]string{"Retry-After": "60"},
		`{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`))
	mux.Handle("/repos/o/r/issues/4", reply(403, nil, `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/issues/issues#update-an-issue","status":"403"}`))
	mux.Handle("/repos/o/r/issues/5", reply(502, map[string]string{"Content-Type": "text/html"}, "<html><body><h1>502 Bad Gateway</h1></body></html>"))
	mux.Handle("/repos/o/r/issues/6", reply(409, nil, `{"message":"Git Repository is empty.","documentation_url":"https://docs.github.com/rest"}`))
	mux.Handle("/repos/o/r/issues/7", reply(422, nil, `{"message":"Update is not a fast forward","documentation_url":"https://docs.github.com/rest/git/refs#update-a-reference","status":"422"}`))
	mux.HandleFunc("/repos/o/r/issues/8", func(w http.ResponseWriter, r *http.Request) {
		// The request arrived; the answer never comes.
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	mux.HandleFunc("/repos/o/r/issues/9", func(w http.ResponseWriter, r *http.Request) {
		// The connection drops after the request was read.
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(func() { close(release); srv.Close() })
	return srv
}

func ghClient(t *testing.T, base string, hc *http.Client) *github.Client {
	t.Helper()
	c := github.NewClient(hc)
	u, err := url.Parse(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	c.BaseURL = u
	return c
}

type classed struct{ class string }

func (e classed) Error() string        { return "push refused by the remote hook" }
func (e classed) FailureClass() string { return e.class }

func TestClassifyError(t *testing.T) {
	srv := ghServer(t)
	ctx := context.Background()
	ghErr := func(n int) error {
		// A fresh client each time: go-github remembers a rate limit and
		// refuses later requests itself.
		_, _, err := ghClient(t, srv.URL, nil).Issues.Get(ctx, "o", "r", n)
		if err == nil {
			t.Fatalf("issue %d: no error", n)
		}
		return err
	}
	slow := ghClient(t, srv.URL, &http.Client{Timeout: 100 * time.Millisecond})
	_, _, awaiting := slow.Issues.Get(ctx, "o", "r", 8)

	// A port nobody listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := l.Addr().String()
	l.Close()
	_, _, refused := ghClient(t, "http://"+closedAddr, nil).Issues.Get(ctx, "o", "r", 1)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, _, canceledErr := ghClient(t, srv.URL, nil).Issues.Get(cancelled, "o", "r", 1)

	// A read that times out on a live connection.
	l2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	conn, err := net.Dial("tcp", l2.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	_, ioTimeout := conn.Read(make([]byte, 1))

	tests := []struct {
		name string
		err  error
		want Class
	}{
		{"go-github 401", ghErr(1), Auth},
		{"go-github RateLimitError", ghErr(2), RateLimited},
		{"go-github AbuseRateLimitError", ghErr(3), RateLimited},
		{"go-github 403 without rate-limit markers", ghErr(4), Auth},
		{"go-github 502 with an HTML body", ghErr(5), Transient},
		{"go-github 409", ghErr(6), Conflict},
		{"go-github 422 not a fast forward", ghErr(7), Conflict},
		{"client timeout awaiting headers", awaiting, Indeterminate},
		{"connection dropped after the request", ghErr(9), Transient},
		{"connection refused", refused, Transient},
		{"context canceled", canceledErr, Killed},
		{"read i/o timeout", ioTimeout, Transient},
		{"wrapped: go-github 401", fmt.Errorf("update issue 7 record: %w", ghErr(1)), Auth},
		{"ECONNRESET", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, Transient},
		{"ECONNRESET without its text", fmt.Errorf("read body: %w", syscall.ECONNRESET), Transient},
		{"unexpected EOF", fmt.Errorf("decode record: %w", io.ErrUnexpectedEOF), Transient},
		{"deadline exceeded", fmt.Errorf("wait for checks: %w", context.DeadlineExceeded), Indeterminate},
		{"a class by name", fmt.Errorf("publish: %w", classed{"conflict"}), Conflict},
		{"a name not in the table falls back to text", classed{"disk_full"}, Unknown},
		{"git stderr in an error", errors.New("git push: exit status 1: ! [rejected] HEAD -> b (non-fast-forward)"), Conflict},
		{"something else", errors.New("plan: group 3 has no tasks"), Unknown},
		{"nil", nil, Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ClassifyError(tt.err); got != tt.want {
				t.Errorf("ClassifyError(%v) = %s, want %s", tt.err, got, tt.want)
			}
		})
	}
}

// TestClassifyGitOutput runs real git against a local bare remote and
// classifies what git printed.
func TestClassifyGitOutput(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	env := append(os.Environ(), "HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com",
		"LC_ALL=C")
	git := func(wd string, args ...string) (string, error) {
		cmd := exec.Command("git", append([]string{"-c", "init.defaultBranch=main", "-c", "advice.detachedHead=false"}, args...)...)
		cmd.Dir, cmd.Env = wd, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	must := func(wd string, args ...string) {
		t.Helper()
		if out, err := git(wd, args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(path, text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	remote := filepath.Join(dir, "remote.git")
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	must(dir, "init", "--bare", remote)
	must(dir, "clone", remote, a)
	write(filepath.Join(a, "worker.go"), "package webhook\n\nconst cap = 1\n")
	must(a, "add", ".")
	must(a, "commit", "-m", "base")
	must(a, "push", "origin", "HEAD:main")
	must(dir, "clone", remote, b)

	write(filepath.Join(a, "worker.go"), "package webhook\n\nconst cap = 2\n")
	must(a, "commit", "-am", "a")
	must(a, "push", "origin", "HEAD:main")
	write(filepath.Join(b, "worker.go"), "package webhook\n\nconst cap = 3\n")
	must(b, "commit", "-am", "b")

	pushOut, err := git(b, "push", "origin", "HEAD:main")
	if err == nil {
		t.Fatalf("push from b succeeded; want a non-fast-forward rejection\n%s", pushOut)
	}
	if v := Classify(Input{Log: strings.NewReader(pushOut)}); v.Class != Conflict {
		t.Errorf("rejected push: class %s from %q, want conflict\n%s", v.Class, v.Evidence, pushOut)
	}

	pullOut, err := git(b, "pull", "--no-rebase", "origin", "main")
	if err == nil {
		t.Fatalf("pull into b succeeded; want a merge conflict\n%s", pullOut)
	}
	if v := Classify(Input{Log: strings.NewReader(pullOut)}); v.Class != Conflict {
		t.Errorf("merge conflict: class %s from %q, want conflict\n%s", v.Class, v.Evidence, pullOut)
	}

	lsOut, err := git(dir, "ls-remote", "http://"+closedPort(t)+"/o/r.git")
	if err == nil {
		t.Fatal("ls-remote of a closed port succeeded")
	}
	if v := Classify(Input{Log: strings.NewReader(lsOut)}); v.Class != Transient {
		t.Errorf("unreachable remote: class %s from %q, want transient\n%s", v.Class, v.Evidence, lsOut)
	}
}

func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
