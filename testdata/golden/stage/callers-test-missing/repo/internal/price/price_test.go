package price

import "testing"

func TestTotal(t *testing.T) {
	if got := Total([]int{100, 250}); got != 350 {
		t.Errorf("Total = %d, want 350", got)
	}
}

func TestDiscount(t *testing.T) {
	if got := Discount(1000, 10); got != 900 {
		t.Errorf("Discount = %d, want 900", got)
	}
}
