//go:build windows

package drain

import (
	"context"
	"io/fs"
	"os/exec"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// shell runs exec: and stream: commands (sh -c COMMAND): Windows has no /bin/sh, so the
// sh.exe found on PATH (Git for Windows, MSYS2, busybox-w32). docs/handlers/README.md.
const shell = "sh"

// procTree is a handler command and every process it starts. On Windows the command runs
// in a process group of its own (CREATE_NEW_PROCESS_GROUP: the console's Ctrl-C is not
// delivered to it, as with Setpgid on Unix) and, once started, in a job object, which
// every process it starts joins: a kill terminates the job, sh -c's children too, even
// after sh itself exited. Where the job cannot be made (or the command cannot be put in
// it), a kill ends the command's own process only.
type procTree struct {
	cmd *exec.Cmd
	mu  sync.Mutex
	job windows.Handle // 0: none (not made, or released)
}

// newProcTree prepares cmd, before Start, to run in a tree of its own.
func newProcTree(cmd *exec.Cmd) *procTree {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
	return &procTree{cmd: cmd}
}

// started puts the command, just started, in a job object of its own. os/exec cannot
// start it suspended, so a process it starts in the instant before it joins the job
// (microseconds; sh takes milliseconds to start anything) stays outside the job.
func (t *procTree) started() {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return
	}
	// os.Process holds the process's handle until Wait returns, so the pid is still its.
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(t.cmd.Process.Pid))
	if err != nil {
		_ = windows.CloseHandle(job)
		return
	}
	defer windows.CloseHandle(h) //nolint:errcheck // a handle we opened and no longer need
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		_ = windows.CloseHandle(job)
		return
	}
	t.mu.Lock()
	t.job = job
	t.mu.Unlock()
}

// kill terminates the job (every process of the tree), or the command's process alone
// where there is no job.
func (t *procTree) kill() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.job != 0 && windows.TerminateJobObject(t.job, 1) == nil {
		return nil
	}
	return t.cmd.Process.Kill()
}

// release closes the job's handle: the tree can no longer be killed as a whole (closing it
// kills nothing: there is no kill-on-close limit, as a Unix process group outlives
// outboxctl too).
func (t *procTree) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.job != 0 {
		_ = windows.CloseHandle(t.job)
		t.job = 0
	}
}

// executable: Windows files have no x bits; sh decides whether it can run the file.
func executable(fs.FileInfo) bool { return true }

var procPeekNamedPipe = windows.NewLazySystemDLL("kernel32.dll").NewProc("PeekNamedPipe")

// readAhead copies, without waiting, what the co-process wrote on the pipe (handle fd) and
// outboxctl has not read into buf. A Windows pipe has no non-blocking read: PeekNamedPipe
// sees the same bytes as the Unix non-blocking read does (everything written to the pipe
// so far), but leaves them in the pipe; the co-process is stopped after this check fails.
func readAhead(fd uintptr, buf []byte) int {
	var n uint32
	r, _, _ := procPeekNamedPipe.Call(fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(unsafe.Pointer(&n)), 0, 0)
	if r == 0 { // failed: the co-process closed its end, which the write or read will see
		return 0
	}
	return int(n)
}

// watch ends the exchange at deadline or when ctx is cancelled. The pipes os.Pipe makes on
// Windows are synchronous: they take no deadline, and a read or write blocked on one
// returns only when the other end is gone. So watch kills the co-process's tree at that
// moment instead (the read then sees EOF, the write a broken pipe): see killWatch.
func (p *streamProc) watch(ctx context.Context, deadline time.Time) (stop func() error) {
	return killWatch(ctx, deadline, func() { _ = p.tree.kill() })
}
