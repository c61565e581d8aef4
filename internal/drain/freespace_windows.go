//go:build windows

package drain

import "golang.org/x/sys/windows"

// freeBytes is the space free to this user on dir's volume.
func freeBytes(dir string) (int64, error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, err
	}
	var free, total, totalFree uint64
	if err := windows.GetDiskFreeSpaceEx(p, &free, &total, &totalFree); err != nil {
		return 0, err
	}
	return int64(free), nil //nolint:gosec // a volume's size fits
}
