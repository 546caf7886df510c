// Package price computes totals and discounts, in cents.
package price

// Total is the sum of the items' prices.
func Total(items []int) int {
	sum := 0
	for _, p := range items {
		sum += p
	}
	return sum
}

// Discount takes pct percent off total.
func Discount(total, pct int) int {
	return total - total*pct/100
}
