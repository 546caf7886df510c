package record

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"unicode/utf8"
)

// The quality keys: what the review before ready and the test strength of
// each group left in the record (docs/review.md, docs/strength.md).

// Bounds of the quality keys, counted as written like every bounded key.
const (
	// MaxReviewChars bounds implement.review as written; the setter drops
	// the oldest closed ids, then the titles of open findings, to fit.
	MaxReviewChars = 1500
	// MaxReviewOpen bounds the findings implement.review keeps open.
	MaxReviewOpen = 10
	// MaxReviewClosed bounds the ids implement.review keeps closed; the
	// setter keeps the newest.
	MaxReviewClosed = 40
	// MaxStrengthChars bounds implement.strength as written; the setter
	// keeps the newest groups that fit.
	MaxStrengthChars = 700
)

// ReviewLedger is implement.review: the head the last review read, the
// blocking findings it left standing there, and the findings never raised
// again (repaired, or dismissed by a person with write access).
type ReviewLedger struct {
	// SHA is the head the last review read; with no Open finding the PR
	// may be marked ready at exactly this head.
	SHA SHA `json:"sha,omitempty"`
	// Open are the blocking findings standing at SHA.
	Open []OpenFinding `json:"open,omitempty"`
	// Closed are the finding ids never raised again, oldest first.
	Closed []ClosedFinding `json:"closed,omitempty"`
}

// OpenFinding is a blocking finding as the record keeps it: enough for a
// person's `/roadmap dismiss ID`; the PR comment shows the whole finding.
type OpenFinding struct {
	ID    string `json:"id"`
	File  string `json:"file,omitempty"`
	Line  int    `json:"line,omitempty"`
	Title string `json:"title,omitempty"`
}

// ClosedFinding is an id the review never raises again, and why: "repaired"
// or "dismissed by LOGIN".
type ClosedFinding struct {
	ID  string `json:"id"`
	Why string `json:"why"`
}

// findingIDRE is the form of a finding id: short lowercase hex.
var findingIDRE = regexp.MustCompile(`^[0-9a-f]{6,16}$`)

// ValidFindingID reports whether id has the form of a finding id.
func ValidFindingID(id string) bool { return findingIDRE.MatchString(id) }

// PassedAt reports whether the last review read head and left no blocking
// finding standing.
func (l ReviewLedger) PassedAt(head SHA) bool {
	return l.SHA != "" && l.SHA == head && len(l.Open) == 0
}

// IsClosed reports whether id is closed, and why.
func (l ReviewLedger) IsClosed(id string) (string, bool) {
	for _, c := range l.Closed {
		if c.ID == id {
			return c.Why, true
		}
	}
	return "", false
}

// Close closes id for why; an id already closed keeps its first reason.
func (l *ReviewLedger) Close(id, why string) {
	if _, ok := l.IsClosed(id); ok {
		return
	}
	l.Closed = append(l.Closed, ClosedFinding{ID: id, Why: why})
	l.Open = slices.DeleteFunc(l.Open, func(f OpenFinding) bool { return f.ID == id })
}

func (l ReviewLedger) check() error {
	if l.SHA != "" {
		if _, err := ParseSHA(string(l.SHA)); err != nil {
			return err
		}
	}
	if len(l.Open) > MaxReviewOpen {
		return fmt.Errorf("%d open findings, at most %d", len(l.Open), MaxReviewOpen)
	}
	if len(l.Closed) > MaxReviewClosed {
		return fmt.Errorf("%d closed findings, at most %d", len(l.Closed), MaxReviewClosed)
	}
	for _, f := range l.Open {
		if !ValidFindingID(f.ID) {
			return fmt.Errorf("finding id %q is not 6 to 16 lowercase hex digits", f.ID)
		}
		if f.Line < 0 || f.Line > MaxCount {
			return fmt.Errorf("finding %s: a line from 0 to %d", f.ID, MaxCount)
		}
	}
	for _, c := range l.Closed {
		if !ValidFindingID(c.ID) || c.Why == "" {
			return fmt.Errorf("closed finding %q: an id and a reason", c.ID)
		}
	}
	return nil
}

// GroupStrength is one group's test strength (docs/strength.md): the counts
// of its mutants and the score, killed over measured (killed, survived and
// timed out).
type GroupStrength struct {
	Group      int     `json:"group"`
	Generated  int     `json:"generated"`
	Killed     int     `json:"killed"`
	Survived   int     `json:"survived"`
	NotCovered int     `json:"not_covered"`
	TimedOut   int     `json:"timed_out"`
	Score      float64 `json:"score"`
	// Unmeasured says why no score stands (a language without mutants
	// yet, nothing to mutate); Score is then 0 and means nothing.
	Unmeasured string `json:"unmeasured,omitempty"`
}

func (g GroupStrength) check() error {
	switch {
	case g.Group < 1 || g.Group > MaxCount:
		return fmt.Errorf("group %d: a group number is from 1 to %d", g.Group, MaxCount)
	case math.IsNaN(g.Score) || g.Score < 0 || g.Score > 1:
		return fmt.Errorf("group %d: a score is from 0 to 1", g.Group)
	}
	for _, n := range []int{g.Generated, g.Killed, g.Survived, g.NotCovered, g.TimedOut} {
		if n < 0 || n > MaxCount {
			return fmt.Errorf("group %d: a count from 0 to %d", g.Group, MaxCount)
		}
	}
	if utf8.RuneCountInString(g.Unmeasured) > 200 {
		return errors.New("an unmeasured reason over 200 characters")
	}
	return nil
}

// SetReview sets implement.review, cut to its bounds: the newest closed
// ids, the first open findings, titles shortened, until it fits.
func (c *Changes) SetReview(l ReviewLedger) {
	l.Open = slices.Clone(l.Open[:min(len(l.Open), MaxReviewOpen)])
	l.Closed = slices.Clone(l.Closed[max(0, len(l.Closed)-MaxReviewClosed):])
	for i := range l.Open {
		l.Open[i].Title = cutRunes(l.Open[i].Title, 120)
		l.Open[i].File = cutRunes(l.Open[i].File, 200)
	}
	for i := range l.Closed {
		l.Closed[i].Why = cutRunes(l.Closed[i].Why, 80)
	}
	text := encodeJSON(l)
	for utf8.RuneCountInString(text) > MaxReviewChars && len(l.Closed) > 0 {
		l.Closed = l.Closed[1:]
		text = encodeJSON(l)
	}
	for i := range l.Open {
		if utf8.RuneCountInString(text) <= MaxReviewChars {
			break
		}
		l.Open[i].Title, l.Open[i].File = "", cutRunes(l.Open[i].File, 40)
		text = encodeJSON(l)
	}
	for i := range l.Open {
		if utf8.RuneCountInString(text) <= MaxReviewChars {
			break
		}
		l.Open[i].File, l.Open[i].Line = "", 0 // the id alone still names it
		text = encodeJSON(l)
	}
	c.set(KeyImplementReview, text)
}

// SetStrength sets implement.strength to the newest groups that fit.
func (c *Changes) SetStrength(gs []GroupStrength) {
	if gs == nil {
		gs = []GroupStrength{}
	}
	gs = slices.Clone(gs)
	for i := range gs {
		gs[i].Unmeasured = cutRunes(gs[i].Unmeasured, 120)
		gs[i].Score = math.Round(gs[i].Score*1000) / 1000
	}
	text := encodeJSON(gs)
	for utf8.RuneCountInString(text) > MaxStrengthChars && len(gs) > 0 {
		gs = gs[1:]
		text = encodeJSON(gs)
	}
	c.set(KeyImplementStrength, text)
}

func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
