// Command roadmap turns GitHub issues into reviewed, tested pull requests.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/roadmap-dev/roadmap/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	environ := os.Environ()
	cli.Protect(environ)
	code := cli.Main(ctx, os.Args[1:], environ, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
