//go:build unix

package config

import (
	"os"
	"syscall"
)

// lock takes an exclusive flock on the file at path (created 0600 if missing), waiting for
// another holder; unlock releases it. flock belongs to the open file, so two goroutines of one
// process exclude each other as two processes do. The lock ends with the process too: a
// killed editor never leaves the config locked.
func lock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, &os.PathError{Op: "flock", Path: path, Err: err}
	}
	return func() { f.Close() }, nil // closing the last descriptor releases the lock
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
