package git

import (
	"encoding/base64"
	"strings"
)

// The environment of roadmap's git is allow-listed. A caller hands a Repo
// the Job's whole environment (model keys, GITHUB_TOKEN, the push token,
// the Actions runtime and OIDC tokens); git is given only the variables it
// needs, so no git command, nor anything a future git runs, holds what it
// has no use for. The credential is not among them: Authenticate keeps it
// apart, for the commands that talk to the remote alone.

// localEnv are the caller's variables every git command sees: where to find
// programs and the user's git configuration, temporary files, the time zone,
// the locale (LC_ALL=C wins over it for git's own messages), the identity
// commits are made with, and which configuration files git reads.
var localEnv = []string{
	"PATH", "HOME", "XDG_CONFIG_HOME", "TMPDIR", "TZ", "LANG", "LANGUAGE",
	"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE",
	"GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE",
	"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM",
}

// remoteEnv are the caller's variables only push, fetch and ls-remote see:
// what reaching a server over HTTPS needs on a runner, the certificate
// authorities (a self-hosted runner's own) and the proxy, in either case.
var remoteEnv = []string{
	"SSL_CERT_FILE", "SSL_CERT_DIR", "GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "CURL_CA_BUNDLE",
	"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy",
}

// fixedEnv is what the package sets on every command, after the caller's
// variables (the last of a name wins): git never waits for a person, and
// its messages stay in one language.
var fixedEnv = []string{"GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=true", "GIT_MERGE_AUTOEDIT=no", "LC_ALL=C"}

// allowed reports whether the variable name is one git sees: localEnv and
// the locale's LC_* always, remoteEnv when remote.
func allowed(name string, remote bool) bool {
	for _, n := range localEnv {
		if name == n {
			return true
		}
	}
	if strings.HasPrefix(name, "LC_") {
		return true
	}
	if remote {
		for _, n := range remoteEnv {
			if name == n {
				return true
			}
		}
	}
	return false
}

// environ is the environment of one git command: the allowed part of the
// caller's Env, the package's own variables, and, for a command that talks
// to the remote, the credential.
func (r *Repo) environ(remote bool) []string {
	env := make([]string, 0, len(r.Env)+len(fixedEnv)+4)
	for _, kv := range r.Env {
		if name, _, ok := strings.Cut(kv, "="); ok && allowed(name, remote) {
			env = append(env, kv)
		}
	}
	env = append(env, fixedEnv...)
	if r.indexFile != "" {
		env = append(env, "GIT_INDEX_FILE="+r.indexFile)
	}
	if remote {
		env = append(env, r.remoteAuth...)
	}
	return env
}

// Authenticate makes the commands that talk to the remote (push, fetch,
// ls-remote) authenticate to serverURL (e.g. GITHUB_SERVER_URL) with token,
// through an http.extraheader set with GIT_CONFIG_COUNT/KEY/VALUE: the token
// is never on a command line or in a file, and no other git command sees it.
// A Repo opened on another work tree of the repository does not inherit it.
func (r *Repo) Authenticate(serverURL, token string) {
	basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
	r.remoteAuth = []string{
		"GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=http." + strings.TrimRight(serverURL, "/") + "/.extraheader",
		"GIT_CONFIG_VALUE_0=AUTHORIZATION: basic " + basic,
	}
}
