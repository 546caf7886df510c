package record

import (
	"strings"
	"testing"
)

// TestReviewLedgerRoundTrip: the ledger reads back as written, Close keeps
// the first reason and takes the finding off the open list, and a ledger
// with a bad id or too many findings is refused when read.
func TestReviewLedgerRoundTrip(t *testing.T) {
	l := ReviewLedger{SHA: "0123456789abcdef0123456789abcdef01234567", Open: []OpenFinding{{ID: "a1b2c3d4e5f6", File: "a.go", Line: 3, Title: "t"}}}
	if l.PassedAt(l.SHA) {
		t.Error("PassedAt with an open finding = true")
	}
	l.Close("a1b2c3d4e5f6", "dismissed by octocat")
	l.Close("a1b2c3d4e5f6", "repaired")
	if why, ok := l.IsClosed("a1b2c3d4e5f6"); !ok || why != "dismissed by octocat" || len(l.Open) != 0 {
		t.Errorf("after Close: %+v", l)
	}
	if !l.PassedAt(l.SHA) || l.PassedAt("ffffffffffffffffffffffffffffffffffffffff") {
		t.Error("PassedAt is not exactly the reviewed head")
	}
	var c Changes
	c.SetReview(l)
	r := &Record{}
	if err := r.Apply(c); err != nil {
		t.Fatal(err)
	}
	out, err := Render(r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := back.Review()
	if !ok || got.SHA != l.SHA || len(got.Closed) != 1 || got.Closed[0].Why != "dismissed by octocat" {
		t.Errorf("Review() = %+v, %v", got, ok)
	}
	for _, bad := range []string{
		`{"open":[{"id":"NOT-HEX","file":"a.go"}]}`,
		`{"sha":"xyz"}`,
		`{"closed":[{"id":"a1b2c3d4e5f6","why":""}]}`,
		`{"open":[` + strings.Repeat(`{"id":"a1b2c3d4e5f6"},`, MaxReviewOpen) + `{"id":"a1b2c3d4e5f6"}]}`,
	} {
		if _, err := Parse("<!-- roadmap:record v1\nimplement.review: " + bad + "\n-->"); err == nil {
			t.Errorf("Parse(implement.review: %s) = nil error", bad)
		}
	}
	if _, err := Parse("<!-- roadmap:record v1\nimplement.strength: [{\"group\":1,\"score\":1.5}]\n-->"); err == nil {
		t.Error("a score over 1 was read")
	}
}
