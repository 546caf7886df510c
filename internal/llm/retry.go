package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/retry"
)

// Backoff for failures that name no wait: 1s, 2s, 4s … capped at 30s.
const (
	backoffBase = time.Second
	backoffCap  = 30 * time.Second
)

// DefaultMaxRetries is the retry bound when WithMaxRetries is not given.
const DefaultMaxRetries = 4

// maxWait is the longest wait slept inside a model call. A longer one goes
// back as the error, RetryAfter set, so the caller can yield the Job instead
// of holding a runner idle.
const maxWait = 2 * time.Minute

// backoff is the wait before retry number attempt+1 when the server named none.
func backoff(attempt int) time.Duration {
	return retry.Exp(backoffBase, backoffCap, attempt)
}

// retryAfter reads how long the server asked us to wait. retry-after-ms is
// the most precise, then retry-after (seconds or an HTTP date), then the
// x-ratelimit-reset-* durations some OpenAI-compatible servers send.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	if d, ok := retry.After(h, now); ok {
		return d, true
	}
	var longest time.Duration
	found := false
	for _, k := range []string{"X-Ratelimit-Reset-Requests", "X-Ratelimit-Reset-Tokens"} {
		if d, err := time.ParseDuration(strings.TrimSpace(h.Get(k))); err == nil && d >= 0 {
			longest, found = max(longest, d), true
		}
	}
	return longest, found
}

// retryable says whether err is worth another attempt, why, and what wait the
// server named (0 when it named none).
func retryable(err error) (reason string, named time.Duration, ok bool) {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		switch {
		case apiErr.Status == http.StatusTooManyRequests:
			return "rate_limited (HTTP 429)", apiErr.RetryAfter, true
		case apiErr.Status == http.StatusRequestTimeout || apiErr.Status >= 500:
			return fmt.Sprintf("transient (HTTP %d)", apiErr.Status), apiErr.RetryAfter, true
		}
		return "", 0, false
	}
	if isTransport(err) {
		return "transient (" + transportClass(err) + ")", 0, true
	}
	return "", 0, false
}

func isTransport(err error) bool {
	var urlErr *url.Error
	var netErr net.Error
	return errors.As(err, &urlErr) || errors.As(err, &netErr) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, context.DeadlineExceeded)
}

func transportClass(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected EOF"
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return "timeout"
	}
	return "transport error"
}

// withRetries runs one call per attempt until it succeeds, fails for good, or
// the bound is reached. Every retry is reported before its wait is slept, so a
// kill during the wait still leaves the event in the trace.
//
// An attempt that ended with no answer (a transport error: the connection
// dropped, the attempt timed out) may have been served and charged, so it is
// counted: the answer that follows carries, on top of its own usage, each
// such attempt at agent.MaxInputTokens in and max_tokens out; a call that
// fails says how many of its attempts were unanswered (UnansweredAttempts),
// and the caller counts each at its booking.
func (c *Client) withRetries(ctx context.Context, req agent.ModelRequest) (agent.ModelResponse, error) {
	lost := 0
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
		resp, err := c.backend.send(actx, req)
		cancel()
		if err == nil {
			resp.Usage.TokensIn += int64(lost) * agent.MaxInputTokens(req)
			resp.Usage.TokensOut += int64(lost) * int64(req.MaxTokens)
			return resp, nil
		}
		err = c.mask.scrub(err)
		if ctx.Err() != nil {
			return agent.ModelResponse{}, unanswered(fmt.Errorf("%s: %w", c.cfg.Provider, ctx.Err()), lost+1)
		}
		reason, wait, ok := retryable(err)
		if !ok {
			return agent.ModelResponse{}, unanswered(err, lost)
		}
		var apiErr *APIError
		if !errors.As(err, &apiErr) {
			lost++
		}
		if attempt >= c.opts.maxRetries {
			if attempt == 0 {
				return agent.ModelResponse{}, unanswered(err, lost)
			}
			return agent.ModelResponse{}, unanswered(fmt.Errorf("%s: gave up after %d attempts: %w", c.cfg.Provider, attempt+1, err), lost)
		}
		if wait == 0 {
			wait = backoff(attempt)
		}
		if wait > maxWait {
			return agent.ModelResponse{}, unanswered(fmt.Errorf("%s: the server asks for a %s wait, longer than the %s a call may wait: %w",
				c.cfg.Provider, wait, maxWait, err), lost)
		}
		if deadline, ok := ctx.Deadline(); ok && c.opts.clock.Now().Add(wait).After(deadline) {
			return agent.ModelResponse{}, unanswered(fmt.Errorf("%s: a %s wait would pass the deadline: %w", c.cfg.Provider, wait, err), lost)
		}
		if c.opts.observe != nil {
			c.opts.observe(agent.RetryEvent{Reason: reason, Attempt: attempt + 1, Wait: wait})
		}
		if err := c.opts.clock.Sleep(ctx, wait); err != nil {
			return agent.ModelResponse{}, unanswered(fmt.Errorf("%s: wait %s before retry: %w", c.cfg.Provider, wait, err), lost)
		}
	}
}

// UnansweredError is a failed call some of whose attempts ended with no
// answer and may have been served. Its text is the error's own.
type UnansweredError struct {
	Err      error
	Attempts int
}

func (e *UnansweredError) Error() string { return e.Err.Error() }
func (e *UnansweredError) Unwrap() error { return e.Err }

// UnansweredAttempts is how many attempts of the call may have been served
// unanswered; the agent counts each at the call's booking.
func (e *UnansweredError) UnansweredAttempts() int { return e.Attempts }

// unanswered wraps err with the count of its unanswered attempts, when there
// were any: a refusal after a dropped attempt still charges that attempt.
func unanswered(err error, attempts int) error {
	if attempts == 0 {
		return err
	}
	return &UnansweredError{Err: err, Attempts: attempts}
}
