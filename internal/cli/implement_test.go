package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/demo"
	"github.com/roadmap-dev/roadmap/internal/implement"
)

// runImplementJob runs `roadmap implement` for the world's item in a fresh
// workspace with the given configuration and extra flags.
func runImplementJob(t *testing.T, w *demo.World, cfg string, attempt int, extra ...string) implement.Result {
	t.Helper()
	res, code, log := implementJob(t, w, cfg, attempt, extra...)
	if code != ExitOK {
		t.Fatalf("implement exited %d\n%s", code, log)
	}
	return res
}

// implementJob is runImplementJob for a Job that may stop: its result, exit
// code and log.
func implementJob(t *testing.T, w *demo.World, cfg string, attempt int, extra ...string) (implement.Result, int, string) {
	t.Helper()
	ws, err := w.Workspace(fmt.Sprintf("job-%d-%s", attempt, strings.ReplaceAll(t.Name(), "/", "-")))
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"implement", "--issue", fmt.Sprint(w.Issue), "--attempt", fmt.Sprint(attempt), "--config", cfg,
		"--workdir", ws, "--json"}, extra...)
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), args, w.Env(int64(8000+attempt), t.TempDir()), strings.NewReader(""), &stdout, &stderr)
	var res implement.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("implement exited %d; result: %v\n%s\n%s", code, err, stdout.String(), stderr.String())
	}
	return res, code, stderr.String()
}

// TestImplementRecord: a Job run with --record against the replay server
// writes fixtures; a Job on a fresh item replayed from them in-process ends
// the same way at the same spend. Both are whole Jobs to ready (recording
// is of every model call a Job makes, the review's included), in the
// smallest world that has them: the demo's plan cut to one group, test
// strength off (it makes no model call).
func TestImplementRecord(t *testing.T) {
	ctx := context.Background()
	recorded := filepath.Join(t.TempDir(), "recorded")

	w1, err := demo.NewWorld(ctx, t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w1.Close()
	oneGroupWorld(t, w1)
	cfg1, _ := w1.Config()
	cfg1 = withoutTestStrength(t, cfg1)
	ci1, stop1 := context.WithCancel(ctx)
	defer stop1()
	go w1.PlayCI(ci1)
	first := runImplementJob(t, w1, cfg1, 1, "--record", recorded)
	files, _ := filepath.Glob(filepath.Join(recorded, "*.json"))
	// One per group, and the review before ready (the demo's configuration
	// turns it on).
	if len(files) != 2 {
		t.Fatalf("--record wrote %d fixtures, want one per group and the review's (2)", len(files))
	}

	w2, err := demo.NewWorld(ctx, t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	oneGroupWorld(t, w2)
	cfg2 := filepath.Join(t.TempDir(), "replay.yml")
	os.WriteFile(cfg2, []byte("models:\n  - provider: replay\n    name: demo-model\n    fixtures: "+recorded+
		"\nprices:\n  demo-model: {input: 0.15, output: 0.60}\nchecks:\n  commands: [\"go vet ./...\"]\nimplement:\n  poll_interval: 1s\n  watch_timeout: 60s\nreview:\n  enabled: true\n"), 0o644)
	ci2, stop2 := context.WithCancel(ctx)
	defer stop2()
	go w2.PlayCI(ci2)
	second := runImplementJob(t, w2, cfg2, 1)
	if first.Result != "ready" || second.Result != first.Result || second.Spend != first.Spend {
		t.Errorf("recorded run: %s %+v; replayed run: %s %+v; want the same result and spend", first.Result, first.Spend, second.Result, second.Spend)
	}
}
