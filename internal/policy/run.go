package policy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// Result is what a process did.
type Result struct {
	// ExitCode is the process's exit code, -1 when a signal ended it.
	ExitCode int
	// Output is stdout and stderr combined, capped: the first OutputHead and
	// the last OutputTail bytes, with a line saying how much was cut between.
	Output   string
	Duration time.Duration
	// TimedOut is set when the row's timeout killed the process group.
	TimedOut bool
}

// waitDelay bounds how long Run waits for output pipes after the process
// exits or is killed: a grandchild that left the group must not hold Run.
const waitDelay = 2 * time.Second

// Run checks argv against the table and its path arguments against dir (the
// workspace), then runs it in dir inside jail (the isolation boundary: its
// user and process group) with the environment env after ScrubEnv (callers
// pass the boundary's allow-listed environment; scrubbing again costs nothing
// and keeps a careless caller safe). No shell is involved. The process gets
// its own process group, killed whole on the row's timeout or when ctx ends.
// A nil jail is refused: no model-written command runs outside a boundary.
//
// A non-zero exit is not an error. The error is a *Refusal when the policy
// refuses, ctx's error when ctx ended, or a failure to start.
func (p *Policy) Run(ctx context.Context, jail Jail, dir string, argv, env []string) (Result, error) {
	return p.run(ctx, jail, dir, argv, env, nil)
}

// RunStream is Run with the process's stdout written to stdout as it comes,
// whole, and not kept in Result.Output, which holds stderr (capped). It is
// for machine-readable output longer than the caps (`go test -json`): the
// reader of stdout must bound what it keeps.
func (p *Policy) RunStream(ctx context.Context, jail Jail, dir string, argv, env []string, stdout io.Writer) (Result, error) {
	if stdout == nil {
		return Result{}, fmt.Errorf("run %s: no writer for its output", firstWord(argv))
	}
	return p.run(ctx, jail, dir, argv, env, stdout)
}

func (p *Policy) run(ctx context.Context, jail Jail, dir string, argv, env []string, stdout io.Writer) (Result, error) {
	if jail == nil {
		return Result{}, fmt.Errorf("run %s: no isolation boundary", firstWord(argv))
	}
	if err := p.Check(argv); err != nil {
		return Result{}, err
	}
	ws, err := realDir(dir)
	if err != nil {
		return Result{}, err
	}
	abs, _ := filepath.Abs(dir)
	if err := p.checkPaths(ws, abs, argv); err != nil {
		return Result{}, err
	}
	env = ScrubEnv(env)
	bin, err := lookPath(argv[0], env, ws)
	if err != nil {
		return Result{}, err
	}
	timeout, head, tail := p.limits(argv[0])

	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, bin, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Dir = ws
	cmd.Env = env
	out := &capture{headMax: head, tailMax: tail}
	cmd.Stdout = out
	cmd.Stderr = out
	if stdout != nil {
		cmd.Stdout = stdout
	}
	cmd.WaitDelay = waitDelay
	setProcessGroup(cmd)
	jail.Confine(cmd)

	start := time.Now()
	err = cmd.Start()
	if err != nil {
		return Result{}, fmt.Errorf("start %s: %w", argv[0], err)
	}
	err = cmd.Wait()
	// Whatever the leader did, nothing it started outlives the call.
	killProcessGroup(cmd)
	res := Result{Duration: time.Since(start), Output: out.String(), ExitCode: -1}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if errors.Is(runCtx.Err(), context.DeadlineExceeded) {
		res.TimedOut = true
		res.Output += fmt.Sprintf("\n[killed: the %s row's timeout of %s passed]\n", argv[0], timeout)
		return res, nil
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) && !errors.Is(err, exec.ErrWaitDelay) {
		return res, fmt.Errorf("run %s: %w", argv[0], err)
	}
	return res, nil
}

// checkPaths refuses arguments that name paths outside the workspace or in
// its .git. Every positional argument and every --option=value value is
// treated as a path when it is absolute or has a ".." element, and every
// relative one is resolved to catch symlinks; a value following one of the
// row's Values options is a pattern and is skipped. ".." is refused even when
// it stays inside: the program, not Resolve, walks it, through any symlink.
func (p *Policy) checkPaths(ws, wsAbs string, argv []string) error {
	row := p.Row(argv[0])
	isValueOpt := func(a string) bool {
		if row == nil {
			return false
		}
		for _, v := range row.Values {
			if a == v {
				return true
			}
		}
		return false
	}
	skip := false
	for _, a := range argv[1:] {
		if skip {
			skip = false
			continue
		}
		cand := a
		if strings.HasPrefix(a, "-") && a != "-" {
			if isValueOpt(a) {
				skip = true
				continue
			}
			name, value, ok := strings.Cut(a, "=")
			if !ok || isValueOpt(name) {
				continue
			}
			cand = value
		}
		if cand == "" || cand == "/dev/null" {
			continue
		}
		for _, el := range strings.Split(filepath.ToSlash(cand), "/") {
			if el == ".." {
				return &Refusal{Row: argv[0], Rule: "path",
					Reason: fmt.Sprintf("argument %q has a \"..\" element; name paths from the workspace root without ..", a)}
			}
		}
		resolved, err := resolveIn(ws, wsAbs, cand)
		if err != nil {
			var r *Refusal
			if errors.As(err, &r) {
				r.Row = argv[0]
				r.Reason = fmt.Sprintf("argument %q: %s", a, r.Reason)
				return r
			}
			// Not a path we can resolve (e.g. a file used as a directory
			// in a pattern): the program will say what it makes of it.
			continue
		}
		if inGitDir(ws, resolved) {
			return &Refusal{Row: argv[0], Rule: "path",
				Reason: fmt.Sprintf("argument %q is inside .git, which tools do not touch", a)}
		}
	}
	// A value glued to a short option (sort -Tlink/x) is a path the program
	// may open: resolved like the others, so a symlink cannot carry it out.
	if row != nil {
		_, opts := row.parseArgs(argv[1:])
		for _, o := range opts {
			for _, v := range o.glued {
				resolved, err := resolveIn(ws, wsAbs, v)
				var r *Refusal
				if errors.As(err, &r) {
					r.Row = argv[0]
					r.Reason = fmt.Sprintf("argument %q: %s", o.raw, r.Reason)
					return r
				}
				if err == nil && inGitDir(ws, resolved) {
					return &Refusal{Row: argv[0], Rule: "path",
						Reason: fmt.Sprintf("argument %q is inside .git, which tools do not touch", o.raw)}
				}
			}
		}
	}
	return nil
}

// lookPath finds a program on the PATH of env (not of this process), skipping
// relative PATH entries and any directory inside the workspace: a program the
// model wrote must not run under another program's row.
func lookPath(name string, env []string, ws string) (string, error) {
	var pathVar string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v
		}
	}
	for _, dir := range filepath.SplitList(pathVar) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			if _, inside := within(ws, real); inside {
				continue
			}
		}
		cand := filepath.Join(dir, name)
		fi, err := os.Stat(cand)
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			continue
		}
		return cand, nil
	}
	return "", fmt.Errorf("run %s: program not found on the tool PATH", name)
}

// capture keeps the first headMax and the last tailMax bytes written to it.
type capture struct {
	headMax, tailMax int
	head, tail       []byte
	total            int64
}

func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	if room := c.headMax - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if len(p) > 0 {
		c.tail = append(c.tail, p...)
		if len(c.tail) > 2*c.tailMax {
			c.tail = append(c.tail[:0], c.tail[len(c.tail)-c.tailMax:]...)
		}
	}
	return n, nil
}

func (c *capture) String() string {
	tail := c.tail
	if len(tail) > c.tailMax {
		tail = tail[len(tail)-c.tailMax:]
	}
	if c.total <= int64(len(c.head)+len(tail)) {
		return string(c.head) + string(tail)
	}
	// Cut on rune boundaries so the note is not glued to half a character.
	head := c.head
	for i := 0; i < utf8.UTFMax-1 && len(head) > 0; i++ {
		if r, size := utf8.DecodeLastRune(head); r != utf8.RuneError || size > 1 {
			break
		}
		head = head[:len(head)-1]
	}
	for i := 0; i < utf8.UTFMax-1 && len(tail) > 0 && !utf8.RuneStart(tail[0]); i++ {
		tail = tail[1:]
	}
	cut := c.total - int64(len(head)) - int64(len(tail))
	return fmt.Sprintf("%s\n[... %d bytes of output cut ...]\n%s", head, cut, tail)
}

func firstWord(argv []string) string {
	if len(argv) == 0 {
		return "an empty command"
	}
	return argv[0]
}
