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
	"strings"
	"testing"
	"time"

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

// TestDemoKeepsSummaryAndTimeline: `roadmap demo --keep DIR` leaves in DIR
// the step summary the Jobs wrote (what GITHUB_STEP_SUMMARY would get) and a
// Mermaid timeline drawn from the Jobs' traces, and names both; off a
// terminal its progress keeps the workflow commands as they are.
func TestDemoKeepsSummaryAndTimeline(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo runs the whole item (-short)")
	}
	bin := buildRoadmap(t)
	keep := filepath.Join(t.TempDir(), "kept")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "demo", "--keep", keep, "--json")
	cmd.Env = demoEnviron()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("roadmap demo: %v\n%s", err, stderr.String())
	}
	var got struct {
		Issue       int    `json:"issue"`
		Result      string `json:"result"`
		StepSummary string `json:"step_summary"`
		Timeline    string `json:"timeline"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout.String())
	}
	if got.StepSummary != filepath.Join(keep, "step-summary.md") || got.Timeline != filepath.Join(keep, "timeline.md") {
		t.Errorf("step_summary %q, timeline %q; want both in %s", got.StepSummary, got.Timeline, keep)
	}
	if !strings.Contains(stderr.String(), "\n        │ ::group::roadmap: group 1 of 3: Hello\n") {
		t.Errorf("off a terminal the Jobs' ::group:: lines are not shown as they are:\n%s", stderr.String())
	}

	summary, err := os.ReadFile(got.StepSummary)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		fmt.Sprintf("### roadmap stage · issue #%d: staged", got.Issue),     // the stage Job's
		fmt.Sprintf("## roadmap · implement #%d · Job 2: ready", got.Issue), // the continuation's
		"```mermaid\ngantt",
	} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("the step summary lacks %q:\n%s", want, summary)
		}
	}
	if strings.Contains(string(summary), "· Job 1:") {
		t.Errorf("the step summary has one from Job 1, which was killed before it could write one:\n%s", summary)
	}

	timeline, err := os.ReadFile(got.Timeline)
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
