package checks

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// envRecorder is a Runner that can set the environment and records it.
type envRecorder struct{ extra []string }

func (e *envRecorder) Run(ctx context.Context, dir string, argv []string) (Result, error) {
	return e.RunEnv(ctx, dir, argv, nil)
}

func (e *envRecorder) RunEnv(ctx context.Context, dir string, argv, extra []string) (Result, error) {
	e.extra = extra
	return Result{}, nil
}

// TestLessParallelRunEnv: a command run with an environment of its own
// through LessParallel gets the parallelism's variables first and its own
// after them, so its own win (a GOFLAGS of its own keeps -p=n itself).
func TestLessParallelRunEnv(t *testing.T) {
	rec := &envRecorder{}
	r := LessParallel(rec, 2).(envRunner)
	if _, err := r.RunEnv(context.Background(), ".", []string{"go", "test"}, []string{"GOFLAGS=-p=2 -x"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"GOMAXPROCS=2", "GOFLAGS=-p=2", "GOFLAGS=-p=2 -x"}
	if diff := cmp.Diff(want, rec.extra); diff != "" {
		t.Errorf("environment (-want +got):\n%s", diff)
	}
}
