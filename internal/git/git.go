package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Repo is a git work tree and the environment git runs with there.
type Repo struct {
	Dir string
	// gitDir is the repository's git directory, whose config is audited
	// before each command (harden.go).
	gitDir  string
	audited bool
	stamp   configStamp
	trusted []string // the executing entries found at Open
	// Env is the caller's environment (nil: an empty one), the Job's whole
	// one as often as not. git sees only its allow-listed part (env.go):
	// PATH, HOME, the locale, the time zone, the temporary folder, the
	// identity and which configuration files to read; push, fetch and
	// ls-remote also the certificate authorities and the proxy. The package
	// adds GIT_TERMINAL_PROMPT=0, GIT_EDITOR=true and LC_ALL=C, so git never
	// waits for a person and its messages stay in one language.
	Env []string
	// remoteAuth is the credential (Authenticate), given to the commands
	// that talk to the remote and to no other.
	remoteAuth []string
	// indexFile, when set, is the index git uses instead of the
	// repository's own (WorkTreeTree).
	indexFile string
	// Hook, when set, is called before each git command (done false) and
	// after it (done true, err its outcome). It is the fault suite's seam
	// (internal/faults): it kills a Job just before or just after a commit or
	// a push, as SIGKILL would. Production code leaves it nil.
	Hook func(args []string, done bool, err error)
	// SecretScan, when set, is asked before each push about what the push
	// would publish (every line its commits add, the names of the files
	// they change, their messages): true refuses the push with a
	// *SecretInPush. The Job sets it to its masker's Contains
	// (internal/job), so a commit holding the token, a model key or another
	// secret of the environment, in any form the masker knows, never
	// leaves the runner.
	SecretScan func(string) bool
}

// Error is a git command that failed. Stderr is git's own, unmasked: mask it
// before it leaves the process (a remote URL or a hook's message may hold a
// secret). Error() shows the command and the last line of stderr.
type Error struct {
	Args     []string // the arguments after "git"
	ExitCode int      // -1 when git did not run or was killed
	Stderr   string
	Err      error
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("git %s: %v", strings.Join(e.Args, " "), e.Err)
	if line := lastLine(e.Stderr); line != "" {
		msg += ": " + line
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	line := strings.TrimSpace(lines[len(lines)-1])
	if len(line) > 200 {
		line = line[:200] + "…"
	}
	return line
}

// Open returns the repository whose work tree holds dir, rooted at its top
// level.
func Open(ctx context.Context, dir string, env []string) (*Repo, error) {
	r := &Repo{Dir: dir, Env: env}
	out, err := r.exec(ctx, nil, false, "rev-parse", "--show-toplevel", "--absolute-git-dir")
	if err != nil {
		return nil, fmt.Errorf("open repository %s: %w", dir, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		return nil, fmt.Errorf("open repository %s: rev-parse printed %q", dir, out)
	}
	r.Dir, r.gitDir = lines[0], lines[1]
	if err := r.scrubCredentials(ctx); err != nil {
		return nil, fmt.Errorf("open repository %s: %w", dir, err)
	}
	if err := r.audit(ctx); err != nil {
		return nil, fmt.Errorf("open repository %s: %w", dir, err)
	}
	return r, nil
}

// run runs git with args in the work tree and returns stdout, after the
// repository's config passed the audit. stdin may be nil. git gets neither
// the credential nor what reaching a server needs: a command that talks to
// the remote goes through runRemote.
func (r *Repo) run(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	if err := r.audit(ctx); err != nil {
		return nil, &Error{Args: args, ExitCode: -1, Err: err}
	}
	return r.exec(ctx, stdin, false, args...)
}

// runRemote is run for push, fetch and ls-remote, the commands that talk to
// the remote: they alone get the credential (Authenticate) and the
// certificate and proxy variables.
func (r *Repo) runRemote(ctx context.Context, args ...string) ([]byte, error) {
	if err := r.audit(ctx); err != nil {
		return nil, &Error{Args: args, ExitCode: -1, Err: err}
	}
	return r.exec(ctx, nil, true, args...)
}

// exec runs git with the hardened settings and the allow-listed
// environment (with the credential when remote), without the audit.
func (r *Repo) exec(ctx context.Context, stdin []byte, remote bool, args ...string) (out []byte, err error) {
	if r.Hook != nil {
		r.Hook(args, false, nil)
		defer func() { r.Hook(args, true, err) }()
	}
	cmd := exec.CommandContext(ctx, "git", append(append([]string(nil), hardened...), args...)...)
	cmd.Dir = r.Dir
	cmd.Env = r.environ(remote)
	cmd.WaitDelay = 5 * time.Second
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		code := -1
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		}
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return stdout.Bytes(), &Error{Args: args, ExitCode: code, Stderr: stderr.String(), Err: err}
	}
	return stdout.Bytes(), nil
}

// output runs git and returns its stdout without the trailing newline.
func (r *Repo) output(ctx context.Context, args ...string) (string, error) {
	out, err := r.run(ctx, nil, args...)
	return strings.TrimRight(string(out), "\n"), err
}

// Head returns the sha of HEAD.
func (r *Repo) Head(ctx context.Context) (string, error) {
	return r.RevParse(ctx, "HEAD")
}

// RevParse resolves rev to a commit sha.
func (r *Repo) RevParse(ctx context.Context, rev string) (string, error) {
	sha, err := r.output(ctx, "rev-parse", "--verify", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", rev, err)
	}
	return sha, nil
}

// IsAncestor reports whether commit a is an ancestor of b (or b itself).
func (r *Repo) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	_, err := r.run(ctx, nil, "merge-base", "--is-ancestor", a, b)
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("is %s an ancestor of %s: %w", a, b, err)
	}
	return true, nil
}

// MergeBase returns the best common ancestor of a and b.
func (r *Repo) MergeBase(ctx context.Context, a, b string) (string, error) {
	sha, err := r.output(ctx, "merge-base", a, b)
	if err != nil {
		return "", fmt.Errorf("merge base of %s and %s: %w", a, b, err)
	}
	return sha, nil
}

// CurrentBranch returns the short name of the checked-out branch, or "" when
// HEAD is detached.
func (r *Repo) CurrentBranch(ctx context.Context) (string, error) {
	name, err := r.output(ctx, "symbolic-ref", "--quiet", "--short", "HEAD")
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("current branch: %w", err)
	}
	return name, nil
}

// WorkBranch is the branch implement works on for an issue:
// roadmap/<issue>-<slug>, the slug being the title in lowercase ASCII letters
// and digits joined by single dashes, at most 40 characters. A title with no
// such character gives roadmap/<issue>.
func WorkBranch(issue int, title string) string {
	const max = 40
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(title) {
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(c)
		default:
			dash = true
		}
		if b.Len() >= max {
			break
		}
	}
	slug := strings.TrimRight(b.String()[:min(b.Len(), max)], "-")
	if slug == "" {
		return fmt.Sprintf("roadmap/%d", issue)
	}
	return fmt.Sprintf("roadmap/%d-%s", issue, slug)
}

func (r *Repo) refExists(ctx context.Context, ref string) (bool, error) {
	_, err := r.run(ctx, nil, "show-ref", "--verify", "--quiet", ref)
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return false, nil
	}
	return err == nil, err
}

// CheckoutBranch checks out branch name. A local branch of that name is
// reused as it is. Otherwise, when remote is set and has the branch, the
// branch is fetched and starts from the remote's tip (a continuation picks up
// what an earlier Job pushed); failing that it is created at startPoint
// (HEAD when empty). Uncommitted changes are carried along.
func (r *Repo) CheckoutBranch(ctx context.Context, remote, name, startPoint string) error {
	local, err := r.refExists(ctx, "refs/heads/"+name)
	if err != nil {
		return fmt.Errorf("checkout %s: %w", name, err)
	}
	if local {
		if _, err := r.run(ctx, nil, "checkout", "--quiet", "--no-recurse-submodules", name, "--"); err != nil {
			return fmt.Errorf("checkout %s: %w", name, err)
		}
		return nil
	}
	if remote != "" {
		_, found, err := r.LsRemote(ctx, remote, name)
		if err != nil {
			return fmt.Errorf("checkout %s: %w", name, err)
		}
		if found {
			sha, err := r.Fetch(ctx, remote, name)
			if err != nil {
				return fmt.Errorf("checkout %s: %w", name, err)
			}
			startPoint = sha
		}
	}
	if startPoint == "" {
		startPoint = "HEAD"
	}
	if _, err := r.run(ctx, nil, "checkout", "--quiet", "--no-recurse-submodules", "--no-track", "-b", name, startPoint, "--"); err != nil {
		return fmt.Errorf("checkout %s at %s: %w", name, startPoint, err)
	}
	return nil
}

// Change is one path that differs from HEAD, as `git status --porcelain`
// shows it: XY is the two-letter state ("??" for untracked, " M", "A ", …).
type Change struct {
	XY   string
	Path string
}

// Status returns the changes in the work tree and the index, untracked files
// included (not ignored ones). A gitlink is never shown changed: asking its
// repository would run what the model put in its config, and a commit never
// restages one. An untracked nested repository shows as "dir/".
func (r *Repo) Status(ctx context.Context) ([]Change, error) {
	out, err := r.run(ctx, nil, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=all")
	if err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	var changes []Change
	fields := strings.Split(string(out), "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 {
			continue
		}
		c := Change{XY: f[:2], Path: f[3:]}
		if c.XY[0] == 'R' || c.XY[0] == 'C' {
			i++ // a rename is followed by its source path
		}
		changes = append(changes, c)
	}
	return changes, nil
}

// HasChanges reports whether anything would be committed by CommitWIP.
func (r *Repo) HasChanges(ctx context.Context) (bool, error) {
	changes, err := r.Status(ctx)
	return len(changes) > 0, err
}

// Message is what a commit says. Issue, when not zero, adds a
// `Roadmap-Issue: N` trailer.
type Message struct {
	Subject string
	Body    string
	Issue   int
	// AddSubmodule lets the commit record a repository nested in the work
	// tree as a gitlink: only for a group the plan says adds a submodule.
	// Without it a nested `.git`, or a gitlink HEAD does not have, refuses
	// the commit with a *NestedRepository.
	AddSubmodule bool
}

// Trailer keys implement writes and reads back.
const (
	TrailerGroup = "Roadmap-Group"
	TrailerIssue = "Roadmap-Issue"
	TrailerWIP   = "Roadmap-WIP"
	// TrailerArchive names the OpenSpec change a commit archives.
	TrailerArchive = "Roadmap-Archive"
)

// CommitGroup commits every change in the work tree as the commit of a passed
// group, with a `Roadmap-Group: N` trailer, and returns its sha. It commits
// even when nothing changed: the trailer is what records that the group
// passed. Like every commit of the package it refuses a nested repository
// (*NestedRepository, see Message.AddSubmodule) and leaves the gitlinks HEAD
// holds as they are.
func (r *Repo) CommitGroup(ctx context.Context, group int, m Message) (string, error) {
	if group <= 0 {
		return "", fmt.Errorf("commit group %d: group numbers start at 1", group)
	}
	sha, err := r.commit(ctx, m, true, TrailerGroup+": "+strconv.Itoa(group))
	if err != nil {
		return "", fmt.Errorf("commit group %d: %w", group, err)
	}
	return sha, nil
}

// CommitWIP commits the work in progress with a `Roadmap-WIP: true` trailer,
// so a Job that yields or stops mid-group loses nothing. With nothing to
// commit it makes no commit and returns "".
func (r *Repo) CommitWIP(ctx context.Context, m Message) (string, error) {
	dirty, err := r.HasChanges(ctx)
	if err != nil || !dirty {
		return "", err
	}
	sha, err := r.commit(ctx, m, false, TrailerWIP+": true")
	if err != nil {
		return "", fmt.Errorf("commit work in progress: %w", err)
	}
	return sha, nil
}

func (r *Repo) commit(ctx context.Context, m Message, allowEmpty bool, trailer string) (string, error) {
	if strings.TrimSpace(m.Subject) == "" {
		return "", errors.New("empty commit subject")
	}
	if err := r.stage(ctx, m.AddSubmodule); err != nil {
		return "", err
	}
	msg := strings.TrimSpace(m.Subject) + "\n"
	if body := strings.TrimSpace(m.Body); body != "" {
		msg += "\n" + body + "\n"
	}
	args := []string{"commit", "--quiet", "--no-verify", "--file=-", "--cleanup=whitespace", "--trailer", trailer}
	if m.Issue != 0 {
		args = append(args, "--trailer", TrailerIssue+": "+strconv.Itoa(m.Issue))
	}
	if allowEmpty {
		args = append(args, "--allow-empty")
	}
	if _, err := r.run(ctx, []byte(msg), args...); err != nil {
		return "", err
	}
	return r.Head(ctx)
}

// GroupCommits reads the `Roadmap-Group` trailers of the commits in base..HEAD
// and returns, for each group, the newest commit that carries it. Trailers
// that are not a positive number are ignored. This is how a Job finds the
// groups that passed when the record and git disagree.
func (r *Repo) GroupCommits(ctx context.Context, base string) (map[int]string, error) {
	log, err := r.GroupLog(ctx, base, "HEAD")
	if err != nil {
		return nil, err
	}
	groups := map[int]string{}
	for _, c := range log {
		for _, n := range c.Groups {
			if _, seen := groups[n]; !seen { // the log lists newest first
				groups[n] = c.SHA
			}
		}
	}
	return groups, nil
}

// GroupCommit is a commit and the groups its `Roadmap-Group` trailers name:
// none for a WIP commit, a plan round, a merge or a person's commit.
type GroupCommit struct {
	SHA    string
	Groups []int
}

// Names reports whether the commit's trailers name group n.
func (c GroupCommit) Names(n int) bool { return slices.Contains(c.Groups, n) }

// GroupLog lists every commit in base..end, newest first in topological
// order (no commit before one of its children, so the walk from end meets a
// commit's descendants first, across merges too), each with the groups its
// `Roadmap-Group` trailers name. Trailers that are not a positive number are
// ignored.
func (r *Repo) GroupLog(ctx context.Context, base, end string) ([]GroupCommit, error) {
	out, err := r.run(ctx, nil, "log", "--topo-order", "--format=%H%x00%(trailers:key="+TrailerGroup+",valueonly,separator=%x2C)%x00",
		"--end-of-options", base+".."+end)
	if err != nil {
		return nil, fmt.Errorf("read group commits in %s..%s: %w", base, end, err)
	}
	var log []GroupCommit
	fields := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		c := GroupCommit{SHA: strings.TrimSpace(fields[i])}
		for _, v := range strings.Split(fields[i+1], ",") {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 && !c.Names(n) {
				c.Groups = append(c.Groups, n)
			}
		}
		log = append(log, c)
	}
	return log, nil
}

// ChangedFiles returns the paths that differ between base and the work tree,
// untracked files included, sorted and each once.
func (r *Repo) ChangedFiles(ctx context.Context, base string) ([]string, error) {
	diff, err := r.run(ctx, nil, "diff", "--name-only", "-z", "--no-renames", "--ignore-submodules=all", base, "--")
	if err != nil {
		return nil, fmt.Errorf("changed files since %s: %w", base, err)
	}
	untracked, err := r.run(ctx, nil, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return nil, fmt.Errorf("untracked files: %w", err)
	}
	return splitZ(string(diff) + string(untracked)), nil
}

// Diff returns the patch from base to the work tree (tracked files; an
// untracked file shows up once it is committed; gitlinks never, as in
// Status).
func (r *Repo) Diff(ctx context.Context, base string) (string, error) {
	out, err := r.run(ctx, nil, "diff", "--no-color", "--no-ext-diff", "--ignore-submodules=all", base, "--")
	if err != nil {
		return "", fmt.Errorf("diff since %s: %w", base, err)
	}
	return string(out), nil
}

func splitZ(s string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range strings.Split(s, "\x00") {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// DefaultName and DefaultEmail are the author and committer of the runner's
// commits when the repository, the machine and the environment name none: a
// runner has no git identity configured, and git's guess from the host name
// fails where the host has no domain ("unable to auto-detect email address").
const (
	DefaultName  = "github-actions[bot]"
	DefaultEmail = "41898282+github-actions[bot]@users.noreply.github.com"
)

// EnsureIdentity adds DefaultName and DefaultEmail to the Repo's environment when git has
// no identity to commit with; a configured identity (git config user.name and
// user.email, or GIT_AUTHOR_*/GIT_COMMITTER_* in the environment) is kept.
func (r *Repo) EnsureIdentity(ctx context.Context) error {
	has := func(key, env string) (bool, error) {
		for _, kv := range r.Env {
			if strings.HasPrefix(kv, env+"=") && len(kv) > len(env)+1 {
				return true, nil
			}
		}
		out, err := r.run(ctx, nil, "config", "--get", key)
		var ge *Error
		if errors.As(err, &ge) && ge.ExitCode == 1 {
			return false, nil // not set
		}
		if err != nil {
			return false, fmt.Errorf("read git config %s: %w", key, err)
		}
		return strings.TrimSpace(string(out)) != "", nil
	}
	for _, k := range []struct{ key, author, committer, value string }{
		{"user.name", "GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME", DefaultName},
		{"user.email", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL", DefaultEmail},
	} {
		ok, err := has(k.key, k.author)
		if err != nil {
			return err
		}
		if !ok {
			r.Env = append(r.Env, k.author+"="+k.value, k.committer+"="+k.value)
		}
	}
	return nil
}

// CommitArchive commits the whole work tree as the archive of an OpenSpec
// change, with the trailer Roadmap-Archive: id, and returns the new head.
func (r *Repo) CommitArchive(ctx context.Context, id string, m Message) (string, error) {
	sha, err := r.commit(ctx, m, false, TrailerArchive+": "+id)
	if err != nil {
		return "", fmt.Errorf("commit the archive of %s: %w", id, err)
	}
	return sha, nil
}
