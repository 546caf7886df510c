package dashboard

import (
	"fmt"
	"strings"
	"testing"
)

// FuzzParse: the state block is text people with write access can edit.
// Parse never panics, and a state it accepts renders and reads back whole.
func FuzzParse(f *testing.F) {
	f.Add(Render(stateOf(f, tenItems(f)), View{Now: now, DayBudgetUSD: 50}))
	f.Add(blockOpen + "\n{\"items\":[{\"issue\":1,\"state\":\"ready\",\"usd\":1e308}]}\n" + blockClose)
	f.Add(blockOpen + "\n{\"items\":[{\"issue\":1,\"state\":\"ready\",\"usd\":0,\"days\":{\"x\":1}}]}\n" + blockClose)
	f.Add(blockOpen + "\n{\"items\":[],\"alerts\":[{\"key\":\"a-->b\",\"firing\":true}]}\n" + blockClose)
	f.Add(blockOpen + "\n{\"items\":null}")
	f.Fuzz(func(t *testing.T, body string) {
		st, err := Parse(body)
		if err != nil {
			return
		}
		out := Render(st, View{Now: now, DayBudgetUSD: 50})
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("a state Parse accepted does not read back from its render: %v", err)
		}
		if len(back.Items) != len(st.Items) {
			t.Fatalf("%d items read back, want %d", len(back.Items), len(st.Items))
		}
		if strings.Count(out, blockOpen) != 1+strings.Count(blockBody(out), blockOpen) {
			t.Fatalf("the render opens a second state block")
		}
	})
}

func blockBody(s string) string {
	i := strings.LastIndex(s, blockOpen)
	return s[:i]
}

// FuzzTicked: boxes are read from text people edit; a box whose text and
// marker disagree is no command, and nothing panics.
func FuzzTicked(f *testing.F) {
	f.Add("- [x] retry #12 <!-- roadmap:cmd retry 12 -->\n- [X] wake now #3 <!-- roadmap:cmd wake 3 -->")
	f.Add("- [x] stop #12 <!-- roadmap:cmd retry 12 -->")
	f.Add("- [x] retry #12 <!-- roadmap:cmd retry 13 -->\r\n")
	f.Fuzz(func(t *testing.T, body string) {
		for _, c := range Ticked(body) {
			if c.Issue < 1 || (c.Verb != CmdRetry && c.Verb != CmdStop && c.Verb != CmdWake) {
				t.Fatalf("Ticked gave %+v", c)
			}
			if !strings.Contains(body, fmt.Sprintf("<!-- roadmap:cmd %s %d -->", c.Verb, c.Issue)) || !strings.Contains(body, fmt.Sprintf("#%d", c.Issue)) {
				t.Fatalf("%+v is not a box of the body", c)
			}
		}
	})
}
