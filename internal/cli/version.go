package cli

import (
	"context"
	"fmt"
	"runtime/debug"
)

// Version and Commit are set at build time with -ldflags
// "-X .../internal/cli.Version=v1.2.3 -X .../internal/cli.Commit=<sha>" (the release, and
// scripts/install-roadmap.sh when it builds a pinned commit from a checkout without .git).
var (
	Version = "dev"
	Commit  = ""
)

func runVersion(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "version")
	asJSON := fs.Bool("json", false, "print JSON")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	v := struct {
		Version string `json:"version"`
		Commit  string `json:"commit,omitempty"`
		Go      string `json:"go"`
	}{Version: Version, Commit: Commit}
	if info, ok := debug.ReadBuildInfo(); ok {
		v.Go = info.GoVersion
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && v.Commit == "" {
				v.Commit = s.Value
			}
		}
	}
	if *asJSON {
		return env.JSON(v)
	}
	fmt.Fprintf(env.Stdout, "roadmap %s", v.Version)
	if v.Commit != "" {
		fmt.Fprintf(env.Stdout, " (%s)", v.Commit)
	}
	fmt.Fprintf(env.Stdout, " %s\n", v.Go)
	return ExitOK
}
