//go:build unix

package drain

import "golang.org/x/sys/unix"

// freeBytes is the space free to an unprivileged user in dir's file system.
func freeBytes(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil //nolint:gosec,unconvert // block counts fit; Bsize's type varies by platform
}
