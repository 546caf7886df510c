package implement_test

import (
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/implement"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// TestReviewerOtherModel: on a two-model ladder the group's step runs on
// the first model and the review on the other. A reviewer given on the
// implementer's own model (no review.model) gives way to the other model;
// one the configuration named is used as named. Both tiers answer every
// step, so the model each request names shows which one a step reached.
func TestReviewerOtherModel(t *testing.T) {
	for _, tc := range []struct {
		name     string
		reviewer string // the tier ReviewOptions.Models holds
		named    bool
		want     string
	}{
		{"the default, the ladder's last", "large", false, "large"},
		{"given on the implementer's model", "small", false, "large"},
		{"named on the implementer's model", "small", true, "small"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, 1, "")
			convs := append(w.conversations(), reviewConv(t, "review-1", "[]"))
			j := w.newJob(convs)
			m, err := llm.New(llm.Config{Provider: llm.ProviderReplay, Model: "small", Fixtures: writeFixtures(t, convs)})
			if err != nil {
				t.Fatal(err)
			}
			spy := &spyModel{Model: m}
			tiers := map[string]agent.Tier{"small": {Name: "small", Model: spy}, "large": {Name: "large", Model: spy}}
			j.opts.Models = []agent.Tier{tiers["small"], tiers["large"]}
			j.opts.Review = implement.ReviewOptions{Models: []agent.Tier{tiers[tc.reviewer]}, Named: tc.named, MaxFindings: 3, Rounds: 1}
			res := j.runWithGreenCI()
			if res.Result != record.ResultReady {
				t.Fatalf("result = %s (%s: %s), want ready\n%s", res.Result, res.Failure, res.Reason, j.log.String())
			}
			groups, reviews := map[string]bool{}, map[string]bool{}
			for _, r := range spy.Requests() {
				switch u := firstUser(r); {
				case strings.Contains(u, "Review this change"):
					reviews[r.Model] = true
				case strings.Contains(u, "task group 1 of"):
					groups[r.Model] = true
				}
			}
			if len(groups) != 1 || !groups["small"] {
				t.Errorf("the group's calls named %v, want small", groups)
			}
			if len(reviews) != 1 || !reviews[tc.want] {
				t.Errorf("the review's calls named %v, want %s", reviews, tc.want)
			}
			if got := w.record().Models(); got["implementer"] != "small" || got["reviewer"] != tc.want {
				t.Errorf("item.models = %v, want implementer small, reviewer %s", got, tc.want)
			}
			if line := "the reviewer runs on " + tc.want + " (the head's last agent step on small)"; !strings.Contains(j.log.String(), line) {
				t.Errorf("the log lacks %q:\n%s", line, j.log.String())
			}
		})
	}
}
