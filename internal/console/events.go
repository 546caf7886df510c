package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/text"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// jobEvents is every event of one Job the record, its trace copy, its log
// and its run say now, in the Job's order; Poll keeps the ones not yet
// shown. traced is the trace copy when it is this Job's, calls the model
// calls of its log when it was read.
func (c *Console) jobEvents(ref jobRef, l record.JobOutcome, traced []trace.Event, calls []trace.SpendEntry) []Event {
	base := Event{Job: l.Job, RunID: l.RunID, Phase: ref.phase, Source: "record"}
	prefix := fmt.Sprintf("%s/%d/", ref.phase, l.Job)
	var out []Event

	e := base
	e.Type, e.key = TypeJobStarted, prefix+"start"
	e.Detail = fmt.Sprintf("%s Job %d started (run %d)", ref.phase, l.Job, l.RunID)
	out = append(out, e)

	for _, t := range traced {
		out = append(out, c.traceEvent(base, prefix, t))
	}
	if len(traced) > 0 {
		c.traced[ref] = true
	}
	for _, s := range calls {
		e := base
		e.Type, e.Source, e.key = string(trace.TypeModelCall), "log", prefix+"call/"+strconv.Itoa(s.Call)
		e.Group, e.Step = s.Group, c.clean(s.Model)
		e.SpendUSD, e.TokensIn, e.TokensOut = s.USD, s.TokensIn, s.TokensOut
		if s.Estimated {
			e.Outcome = "estimated"
		}
		e.Detail = strings.Join(nonEmpty("call "+strconv.Itoa(s.Call), e.Step, tokens(s.TokensIn, s.TokensOut), usd(s.USD), e.Outcome), " · ")
		out = append(out, e)
	}

	last, shown := c.lines[ref]
	moved := !shown || last.Group != l.Group || last.Spend != l.Spend
	if l.Result == "" && moved && (l.Group > 0 || l.Spend != (record.Spend{})) {
		e := c.spendEvent(base, l)
		e.Type = TypeMark
		e.key = fmt.Sprintf("%smark/%d/%d/%d/%d", prefix, l.Group, l.Spend.ModelCalls, l.Spend.TokensIn, l.Spend.TokensOut)
		what := "marked"
		if l.Group > 0 {
			what = fmt.Sprintf("group %d marked", l.Group)
		}
		e.Detail = strings.Join(nonEmpty(what, spendText(l.Spend)), " · ")
		out = append(out, e)
	}
	if l.Result != "" {
		e := c.spendEvent(base, l)
		e.Type, e.key = TypeJobEnded, prefix+"end"
		e.Outcome, e.Reason = c.clean(string(l.Result)), c.clean(l.Failure)
		what := "ended " + e.Outcome
		if e.Reason != "" {
			what += " (" + e.Reason + ")"
		}
		e.Detail = strings.Join(nonEmpty(what, fmt.Sprintf("last group %d", l.Group), spendText(l.Spend)), " · ")
		out = append(out, e)
	}
	c.lines[ref] = l

	if rs := c.runs[ref]; rs != nil && !rs.gone && rs.status != "" {
		e := base
		e.Type, e.Source = TypeRunStatus, "run"
		e.Step, e.Outcome = c.clean(rs.status), c.clean(rs.conclusion)
		e.key = prefix + "run/" + rs.status + "/" + rs.conclusion
		if !rs.startedAt.IsZero() && rs.status == "in_progress" {
			e.Time = rs.startedAt
		}
		e.Detail = strings.Join(nonEmpty(fmt.Sprintf("run %d", l.RunID), e.Step, e.Outcome), " · ")
		if rs.status == "completed" && l.Result == "" {
			e.Detail += " · the Job wrote no result: it was killed or lost; report classifies it from its log"
		}
		out = append(out, e)
	}
	return out
}

func (c *Console) spendEvent(base Event, l record.JobOutcome) Event {
	e := base
	e.Group = l.Group
	e.SpendUSD, e.TokensIn, e.TokensOut = l.Spend.USD, l.Spend.TokensIn, l.Spend.TokensOut
	return e
}

// traceEvent is one event of the record's trace copy, its text cleaned.
func (c *Console) traceEvent(base Event, prefix string, t trace.Event) Event {
	e := base
	e.Source, e.Type = "trace", c.clean(string(t.Type))
	e.key = prefix + "trace/" + strconv.Itoa(t.Seq)
	e.Time, e.Group = t.Time, t.Group
	e.Step = t.Step
	if t.Type == trace.TypePhase {
		e.Step = string(t.Phase)
	}
	e.Step, e.Reason, e.Outcome = c.clean(e.Step), c.clean(t.Reason), c.clean(t.Outcome)
	if t.Type == trace.TypeModelCall {
		e.SpendUSD, e.TokensIn, e.TokensOut = t.USD, t.TokensIn, t.TokensOut
	}
	d := t.Detail()
	if t.Type == trace.TypePhase && t.Reason != "" {
		d += " · " + t.Reason
	}
	e.Detail = c.clean(d)
	return e
}

// statusLine says where the item stands now.
func (c *Console) statusLine(rec *record.Record, stage, impl []record.JobOutcome, k, n int, now time.Time) Event {
	e := Event{Type: TypeStatus, Source: "record", Groups: n}
	phase, lines := PhaseImplement, impl
	if len(impl) == 0 {
		phase, lines = PhaseStage, stage
	}
	var parts []string
	var spend record.Spend
	for _, l := range append(append([]record.JobOutcome{}, stage...), impl...) {
		spend = spend.Add(l.Spend)
	}
	e.SpendUSD, e.TokensIn, e.TokensOut = spend.USD, spend.TokensIn, spend.TokensOut
	if len(lines) == 0 {
		e.Phase = phase
		parts = append(parts, "no Job has recorded a line yet")
	} else {
		l := lines[len(lines)-1]
		ref := jobRef{phase, l.Job}
		rs := c.runs[ref]
		e.Phase, e.Job, e.RunID = phase, l.Job, l.RunID
		state := "running"
		switch {
		case l.Result != "":
			state = c.clean(string(l.Result))
			if l.Failure != "" {
				state += " (" + c.clean(l.Failure) + ")"
			}
		case rs.completed():
			state = "ended without a result"
		}
		e.Outcome = state
		parts = append(parts, fmt.Sprintf("%s Job %d (run %d)", phase, l.Job, l.RunID), state)
		group := k
		if group == 0 && phase == PhaseImplement {
			group, _ = rec.Group()
		}
		e.Group = group
		switch {
		case group > 0 && n > 0:
			parts = append(parts, fmt.Sprintf("group %d of %d", group, n))
		case group > 0:
			parts = append(parts, fmt.Sprintf("group %d", group))
		}
		if l.Result == "" && rs != nil && rs.status == "in_progress" && !rs.startedAt.IsZero() && c.o.JobTimeout > 0 {
			left := rs.startedAt.Add(c.o.JobTimeout).Sub(now).Truncate(time.Second)
			parts = append(parts, fmt.Sprintf("%s left of the Job's %s", max(left, 0), c.o.JobTimeout))
		}
	}
	if c.o.Budget > 0 {
		parts = append(parts, fmt.Sprintf("%s of %s item budget", usd(spend.USD), usd(c.o.Budget)))
	} else {
		parts = append(parts, usd(spend.USD)+" spent")
	}
	e.Detail = strings.Join(parts, " · ")
	return e
}

// finished reports whether the item's last Job has ended for good: it has
// a result no continuation follows, and its run has completed.
func (c *Console) finished(rec *record.Record, stage, impl []record.JobOutcome) bool {
	phase, lines := PhaseImplement, impl
	if len(impl) == 0 {
		phase, lines = PhaseStage, stage
	}
	if len(lines) == 0 {
		return false
	}
	l := lines[len(lines)-1]
	if l.Result == "" {
		return false
	}
	if rs := c.runs[jobRef{phase, l.Job}]; l.RunID > 0 && !rs.completed() {
		return false
	}
	if l.Result != record.ResultYielded {
		return true
	}
	// A yield is followed by a continuation unless the item now waits for
	// the day's budget or a person stopped it.
	_, waits := rec.WakeAt()
	by, stopped := rec.StoppedBy()
	return waits || (stopped && by != "")
}

// Follow polls until the item's last Job has ended for good or ctx is
// done, handing each poll's new events to emit (nothing is emitted twice).
// A cancelled context is a normal end (SIGINT at a terminal).
func (c *Console) Follow(ctx context.Context, emit func([]Event) error) error {
	for {
		evs, done, err := c.Poll(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if err := emit(evs); err != nil {
			return err
		}
		if done {
			return nil
		}
		if err := c.o.Clock.Sleep(ctx, c.o.Interval); err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return nil
			}
			return err
		}
	}
}

// WriteText writes events one a line for a person.
func WriteText(w io.Writer, evs []Event) error {
	for _, e := range evs {
		who := fmt.Sprintf("%s Job %d", e.Phase, e.Job)
		if e.Type == TypeStatus {
			who = "status"
		}
		if _, err := fmt.Fprintf(w, "#%d %s %s · %s · %s\n", e.Seq, e.Time.UTC().Format("15:04:05"), who, e.Type, e.Detail); err != nil {
			return err
		}
	}
	return nil
}

// WriteJSON writes events as NDJSON: one object a line.
func WriteJSON(w io.Writer, evs []Event) error {
	enc := json.NewEncoder(w)
	for _, e := range evs {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return nil
}

// maxText bounds each text field of an event, in characters.
const maxText = 300

// clean makes text from the record fit one line of a terminal and of the
// Actions log: secrets masked, control and bidirectional characters
// written as escapes, never a workflow command, at most maxText characters.
func (c *Console) clean(s string) string {
	if s == "" {
		return ""
	}
	if c.o.Mask != nil {
		s = c.o.Mask.Mask(s)
	}
	unsafe := func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) }
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r < 0x80 && unsafe(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafe(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	s = b.String()
	if utf8.RuneCountInString(s) > maxText {
		s = string([]rune(s)[:maxText-3]) + "..."
	}
	return actionsio.PlainLine(s)
}

func nonEmpty(parts ...string) []string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

func usd(u float64) string { return text.USD(u) }

func tokens(in, out int64) string {
	return fmt.Sprintf("%s tokens in, %s out", trace.Thousands(in), trace.Thousands(out))
}

func spendText(s record.Spend) string {
	if s == (record.Spend{}) {
		return ""
	}
	return fmt.Sprintf("%s · %d model calls · %s", usd(s.USD), s.ModelCalls, tokens(s.TokensIn, s.TokensOut))
}
