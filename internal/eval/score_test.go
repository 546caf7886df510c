package eval

import "testing"

func TestF1(t *testing.T) {
	a := Finding{Rule: "roadmap/gate/verify-form", File: "t.md", Line: 3}
	b := Finding{Rule: "roadmap/gate/group-order", File: "t.md", Line: 5}
	anyLine := Finding{Rule: "roadmap/gate/verify-form", File: "t.md"}
	for _, tt := range []struct {
		name               string
		expected, produced []Finding
		f1, p, r           float64
	}{
		{"none expected, none found", nil, nil, 1, 1, 1},
		{"none expected, one found", nil, []Finding{a}, 0, 0, 0},
		{"one expected, none found", []Finding{a}, nil, 0, 0, 0},
		{"exact", []Finding{a, b}, []Finding{b, a}, 1, 1, 1},
		{"one extra", []Finding{a}, []Finding{a, b}, 2.0 / 3, 0.5, 1},
		{"one missed", []Finding{a, b}, []Finding{a}, 2.0 / 3, 1, 0.5},
		{"wrong line", []Finding{a}, []Finding{{Rule: a.Rule, File: a.File, Line: 4}}, 0, 0, 0},
		{"wrong file", []Finding{a}, []Finding{{Rule: a.Rule, File: "p.md", Line: 3}}, 0, 0, 0},
		{"wrong rule", []Finding{a}, []Finding{{Rule: b.Rule, File: a.File, Line: 3}}, 0, 0, 0},
		{"no line expected matches any line", []Finding{anyLine}, []Finding{{Rule: a.Rule, File: a.File, Line: 40}}, 1, 1, 1},
		{"one found cannot meet two expected", []Finding{a, a}, []Finding{a}, 2.0 / 3, 1, 0.5},
		{"two found, one expected", []Finding{a}, []Finding{a, a}, 2.0 / 3, 0.5, 1},
		// The precise expectation gets the finding at its line; the
		// line-less one takes the other, whatever the order.
		{"precise first", []Finding{anyLine, a}, []Finding{a, {Rule: a.Rule, File: a.File, Line: 9}}, 1, 1, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f1, p, r := F1(tt.expected, tt.produced)
			if !near(f1, tt.f1) || !near(p, tt.p) || !near(r, tt.r) {
				t.Errorf("F1 = %.4f (p %.4f r %.4f), want %.4f (p %.4f r %.4f)", f1, p, r, tt.f1, tt.p, tt.r)
			}
		})
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestStageScore(t *testing.T) {
	for _, tt := range []struct {
		f1    float64
		valid bool
		want  float64
	}{
		{1, true, 1}, {1, false, 0.8}, {0, true, 0.2}, {0, false, 0}, {2.0 / 3, true, 0.7333},
	} {
		if got := StageScore(tt.f1, tt.valid); got != tt.want {
			t.Errorf("StageScore(%v, %v) = %v, want %v", tt.f1, tt.valid, got, tt.want)
		}
	}
}

func TestJudge(t *testing.T) {
	for _, tt := range []struct {
		name                     string
		wantF, wantP, gotF, gotP []string
		want                     Verdict
	}{
		{"all hold", []string{"p.TestA"}, []string{"p.TestB"}, []string{"p.TestA", "p.TestX"}, []string{"p.TestB"}, Full},
		{"no p2p expected", []string{"p.TestA"}, nil, []string{"p.TestA"}, nil, Full},
		{"f2p missing", []string{"p.TestA"}, []string{"p.TestB"}, nil, []string{"p.TestB"}, No},
		{"p2p broken", []string{"p.TestA"}, []string{"p.TestB"}, []string{"p.TestA"}, nil, Partial},
		{"one of two f2p", []string{"p.TestA", "p.TestC"}, nil, []string{"p.TestA"}, nil, Partial},
		{"nothing expected fixes nothing", nil, []string{"p.TestB"}, nil, []string{"p.TestB"}, No},
		{"nothing ran", []string{"p.TestA"}, []string{"p.TestB"}, nil, nil, No},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Judge(tt.wantF, tt.wantP, tt.gotF, tt.gotP); got != tt.want {
				t.Errorf("Judge = %s, want %s", got, tt.want)
			}
		})
	}
	if Full.Score() != 1 || Partial.Score() != 0.5 || No.Score() != 0 {
		t.Errorf("scores FULL %v PARTIAL %v NO %v, want 1, 0.5, 0", Full.Score(), Partial.Score(), No.Score())
	}
}

func TestMean(t *testing.T) {
	if got := Mean(nil); got != 0 {
		t.Errorf("Mean(nil) = %v, want 0", got)
	}
	if got := Mean([]float64{1, 0.5, 0}); got != 0.5 {
		t.Errorf("Mean = %v, want 0.5", got)
	}
	if got := Mean([]float64{0.1, 0.2}); got != 0.15 {
		t.Errorf("Mean = %v, want 0.15", got)
	}
}
