//go:build !unix

package config

// Without flock (Windows), config edits are not locked against each other: each is still
// atomic (a rename), but two at once may lose one. outboxctl does not build for Windows today
// (the drain's handlers need process groups); this keeps the package portable.
func lock(string) (func(), error) { return func() {}, nil }

// syncDir is a no-op where a directory cannot be opened for syncing.
func syncDir(string) error { return nil }
