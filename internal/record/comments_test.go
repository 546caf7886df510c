package record

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCommentLedgerBound: the comment ledger reads back as written; a
// ledger over its bounds is cut by the setter, the ignored entries first,
// then the answers' reasons, then the oldest entries, never the newest
// addressed one; a value that breaks the rules is refused when read.
func TestCommentLedgerBound(t *testing.T) {
	var done []CommentDone
	for i := range 6 {
		done = append(done, CommentDone{Kind: CommentPR, ID: int64(100 + i), Ignored: fmt.Sprintf("reader%d", i)})
	}
	for i := range 6 {
		done = append(done, CommentDone{Kind: CommentLine, ID: int64(200 + i), Answered: strings.Repeat("<", 80)})
	}
	newest := CommentDone{Kind: CommentLine, ID: 300, SHA: SHA(strings.Repeat("a", 40))}
	done = append(done, newest)
	var c Changes
	c.SetComments(CommentLedger{Through: 1777629600, Done: done})
	r := &Record{}
	if err := r.Apply(c); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	raw, _ := r.Raw(KeyImplementComments)
	if n := utf8.RuneCountInString(raw); n > MaxCommentsChars {
		t.Errorf("implement.comments is %d characters as written, over %d", n, MaxCommentsChars)
	}
	l, ok := r.Comments()
	if !ok || l.Through != 1777629600 || len(l.Done) > MaxCommentEntries {
		t.Fatalf("Comments() = %+v, %v", l, ok)
	}
	last := l.Done[len(l.Done)-1]
	if last.ID != 300 || last.SHA != SHA(strings.Repeat("a", shortSHA)) {
		t.Errorf("newest entry = %+v, want line 300 with its SHA shortened", last)
	}
	for _, d := range l.Done {
		if d.Ignored != "" {
			t.Errorf("ignored entry %+v kept while answers were cut", d)
		}
		if d.Answered != "" && d.Answered != "disagreed" && utf8.RuneCountInString(encodeJSON(d.Answered)) > 6*maxAnswer+2 {
			t.Errorf("answer %q not cut", d.Answered)
		}
	}
	for _, bad := range []string{
		`{"done":[{"kind":"issue","id":1,"sha":"abcdef0"}]}`,
		`{"done":[{"kind":"line","id":0,"sha":"abcdef0"}]}`,
		`{"done":[{"kind":"line","id":1}]}`,
		`{"done":[{"kind":"line","id":1,"sha":"abcdef0","ignored":"x"}]}`,
		`{"done":[{"kind":"line","id":1,"sha":"XYZ"}]}`,
		`{"through":-1}`,
		`{"done":[],"extra":1}`,
		`{"done":[` + strings.Repeat(`{"kind":"pr","id":1,"sha":"abcdef0"},`, MaxCommentEntries) + `{"kind":"pr","id":1,"sha":"abcdef0"}]}`,
	} {
		if _, err := Parse("<!-- roadmap:record v1\nimplement.comments: " + bad + "\n-->"); err == nil || !strings.Contains(err.Error(), "implement.comments") {
			t.Errorf("Parse(implement.comments: %s) error = %v, want one naming the key", bad, err)
		}
	}
}
