package text

import (
	"fmt"
	"math"
)

// USD is how every view shows money, so one amount reads the same in a log,
// the step summary, the PR comment, explain, the dashboard and metrics:
// four decimals below a cent (a single cheap model call is visible,
// "$0.0027"), two from a cent up ("$0.01", "$5.00"); zero is "$0.00".
func USD(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		v = 0
	}
	if v != 0 && math.Abs(v) < 0.01 {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}
