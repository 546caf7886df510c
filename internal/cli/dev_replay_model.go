package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/roadmap-dev/roadmap/internal/llm"
)

// runDevReplayModel serves recorded model exchanges over the OpenAI
// chat-completions API, for the end-to-end run and the demo: point an
// openai-compatible provider's base_url at the URL it prints. It serves until
// the context ends (SIGINT or SIGTERM in the binary).
func runDevReplayModel(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "dev replay-model")
	fixtures := fs.String("fixtures", "", "`DIR` of conversations (*.json, see docs/models.md)")
	addr := fs.String("addr", "127.0.0.1:0", "`HOST:PORT` to listen on; port 0 picks a free one")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 || *fixtures == "" {
		env.Errorf("usage: roadmap dev replay-model --fixtures DIR [--addr 127.0.0.1:PORT]")
		return ExitUsage
	}
	convs, err := llm.LoadFixtures(*fixtures)
	if err != nil {
		env.Errorf("dev replay-model: %v", err)
		return ExitUsage
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		env.Errorf("dev replay-model: listen on %s: %v", *addr, err)
		return ExitInternal
	}
	srv := &http.Server{Handler: llm.NewReplay(convs), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	// The URL is the one line on stdout, so a script can read it.
	fmt.Fprintf(env.Stdout, "http://%s\n", ln.Addr())
	env.Errorf("serving %d recorded conversations from %s; POST /chat/completions, GET /_replay/stats", len(convs), *fixtures)

	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			env.Errorf("dev replay-model: shut down: %v", err)
			return ExitInternal
		}
		return ExitOK
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return ExitOK
		}
		env.Errorf("dev replay-model: serve: %v", err)
		return ExitInternal
	}
}
