package git

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
)

// SecretInPush is a push refused before it left: a commit it would publish
// holds one of the Job's secrets (Repo.SecretScan said so) in a file it
// adds to, in a file's name, or in its message. It names the commit and
// the file, never the secret. Nothing was sent: the remote does not have
// the commit. It stops the item for a person (class unknown): the token
// works, so it is not auth, and no automatic action helps, since pushing
// again pushes the same commit.
type SecretInPush struct {
	Branch string
	Commit string
	// File is the file whose added lines hold the secret; "" when the
	// commit message does, and NameHeld when the file's name does (it is
	// not repeated).
	File string
}

// NameHeld is SecretInPush.File for a file whose own name holds the secret.
const NameHeld = "(a file whose name holds it)"

func (e *SecretInPush) Error() string {
	where := "its message"
	switch {
	case e.File == NameHeld:
		where = "the name of a file it adds"
	case e.File != "":
		where = e.File
	}
	return fmt.Sprintf("push %s refused: commit %s holds one of the Job's secrets (in %s); nothing was pushed, and a person must look",
		e.Branch, short(e.Commit), where)
}

// FailureClass is the failure taxonomy's class of the refusal
// (failure.ClassifyError asks it; this package cannot import that one).
func (e *SecretInPush) FailureClass() string { return "unknown" }

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// scanOutgoing asks r.SecretScan about everything a push of rev (a branch's
// full ref, or a commit) to remote would publish, its refusal naming the
// push by name: the commits of rev that no remote-tracking ref of remote
// has (for a branch the remote has, the remote's tip to HEAD; for a new
// one, its base to HEAD), each one's message, the names of the files it
// changes and every line it adds, read as text whatever the file holds (a
// NUL byte does not hide a file; no diff driver or textconv runs).
// Remote-tracking refs that lag behind the remote make it read more
// commits, never fewer than the push sends that did not come from the
// remote. A remote that is not a configured name has no tracking refs:
// then the whole history of rev is read.
func (r *Repo) scanOutgoing(ctx context.Context, remote, branch, rev string) error {
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return fmt.Errorf("check push %s for secrets: %w", branch, err)
	}
	// A marker nobody can guess opens each commit, so no line of a file or
	// a message can pass for one.
	mark := "roadmap-scan-" + hex.EncodeToString(raw[:])
	out, err := r.run(ctx, nil, "log", "--reverse", "--no-color",
		"--format="+mark+" %H%n%B%n"+mark+"-end",
		"--patch", "--text", "--unified=0", "--no-ext-diff", "--no-textconv", "--no-renames", "--diff-merges=first-parent", "--submodule=short",
		rev, "--not", "--remotes="+remote, "--")
	if err != nil {
		return fmt.Errorf("check push %s for secrets: %w", branch, err)
	}
	var (
		commit, file string
		text         strings.Builder
		inMessage    bool
		inHunk       bool
	)
	flush := func() error {
		defer text.Reset()
		switch {
		case commit == "":
		case inMessage && r.SecretScan(text.String()):
			return &SecretInPush{Branch: branch, Commit: commit}
		case file != "" && r.SecretScan(text.String()):
			return &SecretInPush{Branch: branch, Commit: commit, File: file}
		}
		return nil
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(make([]byte, 64<<10), len(out)+1)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, mark+" "):
			if err := flush(); err != nil {
				return err
			}
			commit, file, inMessage, inHunk = strings.TrimPrefix(line, mark+" "), "", true, false
		case line == mark+"-end":
			if err := flush(); err != nil {
				return err
			}
			inMessage = false
		case inMessage:
			text.WriteString(line + "\n")
		case strings.HasPrefix(line, "diff --git "):
			if err := flush(); err != nil {
				return err
			}
			file, inHunk = "", false
		case !inHunk && strings.HasPrefix(line, "+++ "):
			name := strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(line, "+++ "), "\""), "b/")
			if name == "/dev/null" {
				name = ""
			}
			file = name
			if r.SecretScan(name) {
				return &SecretInPush{Branch: branch, Commit: commit, File: NameHeld}
			}
		case strings.HasPrefix(line, "@@"):
			inHunk = true
		case inHunk && strings.HasPrefix(line, "+"):
			text.WriteString(line[1:] + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("check push %s for secrets: %w", branch, err)
	}
	return flush()
}
