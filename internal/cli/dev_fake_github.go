package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
)

// runDevFakeGitHub serves the fake GitHub (internal/githubfake) for the
// end-to-end run and the demo: point GITHUB_API_URL and GITHUB_GRAPHQL_URL
// (…/graphql) at the URL it prints. The state file is loaded at start when it
// exists and saved when the context ends (SIGINT or SIGTERM in the binary),
// so a run can be inspected afterwards.
func runDevFakeGitHub(ctx context.Context, env *Env, args []string) int {
	flags := newFlags(env, "dev fake-github")
	addr := flags.String("addr", "127.0.0.1:0", "`HOST:PORT` to listen on; port 0 picks a free one")
	statePath := flags.String("state", "", "state `FILE`: loaded at start when it exists, saved on exit")
	owner := flags.String("owner", "roadmap-dev", "repository `OWNER`")
	repo := "demo"
	// -R/--repo as on the verbs that read GitHub; a bare NAME (the old
	// --repo) takes its owner from --owner.
	flags.FuncP("repo", "R", "the repository `OWNER/REPO`, or its NAME with --owner (default roadmap-dev/demo)", func(s string) error {
		o, r, two := strings.Cut(s, "/")
		if !two {
			o, r = "", s
		}
		if r == "" || (two && o == "") || strings.ContainsAny(r, "/ ") {
			return fmt.Errorf("%q is not OWNER/REPO or NAME", s)
		}
		if two {
			*owner = o
		}
		repo = r
		return nil
	})
	token := flags.String("token", "", "the only `TOKEN` accepted (empty: any)")
	gitRemote := flags.String("git-remote", "", "bare repository `DIR` whose branches are the pull requests' heads")
	rateLimit := flags.Int("rate-limit", 1000, "primary budget: requests per hour per token")
	if code, ok := parseFlags(flags, args); !ok {
		return code
	}
	if flags.NArg() > 0 {
		env.Errorf("usage: roadmap dev fake-github [--addr 127.0.0.1:PORT] [--state FILE] [--owner O --repo R] [--token T] [--git-remote DIR]")
		return ExitUsage
	}
	fake := githubfake.New(githubfake.Options{
		Token: *token, Owner: *owner, Repo: repo, RateLimit: *rateLimit, GitRemote: *gitRemote,
	})
	if code := loadFakeState(env, fake, *statePath); code != ExitOK {
		return code
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		env.Errorf("dev fake-github: listen on %s: %v", *addr, err)
		return ExitInternal
	}
	srv := &http.Server{Handler: fake, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	// The URL is the one line on stdout, so a script can read it.
	fmt.Fprintf(env.Stdout, "http://%s\n", ln.Addr())
	env.Errorf("fake GitHub serving %s/%s; GraphQL at /graphql; see docs/fake-github.md", *owner, repo)

	code := serveUntilDone(ctx, env, srv, errc)
	if *statePath != "" {
		if err := fake.Save(*statePath); err != nil {
			env.Errorf("dev fake-github: %v", err)
			return ExitInternal
		}
	}
	return code
}

// loadFakeState loads the fake's state from path when the file exists.
func loadFakeState(env *Env, fake *githubfake.Fake, path string) int {
	if path == "" {
		return ExitOK
	}
	if _, err := os.Stat(path); err == nil {
		if err := fake.Load(path); err != nil {
			env.Errorf("dev fake-github: %v", err)
			return ExitUsage
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		env.Errorf("dev fake-github: state file: %v", err)
		return ExitUsage
	}
	return ExitOK
}

// serveUntilDone waits for ctx to end (then shuts srv down) or for the
// server to fail.
func serveUntilDone(ctx context.Context, env *Env, srv *http.Server, errc <-chan error) int {
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			env.Errorf("dev fake-github: shut down: %v", err)
			return ExitInternal
		}
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			env.Errorf("dev fake-github: serve: %v", err)
			return ExitInternal
		}
	}
	return ExitOK
}
