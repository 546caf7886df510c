// Command roadmap-dev is the proving floor's binary: the fault suite played
// against real roadmap processes and the real-world eval set's fetcher,
// kept out of the roadmap binary users run (tools/devcli).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/roadmap-dev/roadmap/tools/devcli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := devcli.Main(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
