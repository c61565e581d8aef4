//go:build !unix

package config

// Without flock (Windows), config edits are not locked against each other: each is still
// atomic (a rename), but two at once may lose one (docs/README.md, Contexts).
func lock(string) (func(), error) { return func() {}, nil }

// syncDir is a no-op where a directory cannot be opened for syncing.
func syncDir(string) error { return nil }
