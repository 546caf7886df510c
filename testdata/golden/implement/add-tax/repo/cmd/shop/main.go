// Command shop prints the price of a basket.
package main

import (
	"fmt"

	"example.com/shop/internal/order"
)

func main() {
	fmt.Println(order.Checkout([]int{995}, 10))
}
