package demotest

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/demo"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/world"
)

// TrioItem is one of the trio world's three staged items.
type TrioItem struct {
	// Issue is the item's issue; Title its title (which names its work
	// branch, Branch).
	Issue         int
	Title, Branch string
	// Change is the plan's change id: openspec/changes/<Change>, named in
	// the item's record comment.
	Change string
	// Package is the Go package the plan changes: the unit it claims
	// (docs/claims.md), besides its capability's main spec.
	Package string
}

// trioItems are the trio's items in the order they are filed: A and B on
// disjoint packages, C on A's package (a file of its own, beside A's).
var trioItems = []TrioItem{
	{Title: "Add Hello", Change: "add-hello", Package: "hello"},
	{Title: "Add Bye", Change: "add-bye", Package: "bye"},
	{Title: "Add Shout", Change: "add-shout", Package: "hello"},
}

// trioSeed is the trio repository's seed commit message.
const trioSeed = "greet: packages hello and bye, and three plans"

// NewTrioWorld lays out three staged items in one repository
// (testdata/trio: module example.com/greet with the empty packages hello
// and bye, and three one-group OpenSpec plans on main). A (#1, add-hello)
// adds Hello in hello/hello.go and B (#2, add-bye) Bye in bye/bye.go:
// their claims are disjoint. C (#3, add-shout) adds Shout in
// hello/shout.go: another file, but A's package, so its claim overlaps
// A's. Each issue is labelled roadmap:implement and has a record comment
// naming its staged plan; the world's Issue is A's. Each plan's one group
// has its own recorded conversation, matched by the plan's name in the
// agent's first message (`task group 1 of the plan "add-hello"`): write
// the group's test, write the code, finish (three model calls).
func NewTrioWorld(ctx context.Context, dir string, latency time.Duration) (*demo.World, error) {
	files, err := demo.SampleFiles(samples, "testdata/trio/repo")
	if err != nil {
		return nil, err
	}
	fixtureFiles, err := demo.SampleFiles(samples, "testdata/trio/fixtures")
	if err != nil {
		return nil, err
	}
	fixtures := filepath.Join(dir, "fixtures")
	if err := world.WriteFiles(fixtures, fixtureFiles); err != nil {
		return nil, err
	}
	replay, err := llm.LoadReplay(fixtures)
	if err != nil {
		return nil, fmt.Errorf("load the recorded exchanges: %w", err)
	}
	label := config.Default().Labels.Implement
	issue := func(ti TrioItem) githubfake.Issue {
		return githubfake.Issue{Title: ti.Title, Author: "maintainer", Labels: []string{label},
			Body: fmt.Sprintf("%s to package %s; see the plan in `openspec/changes/%s`.\n", ti.Title, ti.Package, ti.Change)}
	}
	record := func(ti TrioItem) string {
		return "**roadmap** · staged: planned\n\n<!-- roadmap:record v1\nstage.plan: openspec/changes/" + ti.Change + "\nstage.state: staged\n-->"
	}
	a := issue(trioItems[0])
	// The trio's sample, for Config, Checks and PlayCI, has the demo's Go
	// checks.
	goItem := demo.GoSample()
	trioItem := demo.Sample{FS: samples, Root: "testdata/trio", Title: trioItems[0].Title, Seed: trioSeed,
		Checks: goItem.Checks, CI: goItem.CI}
	w, err := demo.NewWorldFrom(world.Options{Dir: dir, Owner: demo.Owner, Repo: demo.Repo, Token: demo.Token, PushToken: demo.PushToken,
		Files: files, SeedMessage: trioSeed, Issue: &a, RecordComment: record(trioItems[0]),
		Replay: replay, ModelLatency: latency}, trioItem)
	if err != nil {
		return nil, err
	}
	for _, ti := range trioItems[1:] {
		n := w.Fake.CreateIssue(issue(ti))
		if _, err := w.Fake.AddComment(n, github.DefaultIdentity, record(ti)); err != nil {
			w.Close()
			return nil, fmt.Errorf("the record comment of #%d: %w", n, err)
		}
	}
	return w, nil
}

// Trio is the items of w, a trio world (NewTrioWorld): A, B and C in the
// order they were filed, each the first issue from the world's own (A) on
// with its title. An item not found is left out: fewer than three for
// another world.
func Trio(w *demo.World) []TrioItem {
	var items []TrioItem
	for n := w.Issue; len(items) < len(trioItems); n++ {
		is, ok := w.Fake.Issue(n)
		if !ok {
			break
		}
		ti := trioItems[len(items)]
		if is.Pull != nil || is.Title != ti.Title {
			continue
		}
		ti.Issue, ti.Branch = n, git.WorkBranch(n, ti.Title)
		items = append(items, ti)
	}
	return items
}
