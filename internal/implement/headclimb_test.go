package implement_test

import (
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// TestHeadRepairClimbs: on a two-tier ladder, the first repair at the head
// (the scoped checks' failure) runs on tier 0 and the second (the PR
// check's, after the first repair passed locally) starts on tier 1, as a
// group's failing rounds climb. Both tiers can answer every step, so which
// one a step reached shows in which model server saw it.
func TestHeadRepairClimbs(t *testing.T) {
	w := newWorld(t, 2, "")
	w.fake.ScriptCI(ciWorkflow, githubfake.CIJob{Name: "test", Outcomes: []githubfake.CIOutcome{
		{Conclusion: "failure", Log: goTestFailure},
		{Conclusion: "success"},
	}})
	convs := w.conversations()
	g2 := `{"comment":"written by hand: group 2 writes its greeting and breaks group 1's","source":"hand",
"match":"task group 2 of","turns":[
 {"response":{"tool_calls":[{"name":"write_file","arguments":{"path":"greeting-2.txt","content":"hello 2\n"}}],"usage":{"tokens_in":1000,"tokens_out":100}}},
 {"expect":"","response":{"tool_calls":[{"name":"write_file","arguments":{"path":"greeting-1.txt","content":"bye 1\n"}}],"usage":{"tokens_in":1000,"tokens_out":100}}},
 {"expect":"","response":{"tool_calls":[{"name":"finish","arguments":{"summary":"wrote greeting 2"}}],"usage":{"tokens_in":1000,"tokens_out":100}}}]}`
	c, err := llm.ParseConversation("group-2", []byte(g2))
	if err != nil {
		t.Fatal(err)
	}
	convs[1] = c
	convs = append(convs, conversation(t, "repair-checks", "exited 1 at the head", "greeting-1.txt", "hello 1\n"),
		conversation(t, "repair-pr-check", "PR check test failed", "greeting-1.txt", "hello 1!\n"))
	j := w.newJob(convs)
	j.opts.CIWorkflows = []string{ciWorkflow}
	mk := func(name string) *spyModel {
		m, err := llm.New(llm.Config{Provider: llm.ProviderReplay, Model: name, Fixtures: writeFixtures(t, convs)})
		if err != nil {
			t.Fatal(err)
		}
		return &spyModel{Model: m}
	}
	small, large := mk("small"), mk("large")
	j.opts.Models = []agent.Tier{{Name: "small", Model: small}, {Name: "large", Model: large}}
	res := j.run()
	if res.Result != record.ResultReady {
		t.Fatalf("Job ended %s (%s: %s), want ready\n%s", res.Result, res.Failure, res.Reason, j.log.String())
	}
	saw := func(m *spyModel, key string) bool {
		for _, r := range m.Requests() {
			if u := firstUser(r); strings.Contains(u, "a check fails at the head") && strings.Contains(u, key) {
				return true
			}
		}
		return false
	}
	if !saw(small, "exited 1 at the head") || saw(large, "exited 1 at the head") {
		t.Errorf("the first repair at the head: on tier 0 %v, on tier 1 %v; want tier 0 only",
			saw(small, "exited 1 at the head"), saw(large, "exited 1 at the head"))
	}
	if saw(small, "PR check test failed") || !saw(large, "PR check test failed") {
		t.Errorf("the second repair at the head: on tier 0 %v, on tier 1 %v; want tier 1 only\n%s",
			saw(small, "PR check test failed"), saw(large, "PR check test failed"), j.log.String())
	}
	if !strings.Contains(j.log.String(), "repair at the head starts on tier 1 (large)") {
		t.Errorf("the log does not say the second repair's tier:\n%s", j.log.String())
	}
}
