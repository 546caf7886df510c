// Package inputerr is the one error type for a failure the caller can fix:
// a flag, an input file, an issue that does not exist. The command line
// exits 2 (usage) on it and 3 on anything else; the packages below the CLI
// (report, explain, prcheck, f2p, console) return it, each under its own
// old name (an alias), so the CLI branches on one type at its edge.
package inputerr

import (
	"errors"
	"fmt"
)

// Error is a failure the caller can fix.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// New marks err as the caller's to fix; nil stays nil.
func New(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Err: err}
}

// Errorf is New(fmt.Errorf(format, a...)).
func Errorf(format string, a ...any) error { return &Error{Err: fmt.Errorf(format, a...)} }

// Is reports whether err, or an error it wraps, is an *Error.
func Is(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
