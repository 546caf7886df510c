package llm

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/text"
)

// APIError is a refusal from a provider: an HTTP status at or above 400. Its
// text never holds the API key (bodies are masked before they are stored).
type APIError struct {
	Provider string
	Status   int
	// Body is the response body, masked and cut to maxErrorBody bytes.
	Body string
	// RetryAfter is what the server asked for (retry-after, retry-after-ms or
	// a rate-limit reset header); 0 when it said nothing.
	RetryAfter time.Duration

	// retryAfterHeader is an injected refusal's header as the fixture wrote
	// it, so the replay server sends it verbatim.
	retryAfterHeader string
}

const maxErrorBody = 4096

func (e *APIError) Error() string {
	msg := fmt.Sprintf("%s: HTTP %d", e.Provider, e.Status)
	if b := text.Short(e.Body, 400); b != "" {
		msg += ": " + b
	}
	if e.RetryAfter > 0 {
		msg += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	return msg
}

// HTTPStatus is the refusal's status: the provider answered, so the call
// cost nothing and its booked estimate is settled at zero (agent.Observer).
func (e *APIError) HTTPStatus() int { return e.Status }

// RateLimited reports whether the provider refused for rate: the caller may
// yield the Job rather than stop when the wait is long (see RetryAfter).
func (e *APIError) RateLimited() bool { return e.Status == 429 }

// ContextOverflow reports whether the provider refused the request as longer
// than the model's context: HTTP 400 (413 for some servers) whose body names
// it — OpenAI-compatible servers' context_length_exceeded code or "maximum
// context length" message, Anthropic's "prompt is too long". The body is
// the provider's (already cut to maxErrorBody), so only these markers count.
func (e *APIError) ContextOverflow() bool {
	if e.Status != 400 && e.Status != 413 {
		return false
	}
	b := strings.ToLower(e.Body)
	for _, m := range []string{"context_length_exceeded", "maximum context length", "prompt is too long", "context window"} {
		if strings.Contains(b, m) {
			return true
		}
	}
	return false
}

// WindowError says a request cannot fit the input window even after every
// part that may be trimmed was trimmed: the parts that must stay (system
// prompt, task, tool specs, the newest turn) are too large on their own.
type WindowError struct {
	Window int
	// Need is the estimate of what could not be trimmed.
	Need int
}

func (e *WindowError) Error() string {
	return fmt.Sprintf("the parts that cannot be trimmed need about %d tokens, more than the %d-token input window", e.Need, e.Window)
}

// masker removes secrets from text that leaves the package (error messages,
// stored error bodies).
type masker []string

// minSecret is the shortest value masked: shorter strings would shred
// ordinary words and no real key is that short.
const minSecret = 6

func (m masker) mask(s string) string {
	for _, secret := range m {
		if len(secret) >= minSecret {
			s = strings.ReplaceAll(s, secret, "[masked]")
		}
	}
	return s
}

// maskedError keeps the error chain (errors.As still finds *APIError) while
// its text goes through the masker.
type maskedError struct {
	msg string
	err error
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }

// scrub masks the URL of a transport error in place, before any wrapper
// copies its text, so no link of the chain holds the key either.
func (m masker) scrub(err error) error {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		urlErr.URL = m.mask(urlErr.URL)
	}
	return err
}

func (m masker) maskErr(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if masked := m.mask(msg); masked != msg {
		return &maskedError{msg: masked, err: err}
	}
	return err
}
