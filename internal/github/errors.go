package github

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// ErrNotFound matches (errors.Is) a *StatusError for a 404.
var ErrNotFound = errors.New("not found")

// ErrEmptyComment is returned for a marker comment whose body is empty or "-".
var ErrEmptyComment = errors.New("refusing to post an empty comment")

// ErrTooLong is returned for a body over GitHub's 65,536 characters, before
// any request is sent.
var ErrTooLong = errors.New("body is longer than GitHub's 65536 characters")

// RateLimitError says GitHub's rate limit stopped a request and waiting it
// out would pass the caller's deadline (or the bounded waits were spent).
// The caller yields the Job; a continuation resumes after Reset.
type RateLimitError struct {
	// Wait is how long GitHub asked to wait from the moment of the error.
	Wait time.Duration
	// Reset is when the wait ends.
	Reset time.Time
	// Secondary is true for a secondary (abuse) limit, false for the
	// primary hourly budget.
	Secondary bool
	Method    string
	Endpoint  string
	Message   string
	// Waited: the wait is already over. The request was one the caller
	// rebuilds after a wait rather than have resent as it was (the record
	// comment's PATCH, whose body came from a read before the wait).
	Waited bool
}

func (e *RateLimitError) Error() string {
	kind := "primary"
	if e.Secondary {
		kind = "secondary"
	}
	msg := ""
	if e.Message != "" {
		msg = ": " + e.Message
	}
	return fmt.Sprintf("%s: GitHub %s rate limit; wait %s until %s%s",
		request(e.Method, e.Endpoint), kind, e.Wait.Round(time.Second), e.Reset.UTC().Format(time.RFC3339), msg)
}

// AuthError is a 401, or a 403 without rate-limit markers: the token is bad
// or lacks a permission. It is never retried; a person has to act.
type AuthError struct {
	Method   string
	Endpoint string
	Status   int
	Message  string
}

func (e *AuthError) Error() string {
	return fmt.Sprintf("%s: %d %s: %s", request(e.Method, e.Endpoint), e.Status, http.StatusText(e.Status), e.Message)
}

// StatusError is any other non-2xx answer: 404, 409, 422, 5xx.
type StatusError struct {
	Method   string
	Endpoint string
	Status   int
	Message  string
	// Errors holds GitHub's validation details ("Issue.body custom: body is
	// too long …").
	Errors []string
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("%s: %d %s", request(e.Method, e.Endpoint), e.Status, http.StatusText(e.Status))
	if e.Message != "" {
		s += ": " + e.Message
	}
	for _, d := range e.Errors {
		s += "; " + d
	}
	return s
}

// Is makes errors.Is(err, ErrNotFound) true for a 404.
func (e *StatusError) Is(target error) bool {
	return target == ErrNotFound && e.Status == http.StatusNotFound
}

// TransportError is a request that got no HTTP answer: connection refused or
// reset, EOF, TLS or i/o timeout. Attempts counts the tries made (idempotent
// requests are retried before this is returned).
type TransportError struct {
	Method   string
	Endpoint string
	Attempts int
	Err      error
}

func (e *TransportError) Error() string {
	return fmt.Sprintf("%s: no answer after %d attempt(s): %v", request(e.Method, e.Endpoint), e.Attempts, e.Err)
}

func (e *TransportError) Unwrap() error { return e.Err }

// Transient reports whether err is a failure that may pass by itself: a 5xx
// answer or no answer at all. Rate limits are not transient (they have their
// own class and wait); auth and validation errors are not either.
func Transient(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Status >= 500 || se.Status == http.StatusRequestTimeout
	}
	var te *TransportError
	return errors.As(err, &te)
}

// Indeterminate reports whether err is transient and came from a request
// that may have taken effect anyway (a POST or PATCH that was sent): the
// caller must read ground truth before doing it again.
func Indeterminate(err error) bool {
	if !Transient(err) {
		return false
	}
	var se *StatusError
	if errors.As(err, &se) {
		return !idempotent(se.Method)
	}
	var te *TransportError
	if errors.As(err, &te) {
		return !idempotent(te.Method)
	}
	return false
}

// idempotent methods may be retried blindly (RFC 9110 §9.2.2).
func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions:
		return true
	}
	return false
}

// request names a request in an error: "GET /repos/{owner}/{repo}/issues/{n}".
// The errors' Endpoint comes from endpointOf, which already starts with the
// method; printing Method before it read "GET GET /repos/…".
func request(method, endpoint string) string {
	if method == "" || strings.HasPrefix(endpoint, method+" ") {
		return endpoint
	}
	return method + " " + endpoint
}
