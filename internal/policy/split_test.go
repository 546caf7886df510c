package policy

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		refused bool // a *Refusal
		err     bool // any other error
	}{
		{in: "go test ./...", want: []string{"go", "test", "./..."}},
		{in: "  go   test\t-run TestX  ", want: []string{"go", "test", "-run", "TestX"}},
		{in: `git grep -n 'a b' "c d"`, want: []string{"git", "grep", "-n", "a b", "c d"}},
		{in: `echo 'it'\''s'`, want: []string{"echo", "it's"}},
		{in: `echo "say \"hi\" \\ \$x"`, want: []string{"echo", `say "hi" \ $x`}},
		{in: `echo "a\nb"`, want: []string{"echo", `a\nb`}},
		{in: `echo a\ b`, want: []string{"echo", "a b"}},
		{in: `go test -run 'Test$'`, want: []string{"go", "test", "-run", "Test$"}},
		{in: `git log --format='%h %s'`, want: []string{"git", "log", "--format=%h %s"}},
		{in: `git diff HEAD~1`, want: []string{"git", "diff", "HEAD~1"}},
		{in: `grep -rn 'a|b' .`, want: []string{"grep", "-rn", "a|b", "."}},
		{in: `find . -name '*.go'`, want: []string{"find", ".", "-name", "*.go"}},
		{in: `echo ''`, want: []string{"echo", ""}},
		{in: "go test \\\n ./...", want: []string{"go", "test", "./..."}},
		{in: `'A=b' x`, want: []string{"A=b", "x"}},
		{in: `echo {a,b} @{u}`, want: []string{"echo", "{a,b}", "@{u}"}},
		{in: `echo a\*b "x\y" 'x\y' \~`, want: []string{"echo", "a*b", `x\y`, `x\y`, "~"}},
		{in: `echo 'a'#b a=b`, want: []string{"echo", "a#b", "a=b"}},
		{in: "echo 'a\nb'", want: []string{"echo", "a\nb"}},
		{in: "ls | wc -l", refused: true},
		{in: "go test ./... && git push", refused: true},
		{in: "ls; rm -rf /", refused: true},
		{in: "ls &", refused: true},
		{in: "cat < /etc/passwd", refused: true},
		{in: "echo x > f", refused: true},
		{in: "echo $(whoami)", refused: true},
		{in: "echo `whoami`", refused: true},
		{in: "echo $HOME", refused: true},
		{in: `echo "$HOME"`, refused: true},
		{in: "echo \"`id`\"", refused: true},
		{in: "(ls)", refused: true},
		{in: "ls *.go", refused: true},
		{in: "cat ~/.ssh/id_rsa", refused: true},
		{in: "go test # comment", refused: true},
		{in: "GOFLAGS=-x go test", refused: true},
		{in: "ls\nwhoami", refused: true},
		{in: "", refused: true},
		{in: "   ", refused: true},
		{in: "a\x00b", refused: true},
		{in: "ls || true", refused: true},
		{in: "ls 2>&1", refused: true},
		{in: "cat <<EOF\nx\nEOF", refused: true},
		{in: "! ls", refused: true},
		{in: "{ ls; }", refused: true},
		{in: "if true; then ls; fi", refused: true},
		{in: "ls;", refused: true},
		{in: "x\r y", refused: true},
		{in: "echo $'x'", refused: true},
		{in: `echo $"x"`, refused: true},
		{in: `echo "a$"`, refused: true},
		{in: "echo $", refused: true},
		{in: "echo $((1+1))", refused: true},
		{in: "echo ${x}", refused: true},
		{in: "echo )", refused: true},
		{in: "ls |", refused: true},
		{in: "A=b", refused: true},
		{in: "echo 'open", err: true},
		{in: `echo "open`, err: true},
		{in: `echo \`, err: true},
		{in: `echo a\`, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Split(tt.in)
			var r *Refusal
			switch {
			case tt.refused:
				if !errors.As(err, &r) {
					t.Fatalf("Split(%q) = %q, %v; want a refusal", tt.in, got, err)
				}
			case tt.err:
				if err == nil || errors.As(err, &r) {
					t.Fatalf("Split(%q) = %q, %v; want a syntax error", tt.in, got, err)
				}
			default:
				if err != nil {
					t.Fatalf("Split(%q): %v", tt.in, err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("Split(%q) (-want +got):\n%s", tt.in, diff)
				}
			}
		})
	}
}

// FuzzSplit: Split never panics, and words it returns survive Quote and a
// second Split unchanged.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{"go test ./...", `a 'b c' "d \" e" f\ g`, "ls | wc", "$(x)", "'", `"\`, "A=b c", "\\\n", "~ #"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		words, err := Split(in)
		if err != nil {
			return
		}
		if len(words) == 0 {
			t.Fatalf("Split(%q) returned no words and no error", in)
		}
		var quoted []string
		for _, w := range words {
			quoted = append(quoted, Quote(w))
		}
		again, err := Split(strings.Join(quoted, " "))
		if err != nil {
			t.Fatalf("Split(Quote(%q)) = %v", words, err)
		}
		if diff := cmp.Diff(words, again); diff != "" {
			t.Fatalf("round trip of %q (-first +second):\n%s", in, diff)
		}
	})
}

// FuzzSplitNoLooser: Split parses with a shell grammar where it once split by
// hand (handSplit, kept as the oracle); whatever it accepts, the hand
// splitter accepted too, with the same words, so the parser made the policy
// no looser.
func FuzzSplitNoLooser(f *testing.F) {
	for _, s := range []string{"go test ./...", `a 'b c' "d \" e" f\ g`, "ls | wc", "$(x)", "'", `"\`, "A=b c", "\\\n", "~ #", "! ls", "x\r y", "{ ls; }", "echo {a,b}", "A+=b c", `echo "\a\$"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := Split(in)
		if err != nil {
			return
		}
		want, herr := handSplit(in)
		if herr != nil {
			t.Fatalf("Split(%q) = %q, but the hand splitter refused it: %v", in, got, herr)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("Split(%q) (-hand +parsed):\n%s", in, diff)
		}
	})
}
