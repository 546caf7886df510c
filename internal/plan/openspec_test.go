package plan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// moduleRoot is the directory holding go.mod.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// openspecCLI returns the pinned OpenSpec CLI that scripts/npm-tools.sh
// installs. The test skips only when Node itself is absent.
func openspecCLI(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("Node.js is not on PATH: the OpenSpec agreement tests need it (>= 20.19; docs/openspec.md)")
	}
	bin := filepath.Join(moduleRoot(t), "tools", "npm", "node_modules", ".bin", "openspec")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the OpenSpec CLI is not installed at %s; run scripts/npm-tools.sh (make unit does)", bin)
	}
	return bin
}

// corpus lists the cases of testdata/openspec.
func corpus(t testing.TB) (dir string, cases []string) {
	t.Helper()
	dir = filepath.Join(moduleRoot(t), "testdata", "openspec")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			cases = append(cases, e.Name())
		}
	}
	return dir, cases
}

// onlyChange is the id of the one change a corpus case holds.
func onlyChange(t testing.TB, root string) string {
	t.Helper()
	ids, err := ListChanges(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1 {
		t.Fatalf("%s: want exactly one change, have %v", root, ids)
	}
	return ids[0]
}

// copyTree copies src into a new temporary directory, byte for byte.
func copyTree(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		if rel == "findings.golden" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// askCLI runs the CLI in root with no telemetry and a private home (or
// gives its recorded answer: askOpenSpec).
func askCLI(t testing.TB, bin, root string, args ...string) cliAnswer {
	t.Helper()
	a, err := askOpenSpec(bin, root, args...)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// cliAnswer is what one run of the pinned CLI did: what it printed, its
// exit status, the tree it left (snapshot's shape) and when it ran (an
// archive names its folder by that day, so roadmap's Archive is given the
// same time).
type cliAnswer struct {
	Stdout, Stderr []byte
	Code           int
	Tree           map[string]string
	Ran            time.Time
}

// askOpenSpec runs `openspec args...` in root, or, when the same pinned CLI
// on the same Node has already run the same arguments on a tree with the
// same content, gives that run's answer and leaves its tree in root.
//
// The agreement tests hold roadmap's validator and archiver to the CLI on
// about 170 trees, and each run of the CLI is a Node process of about a
// CPU-second: most of internal/plan's time, and all of it spent asking the
// same question of the same program again. The answers live beside the
// user's cache (os.UserCacheDir()/roadmap-test/openspec-answers), one file
// per question, keyed by everything the answer can depend on: the CLI's
// version and the hash of its package, Node's version, the arguments and
// every file of the tree. A changed case, a new CLI or a new Node asks the
// CLI again; roadmap's side is computed every run, as before.
// ROADMAP_OPENSPEC_FRESH=1 asks the CLI every time (the nightly sweep does).
func askOpenSpec(bin, root string, args ...string) (cliAnswer, error) {
	tree, err := snapshotDir(root)
	if err != nil {
		return cliAnswer{}, err
	}
	id, err := openspecIdentity(bin)
	if err != nil {
		return cliAnswer{}, err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%q\x00", id, args)
	paths := make([]string, 0, len(tree))
	for p := range tree {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Fprintf(h, "%q\x00%d\x00%s\x00", p, len(tree[p]), tree[p])
	}
	file := ""
	if dir, err := answersDir(); err == nil && os.Getenv("ROADMAP_OPENSPEC_FRESH") != "1" {
		file = filepath.Join(dir, hex.EncodeToString(h.Sum(nil))+".json")
		if b, err := os.ReadFile(file); err == nil {
			var a cliAnswer
			if json.Unmarshal(b, &a) == nil && a.Tree != nil {
				return a, writeSnapshot(root, a.Tree)
			}
		}
	}
	a := cliAnswer{Ran: time.Now()}
	a.Stdout, a.Stderr, a.Code, err = runOpenSpecErr(bin, root, args...)
	if err != nil {
		return cliAnswer{}, err
	}
	if a.Tree, err = snapshotDir(root); err != nil {
		return cliAnswer{}, err
	}
	if file != "" {
		// Written aside and renamed, so a parallel test never reads half
		// an answer; a failed write only costs the next run a CLI run.
		if b, err := json.Marshal(a); err == nil {
			if f, err := os.CreateTemp(filepath.Dir(file), ".answer-*"); err == nil {
				_, werr := f.Write(b)
				if f.Close() == nil && werr == nil {
					_ = os.Rename(f.Name(), file)
				}
				_ = os.Remove(f.Name())
			}
		}
	}
	return a, nil
}

// answersDir is where askOpenSpec keeps the CLI's answers.
func answersDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(base, "roadmap-test", "openspec-answers")
	return dir, os.MkdirAll(dir, 0o755)
}

// openspecIdentity names the CLI an answer came from: the package's version
// and the hash of its files, and Node's version.
var openspecIdentity = func() func(bin string) (string, error) {
	var once sync.Once
	var id string
	var err error
	return func(bin string) (string, error) {
		once.Do(func() {
			pkg := filepath.Join(filepath.Dir(filepath.Dir(bin)), "@fission-ai", "openspec")
			h := sha256.New()
			err = filepath.WalkDir(pkg, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				rel, _ := filepath.Rel(pkg, p)
				fmt.Fprintf(h, "%q\x00%d\x00", rel, len(b))
				h.Write(b)
				return nil
			})
			if err != nil {
				err = fmt.Errorf("hash the OpenSpec CLI's package: %v", err)
				return
			}
			out, nerr := exec.Command("node", "--version").Output()
			if nerr != nil {
				err = fmt.Errorf("node --version: %v", nerr)
				return
			}
			id = fmt.Sprintf("openspec %x; node %s", h.Sum(nil), bytes.TrimSpace(out))
		})
		return id, err
	}
}()

// snapshotDir reads every file and directory under root: path → content
// ("/" for a directory).
func snapshotDir(root string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			out[filepath.ToSlash(rel)+"/"] = "/"
			return nil
		}
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	return out, err
}

// writeSnapshot makes root hold exactly tree.
func writeSnapshot(root string, tree map[string]string) error {
	entries, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(root, e.Name())); err != nil {
			return err
		}
	}
	for p, c := range tree {
		full := filepath.Join(root, filepath.FromSlash(strings.TrimSuffix(p, "/")))
		if strings.HasSuffix(p, "/") {
			err = os.MkdirAll(full, 0o755)
		} else if err = os.MkdirAll(filepath.Dir(full), 0o755); err == nil {
			err = os.WriteFile(full, []byte(c), 0o644)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func runOpenSpecErr(bin, root string, args ...string) (stdout, stderr []byte, code int, err error) {
	home, err := os.MkdirTemp("", "roadmap-openspec-home-")
	if err != nil {
		return nil, nil, 0, err
	}
	defer os.RemoveAll(home)
	cmd := exec.Command(bin, args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "OPENSPEC_TELEMETRY=0", "HOME="+home, "XDG_CONFIG_HOME="+home, "XDG_DATA_HOME="+home, "NO_COLOR=1", "CI=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		return nil, nil, 0, fmt.Errorf("run openspec %v: %v", args, err)
	}
	return out.Bytes(), errb.Bytes(), code, nil
}

// cliValidation is what `openspec validate <id> --strict --json` answered
// for a corpus case.
type cliValidation struct {
	out, stderr []byte
	code        int
}

// validated memoises the CLI's answer per corpus case for this test
// process: TestOpenSpecAgreement and TestValidateOpenSpecOnly hold roadmap's
// two validators to the same answer of the pinned CLI on the same
// untouched copy of a case, and one run of the CLI (a Node process, about a
// CPU-second) per case is enough for both.
var validated sync.Map // case name → func() (cliValidation, error), from sync.OnceValues

// validateCase runs the CLI on a fresh copy of the corpus case name (or
// returns its earlier answer in this process).
func validateCase(t testing.TB, bin, dir, name, id string) cliValidation {
	t.Helper()
	once, _ := validated.LoadOrStore(name, sync.OnceValues(func() (cliValidation, error) {
		root, err := os.MkdirTemp("", "roadmap-openspec-case-")
		if err != nil {
			return cliValidation{}, err
		}
		defer os.RemoveAll(root)
		if err := os.CopyFS(root, os.DirFS(filepath.Join(dir, name))); err != nil {
			return cliValidation{}, err
		}
		_ = os.Remove(filepath.Join(root, "findings.golden"))
		a, err := askOpenSpec(bin, root, "validate", id, "--strict", "--json")
		return cliValidation{out: a.Stdout, stderr: a.Stderr, code: a.Code}, err
	}))
	v, err := once.(func() (cliValidation, error))()
	if err != nil {
		t.Fatalf("openspec validate %s: %v", name, err)
	}
	return v
}

// cliIssue is one issue of `openspec validate --json`, and the shape both
// sides are compared in.
type cliIssue struct {
	Level   string `json:"level"`
	Path    string `json:"path"`
	Line    int    `json:"line"`
	Message string `json:"message"`
}

type cliReport struct {
	Items []struct {
		ID     string     `json:"id"`
		Valid  bool       `json:"valid"`
		Issues []cliIssue `json:"issues"`
	} `json:"items"`
}

func sortIssues(s []cliIssue) {
	sort.Slice(s, func(i, j int) bool {
		a, b := s[i], s[j]
		return fmt.Sprint(a.Path, "\x00", a.Line, "\x00", a.Level, "\x00", a.Message) < fmt.Sprint(b.Path, "\x00", b.Line, "\x00", b.Level, "\x00", b.Message)
	})
}

// TestOpenSpecAgreement runs every case of testdata/openspec through Validate
// and through the pinned `openspec validate <id> --strict --json`, and
// requires the same verdict and the same findings: level, path, line where
// OpenSpec gives one, and message, word for word.
func TestOpenSpecAgreement(t *testing.T) {
	bin := openspecCLI(t)
	dir, cases := corpus(t)
	if len(cases) < 40 {
		t.Fatalf("the corpus has %d cases; the acceptance asks for at least 40", len(cases))
	}
	for _, name := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root := copyTree(t, filepath.Join(dir, name))
			id := onlyChange(t, root)
			v := validateCase(t, bin, dir, name, id)
			out, stderr, code := v.out, v.stderr, v.code
			var cli cliReport
			if err := json.Unmarshal(out, &cli); err != nil || len(cli.Items) != 1 {
				t.Fatalf("openspec validate (exit %d): %v\n%s\n%s", code, err, out, stderr)
			}
			want := cli.Items[0].Issues
			rep, err := Validate(root, id)
			if err != nil {
				t.Fatal(err)
			}
			var got []cliIssue
			for _, f := range rep.Findings {
				if f.Ours {
					continue
				}
				i := cliIssue{Level: string(f.Level), Path: f.OpenSpecPath, Message: f.Message}
				if f.OpenSpecLine {
					i.Line = f.Line
				}
				got = append(got, i)
			}
			sortIssues(want)
			sortIssues(got)
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("findings differ from openspec validate --strict (-openspec +roadmap):\n%s", diff)
			}
			if v := rep.OpenSpecValid(); v != cli.Items[0].Valid {
				t.Errorf("verdict: roadmap says valid=%v, openspec says valid=%v", v, cli.Items[0].Valid)
			}
			if (code == 0) != cli.Items[0].Valid {
				t.Errorf("openspec exited %d for valid=%v", code, cli.Items[0].Valid)
			}
		})
	}
}

// TestCorpusFindings holds every finding of every case, roadmap's own checks
// included, to a golden file beside the case (-update rewrites them).
func TestCorpusFindings(t *testing.T) {
	dir, cases := corpus(t)
	for _, name := range cases {
		t.Run(name, func(t *testing.T) {
			root := filepath.Join(dir, name)
			rep, err := Validate(root, onlyChange(t, root))
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, f := range rep.Findings {
				fmt.Fprintf(&b, "%s %s\n", f.Level, f)
			}
			golden := filepath.Join(root, "findings.golden")
			if *update {
				if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestCorpusFindings -update)", err)
			}
			if diff := cmp.Diff(string(want), b.String()); diff != "" {
				t.Errorf("findings (-golden +got):\n%s", diff)
			}
		})
	}
}

// TestRenderByteStable parses every Markdown file of the corpus, as a delta
// spec and as a main spec, and requires the rendering to give back its bytes.
func TestRenderByteStable(t *testing.T) {
	dir, _ := corpus(t)
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		doc := ParseDoc(p, src)
		if got := ParseDelta(doc, "x").Render(); !bytes.Equal(got, src) {
			t.Errorf("%s: delta render differs:\n%s", p, cmp.Diff(string(src), string(got)))
		}
		if got := ParseMainSpec(doc, "x").Render(); !bytes.Equal(got, src) {
			t.Errorf("%s: main spec render differs", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 40 {
		t.Fatalf("rendered %d files; the corpus should hold more", n)
	}
}
