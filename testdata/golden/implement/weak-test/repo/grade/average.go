// Package grade reads scores out of 100.
package grade

// Average is the mean of the scores, rounded down; 0 for none.
func Average(scores []int) int {
	if len(scores) == 0 {
		return 0
	}
	sum := 0
	for _, s := range scores {
		sum += s
	}
	return sum / len(scores)
}
