package stage_test

import (
	"context"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/stage"
)

// receiptIssue asks for a greeting and its receipt, emailed as a PDF.
const receiptIssue = `Every greeting is billed: the customer gets a receipt.

## Acceptance

- Hello("Ada") returns "Hello, Ada!".
- Receipts are emailed to the customer as a PDF.
`

// receiptTasks only computes the receipt: the word match maps criterion 2
// to group 2 ("receipt", "customer"), though nothing sends an email.
const receiptTasks = tasks + "\n## 2. Customer receipt\n\n" +
	"- [ ] 2.1 Add a failing test that Receipt computes the customer's receipt for a greeting, in `receipt_test.go`; verify: `go test ./... -run TestReceipt` fails\n" +
	"- [ ] 2.2 Implement `Receipt` in `receipt.go`; verify: `go test ./... -run TestReceipt`\n"

// emailTasks adds the group that emails the receipt as a PDF.
const emailTasks = receiptTasks + "\n## 3. Email the receipt as a PDF (AC2)\n\n" +
	"- [ ] 3.1 Add a failing test that SendReceipt emails the customer the receipt rendered as a PDF, in `email_test.go`; verify: `go test ./... -run TestSendReceipt` fails\n" +
	"- [ ] 3.2 Implement `SendReceipt` in `email.go`; verify: `go test ./... -run TestSendReceipt`\n"

const receiptSpec = spec + `
### Requirement: Receipts

The greet package SHALL compute the customer's receipt for each greeting and email it to the customer as a PDF.

#### Scenario: Ada's receipt

- **WHEN** Ada is greeted
- **THEN** Ada is emailed her receipt as a PDF
`

// receiptPlanner writes a plan whose tasks are t.
func receiptPlanner(match, t string) string {
	return conv("planner: writes the plan", match,
		planFile("proposal.md", proposal), planFile("tasks.md", t),
		planFile("specs/greetings/spec.md", receiptSpec), finish("wrote the plan"))
}

// TestAcceptanceMapJudged: the verifier, not the word match, decides which
// group meets each acceptance criterion (#3019). A plan that only computes
// the receipt passes the word match for "Receipts are emailed to the
// customer as a PDF"; the verifier says no group sends email, the next
// round's planner gets that as a finding and adds the group, and the staged
// PR shows the map with the verifier's reasons.
func TestAcceptanceMapJudged(t *testing.T) {
	judgedAll := `[{"criterion": 1, "group": 1, "reason": "group 1 tests and implements Hello"},` +
		`{"criterion": 2, "group": 3, "reason": "group 3 emails the receipt to the customer as a PDF"}]`
	newReceiptWorld := func(t *testing.T) *world {
		w := newWorld(t)
		if err := w.fake.SetIssueBody(w.issue, "alice", receiptIssue); err != nil {
			t.Fatal(err)
		}
		return w
	}
	prBody := func(t *testing.T, w *world) string {
		prs := w.pulls()
		if len(prs) != 1 {
			t.Fatalf("%d pull requests, want one", len(prs))
		}
		return prs[0].Body
	}

	t.Run("no group sends email", func(t *testing.T) {
		w := newReceiptWorld(t)
		j := w.newJob(
			receiptPlanner("Write the plan for issue", receiptTasks),
			conv("verifier round 1: criterion 2 is met by no group", "Review the plan for issue",
				judged("none", `[{"criterion": 1, "group": 1, "reason": "group 1 tests and implements Hello"},`+
					`{"criterion": 2, "group": 0, "reason": "no group sends email: group 2 only computes the receipt"}]`)),
			conv("planner round 2: adds the email group", "Revise the plan for issue",
				planFile("tasks.md", emailTasks), finish("added group 3: email the receipt as a PDF")),
			conv("verifier round 2: every criterion is met", "re:(?s)Review the plan for issue.*SendReceipt",
				judged("none", judgedAll)))
		res := j.run(context.Background())
		if res.Result != stage.ResultStaged || res.Rounds != 2 {
			t.Fatalf("result %s after %d rounds (%s); want staged after 2\n%s", res.Result, res.Rounds, res.Reason, j.log.String())
		}
		var verifier1, revise string
		for _, req := range j.model.Requests() {
			switch c := req.Messages[1].Content; {
			case strings.Contains(c, "Review the plan for issue") && verifier1 == "":
				verifier1 = c
			case strings.Contains(c, "Revise the plan for issue"):
				revise = c
			}
		}
		// The verifier read the criteria, numbered, with the word match's guess.
		if want := "2. Receipts are emailed to the customer as a PDF. — word match: group 2"; !strings.Contains(verifier1, want) {
			t.Errorf("the verifier's prompt lacks %q:\n%s", want, verifier1)
		}
		// The planner of round 2 got the verifier's judgement as a finding.
		for _, want := range []string{
			changeDir + "/tasks.md:1: " + stage.RuleAcceptanceMap + ": acceptance criterion 2 of issue #1 is met by no task group, the verifier judges (the word match maps it to group 2",
			"no group sends email: group 2 only computes the receipt; plan a group that meets it and name it (AC2)",
		} {
			if !strings.Contains(revise, want) {
				t.Errorf("round 2's planner did not get %q:\n%s", want, revise)
			}
		}
		if got, _ := w.branchFile(w.pulls()[0].Pull.Head, changeDir+"/tasks.md"); got != emailTasks {
			t.Errorf("the PR's tasks.md is not the revised one:\n%s", got)
		}
		for _, f := range res.Findings {
			if f.Fails() {
				t.Errorf("the last round still fails: %s", f)
			}
		}
		// The map is where a person reads it: the job log and the PR body.
		log := j.log.String()
		for _, want := range []string{
			"roadmap: acceptance map, round 1: AC2 → no group (verifier: no group sends email: group 2 only computes the receipt)",
			"roadmap: acceptance map, round 2: AC2 → group 3 (verifier: group 3 emails the receipt to the customer as a PDF)",
		} {
			if !strings.Contains(log, want) {
				t.Errorf("the log lacks %q:\n%s", want, log)
			}
		}
		body := prBody(t, w)
		for _, want := range []string{"**Acceptance map**", "- AC1 → group 1 (verifier: group 1 tests and implements Hello)",
			"- AC2 → group 3 (verifier: group 3 emails the receipt to the customer as a PDF)"} {
			if !strings.Contains(body, want) {
				t.Errorf("the PR body lacks %q:\n%s", want, body)
			}
		}
	})

	t.Run("every criterion met", func(t *testing.T) {
		w := newReceiptWorld(t)
		j := w.newJob(receiptPlanner("Write the plan for issue", emailTasks),
			conv("verifier: maps every criterion, with reasons", "Review the plan for issue", judged("none", judgedAll)))
		res := j.run(context.Background())
		if res.Result != stage.ResultStaged || res.Rounds != 1 || len(res.Findings) != 0 {
			t.Fatalf("result %s after %d rounds with findings %v (%s); want staged after 1 with none\n%s", res.Result, res.Rounds, res.Findings, res.Reason, j.log.String())
		}
		if body := prBody(t, w); !strings.Contains(body, "- AC2 → group 3 (verifier: group 3 emails the receipt") || !strings.Contains(body, "with no findings") {
			t.Errorf("the PR body does not show the verifier's map:\n%s", body)
		}
	})

	t.Run("no map: the word match decides", func(t *testing.T) {
		w := newReceiptWorld(t)
		// An older verifier (or a model that leaves the map out): the word
		// match maps criterion 2 to group 2, and an INFO says it alone did.
		j := w.newJob(receiptPlanner("Write the plan for issue", receiptTasks),
			conv("verifier: no acceptance map", "Review the plan for issue", verdict("none")))
		res := j.run(context.Background())
		if res.Result != stage.ResultStaged || res.Rounds != 1 {
			t.Fatalf("result %s after %d rounds (%s); want staged after 1\n%s", res.Result, res.Rounds, res.Reason, j.log.String())
		}
		var info []plan.Finding
		for _, f := range res.Findings {
			if f.Fails() {
				t.Errorf("a failing finding: %s", f)
			}
			if f.Rule == stage.RuleAcceptanceMap && f.Level == plan.LevelInfo {
				info = append(info, f)
			}
		}
		if len(info) != 1 || !strings.Contains(info[0].Message, "the verifier gave no acceptance map: the word match alone maps the criteria of issue #1 (AC1 → group 1 (word match); AC2 → group 2 (word match))") {
			t.Errorf("INFO findings %v; want one saying the word match decided", info)
		}
		if body := prBody(t, w); !strings.Contains(body, "- AC2 → group 2 (word match)") {
			t.Errorf("the PR body does not show the word match's map:\n%s", body)
		}
	})

	t.Run("no reason, unknown group", func(t *testing.T) {
		w := newReceiptWorld(t)
		// Criterion 2 mapped without a reason is an ERROR at the group's
		// heading; criterion 1 mapped to a group the plan does not have,
		// and criterion 7 the issue does not have, are the model's slips:
		// the word match keeps criterion 1, an INFO says so.
		j := w.newJob(receiptPlanner("Write the plan for issue", emailTasks),
			conv("verifier: a map with slips", "Review the plan for issue",
				judged("none", `[{"criterion": 1, "group": 9, "reason": "x"}, {"criterion": 2, "group": 3, "reason": "  "}, {"criterion": 7, "group": 0, "reason": "x"}, "junk"]`)))
		j.opts.Rounds = 1
		res := j.run(context.Background())
		if res.Result != stage.ResultReturned {
			t.Fatalf("result %s (%s); want returned\n%s", res.Result, res.Reason, j.log.String())
		}
		var got []string
		for _, f := range res.Findings {
			if f.Rule == stage.RuleAcceptanceMap {
				got = append(got, f.String()+" ["+string(f.Level)+"]")
			}
		}
		want := []string{
			changeDir + "/tasks.md:11: " + stage.RuleAcceptanceMap + ": the verifier maps acceptance criterion 2 of issue #1 (\"Receipts are emailed to the customer as a PDF.\") to group 3 but gives no reason it meets it; say in the group's tasks how it does, and name it (AC2) [ERROR]",
			changeDir + "/tasks.md:1: " + stage.RuleAcceptanceMap + ": the verifier's acceptance map does not judge criteria 1 of issue #1: the word match maps them [INFO]",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("acceptance-map findings:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

func TestParseAcceptanceMap(t *testing.T) {
	for _, tt := range []struct {
		in    string
		given bool
		want  map[int]stage.AcceptanceEntry
	}{
		{"", false, nil},
		{"not json", false, nil},
		{`{"criterion": 1}`, false, nil},
		{"[]", true, map[int]stage.AcceptanceEntry{}},
		{`[{"criterion": "2", "group": 0, "reason": "no\nemail"}, {"criterion": 2, "group": 1, "reason": "later"}, {"criterion": 0, "group": 1}, {"criterion": 3, "group": -1}, {"criterion": 4, "group": 1.5}, {"criterion": 5, "group": 2, "reason": 7}, 3, null]`,
			true, map[int]stage.AcceptanceEntry{2: {Criterion: 2, Group: 0, Reason: "no email"}, 5: {Criterion: 5, Group: 2}}},
	} {
		got, given := stage.ParseAcceptanceMap(tt.in)
		if given != tt.given || len(got) != len(tt.want) {
			t.Errorf("%q: %v, given %v; want %v, given %v", tt.in, got, given, tt.want, tt.given)
			continue
		}
		for k, v := range tt.want {
			if got[k] != v {
				t.Errorf("%q: criterion %d: %+v, want %+v", tt.in, k, got[k], v)
			}
		}
	}
}

func FuzzParseAcceptanceMap(f *testing.F) {
	f.Add(`[{"criterion": 1, "group": 2, "reason": "r"}]`)
	f.Add(`[{"criterion": "1e3", "group": "0x1"}, {}, []]`)
	f.Fuzz(func(t *testing.T, s string) {
		got, _ := stage.ParseAcceptanceMap(s)
		if len(got) > 100 {
			t.Fatalf("%d entries; at most 100", len(got))
		}
		for k, e := range got {
			if k != e.Criterion || k < 1 || k > 100 || e.Group < 0 || e.Group > 1000 || len(e.Reason) > 310 || strings.ContainsAny(e.Reason, "\n\r") {
				t.Fatalf("bad entry %d: %+v", k, e)
			}
		}
	})
}
