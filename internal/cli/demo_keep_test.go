package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/demo"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// TestDemoTimeline: the timeline is the traces' events: a section per Job
// in the order they ran, a bar per group and span at its own times, and a
// Job whose trace has no end drawn as killed inside its open group.
func TestDemoTimeline(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	job1 := []trace.Event{
		{Seq: 1, Time: at(0), Type: trace.TypePhase, Job: 1, Phase: trace.PhaseJobStarted, Step: "job 1"},
		{Seq: 2, Time: at(1), Type: trace.TypePhase, Job: 1, Group: 1, Phase: trace.PhaseGroupStarted, Step: "Hello"},
		{Seq: 3, Time: at(4), Type: trace.TypePhase, Job: 1, Group: 1, Phase: trace.PhaseAgent, Step: "group 1", Duration: 2500 * time.Millisecond},
		{Seq: 4, Time: at(5), Type: trace.TypePhase, Job: 1, Group: 1, Phase: trace.PhaseGroupPassed, Step: "group 1", Duration: 4 * time.Second},
		{Seq: 5, Time: at(5), Type: trace.TypePhase, Job: 1, Group: 2, Phase: trace.PhaseGroupStarted, Step: "Good:bye; #2"},
		{Seq: 6, Time: at(7), Type: trace.TypeModelCall, Job: 1, Group: 2, Model: "m", Duration: time.Second},
	}
	job2 := []trace.Event{
		{Seq: 1, Time: at(20), Type: trace.TypePhase, Job: 2, Phase: trace.PhaseJobStarted, Step: "job 2"},
		{Seq: 2, Time: at(30), Type: trace.TypePhase, Job: 2, Phase: trace.PhaseWatch, Step: "watch", Duration: 3 * time.Second},
		{Seq: 3, Time: at(31), Type: trace.TypePhase, Job: 2, Phase: trace.PhaseReady, Step: "ready"},
	}
	dir := t.TempDir()
	for name, evs := range map[string][]trace.Event{"trace-job-2.jsonl": job2, "trace-job-1.jsonl": job1} {
		var b bytes.Buffer
		for _, e := range evs {
			line, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(append(line, '\n'))
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	traces, err := readTraces(dir)
	if err != nil {
		t.Fatal(err)
	}
	md := timelineMarkdown("the Jobs of issue #1", traces)
	ms := func(s float64) int64 { return at(s).UnixMilli() }
	want := "```mermaid\ngantt\n" +
		"    title the Jobs of issue 1\n" +
		"    dateFormat x\n    axisFormat %H:%M:%S\n" +
		"    section implement Job 1\n" +
		fmt.Sprintf("    started :milestone, t1, %d, %d\n", ms(0), ms(0.001)) +
		fmt.Sprintf("    group 1 agent :t2, %d, %d\n", ms(1.5), ms(4)) +
		fmt.Sprintf("    group 1 Hello passed :done, t3, %d, %d\n", ms(1), ms(5)) +
		fmt.Sprintf("    group 2 Good bye 2 (no end) :crit, t4, %d, %d\n", ms(5), ms(7)) +
		fmt.Sprintf("    killed no result :crit, milestone, t5, %d, %d\n", ms(7), ms(7.001)) +
		"    section implement Job 2\n" +
		fmt.Sprintf("    started :milestone, t6, %d, %d\n", ms(20), ms(20.001)) +
		fmt.Sprintf("    watch :t7, %d, %d\n", ms(27), ms(30)) +
		fmt.Sprintf("    ready :milestone, t8, %d, %d\n", ms(31), ms(31.001)) +
		"```\n"
	if !strings.HasSuffix(md, want) {
		t.Errorf("timeline:\n%s\nwant it to end with\n%s", md, want)
	}
	if !strings.Contains(md, "`trace-job-1.jsonl`, `trace-job-2.jsonl`") {
		t.Errorf("the timeline does not name its traces in order:\n%s", md)
	}
}

// The whole demo (a stage Job, an implement Job killed in group 2, its
// continuation, three reports) is played once per test process, as a person
// runs it: the binary at a terminal, NO_COLOR set, with --keep. The tests
// that read a play share it: TestDemoKeepsSummaryAndTimeline reads what it
// kept, TestTerminalOutput its screen. plays counts the plays
// (TestDemoPlayedOnce).
var demoPlay struct {
	once         sync.Once
	keep, screen string
	err          error
	plays        atomic.Int32
}

// playedDemo is the package's play of the demo: the folder it kept and
// what its terminal showed.
func playedDemo(t *testing.T) (keep, screen string) {
	t.Helper()
	if testing.Short() {
		t.Skip("the demo runs the whole item (-short)")
	}
	demoPlay.once.Do(func() {
		demoPlay.plays.Add(1)
		demoPlay.keep, demoPlay.screen, demoPlay.err = playDemoAtTerminal()
	})
	if demoPlay.err != nil {
		t.Fatalf("the demo's play failed (the first test to read it says more): %v", demoPlay.err)
	}
	return demoPlay.keep, demoPlay.screen
}

func playDemoAtTerminal() (keep, screen string, err error) {
	bin, err := roadmapBinary()
	if err != nil {
		return "", "", err
	}
	dir, err := os.MkdirTemp("", "roadmap-cli-test-demo-")
	if err != nil {
		return "", "", err
	}
	sharedDirs = append(sharedDirs, dir)
	keep = filepath.Join(dir, "kept")
	p, err := newPTY()
	if err != nil {
		return "", "", err
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "demo", "--keep", keep, "--verbose")
	cmd.Stdout, cmd.Stderr = p.tty, p.tty
	cmd.Env = append(demoEnviron(), "NO_COLOR=1")
	runErr := cmd.Run()
	screen, err = p.screen()
	if err != nil {
		return "", "", err
	}
	if runErr != nil {
		return "", "", fmt.Errorf("roadmap demo: %v\n%s", runErr, screen)
	}
	return keep, screen, nil
}

// TestDemoPlayedOnce: the tests that read the demo's play share one play
// per test process (TestMain checks the count again after every test).
func TestDemoPlayedOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("under -short the demo is not played at all")
	}
	t.Run("the kept files", TestDemoKeepsSummaryAndTimeline)
	t.Run("the terminal", func(t *testing.T) {
		keep, screen := playedDemo(t)
		checkDemoAtTerminal(t, keep, screen)
	})
	if n := demoPlay.plays.Load(); n != 1 {
		t.Errorf("the demo was played %d times, want once", n)
	}
}

// TestDemoKeepsSummaryAndTimeline: `roadmap demo --keep DIR` leaves in DIR
// the step summary the Jobs wrote (what GITHUB_STEP_SUMMARY would get) and a
// Mermaid timeline drawn from the Jobs' traces, and names both (in --json
// too); off a terminal its progress keeps the workflow commands as they are.
//
// What the whole item leaves is read from the package's one play
// (playedDemo, at a terminal). The --json output and the progress off a
// terminal are runDemo's around any play: they are shown in process with
// stand-ins for the play (demoRun), no Job run.
func TestDemoKeepsSummaryAndTimeline(t *testing.T) {
	t.Run("--json off a terminal", func(t *testing.T) { demoJSONOffTerminal(t) })
	t.Run("what the item left", func(t *testing.T) {
		keep, screen := playedDemo(t)
		m := regexp.MustCompile(`roadmap explain ([0-9]+) --state `).FindStringSubmatch(screen)
		if m == nil {
			t.Fatalf("the demo does not say how to explain its issue:\n%s", screen)
		}
		issue, _ := strconv.Atoi(m[1])
		checkDemoKept(t, keep, issue)
	})
}

// demoJSONOffTerminal runs `roadmap demo --keep DIR --json` in process with
// stdout and stderr off a terminal, twice, with stand-ins for the play:
// the real demo.Run whose Jobs are a program that prints a workflow
// command and fails (so the progress is the demo's own writer's), then a
// play that leaves a trace and a step summary and returns a ready item.
func demoJSONOffTerminal(t *testing.T) {
	defer func(run func(context.Context, demo.Options) (*demo.Summary, error)) { demoRun = run }(demoRun)
	keep := filepath.Join(t.TempDir(), "kept")
	environ := demoEnviron()

	// The Jobs' lines reach the progress (stderr under --json) as they are.
	var rendered []bool
	demoRun = func(ctx context.Context, o demo.Options) (*demo.Summary, error) {
		rendered = append(rendered, o.Render != nil)
		o.Command = func(ctx context.Context, args []string) *exec.Cmd {
			return exec.CommandContext(ctx, "sh", "-c", "echo '::group::roadmap: group 1 of 3: Hello' >&2; echo '::endgroup::' >&2; exit 3")
		}
		return demo.Run(ctx, o)
	}
	var stdout, stderr bytes.Buffer
	if code := Main(t.Context(), []string{"demo", "--keep", keep, "--json", "--verbose"}, environ, strings.NewReader(""), &stdout, &stderr); code != ExitInternal {
		t.Errorf("a demo whose stage Job fails: exit %d, want %d", code, ExitInternal)
	}
	if !strings.Contains(stderr.String(), "\n        │ ::group::roadmap: group 1 of 3: Hello\n        │ ::endgroup::\n") {
		t.Errorf("off a terminal the Jobs' ::group:: lines are not shown as they are:\n%s", stderr.String())
	}
	if strings.Contains(stdout.String(), "::group::") {
		t.Errorf("under --json the Jobs' lines reach stdout:\n%s", stdout.String())
	}

	// --json names the kept step summary and timeline; the step summary is
	// what the Jobs appended to GITHUB_STEP_SUMMARY, the timeline their
	// traces'.
	if err := os.RemoveAll(keep); err != nil {
		t.Fatal(err)
	}
	started := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	demoRun = func(ctx context.Context, o demo.Options) (*demo.Summary, error) {
		rendered = append(rendered, o.Render != nil)
		var summary string
		for _, kv := range o.ExtraEnv {
			if v, ok := strings.CutPrefix(kv, "GITHUB_STEP_SUMMARY="); ok {
				summary = v
			}
		}
		f, err := os.OpenFile(summary, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return nil, fmt.Errorf("the Jobs' GITHUB_STEP_SUMMARY %q: %v", summary, err)
		}
		fmt.Fprintf(f, "## roadmap · implement #1 · Job 2: ready\n")
		f.Close()
		ev, _ := json.Marshal(trace.Event{Seq: 1, Time: started, Type: trace.TypePhase, Job: 2, Phase: trace.PhaseJobStarted, Step: "job 2"})
		if err := os.WriteFile(filepath.Join(o.Dir, "trace-job-2.jsonl"), append(ev, '\n'), 0o644); err != nil {
			return nil, err
		}
		return &demo.Summary{Issue: 1, Result: "ready", Dir: o.Dir}, nil
	}
	stdout.Reset()
	stderr.Reset()
	if code := Main(t.Context(), []string{"demo", "--keep", keep, "--json"}, environ, strings.NewReader(""), &stdout, &stderr); code != ExitOK {
		t.Fatalf("roadmap demo --json: exit %d\n%s", code, stderr.String())
	}
	var got struct {
		Issue       int    `json:"issue"`
		Result      string `json:"result"`
		Dir         string `json:"dir"`
		StepSummary string `json:"step_summary"`
		Timeline    string `json:"timeline"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout.String())
	}
	if got.StepSummary != filepath.Join(keep, "step-summary.md") || got.Timeline != filepath.Join(keep, "timeline.md") {
		t.Errorf("step_summary %q, timeline %q; want both in %s", got.StepSummary, got.Timeline, keep)
	}
	if got.Issue != 1 || got.Result != "ready" || got.Dir != keep {
		t.Errorf("issue %d, result %q, dir %q; want the play's 1, ready, %s", got.Issue, got.Result, got.Dir, keep)
	}
	if summary, _ := os.ReadFile(got.StepSummary); string(summary) != "## roadmap · implement #1 · Job 2: ready\n" {
		t.Errorf("the kept step summary is not what the Jobs appended: %q", summary)
	}
	start := fmt.Sprintf("section implement Job 2\n    started :milestone, t1, %d, %d\n", started.UnixMilli(), started.UnixMilli()+1)
	if tl, _ := os.ReadFile(got.Timeline); !strings.Contains(string(tl), start) {
		t.Errorf("the kept timeline is not drawn from the Jobs' traces (want %q):\n%s", start, tl)
	}
	if len(rendered) != 2 || rendered[0] || rendered[1] {
		t.Errorf("runDemo off a terminal passed a renderer to the play: %v", rendered)
	}
}

// checkDemoKept checks what a whole play of the demo kept in keep for its
// issue: the step summary of the stage Job and of the continuation (none
// of Job 1, killed before it could write one), and a timeline with a
// section per Job, Job 1's kill in its own, each Job's start where its
// trace says.
func checkDemoKept(t *testing.T, keep string, issue int) {
	t.Helper()
	summary, err := os.ReadFile(filepath.Join(keep, "step-summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		fmt.Sprintf("### roadmap stage · issue #%d: staged", issue),     // the stage Job's
		fmt.Sprintf("## roadmap · implement #%d · Job 2: ready", issue), // the continuation's
		"```mermaid\ngantt",
	} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("the step summary lacks %q:\n%s", want, summary)
		}
	}
	if strings.Contains(string(summary), "· Job 1:") {
		t.Errorf("the step summary has one from Job 1, which was killed before it could write one:\n%s", summary)
	}

	timeline, err := os.ReadFile(filepath.Join(keep, "timeline.md"))
	if err != nil {
		t.Fatal(err)
	}
	tl := string(timeline)
	for _, want := range []string{"```mermaid\ngantt\n", "section stage Job 1\n", "section implement Job 1\n", "section implement Job 2\n",
		"killed no result :crit, milestone", "ready :milestone"} {
		if !strings.Contains(tl, want) {
			t.Errorf("the timeline lacks %q:\n%s", want, tl)
		}
	}
	if i, j := strings.Index(tl, "killed no result"), strings.Index(tl, "section implement Job 2"); i < 0 || j < 0 || i > j {
		t.Errorf("the kill is not in Job 1's section:\n%s", tl)
	}
	// Each Job's start is where its trace says.
	for _, name := range []string{"trace-stage.jsonl", "trace-job-1.jsonl", "trace-job-2.jsonl"} {
		f, err := os.Open(filepath.Join(keep, name))
		if err != nil {
			t.Fatal(err)
		}
		evs, err := trace.ReadJSONL(f)
		f.Close()
		if err != nil || len(evs) == 0 || evs[0].Phase != trace.PhaseJobStarted {
			t.Fatalf("%s: %d events, %v", name, len(evs), err)
		}
		start := regexp.MustCompile(fmt.Sprintf(`(?m)^    started :milestone, t[0-9]+, %d, %d$`, evs[0].Time.UnixMilli(), evs[0].Time.UnixMilli()+1))
		if !start.MatchString(tl) {
			t.Errorf("the timeline has no start of %s at %d:\n%s", name, evs[0].Time.UnixMilli(), tl)
		}
	}
}
