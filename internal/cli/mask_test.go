package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func runMaskCLI(t *testing.T, args, environ []string, stdin io.Reader) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(context.Background(), append([]string{"mask"}, args...), environ, stdin, &out, &errb)
	return code, out.String(), errb.String()
}

func TestMaskCommand(t *testing.T) {
	token := "ghp_" + strings.Repeat("aB3", 12)
	in := "clone with " + token + "\n" +
		"runner token plain-runner-value in a URL\n" +
		"flag secret my-flag-secret and its env twin from-named-variable\n" +
		"dial db.corp and build.acme.test at 10.1.2.3\n" +
		"commit 3f786850e387550fdab836ed7e6dc881de23001b ok" // no final newline
	environ := []string{"GITHUB_TOKEN=plain-runner-value", "DEPLOY_HOOK=from-named-variable", "HOME=/home/runner"}
	tests := []struct {
		name     string
		args     []string
		want     string
		wantCode int
		wantErr  string
	}{
		{
			name: "families, environment and flags",
			args: []string{"--secret", "my-flag-secret", "--secret-env", "DEPLOY_HOOK", "--private-suffix", "acme.test"},
			want: "clone with [masked]\n" +
				"runner token [masked] in a URL\n" +
				"flag secret [masked] and its env twin [masked]\n" +
				"dial [masked] and [masked] at [masked]\n" +
				"commit 3f786850e387550fdab836ed7e6dc881de23001b ok",
		},
		{
			name: "no environment",
			args: []string{"--no-env"},
			want: "clone with [masked]\n" +
				"runner token plain-runner-value in a URL\n" +
				"flag secret my-flag-secret and its env twin from-named-variable\n" +
				"dial [masked] and build.acme.test at [masked]\n" +
				"commit 3f786850e387550fdab836ed7e6dc881de23001b ok",
		},
		{name: "short secret", args: []string{"--secret", "abc"}, wantCode: ExitUsage, wantErr: "shorter than 6"},
		{name: "unset secret variable", args: []string{"--secret-env", "NOPE"}, wantCode: ExitUsage, wantErr: "NOPE"},
		{name: "stray argument", args: []string{"job.log"}, wantCode: ExitUsage, wantErr: "reads stdin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runMaskCLI(t, tt.args, environ, strings.NewReader(in))
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr %q", code, tt.wantCode, stderr)
			}
			if tt.wantCode != ExitOK {
				if !strings.Contains(stderr, tt.wantErr) {
					t.Errorf("stderr %q, want it to mention %q", stderr, tt.wantErr)
				}
				if stdout != "" {
					t.Errorf("stdout %q, want nothing on a usage error", stdout)
				}
				return
			}
			if diff := cmp.Diff(tt.want, stdout); diff != "" {
				t.Errorf("stdout mismatch (-want +got):\n%s", diff)
			}
			if stderr != "" {
				t.Errorf("stderr %q, want nothing", stderr)
			}
		})
	}
}

func TestMaskCommandReadError(t *testing.T) {
	code, _, stderr := runMaskCLI(t, nil, nil, iotest.ErrReader(errors.New("disk gone")))
	if code != ExitInternal {
		t.Fatalf("exit %d, want %d", code, ExitInternal)
	}
	if !strings.Contains(stderr, "disk gone") {
		t.Errorf("stderr %q, want the read error", stderr)
	}
}

// TestMaskCommandStreams feeds a large input through a pipe: output arrives
// before the input ends, so the verb streams instead of reading it all.
func TestMaskCommandStreams(t *testing.T) {
	pr, pw := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		var errb bytes.Buffer
		code := Main(context.Background(), []string{"mask"}, nil, pr, outW, &errb)
		outW.Close()
		done <- code
	}()
	go func() {
		pw.Write([]byte("first line ghp_" + strings.Repeat("Qw9", 12) + "\n"))
		// The writer blocks here until the first line has been read back.
	}()
	first := make(chan string, 1)
	go func() {
		buf := make([]byte, len("first line [masked]\n"))
		io.ReadFull(outR, buf)
		first <- string(buf)
	}()
	select {
	case got := <-first:
		if got != "first line [masked]\n" {
			t.Errorf("first output %q", got)
		}
	case <-time.After(30 * time.Second):
		// A guard against a hang, not a speed check: a verb that reads
		// all of stdin before writing never gets here.
		t.Fatal("no output while stdin is still open: mask does not stream")
	}
	pw.Close()
	io.Copy(io.Discard, outR)
	if code := <-done; code != ExitOK {
		t.Errorf("exit %d", code)
	}
}
