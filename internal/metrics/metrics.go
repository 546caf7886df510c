package metrics

import (
	"math"
	"sort"
	"time"

	"github.com/roadmap-dev/roadmap/internal/items"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// Report is the figures over one window. The JSON field names are stable:
// scripts read them. A rate or a median with nothing to measure is null.
type Report struct {
	// Since is the window's start; zero (absent) is all time. Now is its end.
	Since time.Time `json:"since,omitzero"`
	Now   time.Time `json:"now"`
	// Items counts the items in the window: those with a Job whose line
	// changed within it (every item when Since is zero).
	Items int `json:"items"`
	// ByState counts the items in the window by their state now; every
	// state is present, zeros included.
	ByState map[items.State]int `json:"by_state"`
	// Ended is the items that ended: ready plus stopped.
	Ended int `json:"ended"`
	// SuccessRate is ready ÷ (ready + stopped), over the items in the window.
	SuccessRate *float64 `json:"success_rate"`
	// MedianImplementJobs is the median number of implement Jobs an item
	// took, over the items in the window with at least one (an item that
	// never reached implement is left out, not counted as zero).
	MedianImplementJobs *float64 `json:"median_implement_jobs"`
	// MedianStageToReadySeconds is the median of ReadyAt − StagedAt over the
	// ready items in the window that have both times (StageToReadyItems).
	MedianStageToReadySeconds *float64 `json:"median_stage_to_ready_seconds"`
	StageToReadyItems         int      `json:"stage_to_ready_items"`
	// TotalSpend is the whole spend of the items in the window, over their
	// lives (killed Jobs' recovered spend included).
	TotalSpend record.Spend `json:"total_spend"`
	// WindowSpend is the spend of the Jobs whose line changed in the window.
	WindowSpend record.Spend `json:"window_spend"`
	// SpendPerReadyUSD is TotalSpend.USD ÷ the ready items: what a ready
	// item cost, with every killed and stopped item's spend charged to the
	// outcomes (gh-aw's cost per accepted outcome).
	SpendPerReadyUSD *float64 `json:"spend_per_ready_usd"`
	// StopsByClass counts the Job lines in the window that stopped their
	// item, by class ("none" for a stop that names none).
	StopsByClass map[string]int `json:"stops_by_class"`
	// ImplementJobs and Continuations count the implement Jobs in the
	// window and those that continued an item (Job number > 1);
	// ContinuationRate is their ratio.
	ImplementJobs    int      `json:"implement_jobs"`
	Continuations    int      `json:"continuations"`
	ContinuationRate *float64 `json:"continuation_rate"`
	// JobRequests is the counted GitHub requests of the Jobs in the window
	// (as each Job's line records them); RequestsPerItem is JobRequests ÷
	// Items.
	JobRequests     int      `json:"job_requests"`
	RequestsPerItem *float64 `json:"requests_per_item"`
	// BlockedSeconds is the time the items in the window spent waiting for
	// their blockers, up to Now (items.Item.BlockedSeconds: from each Job
	// that yielded blocked to the next Job); BlockedItems counts the items
	// that waited at all.
	BlockedSeconds float64 `json:"blocked_seconds"`
	BlockedItems   int     `json:"blocked_items"`
}

// Compute reads the figures of the window [since, now] from items. A Job is
// in the window when its line's At is within it; with a zero since every Job
// is, a line with no At included, and every item counts. With a since, a
// line with no At (written before lines carried one) is in no window.
func Compute(list []items.Item, since, now time.Time) Report {
	r := Report{Since: since, Now: now, ByState: map[items.State]int{}, StopsByClass: map[string]int{}}
	for _, s := range items.States {
		r.ByState[s] = 0
	}
	in := func(j items.Job) bool {
		if since.IsZero() {
			return true
		}
		return !j.At.IsZero() && !j.At.Before(since) && !j.At.After(now)
	}
	var jobCounts, stageToReady []float64
	ready, stopped := 0, 0
	for _, it := range list {
		counted := since.IsZero()
		for _, j := range it.Jobs {
			if !in(j) {
				continue
			}
			counted = true
			r.WindowSpend = r.WindowSpend.Add(j.Spend)
			r.JobRequests += j.Requests
			if j.Stop() {
				class := j.Class
				if class == "" {
					class = "none"
				}
				r.StopsByClass[class]++
			}
			if j.Phase == "implement" {
				r.ImplementJobs++
				if j.Job > 1 {
					r.Continuations++
				}
			}
		}
		if !counted {
			continue
		}
		r.Items++
		r.ByState[it.State]++
		if b := it.BlockedSeconds(now); b > 0 {
			r.BlockedSeconds += b
			r.BlockedItems++
		}
		r.TotalSpend = r.TotalSpend.Add(it.Spend)
		switch it.State {
		case items.Ready:
			ready++
			if !it.StagedAt.IsZero() && !it.ReadyAt.IsZero() && !it.ReadyAt.Before(it.StagedAt) {
				stageToReady = append(stageToReady, it.ReadyAt.Sub(it.StagedAt).Seconds())
			}
		case items.Stopped:
			stopped++
		}
		if n := it.ImplementJobs(); n > 0 {
			jobCounts = append(jobCounts, float64(n))
		}
	}
	r.Ended = ready + stopped
	r.SuccessRate = ratio(float64(ready), float64(r.Ended))
	r.MedianImplementJobs = median(jobCounts)
	r.MedianStageToReadySeconds = median(stageToReady)
	r.StageToReadyItems = len(stageToReady)
	r.SpendPerReadyUSD = ratio(r.TotalSpend.USD, float64(ready))
	r.ContinuationRate = ratio(float64(r.Continuations), float64(r.ImplementJobs))
	r.RequestsPerItem = ratio(float64(r.JobRequests), float64(r.Items))
	return r
}

// ratio is a ÷ b rounded to nine decimals (USD sums are kept to
// nano-dollars), nil when b is 0.
func ratio(a, b float64) *float64 {
	if b == 0 {
		return nil
	}
	v := math.Round(a/b*1e9) / 1e9
	return &v
}

// median is the middle value, or the mean of the two middle values of an
// even count; nil for none.
func median(v []float64) *float64 {
	if len(v) == 0 {
		return nil
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return &m
}
