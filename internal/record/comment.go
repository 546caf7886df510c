package record

import (
	"encoding/json"
	"fmt"
	"github.com/roadmap-dev/roadmap/internal/text"
	"strings"
	"unicode/utf8"
)

// The record lives in roadmap's own comment on the issue (DESIGN §3): a few
// visible lines for people, then the block. In a comment the Record's text is
// that visible part; the writer renders it afresh from the merged record on
// every write (SetView), so it always tells what the block holds.

// Bounds of the visible part, so TestRecordRenderedBound holds for it too.
const (
	// MaxDoing bounds what the first line says roadmap is doing.
	MaxDoing = 300
	// MaxNotes bounds the notes of things roadmap ignored; the first are kept.
	MaxNotes = 5
	// MaxNoteChars bounds one note.
	MaxNoteChars = 200
)

// notePrefix starts a note line in the visible part: something that looked
// like a record and was ignored, reported once and kept by every later write.
const notePrefix = "> roadmap ignored "

// View is what the visible part says beyond the block's keys.
type View struct {
	// Doing says what roadmap is doing now ("implementing group 2 of 3");
	// empty derives it from the keys (State).
	Doing string
	// RunURL links the run of the Job that writes.
	RunURL string
	// Notes are things ignored since the last write ("a record block in
	// the issue body"); a note already in the comment is not added again.
	Notes []string
}

// SetView renders the visible part for r's keys as they are now. Notes the
// comment already has are kept; new ones are added once.
func (r *Record) SetView(v View) {
	var notes []string
	seen := map[string]bool{}
	add := func(n string) {
		if n == "" || seen[n] || len(notes) >= MaxNotes {
			return
		}
		seen[n] = true
		notes = append(notes, n)
	}
	for _, l := range strings.Split(r.text, "\n") {
		if n, ok := strings.CutPrefix(strings.TrimRight(l, "\r"), notePrefix); ok {
			add(n)
		}
	}
	for _, n := range v.Notes {
		add(visible(n, MaxNoteChars))
	}
	doing := v.Doing
	if doing == "" {
		doing = r.State()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**roadmap** · %s\n", visible(doing, MaxDoing))
	var facts []string
	if pr, ok := r.StagePR(); ok {
		facts = append(facts, fmt.Sprintf("PR #%d", pr))
	}
	if s, ok := r.Spend(); ok {
		est := ""
		if n := r.SpendEstimated(); n > 0 {
			est = fmt.Sprintf(", %d estimated", n)
		}
		facts = append(facts, fmt.Sprintf("spent %s (%d model calls%s)", text.USD(s.USD), s.ModelCalls, est))
	}
	if jobs, ok := r.Jobs(); ok && len(jobs) > 0 {
		last := jobs[len(jobs)-1]
		run := fmt.Sprintf("run %d", last.RunID)
		if v.RunURL != "" && utf8.RuneCountInString(v.RunURL) <= MaxLine && !strings.ContainsAny(v.RunURL, " ()<>\r\n") {
			run = fmt.Sprintf("[run %d](%s)", last.RunID, v.RunURL)
		}
		facts = append(facts, fmt.Sprintf("last Job %d: %s", last.Job, run))
	}
	if len(facts) > 0 {
		fmt.Fprintf(&b, "\n%s\n", strings.Join(facts, " · "))
	}
	if len(notes) > 0 {
		b.WriteString("\n")
		for _, n := range notes {
			b.WriteString(notePrefix + n + "\n")
		}
	}
	r.text = b.String()
	r.eol = "\n"
}

// visible makes s one safe line of at most n characters: no line breaks, no
// HTML (a '<' could open a comment that hides the rest), no mention.
func visible(s string, n int) string {
	s = strings.ToValidUTF8(joinLines(s), "\uFFFD")
	s = strings.NewReplacer("<", "‹", ">", "›", "@", "@\u200b").Replace(s)
	if utf8.RuneCountInString(s) > n {
		s = string([]rune(s)[:n-1]) + "…"
	}
	return s
}

// State says in words where the item stands, from the keys: what the visible
// part's first line says when the writer does not.
func (r *Record) State() string {
	res, hasRes := r.Result()
	failure, _ := r.Failure()
	switch {
	case hasRes && res == ResultReady:
		return "ready: every group passed and the PR is ready for review"
	case hasRes && res == ResultStopped:
		step, _ := r.Stopped()
		if step != "" {
			return fmt.Sprintf("stopped (%s) in %s; a person decides what next", failure, step)
		}
		return fmt.Sprintf("stopped (%s); a person decides what next", failure)
	case hasRes && res == ResultReturned && failure == "needs_input":
		return "needs input: a question waits for a person with write access"
	case hasRes && res == ResultReturned:
		return "returned to stage: the plan needs amending"
	case hasRes && res == ResultYielded:
		g, _ := r.Group()
		return fmt.Sprintf("yielded after group %d; a continuation goes on", g)
	case r.Has(KeyImplementAttempt) && failure != "":
		return fmt.Sprintf("the last Job ended with no result (%s); it goes on from the last mark", failure)
	case r.Has(KeyImplementAttempt):
		n, _ := r.Attempt()
		return fmt.Sprintf("implementing (Job %d)", n)
	}
	if st, ok := r.StageState(); ok {
		return "staged: " + st
	}
	return "starting"
}

// RenderComment returns the record comment: the visible part, a blank line,
// then the block, which it writes even with no keys (the block is what marks
// the comment as the record). A comment over MaxBodyChars is a *TooLongError.
func RenderComment(r *Record) (string, error) {
	c := *r
	if c.text != "" && !strings.HasSuffix(c.text, "\n") {
		c.text += "\n"
	}
	return render(&c, true)
}

// HasBlock reports whether text holds what Parse would read as a record block:
// an opener at the start of a line, outside any code fence. It tells the record
// comment apart from other comments, and finds record blocks where none is
// trusted (the issue body, other people's comments).
func HasBlock(text string) bool {
	lines := splitLines(text)
	fences := newFencer(text, lines)
	for i := range lines {
		s := text[lines[i].start:lines[i].end]
		if !fences.fenced(i, s) && isOpener(s) {
			return true
		}
	}
	return false
}

// Masked returns c with mask applied to every value that can hold free text
// (step labels, check logs, questions, answers, file names, the trace), each
// re-written and cut to its bound as its setter would. A writer applies the
// masked change, so the read-back of a masked write holds exactly the change
// it checks for (DESIGN §3: changes are masked before they are applied). A
// value masking makes invalid (a plan path, a trace no longer JSON) is an
// error when applied.
func (c Changes) Masked(mask func(string) string) Changes {
	out := Changes{edits: make([]edit, len(c.edits))}
	for i, e := range c.edits {
		out.edits[i] = e
		if e.del || e.err != nil {
			continue
		}
		sp, ok := specOf(e.key)
		if !ok {
			continue
		}
		switch sp.kind {
		case kindLine, kindText:
			s, err := decodeScalar(e.raw)
			if err != nil {
				continue
			}
			if m := mask(s); m != s {
				if sp.kind == kindLine {
					m = joinLines(m)
				}
				out.edits[i].raw = fit(m, sp.bound, sp.tail)
			}
		case kindPlan:
			s, err := decodeScalar(e.raw)
			if err == nil && mask(s) != s {
				out.edits[i].err = fmt.Errorf("the masker changes the plan path %q", clip(mask(s)))
			}
		case kindFiles:
			var files []string
			if json.Unmarshal([]byte(e.raw), &files) != nil {
				continue
			}
			changed := false
			for j, f := range files {
				if m := mask(f); m != f {
					files[j], changed = m, true
				}
			}
			if changed {
				out.edits[i].raw = fitFiles(files)
			}
		case kindTrace:
			if m := mask(e.raw); m != e.raw {
				s, err := compactJSON([]byte(m))
				if err != nil {
					out.edits[i].err = fmt.Errorf("the masked trace is not JSON: %w", err)
					continue
				}
				out.edits[i].raw = s
			}
		}
	}
	return out
}
