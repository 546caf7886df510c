package cli

import (
	"context"
	"fmt"
	"runtime/debug"
)

// Version and Commit are set at build time with -ldflags
// "-X .../internal/cli.Version=v1.2.3 -X .../internal/cli.Commit=<sha>": by GoReleaser
// (.goreleaser.yaml), by `make build` (git describe and the checkout's HEAD), and by
// scripts/install-roadmap.sh, which sets Commit when it builds a pinned commit from a
// checkout without .git. Without them, Build reads what Go stamped in the binary.
var (
	Version = "dev"
	Commit  = ""
)

// Build is what the running roadmap knows of itself; `roadmap version --json`
// prints it (docs/cli.md), and init pins the workflows it writes to it
// (adopt.PinFor).
type Build struct {
	// Version is a release tag (v0.1.0), git describe's name for an
	// untagged commit, or Go's pseudo-version of a build from source;
	// "unreleased" when only the commit is known, and "dev" when nothing is.
	Version string `json:"version"`
	// Commit is the full SHA the binary was built from, "" when unknown.
	Commit string `json:"commit,omitempty"`
	// Modified: Go stamped the build as made from a work tree with changes
	// that Commit does not hold.
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
}

// currentBuild is this binary's Build: the ldflags, else the version
// control settings Go stamped (a `go build` in a git checkout).
func currentBuild() Build {
	info, _ := debug.ReadBuildInfo()
	return buildFrom(Version, Commit, info)
}

// buildFrom is the Build of a binary whose ldflags set version and commit
// ("dev" and "" when they were not set) and whose build information is
// info (nil when it has none).
func buildFrom(version, commit string, info *debug.BuildInfo) Build {
	b := Build{Commit: commit}
	if version != "dev" {
		b.Version = version
	}
	if info != nil {
		b.Go = info.GoVersion
		if b.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			b.Version = info.Main.Version
		}
		var revision, modified string
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if b.Commit == "" {
			b.Commit = revision
		}
		b.Modified = revision != "" && revision == b.Commit && modified == "true"
	}
	switch {
	case b.Version != "":
	case b.Commit != "":
		b.Version = "unreleased"
	default:
		b.Version = "dev"
	}
	return b
}

// String is what `roadmap version` prints after "roadmap ":
// "v0.1.0 (<commit>) go1.26.0"; scripts/release-check.sh and
// TestInstallGoReleaserDist read this form.
func (b Build) String() string {
	s := b.Version
	switch {
	case b.Commit != "" && b.Modified:
		s += " (" + b.Commit + ", modified)"
	case b.Commit != "":
		s += " (" + b.Commit + ")"
	}
	if b.Go != "" {
		s += " " + b.Go
	}
	return s
}

func runVersion(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "version")
	asJSON := fs.Bool("json", false, "print JSON: the version, the commit it was built from, and Go's version")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	return printVersion(env, currentBuild(), *asJSON)
}

// printVersion prints b as `roadmap version` does: "roadmap " and b, or
// with asJSON the object Build.
func printVersion(env *Env, b Build, asJSON bool) int {
	if asJSON {
		return env.JSON(b)
	}
	fmt.Fprintf(env.Stdout, "roadmap %s\n", b)
	return ExitOK
}
