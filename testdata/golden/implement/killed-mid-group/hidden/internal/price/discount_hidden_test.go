package price

import "testing"

// TestHiddenDiscountRoundsHalfUp is the acceptance, held back from
// the agent: the amount a discount takes off rounds half up, to the cent.
func TestHiddenDiscountRoundsHalfUp(t *testing.T) {
	for _, c := range []struct{ total, pct, want int }{
		{995, 10, 895},  // the case: 99.5 off rounds up to 100
		{5, 10, 4},      // 0.5 off rounds up to 1
		{1005, 10, 904}, // 100.5 off rounds up to 101
		{994, 10, 895},  // 99.4 off rounds down to 99
		{4, 10, 4},      // 0.4 off rounds down to 0
		{1000, 10, 900}, // nothing to round
		{999, 0, 999},
		{999, 100, 0},
		{0, 50, 0},
	} {
		if got := Discount(c.total, c.pct); got != c.want {
			t.Errorf("Discount(%d, %d) = %d, want %d", c.total, c.pct, got, c.want)
		}
	}
}
