package job_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/job"
	"github.com/roadmap-dev/roadmap/internal/ledger"
	"github.com/roadmap-dev/roadmap/internal/redact"
	"github.com/roadmap-dev/roadmap/internal/world"
)

// TestDefaultsWithoutConfig: a repository with no configuration file gets
// the best behaviour, not the least: the review before ready, test
// strength, checks detected from the work tree (logged) and a day budget
// kept without a dashboard issue.
func TestDefaultsWithoutConfig(t *testing.T) {
	cfg, err := config.Load(filepath.Join(t.TempDir(), "none.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Review.Enabled || !cfg.Implement.TestStrength || !cfg.Checks.Detect || cfg.Budgets.Day.USD <= 0 {
		t.Fatalf("defaults: review %v, test strength %v, checks.detect %v, day budget $%v; want all on",
			cfg.Review.Enabled, cfg.Implement.TestStrength, cfg.Checks.Detect, cfg.Budgets.Day.USD)
	}
	files := world.SampleRepo(1)
	files["go.mod"] = "module example.com/widgets\n\ngo 1.22\n"
	w, fixtures := filesWorld(t, "ghs_defaultsworld00000000000000000000", files)
	ws, err := w.Workspace("job")
	if err != nil {
		t.Fatal(err)
	}
	s := w.Setup(implement.Phase(), ws, fixtures)
	models, prices := s.Config.Models, s.Config.Prices
	s.Config = cfg
	s.Config.Models, s.Config.Prices, s.Config.Isolation = models, prices, config.IsolationNone
	var log bytes.Buffer
	s.Log = &log
	k, err := job.Open(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	o := k.ImplementOptions(job.ImplementRun{})
	if len(o.Review.Models) == 0 {
		t.Error("the review is off without a configuration")
	}
	if !o.Strength.On || o.Strength.Floor != config.DefaultTestStrengthFloor {
		t.Errorf("test strength %+v, want on at the default floor", o.Strength)
	}
	if want := []string{"go vet ./...", "go test ./..."}; !slices.Equal(o.CheckCommands, want) {
		t.Errorf("checks = %q, want %q detected from go.mod", o.CheckCommands, want)
	}
	if !strings.Contains(log.String(), "checks.commands detected from go.mod: go vet ./...; go test ./...") {
		t.Errorf("the Job's log does not say where its checks came from:\n%s", log.String())
	}
}

// TestChecksCommandsDetectedAtRunTime: without checks.commands a Job runs
// the checks init would write for the work tree's language, with the policy
// row they need (a Python project's pytest; the interpreter stays refused
// for anything else); a configuration that names commands, or turns
// detection off, is kept as it is, and its own policy row wins.
func TestChecksCommandsDetectedAtRunTime(t *testing.T) {
	files := map[string]string{"pyproject.toml": "[project]\nname = \"calc\"\n", "calc.py": "def add(a, b):\n    return a + b\n",
		"test_calc.py": "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n"}
	w, fixtures := filesWorld(t, "ghs_detectworld0000000000000000000000", files)
	open := func(t *testing.T, edit func(*config.Config)) (*job.Kit, string) {
		t.Helper()
		ws, err := w.Workspace(strings.ReplaceAll(t.Name(), "/", "-"))
		if err != nil {
			t.Fatal(err)
		}
		s := w.Setup(implement.Phase(), ws, fixtures)
		var log bytes.Buffer
		s.Log = &log
		if edit != nil {
			edit(s.Config)
		}
		k, err := job.Open(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(k.Close)
		return k, log.String()
	}
	t.Run("detected", func(t *testing.T) {
		k, log := open(t, nil)
		if want := []string{"python3 -m pytest -q"}; !slices.Equal(k.Checks, want) {
			t.Errorf("checks = %q, want %q", k.Checks, want)
		}
		if !strings.Contains(log, "checks.commands detected from pyproject.toml: python3 -m pytest -q") {
			t.Errorf("log:\n%s", log)
		}
		if err := k.Policy.Check([]string{"python3", "-m", "pytest", "-q"}); err != nil {
			t.Errorf("the detected check is refused: %v", err)
		}
		if err := k.Policy.Check([]string{"python3", "-c", "print(1)"}); err == nil {
			t.Error("python3 -c is allowed: the detected row must allow the tests alone")
		}
	})
	t.Run("configured commands win", func(t *testing.T) {
		k, log := open(t, func(c *config.Config) { c.Checks.Commands = []string{"make check"} })
		if !slices.Equal(k.Checks, []string{"make check"}) || strings.Contains(log, "detected") {
			t.Errorf("checks = %q, log %q; want the configuration's, nothing detected", k.Checks, log)
		}
		if err := k.Policy.Check([]string{"python3", "-m", "pytest"}); err == nil {
			t.Error("python3 -m pytest is allowed though nothing was detected")
		}
	})
	t.Run("detection off", func(t *testing.T) {
		k, _ := open(t, func(c *config.Config) { c.Checks.Detect = false })
		if len(k.Checks) != 0 {
			t.Errorf("checks = %q with checks.detect false, want none", k.Checks)
		}
	})
}

// TestDayBudgetAtJobStart: with a dashboard a Job reads the day's ledger
// there and does not start once the day is spent; a continuation (Job 2
// on) does not read it again, report having read it as it dispatched it.
// Without a dashboard the ledger is on the ledger issue report keeps, and
// a Job a person starts reads nothing at its start (report's and wake's
// dispatches are checked: internal/report TestDayBudgetWithoutDashboard).
func TestDayBudgetAtJobStart(t *testing.T) {
	const token = "ghs_daybudgetworld000000000000000000"
	w, fixtures := sampleWorld(t, token)
	ctx := context.Background()
	gh, err := github.New(github.Options{BaseURL: w.GitHubURL() + "/", Token: token, Owner: "acme", Repo: "widgets",
		Masker: redact.New(redact.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if w.Clock != nil {
		now = w.Clock.Now()
	}
	spent := ledger.Entry{Day: ledger.Day(now), Issue: 9, Job: 1, USD: 1.2, ModelCalls: 3}
	ledgerIssue, err := ledger.Open(ctx, gh, 0)
	if err != nil {
		t.Fatal(err)
	}
	dash := w.Fake.CreateIssue(githubfake.Issue{Title: "roadmap dashboard", Author: "alice"})
	for _, n := range []int{ledgerIssue, dash} {
		if err := ledger.Append(ctx, gh, n, spent); err != nil {
			t.Fatal(err)
		}
	}
	open := func(name string, dashboard, number int) error {
		ws, err := w.Workspace(name)
		if err != nil {
			t.Fatal(err)
		}
		s := w.Setup(implement.Phase(), ws, fixtures)
		s.Config.Budgets.Day = config.Budget{USD: 1}
		s.Dashboard, s.Number = dashboard, number
		k, err := job.Open(ctx, s)
		if err == nil {
			k.Close()
		}
		return err
	}
	var refused *job.DayRefused
	if err := open("dashboard", dash, 1); !errors.As(err, &refused) || refused.Spent.USD != 1.2 {
		t.Fatalf("Open with the dashboard = %v, want *job.DayRefused with $1.20 spent", err)
	}
	if err := open("continuation", dash, 2); err != nil {
		t.Errorf("Open of Job 2, a continuation: %v; want it started (report checked the day before dispatching it)", err)
	}
	before := len(w.Fake.Requests())
	if err := open("no-dashboard", 0, 1); err != nil {
		t.Errorf("Open without a dashboard: %v; want it started", err)
	}
	for _, r := range w.Fake.Requests()[before:] {
		if r.Method == "GET" && strings.HasSuffix(r.Path, "/issues") {
			t.Errorf("a Job without a dashboard looked for the ledger issue (%s %s): report and wake read it", r.Method, r.Path)
		}
	}
}
