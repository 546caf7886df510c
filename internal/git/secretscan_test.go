package git

import (
	"context"
	"encoding/hex"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/redact"
)

// pushToken is the Job's token in these tests: configured in the masker
// whose Contains the push asks.
const pushToken = "ghs_pushScanT0ken0000000000000000000000"

// remoteHas reports whether the bare remote holds object sha.
func (w *world) remoteHas(sha string) bool {
	cmd := exec.Command("git", "--git-dir", w.remote, "cat-file", "-e", sha+"^{commit}")
	cmd.Env = w.env
	return cmd.Run() == nil
}

// remoteRef is the remote's tip of branch, "" when it has none.
func (w *world) remoteRef(branch string) string {
	cmd := exec.Command("git", "--git-dir", w.remote, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	cmd.Env = w.env
	out, _ := cmd.Output()
	return strings.TrimSpace(string(out))
}

// TestPushRefusesSecret: a push whose commits hold the Job's token, in any
// form the masker knows, is refused before git sends anything, with an
// error that names the commit and the file and not the secret, of a class
// that stops the item for a person. The bare remote never receives the
// commit. A clean commit pushes; so does one on a base that already holds
// the text, since only what the push adds is read.
func TestPushRefusesSecret(t *testing.T) {
	ctx := context.Background()
	masker := redact.New(redact.Config{Secrets: []string{pushToken}})
	hexed := hex.EncodeToString([]byte(pushToken))
	for _, tc := range []struct {
		name, file, content, message string
		want                         string // the file the error names; "" for the message
	}{
		{"the hex form of the token in a file", "config/deploy.txt", "endpoint: api\ntoken_hex: " + hexed + "\n", "", "config/deploy.txt"},
		{"the token in pieces on lines", "notes.md", "the token is\n" + pushToken[:14] + "\n" + pushToken[14:28] + "\n" + pushToken[28:] + "\n", "", "notes.md"},
		{"the token reversed", "r.txt", reverse(pushToken) + "\n", "", "r.txt"},
		{"the token with zero-width characters", "z.txt", strings.Join(strings.Split(pushToken, ""), "\u200b") + "\n", "", "z.txt"},
		{"the token in a file with a NUL byte", "blob.bin", "\x00\x01binary " + pushToken + "\x00\n", "", "blob.bin"},
		{"the token in the commit message", "ok.txt", "fine\n", "group 1\n\nused " + hexed, ""},
		{"the token in a file's name", "keys/" + pushToken + ".txt", "x\n", "", NameHeld},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			r := w.open("job")
			r.SecretScan = masker.Contains
			const branch = "roadmap/5-scan"
			if err := r.CheckoutBranch(ctx, "origin", branch, "main"); err != nil {
				t.Fatal(err)
			}
			// A clean group first: it is pushed, so the second push reads
			// only what comes after it (the remote's tip to HEAD).
			write(t, r.Dir, "clean.txt", "hello\n")
			first, err := r.CommitGroup(ctx, 1, Message{Subject: "group 1"})
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Push(ctx, "origin", branch); err != nil {
				t.Fatalf("a clean commit was refused: %v", err)
			}
			write(t, r.Dir, tc.file, tc.content)
			msg := Message{Subject: "group 2"}
			if tc.message != "" {
				msg = Message{Subject: "group 2", Body: tc.message}
			}
			bad, err := r.CommitGroup(ctx, 2, msg)
			if err != nil {
				t.Fatal(err)
			}
			err = r.Push(ctx, "origin", branch)
			var sp *SecretInPush
			if !errors.As(err, &sp) {
				t.Fatalf("push = %v, want *SecretInPush", err)
			}
			if sp.Commit != bad || sp.File != tc.want || sp.Branch != branch {
				t.Errorf("refusal names commit %s, file %q, branch %s; want %s, %q, %s", sp.Commit, sp.File, sp.Branch, bad, tc.want, branch)
			}
			for _, s := range []string{pushToken, hexed, pushToken[:14]} {
				if strings.Contains(err.Error(), s) {
					t.Errorf("the error shows the secret: %v", err)
				}
			}
			if c := failure.ClassifyError(err); c != failure.Unknown {
				t.Errorf("class %s, want unknown: the item stops for a person", c)
			}
			if w.remoteHas(bad) || w.remoteRef(branch) != first {
				t.Errorf("the remote received the commit (its tip %s, the commit %s, the clean one %s)", w.remoteRef(branch), bad, first)
			}
		})
	}

	t.Run("a new branch and a base that holds the text already", func(t *testing.T) {
		w := newWorld(t)
		// main already holds the hex (it came from the remote, not from
		// the Job): a new branch on it reads only its own commits.
		seed := w.clone("seed2")
		write(t, seed, "old.txt", hexed+"\n")
		sh(t, w.env, seed, "add", ".")
		sh(t, w.env, seed, "commit", "--quiet", "-m", "an old commit")
		sh(t, w.env, seed, "push", "--quiet", "origin", "main")
		r := w.open("job")
		r.SecretScan = masker.Contains
		const branch = "roadmap/6-new"
		if err := r.CheckoutBranch(ctx, "origin", branch, "main"); err != nil {
			t.Fatal(err)
		}
		write(t, r.Dir, "new.txt", "clean\n")
		head, err := r.CommitGroup(ctx, 1, Message{Subject: "group 1"})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Push(ctx, "origin", branch); err != nil {
			t.Fatalf("a clean commit on a base holding the text was refused: %v", err)
		}
		if w.remoteRef(branch) != head {
			t.Errorf("the remote's %s is %q, want %s", branch, w.remoteRef(branch), head)
		}
		// A new branch whose first commit adds the token is refused.
		const other = "roadmap/7-new"
		if err := r.CheckoutBranch(ctx, "origin", other, "main"); err != nil {
			t.Fatal(err)
		}
		write(t, r.Dir, "leak.txt", strings.ToUpper(hexed)+"\n")
		bad, err := r.CommitGroup(ctx, 1, Message{Subject: "group 1"})
		if err != nil {
			t.Fatal(err)
		}
		var sp *SecretInPush
		if err := r.Push(ctx, "origin", other); !errors.As(err, &sp) || sp.File != "leak.txt" {
			t.Fatalf("push of a new branch adding the token = %v, want *SecretInPush for leak.txt", err)
		}
		if w.remoteHas(bad) || w.remoteRef(other) != "" {
			t.Errorf("the remote received the new branch")
		}
	})
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}
