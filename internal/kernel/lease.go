package kernel

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// One Job per item at a time. GitHub has no compare-and-swap on a comment,
// so two Jobs for one item (a person's dispatch while a label's run goes, a
// self-hosted runner that picks up both) would both read the record, both
// number themselves and both write. A git ref is what GitHub does arbitrate:
// a push that says what the ref must hold now (--force-with-lease with an
// explicit value) moves it under the ref's lock or is refused, and one that
// says "no such ref" creates it for exactly one of two pushers. The item's
// lease is refs/roadmap/lease/<issue>, a commit whose message names the
// holder; a Job takes it before it reads the record and releases it after
// its last mark (docs/reliability.md, "One Job per item").

// LeaseMaxAge bounds a lease whose holder cannot be asked about: one with
// no run id (a Job run by hand) or whose run GitHub will not say. It is
// GitHub's limit on a job's run on its hosted runners, and the default
// timeout-minutes; no Job of roadmap's workflows runs longer.
const LeaseMaxAge = 6 * time.Hour

// LeaseRef is the ref that holds issue's lease.
func LeaseRef(issue int) string { return "refs/roadmap/lease/" + strconv.Itoa(issue) }

// Holder is a lease's holder as its note names it.
type Holder struct {
	// Phase is the name of the holder's phase (Phase.Name).
	Phase string
	RunID int64
	// Token is the holding Job's own random word: it tells apart two Jobs
	// of one run, and a Job's lease from the lease a Job took over.
	Token string
	// Since is when the holder took the lease, by its clock.
	Since time.Time
}

func (h Holder) String() string {
	if h.RunID == 0 {
		return fmt.Sprintf("a %s Job with no run id (since %s)", h.Phase, h.Since.Format(time.RFC3339))
	}
	return fmt.Sprintf("the %s Job of run %d", h.Phase, h.RunID)
}

// note is the lease commit's message.
func (h Holder) note(issue int) string {
	return fmt.Sprintf("roadmap lease: issue #%d\n\nphase: %s\nrun: %d\ntoken: %s\nsince: %s\n",
		issue, h.Phase, h.RunID, h.Token, h.Since.UTC().Format(time.RFC3339))
}

// parseHolder reads a lease's note. The note is anyone's who can push, so
// it is read as untrusted: a field that does not parse, or a phase not in
// phases, leaves the note unreadable (ok false), never half read.
func parseHolder(text string, phases map[string]Phase) (h Holder, ok bool) {
	if len(text) > 4096 {
		return Holder{}, false
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		k, v, found := strings.Cut(strings.TrimSpace(line), ": ")
		if !found || seen[k] {
			continue
		}
		seen[k] = true
		switch k {
		case "phase":
			h.Phase = v
		case "run":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 || n > record.MaxRunID {
				return Holder{}, false
			}
			h.RunID = n
		case "token":
			h.Token = v
		case "since":
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return Holder{}, false
			}
			h.Since = t
		}
	}
	if _, known := phases[h.Phase]; !known || h.Token == "" || h.Since.IsZero() || !seen["run"] {
		return Holder{}, false
	}
	return h, true
}

// Busy is why a Job did not start: a live Job holds the item's lease. The
// Job makes no mark, no model call and takes no number; the holder carries
// the item on.
type Busy struct {
	Holder Holder
	// Why says how the holder was found live.
	Why string
}

func (b *Busy) Error() string {
	return fmt.Sprintf("%s holds the item's lease (%s): this Job leaves the item to it", b.Holder, b.Why)
}

// lease is the lease a Job holds: its ref and the commit it put there.
type lease struct {
	ref, sha string
	holder   Holder
}

// takeLease creates the item's lease for this Job. When another holds it,
// held is that lease as read, and the caller judges whether its holder is
// gone (judgeHolder) before taking it over.
func (j *Job) takeLease(ctx context.Context) (held *git.RefNote, err error) {
	tok := make([]byte, 8)
	if _, err := rand.Read(tok); err != nil {
		return nil, err
	}
	h := Holder{Phase: j.O.Phase.Name, RunID: j.O.RunID, Token: hex.EncodeToString(tok), Since: j.O.Clock.Now()}
	ref := LeaseRef(j.O.Issue)
	for try := 0; try < 3; try++ {
		sha, err := j.O.Repo.SetRefIf(ctx, j.O.Remote, ref, "", h.note(j.O.Issue))
		if err == nil {
			j.lease = &lease{ref: ref, sha: sha, holder: h}
			return nil, nil
		}
		var rej *git.PushRejected
		if !errors.As(err, &rej) {
			return nil, fmt.Errorf("take the item's lease %s: %w", ref, err)
		}
		note, found, rerr := j.O.Repo.ReadRef(ctx, j.O.Remote, ref)
		if rerr != nil {
			return nil, fmt.Errorf("read the item's lease %s: %w", ref, rerr)
		}
		if found {
			return &note, nil
		}
		// Released between the two: try again.
	}
	return nil, fmt.Errorf("take the item's lease %s: it was taken and released three times while this Job tried", ref)
}

// verdict is what judgeHolder found of a lease's holder.
type verdict struct {
	holder Holder
	gone   bool
	why    string
	// byRun: gone because its run ended, which it may have done after the
	// record was read; read the record again.
	byRun bool
}

// judgeHolder says whether the lease's holder is gone, and why. The record
// (read after the lease was found held) answers first: a holder whose line
// has a result or a class ended, or report settled it. Else GitHub says
// whether the holder's run still runs (one request).
func (j *Job) judgeHolder(ctx context.Context, note git.RefNote) (verdict, error) {
	h, ok := parseHolder(note.Text, j.phases)
	v := verdict{holder: h, gone: true}
	switch {
	case !ok:
		v.why = "its note is not a lease roadmap wrote"
		return v, nil
	case h.RunID != 0 && h.RunID == j.O.RunID:
		// GitHub runs a run's attempts one after another: the holder is an
		// earlier attempt of this run, and it has ended.
		v.why = "it is an earlier attempt of this run"
		return v, nil
	}
	if line, found := j.lastLineOf(h); found && (line.Result != "" || line.Failure != "") {
		end := string(line.Result)
		if end == "" {
			end = "no result, " + line.Failure
		}
		v.why = fmt.Sprintf("the record has its Job %d's ending (%s)", line.Job, end)
		return v, nil
	}
	age := j.O.Clock.Now().Sub(h.Since)
	if h.RunID != 0 {
		state, found, err := j.O.GitHub.ReadRun(ctx, h.RunID)
		switch {
		case err == nil && !found:
			v.why, v.byRun = fmt.Sprintf("its run %d is gone", h.RunID), true
			return v, nil
		case err == nil && state.Done():
			v.why, v.byRun = fmt.Sprintf("its run %d has completed (%s)", h.RunID, state.Conclusion), true
			return v, nil
		case err == nil:
			v.gone, v.why = false, fmt.Sprintf("its run %d is %s", h.RunID, state.Status)
			return v, nil
		case age <= LeaseMaxAge:
			return verdict{}, fmt.Errorf("read the lease holder's run %d: %w", h.RunID, err)
		}
	}
	if age > LeaseMaxAge {
		v.why = fmt.Sprintf("it was taken %s ago, longer than any Job runs (%s)", age.Round(time.Minute), LeaseMaxAge)
		return v, nil
	}
	v.gone, v.why = false, fmt.Sprintf("it has no run to ask about and was taken %s ago", age.Round(time.Second))
	return v, nil
}

// lastLineOf is the holder's Job line in the record: the newest line of its
// phase (a phase parseHolder knows) with its run id.
func (j *Job) lastLineOf(h Holder) (record.JobOutcome, bool) {
	if h.RunID == 0 {
		return record.JobOutcome{}, false
	}
	var out record.JobOutcome
	found := false
	for _, l := range j.phases[h.Phase].Jobs(j.Rec) {
		if l.RunID == h.RunID && (!found || l.Job > out.Job) {
			out, found = l, true
		}
	}
	return out, found
}

// takeOver moves the lease from a gone holder to this Job, if it is still
// where it was read; another Job that took it first makes this one Busy.
func (j *Job) takeOver(ctx context.Context, note git.RefNote, why string, old Holder) error {
	tok := make([]byte, 8)
	if _, err := rand.Read(tok); err != nil {
		return err
	}
	h := Holder{Phase: j.O.Phase.Name, RunID: j.O.RunID, Token: hex.EncodeToString(tok), Since: j.O.Clock.Now()}
	ref := LeaseRef(j.O.Issue)
	sha, err := j.O.Repo.SetRefIf(ctx, j.O.Remote, ref, note.SHA, h.note(j.O.Issue))
	var rej *git.PushRejected
	if errors.As(err, &rej) {
		return &Busy{Holder: old, Why: "another Job took the lease over first"}
	}
	if err != nil {
		return fmt.Errorf("take over the item's lease %s: %w", ref, err)
	}
	j.lease = &lease{ref: ref, sha: sha, holder: h}
	j.Logf("roadmap: took over the item's lease from %s: %s", old, why)
	return nil
}

// Release gives the item's lease back: after the Job's last mark, so the
// next Job reads a record this one no longer writes. A lease another Job
// took over meanwhile is left to it.
func (j *Job) Release(ctx context.Context) {
	if j.lease == nil {
		return
	}
	l := j.lease
	j.lease = nil
	if err := j.O.Repo.DeleteRefIf(ctx, j.O.Remote, l.ref, l.sha); err != nil {
		j.Logf("roadmap: release the item's lease %s: %v (the next Job takes it over when it finds this Job ended)", l.ref, err)
	}
}

// Leave ends a Job that found the item's lease held by a live Job (Busy):
// the log and the runner's typed line say who holds it. It returns the
// reason for the outputs.
func (j *Job) Leave() string {
	b := j.Busy
	reason := b.Error()
	j.Logf("roadmap: the item's lease %s is held by %s (%s)", LeaseRef(j.O.Issue), b.Holder, b.Why)
	j.Event(trace.Event{Type: trace.TypePhase, Phase: trace.PhaseYielded, Step: "lease", Reason: reason, Outcome: string(failure.Busy)})
	j.Command("notice", failure.TypedLine(failure.ResultYielded, failure.Busy, reason))
	return reason
}
