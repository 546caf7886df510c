//go:build unix

package e2e

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/roadmap-dev/roadmap/internal/cli"
)

var update = flag.Bool("update", false, "rewrite testdata/act-*.jsonl from real act runs (needs ROADMAP_E2E=1)")

// requireAct returns the act driver, or skips: the end-to-end run is opt-in
// (ROADMAP_E2E=1, set by `make e2e`) so `make test` needs no act. Once opted
// in, a missing act is a failure, never a skip.
func requireAct(t *testing.T) *Act {
	t.Helper()
	if os.Getenv("ROADMAP_E2E") != "1" {
		t.Skip("end-to-end run under act: set ROADMAP_E2E=1 or run `make e2e`")
	}
	if stand, ok := scheduled[t.Name()]; ok && os.Getenv("ROADMAP_E2E_ALL") != "1" {
		t.Skipf("runs nightly (e2e-sweep.yml; here: make e2e E2E_ALL=1); on every change %s stand for it (e2e/scheduled_test.go)", strings.Join(stand, ", "))
	}
	bin := os.Getenv("ROADMAP_ACT")
	if bin == "" {
		bin = filepath.Join(repoRoot(t), ".tools", "bin", "act")
	}
	goBin := os.Getenv("GO")
	if goBin == "" {
		goBin = "go"
	}
	a, err := NewAct(t.Context(), bin, goBin, repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root: %v", err)
	}
	return root
}

// request is what the loopback API server saw of one call.
type request struct {
	Method, Path, Auth string
	Body               map[string]any
}

// apiRecorder stands in for the GitHub API: it answers 201 to everything and
// keeps what it was sent.
type apiRecorder struct {
	mu   sync.Mutex
	reqs []request
}

func (rec *apiRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	req := request{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization")}
	if err := json.Unmarshal(raw, &req.Body); err != nil {
		req.Body = map[string]any{"unparsed": string(raw)}
	}
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, req)
	rec.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	fmt.Fprint(w, `{"id":1}`)
}

func (rec *apiRecorder) requests() []request {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]request(nil), rec.reqs...)
}

// TestActSmoke runs .github/workflows/e2e-smoke.yml under act: checkout of the
// repository itself, the local composite action that builds roadmap and execs
// it, job outputs (one multi-line) across needs:, a second job with
// if: always() that reads needs.first.result and calls the API through
// $GITHUB_API_URL, and the guarded upload whose file the e2e reads instead.
// A job that fails, or whose step is killed, must still hand its outputs on.
func TestActSmoke(t *testing.T) {
	act := requireAct(t)
	root := repoRoot(t)
	tests := []struct {
		name      string
		failFirst string
		killFirst bool // SIGKILL the first job's held step, as a runner losing the job would
		wantExit  int
		wantFirst string
	}{
		{name: "ok", failFirst: "false", wantExit: 0, wantFirst: "success"},
		{name: "first fails", failFirst: "true", wantExit: 1, wantFirst: "failure"},
		{name: "first killed", failFirst: "false", killFirst: true, wantExit: 1, wantFirst: "failure"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			repo, err := PrepareRepo(ctx, root, t.TempDir(), "acme/widgets")
			if err != nil {
				t.Fatal(err)
			}
			rec := &apiRecorder{}
			srv := httptest.NewServer(rec)
			defer srv.Close()
			artifacts := t.TempDir()

			run, err := act.Start(ctx, Run{
				Repo:     repo,
				Workflow: ".github/workflows/e2e-smoke.yml",
				Event:    "workflow_dispatch",
				Inputs: map[string]string{
					"issue":      "42",
					"fail-first": tt.failFirst,
					"hold-first": fmt.Sprint(tt.killFirst),
				},
				APIURL:  srv.URL,
				Env:     map[string]string{"ROADMAP_E2E_ARTIFACTS": artifacts},
				Secrets: map[string]string{"GITHUB_TOKEN": "e2e-token-42"},
				Scratch: t.TempDir(),
			})
			if err != nil {
				t.Fatal(err)
			}
			if tt.killFirst {
				p, err := waitForStep(run, "sleep", 2*time.Minute)
				if err != nil {
					t.Error(err)
					cancel() // stops act, which would otherwise wait out the held step
				} else if err := syscall.Kill(p.PID, syscall.SIGKILL); err != nil {
					t.Errorf("kill the held step %d: %v", p.PID, err)
				}
			}
			res, err := run.Wait()
			if err != nil {
				t.Fatalf("%v\nact log:\n%s", err, parseLog(run.Output()).Log)
			}
			t.Logf("act ran in %s", res.Elapsed.Round(10*time.Millisecond))
			defer func() {
				if t.Failed() {
					t.Logf("act log:\n%s", res.Log)
				}
			}()
			if *update {
				name := "act-smoke-" + strings.ReplaceAll(tt.name, " ", "-") + ".jsonl"
				if err := os.WriteFile(filepath.Join("testdata", name), res.Output, 0o644); err != nil {
					t.Fatal(err)
				}
			}

			if res.ExitCode != tt.wantExit {
				t.Errorf("act exit code = %d, want %d", res.ExitCode, tt.wantExit)
			}
			wantJobs := map[string]string{"e2e-smoke/first": tt.wantFirst, "e2e-smoke/second": "success"}
			if diff := cmp.Diff(wantJobs, res.Jobs); diff != "" {
				t.Errorf("job results (-want +got):\n%s", diff)
			}

			if tt.killFirst {
				killed := slices.ContainsFunc(res.Steps, func(s StepResult) bool {
					return s.Step == "Hold until killed" && s.Result == "failure" && s.Error == "signal: killed"
				})
				if !killed {
					t.Errorf("steps = %+v, want the held step failed with signal: killed", res.Steps)
				}
			}

			// What actions/upload-artifact would have uploaded.
			raw, err := os.ReadFile(filepath.Join(artifacts, "smoke-version", "version.json"))
			if err != nil {
				t.Fatalf("artifact kept for the e2e: %v", err)
			}
			var v struct{ Version, Go string }
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatalf("artifact: %v\n%s", err, raw)
			}
			if !smokeVersion(v.Version, repo.SHA) || !strings.HasPrefix(v.Go, "go") {
				t.Errorf("artifact says version %q go %q, want %q or Go's pseudo-version of %s, and a go version", v.Version, v.Go, cli.Version, repo.SHA)
			}
			// The version crossed needs: into the second job's summary.
			wantSummary := fmt.Sprintf("e2e-smoke: first job %s, roadmap %s\n", tt.wantFirst, v.Version)
			if got := res.Summaries["e2e-smoke/second"]; got != wantSummary {
				t.Errorf("second job's step summary = %q, want %q", got, wantSummary)
			}

			// The multi-line output crossed needs: intact: as many lines as the file.
			lines := strings.Count(strings.TrimRight(string(raw), "\n"), "\n") + 1
			want := []request{{
				Method: "POST",
				Path:   "/repos/acme/widgets/issues/42/comments",
				Auth:   "Bearer e2e-token-42",
				Body: map[string]any{"body": fmt.Sprintf("e2e-smoke result=%s version=%s json_lines=%d sha=%s",
					tt.wantFirst, v.Version, lines, repo.SHA)},
			}}
			if diff := cmp.Diff(want, rec.requests()); diff != "" {
				t.Errorf("API requests (-want +got):\n%s", diff)
			}
		})
	}
}

// waitForStep polls act's step processes until one named comm runs.
func waitForStep(run *Started, comm string, timeout time.Duration) (Process, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		procs, err := run.StepProcesses()
		if err != nil {
			return Process{}, err
		}
		for _, p := range procs {
			if p.Comm == comm {
				return p, nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return Process{}, fmt.Errorf("no step process %q under act after %s:\n%s", comm, timeout, parseLog(run.Output()).Log)
}

// smokeVersion: version is what `roadmap version --json` says of the smoke action's `go build`
// of the snapshot at sha (cli.Build): cli.Version ("dev") when Go stamped nothing
// (GOFLAGS=-buildvcs=false), else Go's pseudo-version of that commit, "+dirty" when the
// checkout had changes.
func smokeVersion(version, sha string) bool {
	if version == cli.Version {
		return true
	}
	return len(sha) >= 12 && regexp.MustCompile(`^v0\.0\.0-\d{14}-`+regexp.QuoteMeta(sha[:12])+`(\+dirty)?$`).MatchString(version)
}
