package policy

import (
	"encoding/base64"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
)

// removedNames are dropped whatever their value: credentials by another name,
// channels back into the workflow (a tool that writes GITHUB_ENV could set the
// environment of later steps), and agents that answer for credentials.
var removedNames = map[string]bool{
	"GITHUB_ENV":          true,
	"GITHUB_OUTPUT":       true,
	"GITHUB_PATH":         true,
	"GITHUB_STATE":        true,
	"GITHUB_STEP_SUMMARY": true,
	"SSH_AGENT_PID":       true,
	"GPG_AGENT_INFO":      true,
	"GIT_ASKPASS":         true,
	"SSH_ASKPASS":         true,
	"GIT_SSH":             true,
	"GIT_SSH_COMMAND":     true,
}

// removedPrefixes: ACTIONS_* holds the runner's runtime and OIDC tokens and
// their URLs; INPUT_* are the action's inputs (a token among them).
var removedPrefixes = []string{"ACTIONS_", "INPUT_"}

// tokenShapes are values that are credentials whatever their name.
var tokenShapes = regexp.MustCompile(strings.Join([]string{
	`gh[pousr]_[A-Za-z0-9]{20,}`,                    // GitHub tokens
	`github_pat_[A-Za-z0-9_]{20,}`,                  // GitHub fine-grained PAT
	`sk-[A-Za-z0-9_-]{20,}`,                         // OpenAI, Anthropic (sk-ant-)
	`(?:AKIA|ASIA)[A-Z0-9]{16}`,                     // AWS access key id
	`xox[abprse]-[A-Za-z0-9-]{10,}`,                 // Slack
	`glpat-[A-Za-z0-9_-]{20,}`,                      // GitLab
	`npm_[A-Za-z0-9]{36}`,                           // npm
	`hf_[A-Za-z0-9]{30,}`,                           // Hugging Face
	`AIza[0-9A-Za-z_-]{35}`,                         // Google API key
	`-----BEGIN [A-Z ]*PRIVATE KEY-----`,            // PEM private key
	`eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.`,  // JWT (OIDC, runtime tokens)
	`[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@`, // URL with a password
	`(?i)authorization:\s*(?:basic|bearer|token)\s+\S`,
}, "|"))

// ScrubEnv returns environ without anything that looks like a credential:
// GITHUB_TOKEN, GH_TOKEN, ACTIONS_* (runtime and OIDC tokens and URLs),
// INPUT_*, the workflow command files, SSH and GPG agents, every variable
// whose name has a word like token, key, secret, password, credential, pat,
// auth, cookie or session, and every variable whose value has a known token
// shape (ghp_, github_pat_, sk-, AKIA, xox…, a URL with a password, a JWT, a
// PEM private key) whatever its name. Entries without "=" are dropped.
func ScrubEnv(environ []string) []string {
	kept, _ := scrub(environ)
	return kept
}

// scrub also returns the removed values, so output can be masked with them.
func scrub(environ []string) (kept, removed []string) {
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if secretName(name) || tokenShapes.MatchString(value) {
			removed = append(removed, value)
			continue
		}
		kept = append(kept, kv)
	}
	return kept, removed
}

func secretName(name string) bool {
	upper := strings.ToUpper(name)
	if removedNames[upper] {
		return true
	}
	for _, p := range removedPrefixes {
		if strings.HasPrefix(upper, p) {
			return true
		}
	}
	if strings.HasPrefix(upper, "GIT_CONFIG_KEY_") {
		// The name of a git setting, not a key; its value is checked by shape.
		return false
	}
	words := strings.FieldsFunc(upper, func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
	for _, w := range words {
		for _, s := range []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "COOKIE", "SESSION", "APIKEY", "PRIVATEKEY"} {
			if strings.Contains(w, s) {
				return true
			}
		}
		switch w {
		case "KEY", "KEYS", "PAT", "PASS", "CRED", "CREDS", "AUTH", "AUTHORIZATION":
			return true
		}
		// APIKEY, ACCESSKEY, OAUTH, GOAUTH (which can run a credential
		// program), PGPASS; AUTHOR (GIT_AUTHOR_NAME) is not a suffix match.
		if len(w) > 4 && (strings.HasSuffix(w, "KEY") || strings.HasSuffix(w, "AUTH") || strings.HasSuffix(w, "PASS")) {
			return true
		}
	}
	return false
}

// ToolEnv is the environment a tool process gets: environ scrubbed, HOME set
// to home (an empty directory, so no user configuration, .netrc, credential
// store or gh login is found), the Go caches pinned to where they were (so a
// new HOME does not mean a cold cache), and go and git told not to download
// or prompt: GOPROXY=off, GOTOOLCHAIN=local, GIT_TERMINAL_PROMPT=0,
// GIT_CONFIG_NOSYSTEM=1. The workspace is marked safe for git, since the new
// HOME loses any safe.directory the runner configured.
func ToolEnv(environ []string, home, workspace string) []string {
	orig := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			orig[k] = v
		}
	}
	set := map[string]string{
		"HOME":                home,
		"GOPROXY":             "off",
		"GOTOOLCHAIN":         "local",
		"GIT_TERMINAL_PROMPT": "0",
		"GIT_CONFIG_NOSYSTEM": "1",
		"GCM_INTERACTIVE":     "never",
		"GIT_CONFIG_COUNT":    "1",
		"GIT_CONFIG_KEY_0":    "safe.directory",
		"GIT_CONFIG_VALUE_0":  workspace,
	}
	for k, v := range goDirs(orig) {
		set[k] = v
	}
	var out []string
	for _, kv := range ScrubEnv(environ) {
		k, _, _ := strings.Cut(kv, "=")
		if _, over := set[k]; over {
			continue
		}
		// The parent's git configuration by environment (GIT_CONFIG_GLOBAL,
		// GIT_CONFIG_KEY_n…, GIT_CONFIG_PARAMETERS) can name credential
		// helpers or carry an extraheader: tools get only ours.
		if strings.HasPrefix(k, "GIT_CONFIG") {
			continue
		}
		out = append(out, kv)
	}
	for _, k := range []string{"HOME", "GOPATH", "GOMODCACHE", "GOCACHE", "GOPROXY", "GOTOOLCHAIN",
		"GIT_TERMINAL_PROMPT", "GIT_CONFIG_NOSYSTEM", "GCM_INTERACTIVE",
		"GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0"} {
		if v, ok := set[k]; ok && v != "" {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// goDirs computes where the go command would put its caches under the
// original environment, as `go env` would on Linux and macOS.
func goDirs(env map[string]string) map[string]string {
	home := env["HOME"]
	out := map[string]string{}
	gopath := env["GOPATH"]
	if gopath == "" && home != "" {
		gopath = filepath.Join(home, "go")
	}
	if gopath != "" {
		out["GOPATH"] = gopath
	}
	modcache := env["GOMODCACHE"]
	if modcache == "" && gopath != "" {
		modcache = filepath.Join(filepath.SplitList(gopath)[0], "pkg", "mod")
	}
	if modcache != "" {
		out["GOMODCACHE"] = modcache
	}
	cache := env["GOCACHE"]
	if cache == "" {
		switch {
		case env["XDG_CACHE_HOME"] != "":
			cache = filepath.Join(env["XDG_CACHE_HOME"], "go-build")
		case home != "" && runtime.GOOS == "darwin":
			// os.UserCacheDir on macOS is ~/Library/Caches.
			cache = filepath.Join(home, "Library", "Caches", "go-build")
		case home != "":
			cache = filepath.Join(home, ".cache", "go-build")
		}
	}
	if cache != "" {
		out["GOCACHE"] = cache
	}
	return out
}

// masks are the strings to hide in tool output: each removed value long
// enough to be a secret, and the form actions/checkout stores a token in
// (base64 of "x-access-token:TOKEN" in an extraheader).
func masks(removed []string) []string {
	var out []string
	for _, v := range removed {
		if len(v) < 8 {
			continue
		}
		out = append(out, v, base64.StdEncoding.EncodeToString([]byte("x-access-token:"+v)))
	}
	return out
}

func mask(s string, secrets []string) string {
	for _, m := range secrets {
		s = strings.ReplaceAll(s, m, "***")
	}
	return s
}
