package adopt

import "regexp"

// Pin is what the workflows init writes name roadmap by: Ref after the @ of
// every uses: line, and Version, when not "", as a comment after it
// (`@<sha> # v0.1.0`), because a commit SHA alone tells a reader nothing.
type Pin struct {
	Ref     string
	Version string
	// ToDo, when not "", is the to-do item that says why the pin is not a
	// release's and what to check before the first Job.
	ToDo string
}

// uses is what replaces REF in a uses: line: the ref and its comment.
func (p Pin) uses() string {
	if p.Version == "" || p.Version == p.Ref {
		return p.Ref
	}
	return p.Ref + " # " + p.Version
}

// ReleaseTag matches a release's tag, vX.Y.Z: a pre-release (v1.2.0-rc.1)
// or a Go pseudo-version is not one.
var ReleaseTag = regexp.MustCompile(`^v\d+\.\d+\.\d+$`)

var fullSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)

// pinRelease is how a person pins a release instead: init keeps the files
// it wrote, so they go first.
const pinRelease = "To pin a release, remove the files init wrote and run it again with --ref and the release's tag or commit (docs/release.md)"

// MainBranch is roadmap's default branch: the pin of a build that names no
// commit, which is the only ref known to exist then.
const MainBranch = "main"

// PinFor is the pin for the roadmap build that runs init: version (a
// release tag, a Go pseudo-version, "" when unknown) built from commit (the
// full SHA, "" when unknown), with local changes when modified.
//
// A build that knows its commit pins that commit, so the workflows run the
// code that wrote them; a release names its tag in the comment, any other
// build its version and a to-do, since its commit may be on no branch of
// roadmap's repository. Without a commit, a release pins its tag (a
// `go install ...@vX.Y.Z`: the module proxy served that tag), and a build
// that names nothing pins main, and says to pin it with --ref: never a tag
// that may not exist.
func PinFor(version, commit string, modified bool) Pin {
	release := ReleaseTag.MatchString(version) && !modified
	switch {
	case fullSHA.MatchString(commit) && release:
		return Pin{Ref: commit, Version: version}
	case fullSHA.MatchString(commit):
		if version == "" {
			version = "unreleased"
		}
		what := "not a tagged release"
		if modified {
			what = "built with local changes that commit does not hold"
		}
		return Pin{Ref: commit, Version: version, ToDo: "The workflows pin roadmap at commit " + commit + ", the build of this roadmap (" +
			version + ", " + what + "): it must be on github.com/roadmap-dev/roadmap. " + pinRelease}
	case ReleaseTag.MatchString(version):
		return Pin{Ref: version, ToDo: "The workflows pin roadmap at the tag " + version + ": a go install build names no commit, and a tag can move. " +
			"To pin its commit, write the SHA in each roadmap-dev/roadmap uses: line (docs/install.md, \"Pinning a release by SHA\")"}
	default:
		if version == "" {
			version = "dev"
		}
		return Pin{Ref: MainBranch, Version: version, ToDo: "The workflows pin roadmap at its " + MainBranch + " branch, which moves: this roadmap (" +
			version + ") names no commit. " + pinRelease}
	}
}
