// Package order checks a basket out.
package order

import "example.com/shop/internal/price"

// Checkout is what the customer pays for items with pct percent off.
func Checkout(items []int, pct int) int {
	return price.Discount(price.Total(items), pct)
}
