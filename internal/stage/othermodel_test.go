package stage_test

import (
	"context"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	roadmapjob "github.com/roadmap-dev/roadmap/internal/job"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/stage"
	theworld "github.com/roadmap-dev/roadmap/internal/world"
)

// TestVerifierOtherModel: with a two-model ladder and no stage.verifier,
// a stage Job as the binary opens it (job.Open, Kit.Stage) sends the
// planner's calls to the first model and the verifier's to the other, as
// the replay model server records from the model each request names; the
// Job's log says which model the verifier ran on. The rule holds when the
// verifier given is the planner's own model too: it gives way to the
// ladder's other model, unless the configuration named it.
func TestVerifierOtherModel(t *testing.T) {
	parse := func(name, text string) *llm.Conversation {
		c, err := llm.ParseConversation(name, []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	replay := llm.NewReplay([]*llm.Conversation{
		parse("planner", soundPlanner("Write the plan for issue")),
		parse("verifier", cleanVerifier("Review the plan"))})
	tw, err := theworld.New(theworld.Options{Dir: t.TempDir(), Owner: owner, Repo: repo, Token: token, Start: t0,
		Files: map[string]string{"go.mod": "module example.com/greet\n\ngo 1.22\n", "greet.go": "// Package greet says hello.\npackage greet\n"},
		Issue: &githubfake.Issue{Title: "Add greetings", Body: issueBody, Author: "alice"}, Replay: replay})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tw.Close)
	ws, err := tw.Workspace("job-1")
	if err != nil {
		t.Fatal(err)
	}
	s := tw.Setup(stage.Phase(), ws, "")
	var log strings.Builder
	s.Log = &log
	s.Config.Models = []config.Model{
		{Provider: llm.ProviderOpenAICompatible, Name: "small", BaseURL: tw.ModelURL()},
		{Provider: llm.ProviderOpenAICompatible, Name: "large", BaseURL: tw.ModelURL()}}
	k, err := roadmapjob.Open(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	res, err := k.Stage(context.Background(), roadmapjob.StageRun{Rounds: 1})
	if err != nil || res.Result != stage.ResultStaged {
		t.Fatalf("stage: %v, %v; want staged\n%s", res.Result, err, log.String())
	}
	models := map[string]map[string]bool{}
	for _, sv := range replay.Stats().Served {
		if models[sv.Conversation] == nil {
			models[sv.Conversation] = map[string]bool{}
		}
		models[sv.Conversation][sv.Model] = true
	}
	if !models["planner"]["small"] || len(models["planner"]) != 1 {
		t.Errorf("the planner's calls named %v, want small only", models["planner"])
	}
	if !models["verifier"]["large"] || len(models["verifier"]) != 1 {
		t.Errorf("the verifier's calls named %v, want large only: another model than the planner's", models["verifier"])
	}
	if !strings.Contains(log.String(), "the verifier runs on large (the planner on small)") {
		t.Errorf("the log does not name the verifier's model:\n%s", log.String())
	}

	c, _ := tw.RecordComment()
	rec, err := record.Parse(c.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.Models(); got["planner"] != "small" || got["verifier"] != "large" {
		t.Errorf("item.models = %v, want planner small, verifier large", got)
	}

	t.Run("a verifier on the planner's model gives way", func(t *testing.T) {
		for _, named := range []bool{false, true} {
			w := newWorld(t)
			j := w.newJob(soundPlanner("Write the plan for issue"), cleanVerifier("Review the plan"))
			small, large := agent.Tier{Name: "small", Model: j.model}, agent.Tier{Name: "large", Model: j.model}
			j.opts.Planner, j.opts.Verifier, j.opts.VerifierNamed = []agent.Tier{small, large}, []agent.Tier{small}, named
			if res := j.run(context.Background()); res.Result != stage.ResultStaged {
				t.Fatalf("named %v: result %s\n%s", named, res.Result, j.log.String())
			}
			want := "large"
			if named {
				want = "small"
			}
			for _, req := range j.model.Requests() {
				if strings.Contains(firstUserOf(req), "Review the plan") && req.Model != want {
					t.Errorf("named %v: the verifier's call named %q, want %q", named, req.Model, want)
				}
			}
		}
	})
}

func firstUserOf(req agent.ModelRequest) string {
	for _, m := range req.Messages {
		if m.Role == agent.RoleUser {
			return m.Content
		}
	}
	return ""
}
