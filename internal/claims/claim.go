package claims

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// Namespace is where the claims live: outside refs/heads and refs/tags, so
// a claim fires no push event and shows no branch.
const Namespace = "refs/roadmap/claims/"

// MaxAge bounds a claim whose holder cannot be asked about (no run id, or a
// run GitHub will not say): the same bound as the item's lease
// (kernel.LeaseMaxAge), GitHub's limit on a hosted job.
const MaxAge = 6 * time.Hour

// Ref is the ref that holds unit's claim: the unit's SHA-256, so any path
// makes a valid ref name of one length.
func Ref(unit string) string {
	sum := sha256.Sum256([]byte(unit))
	return Namespace + hex.EncodeToString(sum[:])
}

// Holder is a claim's holder as its note names it.
type Holder struct {
	Issue int       `json:"issue"`
	RunID int64     `json:"run_id"`
	Job   int       `json:"job"`
	Unit  string    `json:"unit"`
	Since time.Time `json:"since"`
}

func (h Holder) String() string {
	if h.RunID == 0 {
		return fmt.Sprintf("issue #%d's Job %d (no run id)", h.Issue, h.Job)
	}
	return fmt.Sprintf("issue #%d's Job %d (run %d)", h.Issue, h.Job, h.RunID)
}

func (h Holder) note() string {
	h.Since = h.Since.UTC().Truncate(time.Second)
	b, _ := json.Marshal(h)
	return string(b)
}

// maxNote bounds a note read back: ours are a few hundred bytes.
const maxNote = 4096

// ParseNote reads a claim's note. Anyone who can push writes notes, so it is
// read as untrusted: a note that is not one roadmap writes reads as
// unreadable (ok false), never half read.
func ParseNote(text string) (h Holder, ok bool) {
	if len(text) > maxNote {
		return Holder{}, false
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil || dec.More() {
		return Holder{}, false
	}
	if h.Issue <= 0 || h.Issue > 1<<31-1 || h.RunID < 0 || h.RunID > record.MaxRunID || h.Job < 0 || h.Job > 1<<20 ||
		h.Since.IsZero() || (h.Unit != "." && Normalise(h.Unit) != h.Unit) {
		return Holder{}, false
	}
	return h, true
}

// RunReader says whether a workflow run still runs (github.Client.ReadRun).
type RunReader interface {
	ReadRun(ctx context.Context, runID int64) (github.RunState, bool, error)
}

// Options name the claimer: the item and its Job, and where the refs are.
type Options struct {
	Repo   *git.Repo
	Remote string
	// Runs asks GitHub about a holder's run; nil judges by age alone.
	Runs  RunReader
	Issue int
	RunID int64
	Job   int
	Now   time.Time
	// Logf, when set, hears each takeover and why.
	Logf func(format string, args ...any)
}

// Claimed is one unit this item holds: its ref and the commit there.
type Claimed struct {
	Unit, Ref, SHA string
}

// Overlap is why a Job does not start its groups: a live Job of another
// item holds units this one's plan changes. Nothing of this item is held.
type Overlap struct {
	Issue  int
	Holder Holder
	Units  []string
	// Why says how the holder was found live.
	Why string
}

func (o *Overlap) Error() string {
	return fmt.Sprintf("waiting for #%d: %s holds %s (%s)", o.Issue, o.Holder, strings.Join(o.Units, ", "), o.Why)
}

// Claim takes units for the item, in sorted order (a fixed order: two
// claimers meet at their first common unit, and the loser holds nothing,
// so no two items wait for each other). A unit this item already holds (an
// earlier Job's: a continuation) is renewed for this Job; one another item
// holds is taken over when its holder's Job is gone. When a live holder of
// another item has one, every unit of units this item holds is released
// and the *Overlap is returned with nil held.
func Claim(ctx context.Context, o Options, units []string) (held []Claimed, overlap *Overlap, err error) {
	sorted := append([]string(nil), units...)
	sort.Strings(sorted)
	me := Holder{Issue: o.Issue, RunID: o.RunID, Job: o.Job, Since: o.Now}
	for _, u := range sorted {
		me.Unit = u
		c, ov, err := claimOne(ctx, o, me)
		if err == nil && ov == nil {
			held = append(held, c)
			continue
		}
		// Nothing is held while waiting or failing: what this call took,
		// and what an earlier Job of this item left, goes back.
		rerr := Release(ctx, o, sorted)
		if err != nil {
			return nil, nil, errors.Join(err, rerr)
		}
		if rerr != nil {
			return nil, nil, fmt.Errorf("%v; then give back this item's claims: %w", ov, rerr)
		}
		return nil, ov, nil
	}
	return held, nil, nil
}

// claimOne takes one unit: create, renew ours, or take over a gone holder's.
func claimOne(ctx context.Context, o Options, me Holder) (Claimed, *Overlap, error) {
	ref := Ref(me.Unit)
	for try := 0; try < 3; try++ {
		sha, err := o.Repo.SetRefIf(ctx, o.Remote, ref, "", me.note())
		if err == nil {
			return Claimed{Unit: me.Unit, Ref: ref, SHA: sha}, nil, nil
		}
		var rej *git.PushRejected
		if !errors.As(err, &rej) {
			return Claimed{}, nil, fmt.Errorf("claim %s (%s): %w", me.Unit, ref, err)
		}
		note, found, err := o.Repo.ReadRef(ctx, o.Remote, ref)
		if err != nil {
			return Claimed{}, nil, fmt.Errorf("read the claim on %s (%s): %w", me.Unit, ref, err)
		}
		if !found {
			continue // released between the two: create again
		}
		h, ok := ParseNote(note.Text)
		why := "it is this item's own (an earlier Job's)"
		if !ok || h.Issue != o.Issue {
			gone, reason, err := judge(ctx, o, h, ok)
			if err != nil {
				return Claimed{}, nil, fmt.Errorf("the claim on %s: %w", me.Unit, err)
			}
			if !gone {
				return Claimed{}, &Overlap{Issue: h.Issue, Holder: h, Units: []string{me.Unit}, Why: reason}, nil
			}
			why = reason
		}
		sha, err = o.Repo.SetRefIf(ctx, o.Remote, ref, note.SHA, me.note())
		if errors.As(err, &rej) {
			continue // another claimer moved it first: read who holds it now
		}
		if err != nil {
			return Claimed{}, nil, fmt.Errorf("take over the claim on %s (%s): %w", me.Unit, ref, err)
		}
		if h.Issue != o.Issue && o.Logf != nil {
			o.Logf("roadmap: took over the claim on %s from %s: %s", me.Unit, h, why)
		}
		return Claimed{Unit: me.Unit, Ref: ref, SHA: sha}, nil, nil
	}
	return Claimed{}, nil, fmt.Errorf("claim %s (%s): it moved three times while this Job tried", me.Unit, ref)
}

// judge says whether another item's holder is gone, by the item lease's
// rule (internal/kernel): a note roadmap did not write holds nothing;
// GitHub says whether the holder's run still runs (one request); a holder
// with no run to ask about, or whose run GitHub will not say, holds for
// MaxAge.
func judge(ctx context.Context, o Options, h Holder, readable bool) (gone bool, why string, err error) {
	if !readable {
		return true, "its note is not a claim roadmap wrote", nil
	}
	age := o.Now.Sub(h.Since)
	if h.RunID != 0 && o.Runs != nil {
		state, found, err := o.Runs.ReadRun(ctx, h.RunID)
		switch {
		case err == nil && !found:
			return true, fmt.Sprintf("its run %d is gone", h.RunID), nil
		case err == nil && state.Done():
			return true, fmt.Sprintf("its run %d has completed (%s)", h.RunID, state.Conclusion), nil
		case err == nil:
			return false, fmt.Sprintf("its run %d is %s", h.RunID, state.Status), nil
		case age <= MaxAge:
			return false, "", fmt.Errorf("read the holder's run %d: %w", h.RunID, err)
		}
	}
	if age > MaxAge {
		return true, fmt.Sprintf("it was taken %s ago, longer than any Job runs (%s)", age.Round(time.Minute), MaxAge), nil
	}
	return false, fmt.Sprintf("it has no run to ask about and was taken %s ago", age.Round(time.Second)), nil
}

// Release gives back the claims on units that this item holds, leaving any
// another item holds (one that took a unit over, say). A unit with no claim
// is nothing to do, so a second Release, or one after a kill, is harmless.
func Release(ctx context.Context, o Options, units []string) error {
	var errs []error
	for _, u := range units {
		ref := Ref(u)
		note, found, err := o.Repo.ReadRef(ctx, o.Remote, ref)
		if err != nil {
			errs = append(errs, fmt.Errorf("read the claim on %s: %w", u, err))
			continue
		}
		if !found {
			continue
		}
		if h, ok := ParseNote(note.Text); !ok || h.Issue != o.Issue {
			continue
		}
		var rej *git.PushRejected
		if err := o.Repo.DeleteRefIf(ctx, o.Remote, ref, note.SHA); err != nil && !errors.As(err, &rej) {
			errs = append(errs, fmt.Errorf("release the claim on %s: %w", u, err))
		}
	}
	return errors.Join(errs...)
}

// Label marks an item whose Job waits for another item's claims: report
// lists the open issues with it when an item ends, and dispatches those
// whose item.waiting_for names that item.
const Label = "roadmap:waiting-claim"

// WaitedLabel marks an item another item waits for: the waiter puts it on
// the holder's issue, so the holder's report lists the waiters only when
// there are some (an item's end with none costs no request for the wake).
const WaitedLabel = "roadmap:claim-waited"
