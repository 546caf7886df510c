package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// snapshot reads every file and directory under root: path → content ("/" for a
// directory).
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out, err := snapshotDir(root)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestArchiveAgreement archives every case of testdata/openspec twice, on two
// copies of the same tree: once with Archive and once with the pinned
// `openspec archive <id> --yes`. Both must archive or both refuse, and the
// trees they leave must be byte-identical. At least ten cases must archive.
func TestArchiveAgreement(t *testing.T) {
	bin := openspecCLI(t)
	dir, cases := corpus(t)
	archived := make(chan string, len(cases))
	t.Run("cases", func(t *testing.T) {
		for _, name := range cases {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				theirs := copyTree(t, filepath.Join(dir, name))
				ours := copyTree(t, filepath.Join(dir, name))
				id := onlyChange(t, theirs)
				ans := askCLI(t, bin, theirs, "archive", id, "--yes")
				out, stderr, code := ans.Stdout, ans.Stderr, ans.Code
				_, stillThere := os.Stat(ChangeDir(theirs, id))
				theyArchived := code == 0 && stillThere != nil

				findings, err := Archive(ours, id, ans.Ran)
				if err != nil {
					t.Fatal(err)
				}
				if weArchived := len(findings) == 0; weArchived != theyArchived {
					t.Fatalf("roadmap archived=%v with %v; openspec archived=%v (exit %d):\n%s\n%s", weArchived, findings, theyArchived, code, out, stderr)
				}
				if diff := cmp.Diff(snapshot(t, theirs), snapshot(t, ours)); diff != "" {
					t.Errorf("trees differ (-openspec +roadmap):\n%s\nopenspec said:\n%s", diff, out)
				}
				if theyArchived {
					archived <- name
				} else if !strings.Contains(string(out)+string(stderr), firstWords(findings[0].Message)) {
					// The refusal should be for the same reason.
					t.Errorf("roadmap refused with %q; openspec said:\n%s%s", findings[0].Message, out, stderr)
				}
			})
		}
	})
	close(archived)
	n := len(archived)
	if n < 10 && !t.Failed() {
		t.Fatalf("%d cases archived; the acceptance asks for at least 10", n)
	}
	t.Logf("%d of %d cases archived identically", n, len(cases))
}

// firstWords is the start of a message, enough to recognise it in OpenSpec's
// human output.
func firstWords(msg string) string {
	if len(msg) > 40 {
		return msg[:40]
	}
	return msg
}

func TestArchiveName(t *testing.T) {
	d := time.Date(2026, 3, 7, 23, 0, 0, 0, time.UTC)
	for id, want := range map[string]string{
		"add-x":            "2026-03-07-add-x",
		"2025-01-02-add-x": "2025-01-02-add-x",
	} {
		if got := ArchiveName(id, d); got != want {
			t.Errorf("ArchiveName(%q) = %q, want %q", id, got, want)
		}
	}
}

func TestArchiveUnknownChange(t *testing.T) {
	if _, err := Archive(t.TempDir(), "nope", time.Now()); err == nil {
		t.Fatal("Archive of a missing change returned no error")
	}
}
