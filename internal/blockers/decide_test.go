package blockers

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func closed(n int, reason string) State {
	return State{Ref: Ref{Number: n}, Readable: true, StateReason: reason}
}

func TestBlockerNotPlanned(t *testing.T) {
	item := Ref{Repo: "acme/w", Number: 1}
	tests := []struct {
		name   string
		states []State
		o      Options
		want   Verdict
	}{
		{"completed is met", []State{closed(2, "completed")}, Options{}, Verdict{Met: true}},
		{"closed with no reason is met", []State{closed(2, "")}, Options{}, Verdict{Met: true}},
		{"open waits", []State{{Ref: Ref{Number: 2}, Readable: true, Open: true, StateReason: "reopened"}}, Options{},
			Verdict{Waiting: []Ref{{Number: 2}}}},
		{"not planned waits and is reported", []State{closed(2, "not_planned"), closed(3, "completed")}, Options{},
			Verdict{NotPlanned: []Ref{{Number: 2}}}},
		{"not planned is met when configured, and still reported", []State{closed(2, "not_planned")}, Options{NotPlannedMet: true},
			Verdict{Met: true, NotPlanned: []Ref{{Number: 2}}}},
		{"a duplicate is not planned", []State{closed(2, "duplicate")}, Options{}, Verdict{NotPlanned: []Ref{{Number: 2}}}},
		{"a duplicate is met when configured", []State{closed(2, "duplicate")}, Options{NotPlannedMet: true},
			Verdict{Met: true, NotPlanned: []Ref{{Number: 2}}}},
		{"not planned met does not meet an open one", []State{closed(2, "not_planned"), {Ref: Ref{Number: 3}, Readable: true, Open: true}},
			Options{NotPlannedMet: true}, Verdict{Waiting: []Ref{{Number: 3}}, NotPlanned: []Ref{{Number: 2}}}},
		{"named twice counts once", []State{closed(2, "not_planned"), {Ref: Ref{Repo: "ACME/w", Number: 2}, Readable: true, StateReason: "not_planned"}},
			Options{}, Verdict{NotPlanned: []Ref{{Number: 2}}}},
		{"no blockers", nil, Options{}, Verdict{Met: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Decide(item, tc.states, tc.o)); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDependencyCycleRefused(t *testing.T) {
	t.Run("Cycle", func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			graph map[int][]int
			start int
			want  []int
		}{
			{"A→B→A", map[int][]int{4: {7}, 7: {4}}, 4, []int{4, 7, 4}},
			{"longer, past a dead end", map[int][]int{1: {9, 2}, 2: {3}, 3: {5, 1}, 9: {8}}, 1, []int{1, 2, 3, 1}},
			{"itself", map[int][]int{5: {5}}, 5, []int{5, 5}},
			{"a cycle not through start", map[int][]int{1: {2}, 2: {3}, 3: {2}}, 1, nil},
			{"none", map[int][]int{1: {2, 3}, 2: {3}}, 1, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if diff := cmp.Diff(tc.want, Cycle(tc.graph, tc.start)); diff != "" {
					t.Errorf("Cycle (-want +got):\n%s", diff)
				}
			})
		}
	})
	t.Run("Decide refuses what can never be met", func(t *testing.T) {
		item := Ref{Repo: "acme/w", Number: 4}
		v := Decide(item, []State{
			{Ref: Ref{Repo: "acme/W", Number: 4}, Readable: true, Open: true},
			{Ref: Ref{Number: 5}, Readable: true, PullRequest: true},
			{Ref: Ref{Repo: "other/x", Number: 6}},
			closed(7, "completed"),
		}, Options{NotPlannedMet: true})
		want := Verdict{Refused: []Problem{
			{Ref{Number: 4}, "#4 is this issue itself: an issue cannot wait for itself; remove the reference."},
			{Ref{Number: 5}, "#5 is a pull request, not an issue: name the issue it closes instead."},
			{Ref{Repo: "other/x", Number: 6}, "other/x#6 could not be read with roadmap's token (another repository, deleted, or no access), so it can never be seen closed; remove the reference or give roadmap read access to it."},
		}}
		if diff := cmp.Diff(want, v); diff != "" {
			t.Errorf("Decide (-want +got):\n%s", diff)
		}
		v = Decide(item, []State{closed(7, "completed")}, Options{}).WithCycle(Cycle(map[int][]int{4: {7}, 7: {4}}, 4))
		want = Verdict{Refused: []Problem{{Ref{Number: 7}, "#4 → #7 → #4 is a dependency cycle: none of these issues can start until one of its references is removed."}}}
		if diff := cmp.Diff(want, v); diff != "" {
			t.Errorf("WithCycle (-want +got):\n%s", diff)
		}
		if v := (Verdict{Met: true}).WithCycle(nil); !v.Met || v.Refused != nil {
			t.Errorf("WithCycle(nil) = %+v, want the verdict unchanged", v)
		}
	})
	t.Run("Order names the cycle", func(t *testing.T) {
		waves, err := Order([]int{1, 2, 3, 4}, map[int][]int{2: {1}, 3: {4}, 4: {3}})
		var ce *CycleError
		if !errors.As(err, &ce) {
			t.Fatalf("Order: err = %v, want a *CycleError", err)
		}
		if diff := cmp.Diff([]int{3, 4, 3}, ce.Path); diff != "" {
			t.Errorf("cycle (-want +got):\n%s", diff)
		}
		if !strings.Contains(err.Error(), "#3 → #4 → #3") {
			t.Errorf("error %q does not name the cycle", err)
		}
		if diff := cmp.Diff([][]int{{1}, {2}}, waves); diff != "" {
			t.Errorf("waves before the cycle (-want +got):\n%s", diff)
		}
	})
}

func TestUnblockOrderRespectsDependencies(t *testing.T) {
	const a, b, c = 10, 20, 30
	for _, tc := range []struct {
		name  string
		items []int
		graph map[int][]int
		want  [][]int
	}{
		{"C blocked by B, A and B free", []int{c, b, a}, map[int][]int{c: {b}}, [][]int{{a, b}, {c}}},
		{"stable: the same waves from any order", []int{a, c, b, a}, map[int][]int{c: {b}}, [][]int{{a, b}, {c}}},
		{"blockers not among the items start at once", []int{c, b}, map[int][]int{c: {a, 99}, b: {a}}, [][]int{{b, c}}},
		{"a chain and a diamond", []int{1, 2, 3, 4, 5}, map[int][]int{2: {1}, 3: {1}, 4: {2, 3}, 5: {4}}, [][]int{{1}, {2, 3}, {4}, {5}}},
		{"nothing", nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Order(tc.items, tc.graph)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Order (-want +got):\n%s", diff)
			}
		})
	}
}
