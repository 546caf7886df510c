package stage

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/gates"
	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/text"
)

// RuleAcceptanceMap is the rule of the verifier's acceptance-map findings:
// the acceptance-map gate's own, since they are its second pass (#3019).
const RuleAcceptanceMap = gates.RulePrefix + gates.AcceptanceMap

// Bounds on the verifier's acceptance map: it is model output.
const (
	maxAcceptanceEntries = 100 // the gate reads at most 100 criteria
	maxAcceptanceReason  = 300
	maxGroupNumber       = 1000
)

// AcceptanceEntry is one line of the verifier's acceptance map: criterion
// Criterion is met by group Group (0: by no group), because Reason.
type AcceptanceEntry struct {
	Criterion int
	Group     int
	Reason    string
}

// ParseAcceptanceMap reads the acceptance argument of the verifier's
// verdict: a JSON array of {"criterion", "group", "reason"}. It is read
// defensively: an element that is not such an object, or whose numbers are
// not integers in bounds (criterion 1-100, group 0-1000), is skipped; a
// criterion's first element wins; reasons are one line, at most 300 bytes;
// at most 100 elements are read. given is false when there is no map at all
// (the argument is absent or not a JSON array), so the word match decides.
func ParseAcceptanceMap(raw string) (entries map[int]AcceptanceEntry, given bool) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, false
	}
	var elems []json.RawMessage
	if err := json.Unmarshal([]byte(raw), &elems); err != nil {
		return nil, false
	}
	entries = map[int]AcceptanceEntry{}
	for i, e := range elems {
		if i == maxAcceptanceEntries {
			break
		}
		var v struct {
			Criterion json.RawMessage `json:"criterion"`
			Group     json.RawMessage `json:"group"`
			Reason    any             `json:"reason"`
		}
		if err := json.Unmarshal(e, &v); err != nil {
			continue
		}
		c, ok := smallInt(v.Criterion, 1, maxAcceptanceEntries)
		if !ok {
			continue
		}
		g, ok := smallInt(v.Group, 0, maxGroupNumber)
		if !ok {
			continue
		}
		if _, seen := entries[c]; seen {
			continue
		}
		reason, _ := v.Reason.(string)
		entries[c] = AcceptanceEntry{Criterion: c, Group: g, Reason: clean(text.OneLine(reason), maxAcceptanceReason)}
	}
	return entries, true
}

// smallInt reads a JSON integer (or a string holding one: "2") in [lo, hi].
func smallInt(raw json.RawMessage, lo, hi int) (int, bool) {
	s := strings.TrimSpace(string(raw))
	if unq, err := strconv.Unquote(s); err == nil {
		s = strings.TrimSpace(unq)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, false
	}
	return n, true
}

// acceptanceJudgement is the acceptance map of one round: its findings and
// its lines, one per criterion, as the log and the draft PR show them.
type acceptanceJudgement struct {
	findings []plan.Finding
	lines    []string
}

// judgeAcceptance confirms or overrules the word match (cs) with the
// verifier's map. A criterion the verifier maps to no group, or to a group
// without a reason, is an ERROR the next planner round must answer, with the
// verifier's reason; one it maps to a group of the plan with a reason is
// met. A criterion the verifier leaves out, or maps to a group the plan does
// not have, keeps the word match's answer and an INFO says so, as does a
// verdict with no map at all. groups are the plan's group numbers and their
// heading lines; file is the plan's tasks.md.
func judgeAcceptance(cs []gates.CriterionMatch, groups map[int]int, entries map[int]AcceptanceEntry, given bool, issue int, file string) acceptanceJudgement {
	var j acceptanceJudgement
	if len(cs) == 0 {
		return j
	}
	wordLine := func(c gates.CriterionMatch, why string) string {
		if len(c.Groups) == 0 {
			return fmt.Sprintf("AC%d → no group (word match%s)", c.N, why)
		}
		return fmt.Sprintf("AC%d → group %s (word match%s)", c.N, joinInts(c.Groups), why)
	}
	if !given {
		for _, c := range cs {
			j.lines = append(j.lines, wordLine(c, ""))
		}
		j.findings = append(j.findings, plan.Finding{Level: plan.LevelInfo, Rule: RuleAcceptanceMap, File: file, Line: 1, Ours: true,
			Message: fmt.Sprintf("the verifier gave no acceptance map: the word match alone maps the criteria of issue #%d (%s)", issue, strings.Join(j.lines, "; "))})
		return j
	}
	var unjudged []string
	for _, c := range cs {
		e, ok := entries[c.N]
		_, known := groups[e.Group]
		switch {
		case !ok || e.Group != 0 && !known:
			why := "; the verifier did not judge it"
			if ok {
				why = fmt.Sprintf("; the verifier named group %d, which the plan does not have", e.Group)
			}
			j.lines = append(j.lines, wordLine(c, why))
			unjudged = append(unjudged, strconv.Itoa(c.N))
		case e.Group == 0:
			reason := e.Reason
			if reason == "" {
				reason = "no reason given"
			}
			j.lines = append(j.lines, fmt.Sprintf("AC%d → no group (verifier: %s)", c.N, reason))
			also := ""
			if len(c.Groups) > 0 {
				also = fmt.Sprintf(" (the word match maps it to group %s by shared words, which is not meeting it)", joinInts(c.Groups))
			}
			j.findings = append(j.findings, plan.Finding{Level: plan.LevelError, Rule: RuleAcceptanceMap, File: file, Line: 1, Ours: true,
				Message: fmt.Sprintf("acceptance criterion %d of issue #%d is met by no task group, the verifier judges%s: %q: %s; plan a group that meets it and name it (AC%d)",
					c.N, issue, also, c.Text, reason, c.N)})
		case e.Reason == "":
			j.lines = append(j.lines, fmt.Sprintf("AC%d → group %d (verifier: no reason given)", c.N, e.Group))
			j.findings = append(j.findings, plan.Finding{Level: plan.LevelError, Rule: RuleAcceptanceMap, File: file, Line: groups[e.Group], Ours: true,
				Message: fmt.Sprintf("the verifier maps acceptance criterion %d of issue #%d (%q) to group %d but gives no reason it meets it; say in the group's tasks how it does, and name it (AC%d)",
					c.N, issue, c.Text, e.Group, c.N)})
		default:
			j.lines = append(j.lines, fmt.Sprintf("AC%d → group %d (verifier: %s)", c.N, e.Group, e.Reason))
		}
	}
	if len(unjudged) > 0 {
		j.findings = append(j.findings, plan.Finding{Level: plan.LevelInfo, Rule: RuleAcceptanceMap, File: file, Line: 1, Ours: true,
			Message: fmt.Sprintf("the verifier's acceptance map does not judge criteria %s of issue #%d: the word match maps them", strings.Join(unjudged, ", "), issue)})
	}
	return j
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// criteriaText is the criteria as the verifier reads them, with the word
// match's first pass: "1. <criterion> — word match: group 2".
func criteriaText(cs []gates.CriterionMatch) string {
	var b strings.Builder
	for _, c := range cs {
		m := "no group"
		if len(c.Groups) > 0 {
			m = "group " + joinInts(c.Groups)
		}
		fmt.Fprintf(&b, "%d. %s — word match: %s\n", c.N, c.Text, m)
	}
	return strings.TrimSpace(b.String())
}

// acceptance is the round's acceptance map: the word match over the plan's
// groups, then the verifier's judgement of it (raw: the verdict's
// acceptance argument). It is logged, and the draft PR's body shows the
// last round's.
func (r *runner) acceptance(raw string) []plan.Finding {
	cs, groups := r.criteria()
	entries, given := ParseAcceptanceMap(raw)
	j := judgeAcceptance(cs, groups, entries, given, r.o.Issue, r.dir+"/tasks.md")
	r.acMap = j.lines
	for _, l := range j.lines {
		r.j.Logf("roadmap: acceptance map, round %d: %s", r.round, l)
	}
	return j.findings
}

// criteria are the issue's acceptance criteria with the word match over the
// plan's groups, and the plan's group numbers with their heading lines.
func (r *runner) criteria() ([]gates.CriterionMatch, map[int]int) {
	var t *plan.Tasks
	if c, err := plan.LoadChangeIn(r.o.Repo.Dir, r.dir); err == nil {
		t = c.Tasks
	}
	groups := map[int]int{}
	if t != nil {
		for _, g := range t.Groups {
			groups[g.Number] = g.Line
		}
	}
	return gates.MatchCriteria(r.j.Issue.Body, t), groups
}
