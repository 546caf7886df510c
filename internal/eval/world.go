package eval

import (
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/redact"
	theworld "github.com/roadmap-dev/roadmap/internal/world"
)

// t0 is when every case starts, so its spend and trace are the same on
// every run.
var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// world is one case's surroundings (internal/world's): the fake GitHub on
// loopback, a bare remote seeded with the case's repository snapshot, and
// the issue. The fields are the World's, under the names the eval uses.
type world struct {
	*theworld.World
	dir    string
	remote string
	fake   *githubfake.Fake
	clock  *githubfake.ManualClock
	issue  int
	jobs   int
	masker *redact.Masker
}

// gitEnv keeps git apart from the machine's configuration.
func gitEnv() []string { return theworld.GitEnv() }

func runGit(dir string, args ...string) (string, error) { return theworld.Git(gitEnv(), dir, args...) }

// newWorld lays out a case under dir: snapshot (a directory tree, less the
// files under the slash prefixes in drop) becomes main on a bare remote, the
// fake GitHub serves on loopback, and the issue is filed by a person. The
// model is not the world's: each Job takes it from the eval's Options
// (openJob).
func newWorld(dir, snapshot string, is Issue, drop ...string) (*world, error) {
	files, err := readTree(snapshot)
	if err != nil {
		return nil, fmt.Errorf("copy the repository snapshot: %w", err)
	}
	for p := range files {
		for _, d := range drop {
			if strings.HasPrefix(p, d) {
				delete(files, p)
			}
		}
	}
	// The fake's repository and token open nothing real.
	tw, err := theworld.New(theworld.Options{Dir: dir, Owner: "acme", Repo: "golden", Token: "ghs_evalFakeGitHubToken00000000000000000", PushToken: "ghs_evalFakePushToken000000000000000000", Start: t0,
		Files: files, SeedMessage: "the golden case's repository",
		Issue:         &githubfake.Issue{Title: is.Title, Body: is.Body, Author: "maintainer"},
		GitHubTimeout: 30 * time.Second})
	if err != nil {
		return nil, err
	}
	return &world{World: tw, dir: tw.Dir, remote: tw.Remote, fake: tw.Fake, clock: tw.Clock, issue: tw.Issue, masker: tw.Masker}, nil
}

func (w *world) close() { w.Close() }

// branch is the item's work branch.
func (w *world) branch() string { return w.Branch() }

// requests counts the GitHub requests the fake answered, as DESIGN §9
// counts them: a 304 is free, and a job log download is not an API call.
func (w *world) requests() int {
	n := 0
	for _, r := range w.fake.Requests() {
		if r.Status != http.StatusNotModified && !strings.HasPrefix(r.Path, "/_logs/") {
			n++
		}
	}
	return n
}

// readTree reads the regular files of src (slash path to content). A
// symlink or any other kind of file is refused: a golden case is plain
// files.
func readTree(src string) (map[string]string, error) {
	files := map[string]string{}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file or a directory", p)
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		data, err := readBounded(p, maxCaseFile)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	return files, err
}
