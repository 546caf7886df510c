package failure

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// realLogsDir holds excerpts of real job logs quoted in public issue threads,
// each labelled with the class a person reading the thread gives it
// (manifest.json says where each comes from and why).
var realLogsDir = filepath.Join(logsDir, "real")

// realCase is one entry of testdata/logs/real/manifest.json.
type realCase struct {
	File   string `json:"file"`
	Source string `json:"source"`
	// Class is the person's label, taken from the thread, never from the
	// classifier's output.
	Class      Class  `json:"class"`
	Conclusion string `json:"conclusion"`
	ExitCode   *int   `json:"exit_code"`
	// Annotation is true when the text is a check-run annotation (the
	// lost-runner message lives only there), not a line of the log.
	Annotation bool   `json:"annotation"`
	Why        string `json:"why"`
}

// knownMisses are the cases the classifier is allowed to get wrong, each with
// the reason its text cannot decide the person's class. The list may shrink,
// never grow: TestClassifierRealLogs fails on a new miss and on a listed case
// that now agrees (remove it then).
var knownMisses = map[string]string{
	"killed-shutdown-masked.log": "the paste has every '##[' prefix masked to '##[error***' by a secret; " +
		"plain text cannot pass for the runner's own lines, so the shutdown line is not honoured",
}

// minAgreement is the floor of the acceptance (#15: 95% or better on
// the real corpus).
const minAgreement = 0.95

// minRealCases is the corpus size the issue asks for.
const minRealCases = 60

func readRealCases(t testing.TB) []realCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(realLogsDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []realCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatalf("parse manifest.json: %v", err)
	}
	return cases
}

func classifyReal(t testing.TB, c realCase) Verdict {
	t.Helper()
	f, err := os.Open(filepath.Join(realLogsDir, c.File))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := Input{Conclusion: c.Conclusion, ExitCode: c.ExitCode}
	if c.Annotation {
		data, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		in.Annotations = strings.Split(strings.TrimSpace(string(data)), "\n")
	} else {
		in.Log = f
	}
	v := Classify(in)
	if v.LogErr != nil {
		t.Fatalf("%s: LogErr = %v", c.File, v.LogErr)
	}
	return v
}

// TestClassifierRealLogs checks the classifier against people, case by case.
func TestClassifierRealLogs(t *testing.T) {
	cases := readRealCases(t)
	if len(cases) < minRealCases {
		t.Errorf("%d real cases, want at least %d", len(cases), minRealCases)
	}
	files, err := filepath.Glob(filepath.Join(realLogsDir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, c := range cases {
		if listed[c.File] {
			t.Errorf("%s is listed twice in manifest.json", c.File)
		}
		listed[c.File] = true
		if !c.Class.Valid() {
			t.Errorf("%s: label %q is not a class of the table", c.File, c.Class)
		}
		if c.Source == "" || c.Why == "" {
			t.Errorf("%s: every case names its source and why the person gives it its class", c.File)
		}
	}
	for _, f := range files {
		if !listed[filepath.Base(f)] {
			t.Errorf("%s has no entry in manifest.json", filepath.Base(f))
		}
	}
	for name := range knownMisses {
		if !listed[name] {
			t.Errorf("known miss %s is not in the corpus", name)
		}
	}

	agree := 0
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.File, ".log"), func(t *testing.T) {
			v := classifyReal(t, c)
			reason, known := knownMisses[c.File]
			switch {
			case v.Class == c.Class && known:
				agree++
				t.Errorf("known miss now agrees (%s): remove it from knownMisses", c.Class)
			case v.Class == c.Class:
				agree++
			case known:
				t.Logf("known miss: got %s, person says %s: %s", v.Class, c.Class, reason)
			default:
				t.Errorf("got %s (reason %q, line %d %q), person says %s (%s: %s)",
					v.Class, v.Reason, v.Line, v.Evidence, c.Class, c.Source, c.Why)
			}
		})
	}
	t.Logf("agreement: %d of %d (%.1f%%); known misses: %d", agree, len(cases), 100*float64(agree)/float64(len(cases)), len(knownMisses))
}

// TestRealLogs is the acceptance: the real corpus at 95% or better,
// with the confusion table printed.
func TestRealLogs(t *testing.T) {
	cases := readRealCases(t)
	r := measureReal(t, cases)
	t.Logf("agreement %d of %d (%.1f%%)\n%s", r.agree, r.total, 100*r.rate(), r.confusion())
	if r.rate() < minAgreement {
		t.Errorf("agreement %.1f%% is below the floor of %.0f%%", 100*r.rate(), 100*minAgreement)
	}
}

// realResult is the classifier measured on the real corpus.
type realResult struct {
	agree, total int
	// cells counts cases by person's class, then classifier's class.
	cells map[Class]map[Class]int
}

func measureReal(t testing.TB, cases []realCase) realResult {
	r := realResult{cells: map[Class]map[Class]int{}}
	for _, c := range cases {
		v := classifyReal(t, c)
		if r.cells[c.Class] == nil {
			r.cells[c.Class] = map[Class]int{}
		}
		r.cells[c.Class][v.Class]++
		r.total++
		if v.Class == c.Class {
			r.agree++
		}
	}
	return r
}

func (r realResult) rate() float64 {
	if r.total == 0 {
		return 0
	}
	return float64(r.agree) / float64(r.total)
}

// confusion renders the confusion table: one row per person's class, the
// classifier's answers across.
func (r realResult) confusion() string {
	var people, got []Class
	seenGot := map[Class]bool{}
	for p, row := range r.cells {
		people = append(people, p)
		for g := range row {
			if !seenGot[g] {
				seenGot[g] = true
				got = append(got, g)
			}
		}
	}
	order := func(cs []Class) {
		idx := map[Class]int{}
		for i, row := range Table() {
			idx[row.Class] = i
		}
		sort.Slice(cs, func(i, j int) bool { return idx[cs[i]] < idx[cs[j]] })
	}
	order(people)
	order(got)
	var b strings.Builder
	b.WriteString("| person says ↓ / classifier says → |")
	for _, g := range got {
		fmt.Fprintf(&b, " `%s` |", g)
	}
	b.WriteString(" cases | agree |\n|---|")
	b.WriteString(strings.Repeat("---|", len(got)+2))
	b.WriteString("\n")
	for _, p := range people {
		fmt.Fprintf(&b, "| `%s` |", p)
		n := 0
		for _, g := range got {
			k := r.cells[p][g]
			n += k
			if k == 0 {
				b.WriteString(" |")
			} else {
				fmt.Fprintf(&b, " %d |", k)
			}
		}
		fmt.Fprintf(&b, " %d | %d |\n", n, r.cells[p][p])
	}
	return b.String()
}

// renderCorpus is the generated section of docs/taxonomy.md that reports the
// classifier's agreement with people on the real corpus.
func renderCorpus(t testing.TB) string {
	cases := readRealCases(t)
	r := measureReal(t, cases)
	var b strings.Builder
	fmt.Fprintf(&b, "The classifier agrees with the person on **%d of %d** real job-log excerpts (%.1f%%).\n\n",
		r.agree, r.total, 100*r.rate())
	b.WriteString(r.confusion())
	var misses []string
	for f := range knownMisses {
		misses = append(misses, f)
	}
	slices.Sort(misses)
	if len(misses) > 0 {
		b.WriteString("\nKnown misses, each with why its text cannot decide:\n\n")
		for _, f := range misses {
			fmt.Fprintf(&b, "- `%s`: %s\n", f, knownMisses[f])
		}
	}
	return b.String()
}
