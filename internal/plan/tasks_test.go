package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestParseGolden parses every testdata/tasks/*.md and compares the groups (or
// the errors) with the .golden file next to it.
func TestParseGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/tasks/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no inputs in testdata/tasks: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var got []byte
			tasks, err := Parse(src)
			if err != nil {
				got = []byte("error:\n" + err.Error() + "\n")
			} else {
				got, err = json.MarshalIndent(tasks, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, '\n')
			}
			golden := strings.TrimSuffix(file, ".md") + ".golden"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("read golden (run with -update to create it): %v", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("Parse(%s) (-want +got):\n%s", file, diff)
			}
		})
	}
}

// TestParseDesignExample checks the plan of DESIGN §2 field by field, apart
// from the golden file, so a wrong golden cannot hide a wrong reading.
func TestParseDesignExample(t *testing.T) {
	src := "## 1. Backoff in the delivery worker\n\n" +
		"- [ ] 1.1 Add a failing test for the backoff schedule; verify: `go test ./internal/webhook -run TestBackoffSchedule` fails\n" +
		"- [ ] 1.2 Compute the delay, capped at one hour; verify: `go test ./internal/webhook -run TestBackoffSchedule`\n"
	got, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	const cmd = "go test ./internal/webhook -run TestBackoffSchedule"
	want := &Tasks{Groups: []Group{{
		Number: 1, Title: "Backoff in the delivery worker", Line: 1,
		Tasks: []Task{
			{ID: "1.1", Group: 1, Text: "Add a failing test for the backoff schedule; verify: `" + cmd + "` fails", Verify: cmd, Fails: true, Line: 3},
			{ID: "1.2", Group: 1, Text: "Compute the delay, capped at one hour; verify: `" + cmd + "`", Verify: cmd, Line: 4},
		},
	}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Parse (-want +got):\n%s", diff)
	}
	g := got.Groups[0]
	if diff := cmp.Diff([]string{cmd}, g.VerifyCommands()); diff != "" {
		t.Errorf("VerifyCommands (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{cmd}, g.FailToPass()); diff != "" {
		t.Errorf("FailToPass (-want +got):\n%s", diff)
	}
	if g.Done() {
		t.Error("Done() = true for a group with no ticked task")
	}
}

func TestGroupHelpers(t *testing.T) {
	src := "## 1. A\n" +
		"- [x] 1.1 t; verify: `go test ./a` fails\n" +
		"- [x] 1.2 t; verify: `go vet ./...`\n" +
		"- [x] 1.3 t; verify: `go test ./a`\n" +
		"- [x] 1.4 t; verify: `go test ./b` fails\n" +
		"- [x] 1.5 no command\n" +
		"## 2. B\n" +
		"- [x] 2.1 t\n" +
		"- [ ] 2.2 t; verify: `make`\n"
	tasks, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	g1, _ := tasks.Group(1)
	if diff := cmp.Diff([]string{"go test ./a", "go vet ./...", "go test ./b"}, g1.VerifyCommands()); diff != "" {
		t.Errorf("VerifyCommands (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"go test ./a", "go test ./b"}, g1.FailToPass()); diff != "" {
		t.Errorf("FailToPass (-want +got):\n%s", diff)
	}
	if !g1.Done() {
		t.Error("group 1 Done() = false, want true")
	}
	g2, _ := tasks.Group(2)
	if g2.Done() {
		t.Error("group 2 Done() = true with 2.2 open")
	}
	if _, ok := tasks.Group(3); ok {
		t.Error("Group(3) found a group that does not exist")
	}
	var pending []int
	for _, g := range tasks.Pending() {
		pending = append(pending, g.Number)
	}
	if diff := cmp.Diff([]int{2}, pending); diff != "" {
		t.Errorf("Pending (-want +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []ParseError // line and a fragment of the message
	}{
		{"task outside a group", "- [ ] 1.1 x\n## 1. A\n- [ ] 1.2 y\n", []ParseError{{Line: 1, Msg: "outside a numbered group"}}},
		{"task after an unnumbered heading", "## 1. A\n- [ ] 1.1 y\n## Notes\n- [ ] 1.2 z\n", []ParseError{{Line: 4, Msg: "outside a numbered group"}}},
		{"task after a level-one heading", "## 1. A\n- [ ] 1.1 y\n# Appendix\n- [ ] 1.2 z\n", []ParseError{{Line: 4, Msg: "outside a numbered group"}}},
		{"duplicate group", "## 1. A\n- [ ] 1.1 x\n## 1. B\n- [ ] 1.2 y\n", []ParseError{{Line: 3, Msg: "duplicate group 1 (first at line 1)"}}},
		{"decreasing group", "## 2. A\n- [ ] 2.1 x\n## 1. B\n- [ ] 1.1 y\n", []ParseError{{Line: 3, Msg: "group 1 comes after group 2"}}},
		{"task of another group", "## 1. A\n- [ ] 2.1 x\n", []ParseError{{Line: 2, Msg: "task 2.1 is under group 1"}}},
		{"task without a number", "## 1. A\n- [ ] do it\n", []ParseError{{Line: 2, Msg: "task has no number"}}},
		{"task with a single number", "## 1. A\n- [ ] 1 do it\n", []ParseError{{Line: 2, Msg: "task has no number"}}},
		{"duplicate task", "## 1. A\n- [ ] 1.1 x\n- [x] 1.1 y\n", []ParseError{{Line: 3, Msg: "duplicate task 1.1 (first at line 2)"}}},
		{"verify backtick not closed", "## 1. A\n- [ ] 1.1 x; verify: `go test ./...\n", []ParseError{{Line: 2, Msg: "not closed"}}},
		{"verify double backtick not closed", "## 1. A\n- [ ] 1.1 x; verify: ``go test ./...`\n", []ParseError{{Line: 2, Msg: "not closed"}}},
		{"text after verify", "## 1. A\n- [ ] 1.1 x; verify: `go test` then look\n", []ParseError{{Line: 2, Msg: `text "then look" after the verify command`}}},
		{"empty verify", "## 1. A\n- [ ] 1.1 x; verify: ` `\n", []ParseError{{Line: 2, Msg: "empty verify command"}}},
		{"two verify clauses", "## 1. A\n- [ ] 1.1 x; verify: `a`, verify: `b`\n", []ParseError{{Line: 2, Msg: "more than one verify"}}},
		{"empty group", "## 1. A\n- [ ] 1.1 x\n## 2. B\n\n## 3. C\n- [ ] 3.1 z\n", []ParseError{{Line: 3, Msg: "group 2 has no tasks"}}},
		{"no group", "# Tasks\n\nNothing here.\n", []ParseError{{Line: 0, Msg: "no numbered task group"}}},
		{"group number out of range", "## 99999999999999999999. A\n- [ ] 1.1 x\n", []ParseError{{Line: 1, Msg: "out of range"}, {Line: 2, Msg: "outside a numbered group"}}},
		{"several faults, in line order", "## 2. A\n- [ ] 3.1 x\n## 2. B\n- [ ] 2.1 `open\n- [ ] 2.2 verify: `open\n",
			[]ParseError{{Line: 2, Msg: "task 3.1 is under group 2"}, {Line: 3, Msg: "duplicate group 2"}, {Line: 5, Msg: "not closed"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.src))
			if err == nil {
				t.Fatalf("Parse = %+v, want an error", got)
			}
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("error %T is not an ErrorList: %v", err, err)
			}
			if len(list) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(list), len(tt.want), err)
			}
			for i, w := range tt.want {
				if list[i].Line != w.Line || !strings.Contains(list[i].Msg, w.Msg) {
					t.Errorf("error %d = line %d %q, want line %d containing %q", i, list[i].Line, list[i].Msg, w.Line, w.Msg)
				}
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe != list[0] {
				t.Errorf("errors.As(*ParseError) did not find the first error")
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	tests := []struct {
		name       string
		line       string
		wantVerify string
		wantFails  bool
		wantDone   bool
	}{
		{"plain", "- [ ] 1.1 x; verify: `go test ./...`", "go test ./...", false, false},
		{"fails", "- [ ] 1.1 x; verify: `go test ./...` fails", "go test ./...", true, false},
		{"fails with a period", "- [ ] 1.1 x; verify: `go test ./...` fails.", "go test ./...", true, false},
		{"capital Verify and FAILS", "- [x] 1.1 x. Verify: `make t` FAILS", "make t", true, true},
		{"period after the command", "- [X] 1.1 x; verify: `make t`.", "make t", false, true},
		{"double backticks hold a backtick", "- [ ] 1.1 x; verify: `` echo `date` ``", "echo `date`", false, false},
		{"verify: mentioned in a code span", "- [ ] 1.1 document `verify: `; verify: `go doc`", "go doc", false, false},
		{"verify: without a command is prose", "- [ ] 1.1 verify: by reading the page", "", false, false},
		{"reverify is not verify", "- [ ] 1.1 reverify: `x` later", "", false, false},
		{"no space after the box", "- [ ]1.1 x; verify: `a`", "a", false, false},
		{"tab in the box", "- [\t] 1.1 x; verify: `a`", "a", false, false},
		{"CRLF", "- [ ] 1.1 x; verify: `a` fails\r", "a", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte("## 1. A\n" + tt.line + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			task := got.Groups[0].Tasks[0]
			if task.Verify != tt.wantVerify || task.Fails != tt.wantFails || task.Done != tt.wantDone {
				t.Errorf("got verify %q fails %v done %v, want %q %v %v", task.Verify, task.Fails, task.Done, tt.wantVerify, tt.wantFails, tt.wantDone)
			}
		})
	}
}

func TestTick(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		group int
		want  string
	}{
		{
			name:  "only the group's boxes change",
			src:   "## 1. A\n- [ ] 1.1 a\n- [x] 1.2 b\n\n## 2. B\n- [ ] 2.1 c\n  - [ ] 2.1.1 d\n",
			group: 2,
			want:  "## 1. A\n- [ ] 1.1 a\n- [x] 1.2 b\n\n## 2. B\n- [x] 2.1 c\n  - [x] 2.1.1 d\n",
		},
		{
			name:  "CRLF and a missing final newline are kept",
			src:   "## 1. A\r\n- [ ] 1.1 a; verify: `x` fails\r\n* [ ] 1.2 b",
			group: 1,
			want:  "## 1. A\r\n- [x] 1.1 a; verify: `x` fails\r\n* [x] 1.2 b",
		},
		{
			name:  "a fenced example is not ticked",
			src:   "## 1. A\n- [ ] 1.1 a\n```\n- [ ] 1.2 not a task\n```\n",
			group: 1,
			want:  "## 1. A\n- [x] 1.1 a\n```\n- [ ] 1.2 not a task\n```\n",
		},
		{
			name:  "a done group is unchanged, [X] kept",
			src:   "## 1. A\n- [X] 1.1 a\n- [x] 1.2 b\n",
			group: 1,
			want:  "## 1. A\n- [X] 1.1 a\n- [x] 1.2 b\n",
		},
		{
			name:  "a tab box becomes x",
			src:   "## 3. A\n-\t[\t]\t3.1 a\n",
			group: 3,
			want:  "## 3. A\n-\t[x]\t3.1 a\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Tick([]byte(tt.src), tt.group)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("Tick (-want +got):\n%s", diff)
			}
			again, err := Tick(got, tt.group)
			if err != nil || !bytes.Equal(again, got) {
				t.Errorf("a second Tick changed the text: %q, %v", again, err)
			}
		})
	}
}

func TestTickErrors(t *testing.T) {
	if _, err := Tick([]byte("## 1. A\n- [ ] 1.1 a\n"), 2); err == nil || !strings.Contains(err.Error(), "no such group") {
		t.Errorf("Tick of a missing group: err = %v, want no such group", err)
	}
	if _, err := Tick([]byte("## 1. A\n- [ ] 2.1 a\n"), 1); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("Tick of a broken plan: err = %v, want the parse error with its line", err)
	}
}

func FuzzParseTasks(f *testing.F) {
	files, _ := filepath.Glob("testdata/tasks/*.md")
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Add([]byte("## 1. A\r\n- [ ] 1.1 a; verify: `` x ` y `` fails\r\n"))
	f.Add([]byte("## 1.\n-[ ]1.1\n## 2.\n+ [X] 2.1a.\n"))
	f.Add([]byte("## 1. A\n- [ ] 1.1 a\n## 2. B\n- [ ] 2.1 b\n## 3. C\n- [ ] 3.1 c\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		before, err := Parse(src)
		if err != nil {
			return
		}
		// The group limit refuses exactly the plans over it, at the first
		// group past it.
		for _, limit := range []int{1, 2, len(before.Groups)} {
			err := before.CheckGroupCount(limit)
			var pe *ParseError
			if over := len(before.Groups) > limit; over != (err != nil) ||
				over && (!errors.As(err, &pe) || pe.Line != before.Groups[limit].Line) {
				t.Fatalf("CheckGroupCount(%d) of %d groups = %v", limit, len(before.Groups), err)
			}
		}
		for _, g := range before.Groups {
			ticked, err := Tick(src, g.Number)
			if err != nil {
				t.Fatalf("Tick(%d) of a plan that parses: %v", g.Number, err)
			}
			if len(ticked) != len(src) {
				t.Fatalf("Tick changed the length: %d -> %d", len(src), len(ticked))
			}
			for i := range src {
				if src[i] != ticked[i] && ticked[i] != 'x' {
					t.Fatalf("Tick changed byte %d from %q to %q", i, src[i], ticked[i])
				}
			}
			after, err := Parse(ticked)
			if err != nil {
				t.Fatalf("Parse after Tick(%d): %v", g.Number, err)
			}
			want := cloneTasks(before)
			for i := range want.Groups {
				if want.Groups[i].Number == g.Number {
					for j := range want.Groups[i].Tasks {
						want.Groups[i].Tasks[j].Done = true
					}
				}
			}
			if diff := cmp.Diff(want, after); diff != "" {
				t.Fatalf("Parse(Tick(src, %d)) (-want +got):\n%s", g.Number, diff)
			}
			if ng, _ := after.Group(g.Number); !ng.Done() {
				t.Fatalf("group %d not Done after Tick", g.Number)
			}
		}
	})
}

func cloneTasks(t *Tasks) *Tasks {
	out := &Tasks{Groups: make([]Group, len(t.Groups))}
	for i, g := range t.Groups {
		g.Tasks = append([]Task(nil), g.Tasks...)
		out.Groups[i] = g
	}
	return out
}
