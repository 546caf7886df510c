package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
)

// openPTY opens a pseudo-terminal: what is written to tty is read from
// the returned output, as a person's terminal would show it.
func openPTY(t *testing.T) (tty *os.File, output func() string) {
	t.Helper()
	p, err := newPTY()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p.tty, func() string {
		s, err := p.screen()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

// pty is a pseudo-terminal and what its programs have shown on it.
type pty struct {
	master, tty *os.File
	mu          sync.Mutex
	buf         bytes.Buffer
}

func newPTY() (*pty, error) {
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("open a pseudo-terminal: %v", err)
	}
	var unlock int32
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, master.Fd(), unix.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		master.Close()
		return nil, fmt.Errorf("unlock the pseudo-terminal: %v", e)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		master.Close()
		return nil, fmt.Errorf("name the pseudo-terminal: %v", err)
	}
	tty, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return nil, fmt.Errorf("open /dev/pts/%d: %v", n, err)
	}
	p := &pty{master: master, tty: tty}
	go func() {
		b := make([]byte, 4096)
		for {
			k, err := master.Read(b)
			p.mu.Lock()
			p.buf.Write(b[:k])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return p, nil
}

func (p *pty) Close() { p.tty.Close(); p.master.Close() }

// screen is what was shown since the last call.
func (p *pty) screen() (string, error) {
	// What was written has reached the reader once a marker written after
	// it has.
	mark := fmt.Sprintf("<end %d>", time.Now().UnixNano())
	p.tty.WriteString(mark + "\n")
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		p.mu.Lock()
		s := p.buf.String()
		if i := strings.Index(s, mark); i >= 0 {
			p.buf.Reset()
			p.mu.Unlock()
			return strings.ReplaceAll(s[:i], "\r\n", "\n"), nil
		}
		p.mu.Unlock()
	}
	return "", errors.New("the terminal's output did not arrive")
}

// workflowCommandLine is a line the runner would read as a command.
func workflowCommandLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " \t"), "::") {
			out = append(out, l)
		}
	}
	return out
}

// TestTerminalOutput: at a terminal, outside Actions, no workflow command
// reaches the screen raw (::group:: is a heading, an annotation a labelled
// line, ::add-mask:: nothing, so never its secret) and no Go map is
// printed; NO_COLOR gives no escape sequence. Off a terminal, and under
// GITHUB_ACTIONS=true, the commands are printed exactly as before.
func TestTerminalOutput(t *testing.T) {
	const secret = "s3cr3t-value-for-the-mask-0123456789"
	commands := strings.Join([]string{
		"::group::roadmap: group 1 of 3: Hello",
		"roadmap: group 1: Hello",
		"::endgroup::",
		"::notice::roadmap: yielded: the day's budget is spent",
		"::warning title=roadmap%3A not isolated::model-written commands run unconfined",
		"::error file=greet.go,line=12::checks failed: 50%25 of the tests%0Aand a second line",
		"::add-mask::" + secret,
		"    ::group::indented",
		"a plain line: ::group:: inside it stays",
		"",
	}, "\n")

	t.Run("rendered for a person", func(t *testing.T) {
		for _, color := range []bool{true, false} {
			var out bytes.Buffer
			w := &termWriter{w: &out, color: color}
			io.WriteString(w, commands[:40]) // a line split over writes
			io.WriteString(w, commands[40:])
			io.WriteString(w, "no newline at the end")
			w.Flush()
			got := out.String()
			if cmds := workflowCommandLines(got); len(cmds) > 0 {
				t.Errorf("color %v: workflow commands reach the terminal: %q", color, cmds)
			}
			if strings.Contains(got, secret) {
				t.Errorf("color %v: the masked value is shown:\n%s", color, got)
			}
			plain := got
			if color {
				if !strings.Contains(got, "\x1b[") {
					t.Errorf("colour on, and no escape sequence:\n%q", got)
				}
				plain = strings.NewReplacer(ansiBold, "", ansiRed, "", ansiYellow, "", ansiCyan, "", ansiDim, "", ansiReset, "").Replace(got)
			} else if strings.Contains(got, "\x1b") {
				t.Errorf("colour off, and an escape byte:\n%q", got)
			}
			want := "▸ roadmap: group 1 of 3: Hello\n" +
				"roadmap: group 1: Hello\n" +
				"notice: roadmap: yielded: the day's budget is spent\n" +
				"warning: roadmap: not isolated: model-written commands run unconfined\n" +
				"error: greet.go:12: checks failed: 50% of the tests\n  and a second line\n" +
				"    ▸ indented\n" +
				"a plain line: ::group:: inside it stays\n" +
				"no newline at the end"
			if plain != want {
				t.Errorf("color %v: the terminal shows\n%s\nwant\n%s", color, plain, want)
			}
		}
	})

	// A real verb, in process, on a real pseudo-terminal.
	t.Run("a verb at a terminal", func(t *testing.T) {
		tty, screen := openPTY(t)
		e := newReportEnv(t)
		runID := e.fake.AddRun(githubfake.Run{WorkflowFile: "roadmap.yml", Conclusion: "cancelled"})
		log, err := os.ReadFile(filepath.Join(logsDir, "cancelled.log"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.fake.AddJob(runID, githubfake.Job{Name: "implement", Conclusion: "cancelled", Log: string(log)}); err != nil {
			t.Fatal(err)
		}
		var local []string // the report step's environment, outside Actions
		for _, kv := range e.environ {
			if !strings.HasPrefix(kv, "GITHUB_ACTIONS=") {
				local = append(local, kv)
			}
		}
		report := func(environ []string, stdout, stderr io.Writer) int {
			n := e.issue(t, nil, "roadmap:implement")
			return Main(context.Background(), []string{"report", "--issue", strconv.Itoa(n), "--job-result", "cancelled"},
				append(environ, "GITHUB_RUN_ID="+strconv.FormatInt(runID, 10)), strings.NewReader(""), stdout, stderr)
		}
		for _, noColor := range []bool{false, true} {
			environ := append([]string(nil), local...)
			if noColor {
				environ = append(environ, "NO_COLOR=1")
			}
			if code := report(environ, tty, tty); code != ExitOK {
				t.Fatalf("report: exit %d:\n%s", code, screen())
			}
			got := screen()
			if !strings.Contains(got, "▸ report: ") || !strings.Contains(got, "→ continue") {
				t.Errorf("NO_COLOR %v: the terminal does not show report's steps:\n%s", noColor, got)
			}
			if cmds := workflowCommandLines(got); len(cmds) > 0 {
				t.Errorf("NO_COLOR %v: workflow commands reach the terminal: %q", noColor, cmds)
			}
			if strings.Contains(got, "map[") {
				t.Errorf("NO_COLOR %v: a Go map reaches the terminal:\n%s", noColor, got)
			}
			if hasEsc := strings.Contains(got, "\x1b"); hasEsc == noColor {
				t.Errorf("NO_COLOR %v: escape sequences %v:\n%q", noColor, hasEsc, got)
			}
		}

		// Off a terminal, and at one under Actions, the commands stay.
		var out, errb bytes.Buffer
		if code := report(local, &out, &errb); code != ExitOK {
			t.Fatalf("report: exit %d:\n%s", code, errb.String())
		}
		if cmds := workflowCommandLines(errb.String()); len(cmds) < 2 || !strings.HasPrefix(cmds[0], "::group::report: ") {
			t.Errorf("off a terminal, the workflow commands are %q, want the ::group:: lines as before:\n%s", cmds, errb.String())
		}
		if code := report(e.environ, tty, tty); code != ExitOK {
			t.Fatalf("report in Actions: exit %d", code)
		}
		if got := screen(); len(workflowCommandLines(got)) < 2 || strings.Contains(got, "▸") {
			t.Errorf("under GITHUB_ACTIONS=true at a terminal, the commands were rendered:\n%s", got)
		}
	})

	// The demo, as a person runs it: the binary at a terminal. Its Jobs
	// print workflow commands into pipes; the demo renders them. The play is
	// the package's one (playedDemo).
	t.Run("the demo at a terminal", func(t *testing.T) {
		keep, got := playedDemo(t)
		checkDemoAtTerminal(t, keep, got)
	})
}

// checkDemoAtTerminal checks the screen of the demo played at a terminal
// (NO_COLOR set) with --keep keep --verbose.
func checkDemoAtTerminal(t *testing.T, keep, got string) {
	t.Helper()
	if !strings.Contains(got, "▸ roadmap: group 1 of 3: Hello") || !strings.Contains(got, "inputs: attempt 2, issue 1, record-comment ") {
		t.Errorf("the demo's screen lacks its rendered groups or the dispatch inputs:\n%s", got)
	}
	if cmds := workflowCommandLines(strings.ReplaceAll(got, "        │ ", "")); len(cmds) > 0 {
		t.Errorf("workflow commands reach the terminal: %q", cmds)
	}
	if strings.Contains(got, "map[") || strings.Contains(got, "\x1b") {
		t.Errorf("a Go map or an escape sequence reaches the terminal (NO_COLOR set):\n%q", got)
	}
	// It ends by saying where it kept what it left, then its time.
	if !strings.Contains(got, "\nkept in "+keep+"\n") || !regexp.MustCompile(`\ndone in [0-9.]+s\n$`).MatchString(got) {
		t.Errorf("the demo does not end by naming %s, then its time:\n%s", keep, got)
	}
}

// demoEnviron is the test's environment without anything of a runner.
func demoEnviron() []string {
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GITHUB_") || k == "NO_COLOR" {
			continue
		}
		env = append(env, kv)
	}
	return env
}
