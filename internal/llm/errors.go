package llm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
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

// MaxAnswerBytes bounds one model answer as it comes over HTTP (the JSON
// body). The largest output any configured model may give is its max_output
// in tokens, a few bytes each, and JSON escapes at most double that: 1 MiB
// holds 100,000 tokens of text with room to spare, and an answer beyond it is
// a misbehaving or hostile server, not a longer reply. Read in memory and
// sent back on every later call of the conversation, it would cost each time.
const MaxAnswerBytes = 1 << 20

// AnswerTooLargeError is an answer over MaxAnswerBytes. It was refused unread:
// nothing of it reaches the conversation, so nothing of it is sent again. Its
// class is unknown (stop, keep all state): asking the same conversation again
// would likely run away the same way and spend again.
type AnswerTooLargeError struct {
	Provider string
	// Bytes is what the answer holds at least: its Content-Length, or the
	// bytes read before the bound was passed.
	Bytes int64
}

func (e *AnswerTooLargeError) Error() string {
	return fmt.Sprintf("%s: the model's answer is at least %d bytes, over the %d-byte limit on one answer (llm.MaxAnswerBytes); refused, and none of it goes back to the model",
		e.Provider, e.Bytes, MaxAnswerBytes)
}

// FailureClass names the class of internal/failure's taxonomy.
func (e *AnswerTooLargeError) FailureClass() string { return "unknown" }

// boundAnswer reads a successful answer's body into memory up to
// MaxAnswerBytes and gives it back to the SDK, or refuses it.
func boundAnswer(provider string, res *http.Response) (*http.Response, error) {
	if res.ContentLength > MaxAnswerBytes {
		res.Body.Close()
		return nil, &AnswerTooLargeError{Provider: provider, Bytes: res.ContentLength}
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, MaxAnswerBytes+1))
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	if len(body) > MaxAnswerBytes {
		return nil, &AnswerTooLargeError{Provider: provider, Bytes: int64(len(body))}
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	res.ContentLength = int64(len(body))
	return res, nil
}

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
