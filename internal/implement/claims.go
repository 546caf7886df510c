package implement

import (
	"context"
	"fmt"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/claims"
	"github.com/roadmap-dev/roadmap/internal/failure"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// claimOptions name this Job as a claimer (internal/claims).
func (r *runner) claimOptions() claims.Options {
	return claims.Options{Repo: r.o.Repo, Remote: r.o.Remote, Runs: r.o.GitHub, Issue: r.o.Issue, RunID: r.o.RunID,
		Job: r.j.Number, Now: r.o.Clock.Now(), Logf: r.j.Logf}
}

// claim takes the units the plan changes before the first group, so items
// on disjoint units run at once and an item on a unit another item's live
// Job holds waits for it, holding nothing (docs/claims.md). The claims are
// git refs, pushed: no GitHub API request, but one read of a run per unit
// whose holder must be judged. A Job that waits adds claims.Label to its
// issue and claims.WaitedLabel to the holder's (two requests) and says item.waiting_for; the holder's report
// dispatches it again when that item ends.
func (r *runner) claim(ctx context.Context, change *plan.Change) (ending, bool) {
	units, err := claims.UnitsIn(r.workdir, change)
	if err != nil {
		return r.fail(ctx, "claim", err), false
	}
	if len(units) == 0 {
		return ending{}, true
	}
	held, ov, err := claims.Claim(ctx, r.claimOptions(), units)
	if err != nil {
		return r.fail(ctx, "claim", err), false
	}
	if ov != nil {
		r.j.Logf("roadmap: the claim on %s is held by %s: %s", strings.Join(ov.Units, ", "), ov.Holder, ov.Why)
		if err := r.o.GitHub.AddLabels(ctx, r.o.Issue, claims.Label); err != nil {
			return r.fail(ctx, "claim", fmt.Errorf("label the item %s: %w", claims.Label, err)), false
		}
		if err := r.o.GitHub.AddLabels(ctx, ov.Issue, claims.WaitedLabel); err != nil {
			return r.fail(ctx, "claim", fmt.Errorf("label #%d %s: %w", ov.Issue, claims.WaitedLabel, err)), false
		}
		var ch record.Changes
		ch.SetWaitingFor(ov.Issue)
		r.pending.Merge(ch)
		return ending{result: record.ResultYielded, class: failure.ClaimWait, step: "claim", reason: ov.Error()}, false
	}
	r.units = units
	r.j.Logf("roadmap: issue #%d, Job %d: claims on %s (%d units)", r.o.Issue, r.j.Number, strings.Join(units, ", "), len(held))
	if n, ok := r.j.Rec.WaitingFor(); ok {
		var ch record.Changes
		ch.Delete(record.KeyItemWaitingFor)
		r.pending.Merge(ch)
		r.j.Logf("roadmap: issue #%d waited for #%d's claims: it holds them now", r.o.Issue, n)
	}
	return ending{}, true
}

// releaseClaims gives the claims back at the item's end (ready, a stop, a
// return to stage); a yield keeps them for the continuation, which renews
// them as its own. Release leaves what another item took over, and a unit
// with no claim is nothing to do, so a re-run is harmless.
func (r *runner) releaseClaims(ctx context.Context, end ending) {
	if len(r.units) == 0 || end.result == record.ResultYielded {
		return
	}
	if err := claims.Release(ctx, r.claimOptions(), r.units); err != nil {
		r.j.Logf("roadmap: give back the claims: %v (a Job that finds them takes them over once this run has ended)", err)
		return
	}
	r.j.Logf("roadmap: gave back the claims on %s", strings.Join(r.units, ", "))
}
