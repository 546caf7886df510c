package githubfake

import "time"

// budget is one primary rate-limit window: GitHub's fixed hour that starts
// with the first request and resets at x-ratelimit-reset.
type budget struct {
	limit int
	used  int
	reset time.Time
}

type rateView struct {
	limit, remaining, used int
	reset                  time.Time
	resource               string
}

func (b *budget) view(resource string) *rateView {
	return &rateView{limit: b.limit, remaining: max(b.limit-b.used, 0), used: b.used, reset: b.reset, resource: resource}
}

// budgetFor returns the window for a token and resource ("core", "graphql"),
// opening a new one when the last has reset. f.mu is held.
func (f *Fake) budgetFor(tok, resource string, now time.Time) *budget {
	key := tok + "\x00" + resource
	b := f.budgets[key]
	if b == nil || !now.Before(b.reset) {
		b = &budget{limit: f.opts.RateLimit, reset: now.Add(time.Hour).Truncate(time.Second)}
		f.budgets[key] = b
	}
	return b
}

// secondaryLimited applies GitHub's limit on content-creating requests (80 a
// minute, 500 an hour by default) and says how long until one more is
// allowed. f.mu is held.
func (f *Fake) secondaryLimited(tok string, now time.Time) (time.Duration, bool) {
	times := f.content[tok]
	keep := times[:0]
	for _, t := range times {
		if now.Sub(t) < time.Hour {
			keep = append(keep, t)
		}
	}
	f.content[tok] = keep
	var minute []time.Time
	for _, t := range keep {
		if now.Sub(t) < time.Minute {
			minute = append(minute, t)
		}
	}
	var wait time.Duration
	if len(minute) >= f.opts.SecondaryPerMinute {
		wait = minute[len(minute)-f.opts.SecondaryPerMinute].Add(time.Minute).Sub(now)
	}
	if len(keep) >= f.opts.SecondaryPerHour {
		wait = max(wait, keep[len(keep)-f.opts.SecondaryPerHour].Add(time.Hour).Sub(now))
	}
	if wait <= 0 {
		return 0, false
	}
	return wait, true
}

// SetRateLimitUsed spends n requests of a token's current primary window, so
// a test can start near the limit. An empty token means the default one.
func (f *Fake) SetRateLimitUsed(tok, resource string, n int) {
	if tok == "" {
		tok = f.opts.Token
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.budgetFor(tok, resource, f.clock.Now()).used = n
}

// SecondaryLimit is how the fake answers a request over the secondary limit.
// GitHub documents all three: "403 or 429", with retry-after or without.
type SecondaryLimit int

const (
	// Secondary403RetryAfter is 403 with Retry-After: the seconds until one
	// more request is allowed (the default).
	Secondary403RetryAfter SecondaryLimit = iota
	// Secondary403 is 403 without Retry-After; x-ratelimit-remaining is not
	// 0, so a client waits at least a minute, as GitHub advises.
	Secondary403
	// Secondary429 is 429 Too Many Requests with Retry-After.
	Secondary429
)

func (s SecondaryLimit) String() string {
	switch s {
	case Secondary403:
		return "403"
	case Secondary429:
		return "429"
	}
	return "403 retry-after"
}
