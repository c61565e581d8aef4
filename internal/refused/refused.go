// Package refused is the error of a command line a service refuses before it reads or
// writes anything: the operator's to fix (exit 2), with the command line to try. cmd says it
// as its own usage errors are said (its Try: line); the services (internal/repair,
// internal/selector, internal/replica) return it, so the refusal and its line live beside
// the check that makes it.
package refused

import "fmt"

// Error is a refusal: Msg said and Try its Try: line ("" for none).
type Error struct{ Msg, Try string }

func (e *Error) Error() string { return e.Msg }

// UsageError marks it as the operator's input (cmd/exit.go).
func (e *Error) UsageError() bool { return true }

// Errorf is a refusal with try as its Try: line.
func Errorf(try, format string, args ...any) error {
	return &Error{Msg: fmt.Sprintf(format, args...), Try: try}
}
