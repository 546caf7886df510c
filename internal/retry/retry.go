// Package retry is the one wait policy of the clients that retry: an
// exponential wait capped, and the wait a server names in Retry-After. The
// model client (internal/llm) and the GitHub transport (internal/github)
// both use it, each with its own bound on attempts.
package retry

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Exp is the wait before retry n+1 when the server named none: base, 2×base,
// 4×base … never over ceiling. There is no jitter: the waits are slept on
// an injected clock and tests (and a reader of the trace) see exact values.
func Exp(base, ceiling time.Duration, n int) time.Duration {
	d := base
	for i := 0; i < n && d < ceiling; i++ {
		d *= 2
	}
	return min(d, ceiling)
}

// After reads the Retry-After header: seconds (a fraction allowed) or an
// HTTP date, which counts from now and is never negative.
func After(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 && s < 1e9 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
