package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/redact"
)

// runMask filters stdin to stdout through the secret masker, streamed, so a
// person can clean a log before posting it. Secrets come from the built-in
// families, from environment variables whose names say they hold one, and
// from --secret and --secret-env.
func runMask(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "mask")
	var secrets, secretEnv, suffixes []string
	fs.Func("secret", "mask this exact `value` too (repeatable); prefer --secret-env, a command line is visible to other processes", func(v string) error {
		if len(v) < redact.MinSecretLength {
			return fmt.Errorf("a secret shorter than %d characters would mask ordinary text", redact.MinSecretLength)
		}
		secrets = append(secrets, v)
		return nil
	})
	fs.Func("secret-env", "mask the value of environment variable `NAME` too, whatever its name (repeatable)", func(v string) error {
		secretEnv = append(secretEnv, v)
		return nil
	})
	fs.Func("private-suffix", "also mask host names ending in `SUFFIX` (repeatable), besides "+strings.Join(redact.DefaultPrivateSuffixes(), " "), func(v string) error {
		suffixes = append(suffixes, v)
		return nil
	})
	noEnv := fs.Bool("no-env", false, "do not take secrets from environment variables named like TOKEN, SECRET, KEY, PASSWORD")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		env.Errorf("mask takes no arguments: it reads stdin and writes stdout")
		return ExitUsage
	}
	for _, name := range secretEnv {
		v := env.Getenv(name)
		if len(v) < redact.MinSecretLength {
			env.Errorf("--secret-env %s: the variable is unset or shorter than %d characters", name, redact.MinSecretLength)
			return ExitUsage
		}
		secrets = append(secrets, v)
	}
	if !*noEnv {
		environ := make([]string, 0, len(env.Vars))
		for k, v := range env.Vars {
			environ = append(environ, k+"="+v)
		}
		secrets = append(secrets, redact.SecretsFromEnv(environ)...)
	}
	cfg := redact.Config{Secrets: secrets}
	if len(suffixes) > 0 {
		cfg.PrivateSuffixes = append(redact.DefaultPrivateSuffixes(), suffixes...)
	}
	if _, err := redact.New(cfg).Copy(env.Stdout, env.Stdin); err != nil {
		env.Errorf("mask stdin to stdout: %v", err)
		return ExitInternal
	}
	return ExitOK
}
