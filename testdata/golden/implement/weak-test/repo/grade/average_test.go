package grade

import "testing"

func TestAverage(t *testing.T) {
	if got := Average([]int{90, 80, 71}); got != 80 {
		t.Errorf("Average = %d, want 80", got)
	}
	if got := Average(nil); got != 0 {
		t.Errorf("Average(nil) = %d, want 0", got)
	}
}
