package checks

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
)

// envRunner is a Runner that can add variables to a command's environment.
type envRunner interface {
	RunEnv(ctx context.Context, dir string, argv, extra []string) (Result, error)
}

// ParallelismEnv is the environment that holds checks to n parallel
// processes: GOMAXPROCS=n for every Go program, and GOFLAGS=-p=n, which is
// `go test -p n` and `go build -p n` (at most n packages built or tested at
// once, the main use of memory in a Go check).
func ParallelismEnv(n int) []string {
	n = max(n, 1)
	return []string{"GOMAXPROCS=" + strconv.Itoa(n), "GOFLAGS=-p=" + strconv.Itoa(n)}
}

// LessParallel returns r with every command run with ParallelismEnv(n):
// the setting a continuation after an oom applies (implement.parallelism).
// A Runner that cannot set the environment fails every command rather than
// run it with the parallelism that ran out of memory.
func LessParallel(r Runner, n int) Runner {
	return lessParallel{r: r, env: ParallelismEnv(n)}
}

type lessParallel struct {
	r   Runner
	env []string
}

func (l lessParallel) Run(ctx context.Context, dir string, argv []string) (Result, error) {
	if er, ok := l.r.(envRunner); ok {
		return er.RunEnv(ctx, dir, argv, l.env)
	}
	return Result{}, fmt.Errorf("run %s with less parallelism: the check runner cannot set %v", argv[0], l.env)
}

// RunEnv adds extra after the parallelism's variables (extra wins: a
// GOFLAGS there must keep -p=n itself; internal/strength's reads it with
// `go env GOFLAGS` through Run).
func (l lessParallel) RunEnv(ctx context.Context, dir string, argv, extra []string) (Result, error) {
	if er, ok := l.r.(envRunner); ok {
		return er.RunEnv(ctx, dir, argv, append(append([]string(nil), l.env...), extra...))
	}
	return Result{}, fmt.Errorf("run %s with less parallelism: the check runner cannot set %v", argv[0], l.env)
}

func (r policyRunner) RunEnv(ctx context.Context, dir string, argv, extra []string) (Result, error) {
	env := append(r.b.Env(), extra...)
	res, err := r.p.Run(ctx, r.b, dir, argv, env)
	return fromPolicy(res), err
}

func (r sandboxRunner) RunEnv(ctx context.Context, dir string, argv, extra []string) (Result, error) {
	ws, err := r.s.Workspace()
	if err != nil {
		return Result{}, err
	}
	if real, err := filepath.EvalSymlinks(dir); err != nil || real != ws {
		return Result{}, fmt.Errorf("run %s in %s: the sandbox's workspace is %s", argv[0], dir, ws)
	}
	res, err := r.s.RunEnv(ctx, argv, extra)
	return fromPolicy(res), err
}
