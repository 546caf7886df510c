package cli

import (
	"testing"

	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// The record lives in roadmap's own comment on the issue (DESIGN §3): these
// helpers seed it the way a Job leaves it and read it the way roadmap does.

// recordCommentText is the record comment a Job leaves holding ch: the
// visible part rendered from the keys, then the block.
func recordCommentText(t *testing.T, ch record.Changes) string {
	t.Helper()
	rec, _ := record.Parse("")
	if err := rec.Apply(ch); err != nil {
		t.Fatalf("build the record: %v", err)
	}
	rec.SetView(record.View{})
	text, err := record.RenderComment(rec)
	if err != nil {
		t.Fatalf("build the record: %v", err)
	}
	return text
}

// addRecordComment adds text to issue n as roadmap's identity and returns
// the comment's id.
func addRecordComment(t *testing.T, fake *githubfake.Fake, n int, text string) int64 {
	t.Helper()
	id, err := fake.AddComment(n, github.DefaultIdentity, text)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// recordOf is issue n's record as roadmap reads it: the oldest comment by
// roadmap's identity that holds a record block, and that comment's id. A
// record block in the issue body is not the record.
func recordOf(t *testing.T, fake *githubfake.Fake, n int) (*record.Record, int64) {
	t.Helper()
	for _, c := range fake.Comments(n) {
		if c.Author == github.DefaultIdentity && record.HasBlock(c.Body) {
			rec, err := record.Parse(c.Body)
			if err != nil {
				t.Fatalf("issue %d record comment %d: %v", n, c.ID, err)
			}
			return rec, c.ID
		}
	}
	t.Fatalf("issue %d has no record comment", n)
	return nil, 0
}
