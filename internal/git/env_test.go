package git

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// gitCall is one git the package ran, as the git on PATH saw it.
type gitCall struct {
	args []string // after the hardened -c settings
	sub  string   // the subcommand: "status", "push", …
	env  []string
}

func (c gitCall) get(name string) (string, bool) {
	for _, kv := range c.env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// observeGit puts first on PATH (the process's, which exec.Command
// searches) a git that records the arguments and the environment it was
// started with, exactly as the package gave them, and then runs the real
// git. The gits that git starts itself are not recorded. calls returns what
// was recorded so far.
func observeGit(t *testing.T) (calls func() []gitCall) {
	t.Helper()
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc to read a process's environment from")
	}
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	real, _ = filepath.Abs(real)
	bin, log := t.TempDir(), t.TempDir()
	script := "#!/bin/sh\n" +
		"if [ -z \"$ROADMAP_TEST_OBSERVED\" ]; then\n" +
		"  d=$(mktemp -d '" + log + "/call.XXXXXXXX') || exit 97\n" +
		"  cat /proc/$$/environ > \"$d/env\" || exit 97\n" +
		"  printf '%s\\0' \"$@\" > \"$d/args\" || exit 97\n" +
		"fi\n" +
		"ROADMAP_TEST_OBSERVED=1\nexport ROADMAP_TEST_OBSERVED\n" +
		"exec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(filepath.ListSeparator)+os.Getenv("PATH"))
	return func() []gitCall {
		t.Helper()
		dirs, err := filepath.Glob(filepath.Join(log, "call.*"))
		if err != nil {
			t.Fatal(err)
		}
		var out []gitCall
		for _, d := range dirs {
			env, err := os.ReadFile(filepath.Join(d, "env"))
			if err != nil {
				t.Fatal(err)
			}
			args, err := os.ReadFile(filepath.Join(d, "args"))
			if err != nil {
				t.Fatal(err)
			}
			c := gitCall{env: strings.Split(strings.TrimSuffix(string(env), "\x00"), "\x00")}
			a := strings.Split(strings.TrimSuffix(string(args), "\x00"), "\x00")
			for len(a) >= 2 && a[0] == "-c" {
				a = a[2:]
			}
			c.args = a
			for _, arg := range a {
				if !strings.HasPrefix(arg, "-") {
					c.sub = arg
					break
				}
			}
			out = append(out, c)
		}
		return out
	}
}

// canaries are secrets a Job's environment holds, by name; none may reach
// any git the package runs.
var canaries = map[string]string{
	"GITHUB_TOKEN":                   "ghs_canaryGITHUBTOKEN000000000000000000",
	"ROADMAP_PUSH_TOKEN":             "ghs_canaryPUSHTOKEN00000000000000000000",
	"OPENAI_API_KEY":                 "sk-canaryOPENAIAPIKEY0000000000000000",
	"LLM":                            "canary-neutral-model-key-0000000000000",
	"ACTIONS_RUNTIME_TOKEN":          "canary-actions-runtime-token-00000000",
	"ACTIONS_ID_TOKEN_REQUEST_TOKEN": "canary-oidc-request-token-0000000000000",
	"ACTIONS_ID_TOKEN_REQUEST_URL":   "https://canary-oidc.invalid/token?x=1",
	// A header another step configured through the environment.
	"GIT_CONFIG_COUNT":   "1",
	"GIT_CONFIG_KEY_0":   "http.extraheader",
	"GIT_CONFIG_VALUE_0": "AUTHORIZATION: bearer canary-env-configured-header-000",
}

// remoteOnly are variables only push, fetch and ls-remote may see: what
// reaching a server over HTTPS needs. The loopback server of the tests is
// reached without a proxy.
var remoteOnly = map[string]string{
	"HTTPS_PROXY":  "http://proxy.invalid:3128",
	"NO_PROXY":     "127.0.0.1,localhost",
	"no_proxy":     "127.0.0.1,localhost",
	"SSL_CERT_DIR": "/canary/certs",
}

// wantLocal are the only variables a git that does not talk to the remote
// may be given: the documented allow-list (docs/isolation.md), the
// package's own settings, and the LC_* of the locale.
var wantLocal = []string{
	"PATH", "HOME", "XDG_CONFIG_HOME", "TMPDIR", "TZ", "LANG", "LANGUAGE",
	"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE",
	"GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE",
	"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM",
	"GIT_TERMINAL_PROMPT", "GIT_EDITOR", "GIT_MERGE_AUTOEDIT", "GIT_INDEX_FILE",
}

// jobEnv sets the canaries (and the remote-only variables, a locale and a
// time zone) in the process environment and returns it whole with the
// tests' git settings, as a Job hands its environment to Open.
func jobEnv(t *testing.T) []string {
	t.Helper()
	for k, v := range canaries {
		t.Setenv(k, v)
	}
	for k, v := range remoteOnly {
		t.Setenv(k, v)
	}
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("TZ", "UTC")
	return append(os.Environ(), testEnv(t)...)
}

const testToken = "ghs_canaryAUTHENTICATED0000000000000000"

// wantHeader is the extraheader value Authenticate gives for testToken.
var wantHeader = "AUTHORIZATION: basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+testToken))

// leaks returns the names of the variables of c's environment that hold a
// canary, or the token in any form unless credential (the commands that
// talk to the remote hold it, and only as wantHeader).
func leaks(c gitCall, credential bool) []string {
	var secrets []string
	if !credential {
		secrets = append(secrets, testToken, base64.StdEncoding.EncodeToString([]byte("x-access-token:"+testToken)))
	}
	for _, v := range canaries {
		if len(v) > 8 {
			secrets = append(secrets, v)
		}
	}
	var out []string
	for _, kv := range c.env {
		for _, s := range secrets {
			if strings.Contains(kv, s) {
				name, _, _ := strings.Cut(kv, "=")
				out = append(out, name)
			}
		}
	}
	return out
}

func localName(name string) bool {
	return slices.Contains(wantLocal, name) || strings.HasPrefix(name, "LC_")
}

// TestGitEnvAllowListed: the git of status, diff, add, commit, worktree and
// the rest sees the allow-listed part of the Job's environment and nothing
// else: no token, no model key, no Actions runtime or OIDC token, no
// header configured through the environment, and not the credential
// Authenticate gave, which is the remote's alone.
func TestGitEnvAllowListed(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	dir := w.clone("a")
	calls := observeGit(t)
	r, err := Open(ctx, dir, jobEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	r.Authenticate("https://git.example.invalid/", testToken)
	if err := r.EnsureIdentity(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.CheckoutBranch(ctx, "", "roadmap/1-env", ""); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "a.txt", "one\nTWO\nthree\n")
	write(t, dir, "new.txt", "new\n")
	if _, err := r.Status(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Diff(ctx, "HEAD"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ChangedFiles(ctx, "HEAD"); err != nil {
		t.Fatal(err)
	}
	tree, err := r.WorkTreeTree(ctx)
	if err != nil {
		t.Fatal(err)
	}
	base := mustHead(t, r)
	head, err := r.CommitGroup(ctx, 1, Message{Subject: "group 1", Issue: 1})
	if err != nil {
		t.Fatal(err)
	}
	wt, err := r.AddWorktree(ctx, base, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Overlay(ctx, base, head, func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	wt.Remove(ctx)
	if _, err := r.GroupCommits(ctx, base); err != nil {
		t.Fatal(err)
	}
	if _, err := r.MergedCommit(ctx, head, base, "merge"); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "wip.txt", "wip\n")
	if _, err := r.CommitWIP(ctx, Message{Subject: "wip"}); err != nil {
		t.Fatal(err)
	}

	seen := map[string]bool{}
	var index bool
	for _, c := range calls() {
		seen[c.sub] = true
		if l := leaks(c, false); len(l) > 0 {
			t.Errorf("git %s was given %v", strings.Join(c.args, " "), l)
		}
		var extra []string
		for _, kv := range c.env {
			name, _, _ := strings.Cut(kv, "=")
			if !localName(name) {
				extra = append(extra, name)
			}
		}
		if len(extra) > 0 {
			sort.Strings(extra)
			t.Errorf("git %s was given %v, which is not on the allow-list", strings.Join(c.args, " "), extra)
		}
		for _, name := range []string{"PATH", "HOME", "LANG", "TZ", "GIT_CONFIG_GLOBAL", "GIT_AUTHOR_NAME", "GIT_TERMINAL_PROMPT"} {
			if _, ok := c.get(name); !ok {
				t.Errorf("git %s was not given %s", strings.Join(c.args, " "), name)
			}
		}
		if v, ok := c.get("GIT_INDEX_FILE"); ok {
			index = index || strings.HasSuffix(v, "/index")
		}
	}
	for _, sub := range []string{"status", "diff", "add", "commit", "worktree", "checkout", "ls-files", "merge-tree", "write-tree"} {
		if !seen[sub] {
			t.Errorf("no git %s was observed; the observation missed it", sub)
		}
	}
	if !index {
		t.Error("WorkTreeTree's git was not given its private index")
	}
	if tree == "" {
		t.Error("WorkTreeTree gave no tree")
	}
}

// TestCredentialOnlyForRemote: the credential Authenticate gives, and the
// certificate and proxy variables, reach push, fetch and ls-remote, and no
// other git; a push with it goes through, over a loopback smart HTTP server
// that refuses a request without it as over a local bare remote.
func TestCredentialOnlyForRemote(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	dir := w.clone("a")

	// The same bare remote behind git http-backend, which takes a request
	// only with the header.
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		requests []string
	)
	backend := &cgi.Handler{Path: real, Args: []string{"http-backend"}, Env: []string{
		"GIT_PROJECT_ROOT=" + filepath.Dir(w.remote), "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=roadmap",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + t.TempDir(),
		"ROADMAP_TEST_OBSERVED=1", // the server's gits are not the package's
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		if "AUTHORIZATION: "+req.Header.Get("Authorization") != wantHeader {
			rw.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(rw, "no credential", http.StatusUnauthorized)
			return
		}
		mu.Lock()
		requests = append(requests, req.URL.Path+"?"+req.URL.RawQuery)
		mu.Unlock()
		backend.ServeHTTP(rw, req)
	}))
	defer srv.Close()
	sh(t, w.env, dir, "remote", "add", "web", srv.URL+"/"+filepath.Base(w.remote))
	execPath := sh(t, w.env, "", "--exec-path")
	_, errBackend := os.Stat(filepath.Join(execPath, "git-http-backend"))
	_, errHelper := os.Stat(filepath.Join(execPath, "git-remote-http"))
	web := errBackend == nil && errHelper == nil

	calls := observeGit(t)
	r, err := Open(ctx, dir, jobEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	r.Authenticate(srv.URL+"/", testToken)
	if _, _, err := r.LsRemote(ctx, "origin", "main"); err != nil {
		t.Fatal(err)
	}
	const branch = "roadmap/2-credential"
	if err := r.CheckoutBranch(ctx, "origin", branch, ""); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "b.txt", "b\n")
	head, err := r.CommitGroup(ctx, 1, Message{Subject: "group 1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Push(ctx, "origin", branch); err != nil {
		t.Fatalf("push with the credential: %v", err)
	}
	if sha, err := r.Fetch(ctx, "origin", branch); err != nil || sha != head {
		t.Fatalf("Fetch = %s, %v; want %s", sha, err, head)
	}
	if _, err := r.FetchTo(ctx, "origin", "main", "refs/roadmap/base"); err != nil {
		t.Fatal(err)
	}
	note, err := r.SetRefIf(ctx, "origin", "refs/roadmap/lease/2", "", "held")
	if err != nil {
		t.Fatal(err)
	}
	if _, found, err := r.ReadRef(ctx, "origin", "refs/roadmap/lease/2"); err != nil || !found {
		t.Fatalf("ReadRef = %v, %v", found, err)
	}
	if err := r.DeleteRefIf(ctx, "origin", "refs/roadmap/lease/2", note); err != nil {
		t.Fatal(err)
	}
	webHead := head
	if web {
		write(t, dir, "c.txt", "c\n")
		if webHead, err = r.CommitGroup(ctx, 2, Message{Subject: "group 2"}); err != nil {
			t.Fatal(err)
		}
		if err := r.Push(ctx, "web", branch); err != nil {
			t.Fatalf("push over HTTP with the credential: %v", err)
		}
		if sha, found, err := r.LsRemote(ctx, "web", branch); err != nil || !found || sha != webHead {
			t.Fatalf("LsRemote over HTTP = %s, %v, %v; want %s", sha, found, err, webHead)
		}
		if sha, err := r.Fetch(ctx, "web", branch); err != nil || sha != webHead {
			t.Fatalf("Fetch over HTTP = %s, %v; want %s", sha, err, webHead)
		}
	} else {
		t.Log("no git-http-backend or git-remote-http here: the pushes go to the local bare remote only")
	}
	observed := calls()

	remote := []string{"push", "fetch", "ls-remote"}
	authed := map[string]bool{}
	for _, c := range observed {
		cmd := "git " + strings.Join(c.args, " ")
		isRemote := slices.Contains(remote, c.sub)
		if l := leaks(c, isRemote); len(l) > 0 {
			t.Errorf("%s was given %v", cmd, l)
		}
		count, _ := c.get("GIT_CONFIG_COUNT")
		key, _ := c.get("GIT_CONFIG_KEY_0")
		value, hasValue := c.get("GIT_CONFIG_VALUE_0")
		if isRemote {
			if count != "1" || key != "http."+srv.URL+"/.extraheader" || value != wantHeader {
				t.Errorf("%s was not given the credential: GIT_CONFIG_COUNT=%q KEY_0=%q VALUE_0 set %v", cmd, count, key, hasValue)
			}
			for name, want := range remoteOnly {
				if v, _ := c.get(name); v != want {
					t.Errorf("%s was given %s=%q, want %q", cmd, name, v, want)
				}
			}
			authed[c.sub] = true
			continue
		}
		if hasValue || count != "" {
			t.Errorf("%s, which does not talk to the remote, was given a credential (GIT_CONFIG_COUNT=%q, VALUE_0 set %v)", cmd, count, hasValue)
		}
		for name := range remoteOnly {
			if _, ok := c.get(name); ok {
				t.Errorf("%s, which does not talk to the remote, was given %s", cmd, name)
			}
		}
	}
	for _, sub := range remote {
		if !authed[sub] {
			t.Errorf("no git %s was observed with the credential", sub)
		}
	}

	if got := sh(t, w.env, "", "--git-dir", w.remote, "rev-parse", "refs/heads/"+branch); got != webHead {
		t.Errorf("the remote's %s = %s, want %s: the push did not go through", branch, got, webHead)
	}
	if web {
		mu.Lock()
		defer mu.Unlock()
		if !slices.ContainsFunc(requests, func(p string) bool { return strings.HasSuffix(p, "/git-receive-pack?") }) {
			t.Errorf("the HTTP server took no authenticated receive-pack: %v", requests)
		}
	}
	if cfg, _ := os.ReadFile(filepath.Join(dir, ".git", "config")); strings.Contains(string(cfg), "extraheader") {
		t.Error("the header was written to the repository's config file")
	}
}
