package failure

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
)

// ClassifyError classifies an error met in process (the GitHub layer, git,
// a model provider). The order:
//
//  1. an error that knows its class: anything in the chain with a method
//     FailureClass() string returning a class of the table (the GitHub layer
//     and git cannot import this package, so they answer by name);
//  2. the error's text, line by line, as the log classifier reads a log line:
//     go-github's and git's messages carry the status and the reason;
//  3. context.Canceled: the Job is being stopped, so killed;
//  4. context.DeadlineExceeded: the request may have been sent, so
//     indeterminate;
//  5. io.ErrUnexpectedEOF, io.EOF, ECONNRESET, EPIPE, ECONNREFUSED, a net.Error that
//     timed out (an i/o timeout), or Temporary(): transient;
//  6. unknown. A nil error is unknown too: callers pass a failure.
func ClassifyError(err error) Class {
	if err == nil {
		return Unknown
	}
	var known interface{ FailureClass() string }
	if errors.As(err, &known) {
		if c := Class(known.FailureClass()); c.Valid() {
			return c
		}
	}
	if c, _ := textClass(err.Error()); c != "" {
		return c
	}
	switch {
	case errors.Is(err, context.Canceled):
		return Killed
	case errors.Is(err, context.DeadlineExceeded):
		return Indeterminate
	case errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ECONNREFUSED):
		return Transient
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return Transient
	}
	var tmp interface{ Temporary() bool }
	if errors.As(err, &tmp) && tmp.Temporary() {
		return Transient
	}
	return Unknown
}
