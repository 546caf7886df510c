// Package acceptance_test holds the acceptance for Tax, held back
// from the agent. It is a package of its own so that, at main, where Tax
// does not exist, only it fails to build: the price package's own tests
// still run there.
package acceptance_test

import (
	"testing"

	"example.com/shop/internal/price"
)

// TestHiddenTaxRoundsHalfUp: the tax on a total is 20% of it, rounded half
// up to the cent.
func TestHiddenTaxRoundsHalfUp(t *testing.T) {
	for _, c := range []struct{ total, want int }{
		{995, 199},  // the case
		{997, 199},  // 199.4 rounds down
		{998, 200},  // 199.6 rounds up
		{1000, 200}, // nothing to round
		{3, 1},      // 0.6 rounds up
		{2, 0},      // 0.4 rounds down
		{0, 0},
	} {
		if got := price.Tax(c.total); got != c.want {
			t.Errorf("Tax(%d) = %d, want %d", c.total, got, c.want)
		}
	}
}
