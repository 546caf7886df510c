package demo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/roadmap-dev/roadmap/internal/cli"
	"github.com/roadmap-dev/roadmap/internal/demo"
	"github.com/roadmap-dev/roadmap/internal/explain"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/text"
)

// The bounds of `roadmap demo`'s default output (issue 50): a story a
// person reads in one screen.
const (
	maxLines = 40
	maxRunes = 99 // each line under 100 characters
)

// plainWords are the words of the default output a newcomer needs no
// glossary for. Every other word must be a word of a heading of
// docs/glossary.md: a product word the output grows without an entry there
// fails the test. No plain word may be a glossary word (a product word
// hidden here would never be checked).
var plainWords = []string{
	"a", "add", "after", "all", "an", "and", "answered", "approves", "as", "at", "both", "by",
	"carries", "comment", "continue", "continued", "count", "demo", "dir", "dispatches", "done",
	"ended", "every", "explain", "fake", "flight", "for", "free", "from", "git", "github", "greetings", "has",
	"here", "in", "is", "issue", "it", "its", "keep", "kept", "killed", "labelled", "leaves", "life",
	"line", "lines", "log", "logs", "look", "machine", "most", "needed", "no", "none", "of", "on",
	"once", "oneline", "out", "own", "person", "print", "reads", "recorded", "repositories", "result",
	"roadmap", "setup", "sigkill", "starts", "state", "step", "summary", "the", "their",
	"them", "this", "timeline", "to", "token", "tokens", "too", "until", "verbose", "waits", "what",
	"whole", "with", "writes", "yet",
}

// The default output as the CLI prints it: the header, the steps, the
// summary without --verbose, the time taken.
func defaultOutput(sum *demo.Summary, steps string) string {
	var b bytes.Buffer
	b.WriteString(demo.Header + "\n")
	b.WriteString(steps)
	sum.Print(&b, false)
	b.WriteString("done in 27.9s\n")
	return b.String()
}

// TestDemoOutputForPeople: `roadmap demo` tells its story in at most 40
// lines, each under 100 characters, and every product word it uses is in
// docs/glossary.md. It reads TestDemo's play; it plays nothing new.
func TestDemoOutputForPeople(t *testing.T) {
	sum, progress := playDemo(t)
	kept := *sum // with --keep DIR: where it is kept and how to look
	gone := *sum // without: how to keep it
	gone.Dir = ""
	glossary := glossaryWords(t)
	for _, tc := range []struct {
		name string
		sum  *demo.Summary
	}{{"without --keep", &gone}, {"with --keep DIR", &kept}} {
		out := defaultOutput(tc.sum, progress.String())
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) > maxLines {
			t.Errorf("%s: %d lines, want at most %d:\n%s", tc.name, len(lines), maxLines, out)
		}
		for i, l := range lines {
			if n := utf8.RuneCountInString(l); n > maxRunes {
				t.Errorf("%s: a line of %d characters, want under 100: %q", tc.name, n, l)
			}
			// A colon leads to what follows, on the line or indented under it.
			if strings.HasSuffix(l, ":") && (i+1 == len(lines) || !strings.HasPrefix(lines[i+1], "  ")) || strings.HasSuffix(l, ": ") {
				t.Errorf("%s: a line ends on a colon with nothing after it: %q", tc.name, l)
			}
		}
		for _, w := range unknownWords(out, glossary) {
			t.Errorf("%s: %q is neither a word of docs/glossary.md's headings nor a plain word: "+
				"add a `### term` to the glossary (or, if it is plain English, to plainWords)", tc.name, w)
		}
		if t.Failed() {
			t.Logf("%s:\n%s", tc.name, out)
		}
	}
	for _, w := range plainWords {
		if glossary[w] {
			t.Errorf("plain word %q is a glossary word: take it out of plainWords so the glossary is checked for it", w)
		}
	}
	// Nor do the Jobs' and report's own lines (report once ended
	// "ready → ready: " with no reason after the colon).
	for _, l := range strings.Split(played.log.String(), "\n") {
		if strings.HasSuffix(l, ": ") {
			t.Errorf("a log line ends on a colon with nothing after it: %q", l)
		}
	}
	// The Jobs' own lines are behind --verbose, and there are plenty.
	if strings.Contains(progress.String(), "│") || !strings.Contains(played.log.String(), "│ roadmap:") {
		t.Errorf("the steps hold the Jobs' log lines, or the log got none:\n%s", progress.String())
	}
}

// glossaryWords are the words of docs/glossary.md's `### term` headings,
// lower-cased.
func glossaryWords(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "glossary.md"))
	if err != nil {
		t.Fatal(err)
	}
	words := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if h, ok := strings.CutPrefix(l, "### "); ok {
			for _, w := range wordRE.FindAllString(strings.ToLower(h), -1) {
				words[w] = true
			}
		}
	}
	if len(words) < 10 {
		t.Fatalf("docs/glossary.md has %d heading words: no glossary", len(words))
	}
	return words
}

var wordRE = regexp.MustCompile(`[a-z][a-z'-]*[a-z]|[a-z]`)

// unknownWords are the output's words that are neither plain nor glossary
// words, in the order they first appear. Paths, numbers, flags' values and
// hashes are not words: a field holding a digit or a slash is skipped.
func unknownWords(out string, glossary map[string]bool) []string {
	plain := map[string]bool{}
	for _, w := range plainWords {
		plain[w] = true
	}
	known := func(w string) bool {
		w = strings.TrimSuffix(w, "'s")
		for _, c := range []string{w, strings.TrimSuffix(w, "s"), strings.TrimSuffix(w, "es"),
			strings.TrimSuffix(w, "d"), strings.TrimSuffix(w, "ed"), strings.TrimSuffix(w, "ing")} {
			if plain[c] || glossary[c] {
				return true
			}
		}
		return false
	}
	var unknown []string
	for _, f := range strings.Fields(strings.ToLower(out)) {
		if strings.ContainsAny(f, "0123456789/") || strings.HasPrefix(f, "-") {
			continue
		}
		for _, w := range wordRE.FindAllString(f, -1) {
			if !known(w) && !slices.Contains(unknown, w) {
				unknown = append(unknown, w)
			}
		}
	}
	return unknown
}

// TestRequestCountsAgree: from TestDemo's play (its kept state; nothing new
// is played), `roadmap explain`, the demo's summary, the dashboard and
// `roadmap metrics` show the same count of the Jobs' GitHub requests, each
// under a label that says so, and every money amount in them, the step
// summary and the record comment is shown one way (text.USD).
func TestRequestCountsAgree(t *testing.T) {
	sum, _ := playDemo(t)
	ctx := context.Background()
	dir := sum.Dir
	issue := strconv.Itoa(sum.Issue)

	views := map[string]string{}
	var b bytes.Buffer
	sum.Print(&b, true)
	views["demo"] = b.String()
	views["dashboard"] = sum.Dashboard.Body
	views["explain"] = runCLI(t, ctx, nil, "explain", issue, "--state", dir)
	// metrics reads the records from GitHub: the kept state, served again.
	fake := githubfake.New(githubfake.Options{Owner: demo.Owner, Repo: demo.Repo, Token: demo.Token})
	if err := fake.Load(filepath.Join(dir, explain.StateFile)); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	views["metrics"] = runCLI(t, ctx, []string{"GITHUB_API_URL=" + srv.URL, "GITHUB_TOKEN=" + demo.Token,
		"GITHUB_REPOSITORY=" + demo.Owner + "/" + demo.Repo}, "metrics", "--since", "all")
	summary, err := os.ReadFile(filepath.Join(dir, demo.StepSummaryFile))
	if err != nil || len(summary) == 0 {
		t.Fatalf("the Jobs wrote no step summary (%v)", err)
	}
	views["step summary"] = string(summary)

	// The Jobs' requests, each view's label naming them.
	want := sum.Requests.Jobs
	if want == 0 || want >= sum.Requests.Total {
		t.Fatalf("the Jobs' requests %d, the whole demo's %d: want some, and fewer than the demo's", want, sum.Requests.Total)
	}
	for view, re := range map[string]*regexp.Regexp{
		"demo":    regexp.MustCompile(regexp.QuoteMeta(demo.JobRequestsLabel) + `: (\d+), as their record lines count them`),
		"explain": regexp.MustCompile(`GitHub requests by the Jobs: (\d+) over \d+ Job\(s\), stage's included`),
		"metrics": regexp.MustCompile(`GitHub requests by the Jobs\s+(\d+) \(`),
		"dashboard": regexp.MustCompile(`(?s)\| GitHub requests by the Jobs \|\n.*?\| ready \| #` + issue +
			` [^\n]*\| (\d+) \|\n`),
	} {
		m := re.FindStringSubmatch(views[view])
		if m == nil {
			t.Errorf("%s names no count of the Jobs' GitHub requests (%s):\n%s", view, re, views[view])
			continue
		}
		if got, _ := strconv.Atoi(m[1]); got != want {
			t.Errorf("%s counts %d GitHub requests by the Jobs, the record's lines %d", view, got, want)
		}
	}
	if !strings.Contains(views["demo"], demo.DemoRequestsLabel+": "+strconv.Itoa(sum.Requests.Total)) {
		t.Errorf("the demo does not name its own count (%s: %d):\n%s", demo.DemoRequestsLabel, sum.Requests.Total, views["demo"])
	}

	// Money: one shape everywhere, the item's spend the same string in
	// every view that shows it, no nonzero spend shown as $0.00.
	money := regexp.MustCompile(`\$-?\d+\.\d+`)
	for view, out := range views {
		for _, m := range money.FindAllString(out, -1) {
			v, _ := strconv.ParseFloat(m[1:], 64)
			if text.USD(v) != m {
				t.Errorf("%s shows %s, want one precision (text.USD: four decimals below a cent, two from a cent up)", view, m)
			}
		}
	}
	// The stage Job's spend, under a cent, reads the same in explain, the
	// step summary and the record as the Jobs wrote it.
	if len(sum.Stage.Findings) == 0 {
		stageUSD := text.USD(stageSpend(t, sum))
		for _, view := range []string{"explain", "step summary"} {
			if !strings.Contains(views[view], stageUSD) {
				t.Errorf("%s does not show the stage Job's spend as %s", view, stageUSD)
			}
		}
	}
	spend := text.USD(sum.Spend.USD)
	for _, view := range []string{"demo", "dashboard", "explain", "metrics"} {
		if !strings.Contains(views[view], spend) {
			t.Errorf("%s does not show the item's spend as %s:\n%s", view, spend, views[view])
		}
	}
	if t.Failed() {
		for view, out := range views {
			t.Logf("── %s\n%s", view, out)
		}
	}
}

// runCLI runs a roadmap verb in this process and returns what it printed.
func runCLI(t *testing.T, ctx context.Context, env []string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := cli.Main(ctx, args, env, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("roadmap %s: exit %d\n%s", strings.Join(args, " "), code, stderr.String())
	}
	return stdout.String()
}

// stageSpend is the stage Job's spend, from its line in the record.
func stageSpend(t *testing.T, sum *demo.Summary) float64 {
	t.Helper()
	for _, l := range strings.Split(sum.Record, "\n") {
		if v, ok := strings.CutPrefix(l, string(record.KeyStageJobs)+": "); ok {
			var jobs []record.JobOutcome
			if err := json.Unmarshal([]byte(v), &jobs); err != nil || len(jobs) == 0 {
				t.Fatalf("stage.jobs %q: %v", v, err)
			}
			return jobs[0].Spend.USD
		}
	}
	t.Fatal("the record has no stage.jobs")
	return 0
}
