//go:build !unix

package drain

import "os"

// Without flock (Windows), a bulk run's journal is not locked: two resumes of one run at
// once are not refused there (docs/runbooks.md).
func tryLock(*os.File) error { return nil }

// Without flock, an archive open to write is not locked: SettleArchive cannot tell whether a
// run still writes to it (docs/runbooks.md).
func lockShared(*os.File) error { return nil }

// canLock says flock works here: not, so SettleArchive never settles (restore still does).
const canLock = false
