package world

import (
	"fmt"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/llm"
)

// The sample item of the runners' tests and the fault suite: an issue
// titled SampleTitle whose plan, in SamplePlanDir, has one task group per
// greeting file.
const (
	SampleTitle   = "Add greetings"
	SamplePlanDir = "openspec/changes/add-greetings"
)

// SampleRepo is the sample repository with a plan of groups task groups:
// group i writes greeting-i.txt saying hello i. With no groups it has no
// plan (the stage phase writes it, in SamplePlanDir).
func SampleRepo(groups int) map[string]string {
	files := map[string]string{"README.md": "# widgets\n"}
	if groups == 0 {
		return files
	}
	var tasks strings.Builder
	for i := 1; i <= groups; i++ {
		fmt.Fprintf(&tasks, "## %d. Greeting %d\n\n- [ ] %d.1 Write greeting-%d.txt saying hello %d; verify: `grep -q \"hello %d\" greeting-%d.txt`\n\n", i, i, i, i, i, i, i)
	}
	files[SamplePlanDir+"/proposal.md"] = "# Add greetings\n\nWrite one greeting file per group.\n"
	files[SamplePlanDir+"/tasks.md"] = tasks.String()
	return files
}

// SampleConversations are the model's recorded answers to SampleRepo's
// plan, one conversation a group (named group-i): write the file, then
// finish. Each call costs 1,000 tokens in and 100 out.
func SampleConversations(groups int) ([]*llm.Conversation, error) {
	var convs []*llm.Conversation
	for i := 1; i <= groups; i++ {
		data := fmt.Sprintf(`{"comment":"written by hand: group %[1]d writes its greeting and finishes","source":"hand",
"match":"task group %[1]d of","turns":[
 {"response":{"tool_calls":[{"name":"write_file","arguments":{"path":"greeting-%[1]d.txt","content":"hello %[1]d\n"}}],"usage":{"tokens_in":1000,"tokens_out":100}}},
 {"response":{"tool_calls":[{"name":"finish","arguments":{"summary":"wrote greeting %[1]d"}}],"usage":{"tokens_in":1000,"tokens_out":100}}}]}`, i)
		c, err := llm.ParseConversation(fmt.Sprintf("group-%d", i), []byte(data))
		if err != nil {
			return nil, err
		}
		convs = append(convs, c)
	}
	return convs, nil
}
