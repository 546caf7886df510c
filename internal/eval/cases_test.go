package eval

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseIssue(t *testing.T) {
	is, err := ParseIssue([]byte("# Discounts round half up\r\n\r\nThe body.\n"))
	if err != nil || is.Title != "Discounts round half up" || is.Body != "The body.\n" {
		t.Errorf("ParseIssue = %+v, %v", is, err)
	}
	for _, bad := range []string{"", "\nbody", "# \nbody", "\xff\xfe", "t\n" + strings.Repeat("x", maxIssueBody+1)} {
		if _, err := ParseIssue([]byte(bad)); err == nil {
			t.Errorf("ParseIssue(%.20q) accepted it", bad)
		}
	}
}

func TestParseStageExpected(t *testing.T) {
	e, err := ParseStageExpected([]byte(`{"openspec_valid": false, "findings": [{"rule": "openspec/no-deltas", "file": "openspec/changes/x"}]}`))
	if err != nil || e.OpenSpecValid || len(e.Findings) != 1 || e.Findings[0].Line != 0 {
		t.Errorf("ParseStageExpected = %+v, %v", e, err)
	}
	for _, bad := range []string{
		`{"findings": []}`,         // validity left out
		`{"openspec_valid": true}`, // findings left out
		`{"openspec_valid": true, "findings": [], "extra": 1}`,
		`{"openspec_valid": true, "findings": [{"rule": "r", "file": "../etc/passwd"}]}`,
		`{"openspec_valid": true, "findings": [{"rule": "r", "file": "/abs"}]}`,
		`{"openspec_valid": true, "findings": [{"rule": "", "file": "a"}]}`,
		`{"openspec_valid": true, "findings": [{"rule": "r", "file": "a", "line": -1}]}`,
		`{"openspec_valid": true, "findings": []} {}`,
	} {
		if _, err := ParseStageExpected([]byte(bad)); err == nil {
			t.Errorf("ParseStageExpected(%s) accepted it", bad)
		}
	}
}

func TestParseImplementFiles(t *testing.T) {
	if _, err := ParseImplementExpected([]byte(`{"f2p": [], "p2p": ["p.TestA"]}`)); err == nil {
		t.Error("an implement case with no F2P test was accepted")
	}
	if _, err := ParseImplementExpected([]byte(`{"f2p": ["p.Test A"]}`)); err == nil {
		t.Error("a test name with a space was accepted")
	}
	s, err := ParseImplementSettings([]byte(`{"kill": {"match": "task group 2 of", "turn": 1}, "repair_rounds": 2}`))
	if err != nil || s.Kill == nil || s.Kill.Turn != 1 || s.RepairRounds != 2 {
		t.Errorf("ParseImplementSettings = %+v, %v", s, err)
	}
	s, err = ParseImplementSettings([]byte(`{"test_strength": true, "test_strength_floor": 0.8, "review": true, "review_rounds": 1}`))
	if err != nil || !s.TestStrength || s.TestStrengthFloor != 0.8 || !s.Review || s.ReviewRounds != 1 {
		t.Errorf("ParseImplementSettings = %+v, %v", s, err)
	}
	s, err = ParseImplementSettings([]byte(`{"policy": {"programs": {"python3": {"allow": true, "args": ["-m pytest"]}}}}`))
	if err != nil {
		t.Fatalf("ParseImplementSettings with a policy: %v", err)
	}
	if p, err := s.policy(); err != nil || p.Check([]string{"python3", "-m", "pytest", "-q"}) != nil || p.Check([]string{"python3", "-c", "print(1)"}) == nil {
		t.Errorf("the case's policy allows python3 -m pytest and nothing else of python3: %v", err)
	}
	if p, err := (ImplementSettings{}).policy(); err != nil || p.Check([]string{"python3", "-m", "pytest"}) == nil {
		t.Errorf("without a policy the default table, which refuses python3: %v", err)
	}
	e, err := ParseImplementExpected([]byte(`{"f2p": ["p.T"], "strength": {"floor": 0.8}}`))
	if err != nil || e.Strength == nil || e.Strength.Floor != 0.8 {
		t.Errorf("ParseImplementExpected = %+v, %v", e, err)
	}
	for _, bad := range []string{`{"f2p": ["p.T"], "strength": {"floor": 0}}`, `{"f2p": ["p.T"], "strength": {"floor": 1.5}}`,
		`{"f2p": ["p.T"], "strength": {}}`, `{"f2p": ["p.T"], "strength": {"floor": 0.8, "killed": 3}}`} {
		if _, err := ParseImplementExpected([]byte(bad)); err == nil {
			t.Errorf("ParseImplementExpected(%s) accepted it", bad)
		}
	}
	for _, bad := range []string{`{"kill": {"turn": 1}}`, `{"repair_rounds": 11}`, `{"kil": {}}`,
		`{"test_strength_floor": -0.1}`, `{"test_strength_floor": 2}`, `{"review_rounds": -1}`, `{"review_rounds": 6}`,
		`{"policy": {"programs": {"python3": {"allowed": true}}}}`, `{"policy": ["python3"]}`, `{"policy": "python3"}`} {
		if _, err := ParseImplementSettings([]byte(bad)); err == nil {
			t.Errorf("ParseImplementSettings(%s) accepted it", bad)
		}
	}
}

// FuzzCaseFiles: a golden set is a directory anyone can pass; none of its
// files may crash the reader or give a finding outside the repository.
func FuzzCaseFiles(f *testing.F) {
	f.Add([]byte("# T\nbody"))
	f.Add([]byte(`{"openspec_valid": true, "findings": [{"rule": "a/b", "file": "x/y.md", "line": 3}]}`))
	f.Add([]byte(`{"f2p": ["p.T"], "p2p": []}`))
	f.Add([]byte(`{"kill": {"match": "m", "turn": 0}, "check_log": "x"}`))
	f.Add([]byte(`{"f2p": ["p.T"], "strength": {"floor": 0.8}}`))
	f.Add([]byte(`{"test_strength": true, "test_strength_floor": 0.8, "review": true, "review_rounds": 1}`))
	f.Add([]byte(`{"policy": {"programs": {"python3": {"allow": true, "args": ["-m pytest"]}}}}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		if is, err := ParseIssue(src); err == nil {
			if is.Title == "" || strings.Contains(is.Title, "\n") || !utf8.ValidString(is.Body) {
				t.Fatalf("bad issue %+v", is)
			}
		}
		if e, err := ParseStageExpected(src); err == nil {
			for _, fd := range e.Findings {
				if !cleanRel(fd.File) || fd.Line < 0 || fd.Rule == "" {
					t.Fatalf("bad expected finding %+v", fd)
				}
			}
		}
		if e, err := ParseImplementExpected(src); err == nil {
			if len(e.F2P) == 0 {
				t.Fatal("expected.json with no F2P test accepted")
			}
			if e.Strength != nil && !(e.Strength.Floor > 0 && e.Strength.Floor <= 1) {
				t.Fatalf("strength floor %v accepted", e.Strength.Floor)
			}
		}
		if s, err := ParseImplementSettings(src); err == nil {
			if !(s.TestStrengthFloor >= 0 && s.TestStrengthFloor <= 1) || s.ReviewRounds < 0 || s.ReviewRounds > 5 {
				t.Fatalf("bad settings accepted: %+v", s)
			}
		}
	})
}
