package policy

import (
	"encoding/base64"
	"regexp"
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
