//go:build unix

package jqrun

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// limitAddressSpace caps the process's address space at what it maps now (the Go runtime
// reserves a good deal up front) plus twice maxBytes, so that no single allocation far
// over the heap cap is ever made.
func limitAddressSpace(maxBytes int64) {
	mapped := vmSize()
	if mapped == 0 || raceEnabled {
		return
	}
	lim := uint64(mapped) + 2*uint64(maxBytes)
	_ = syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: lim, Max: lim})
}

// vmSize is the process's mapped bytes (Linux's /proc/self/status VmSize), or 0 when it
// cannot be read: then no cap is set (the heap watch remains).
func vmSize() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmSize:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
