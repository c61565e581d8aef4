//go:build unix

package drain

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes an exclusive flock on f without waiting: ErrJournalLocked when another open
// of the file holds it. flock belongs to the open file and ends with the process, so a
// killed run never leaves its journal locked.
func tryLock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return ErrJournalLocked
		default:
			return &os.PathError{Op: "flock", Path: f.Name(), Err: err}
		}
	}
}

// lockShared takes a shared flock on f, waiting for an exclusive one to end: an archive open
// to write holds it, so SettleArchive (which takes it exclusive, without waiting) leaves the
// file alone while any run writes to it.
func lockShared(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH)
		if !errors.Is(err, syscall.EINTR) {
			if err != nil {
				return &os.PathError{Op: "flock", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}

// canLock says flock works here, so SettleArchive can tell that no run writes to a file.
const canLock = true
