package demotest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/demo"
)

// planWrongGroup2 is the agent's first answer to group 2 in the return
// world: the plan cannot work there, so the item goes back to stage. It is
// named to sort before group-2-goodbye.json: the replay serves the first
// of two fitting conversations first, and the least used one after.
const planWrongGroup2 = `{
 "comment": "Written by hand for the return-to-stage scenario: the agent finds group 2's plan wrong the first time.",
 "source": "hand",
 "match": "task group 2 of",
 "turns": [
  {"response": {"tool_calls": [{"name": "plan_wrong", "arguments": {"reason": "task 2.1 verifies TestGoodbye in greet_test.go, but group 2 never adds Goodbye's test before it: the fails command cannot fail first"}}],
   "usage": {"tokens_in": 1900, "tokens_out": 80}}}
 ]
}
`

// NewReturnWorld is demo.NewWorld whose agent finds the plan wrong at group 2
// the first time (plan_wrong), and whose stage planner amends it when asked
// ("Amend the plan for issue"): it writes the plan's files again, groups 1
// and 2 unchanged, and the verifier passes it. The second time group 2 is
// asked for, the agent does it.
func NewReturnWorld(ctx context.Context, dir string, latency time.Duration) (*demo.World, error) {
	goItem := demo.GoSample()
	return demo.NewSampleWorld(ctx, dir, latency, goItem, true, func(files map[string]string, fixtures string) error {
		if err := os.WriteFile(filepath.Join(fixtures, "group-2-a-plan-wrong.json"), []byte(planWrongGroup2), 0o644); err != nil {
			return err
		}
		plan := map[string]string{}
		for name, text := range files {
			if rel, ok := strings.CutPrefix(name, demo.PlanDir+"/"); ok {
				plan[rel] = text
			}
		}
		return goItem.WritePlannerFixtures(plan, fixtures, "stage-amender", "Amend the plan for issue", "amended the plan from group 2: the evidence is the agent's; groups 1 and 2 kept")
	})
}
