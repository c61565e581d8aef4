//go:build unix

package drain

import (
	"context"
	"io/fs"
	"os/exec"
	"syscall"
	"time"
)

// shell runs exec: and stream: commands (sh -c COMMAND), like hooks.
const shell = "/bin/sh"

// procTree is a handler command and every process it starts. On Unix that is a process
// group of its own (Setpgid): the terminal's Ctrl-C goes to outboxctl, not to the handler
// mid-message, and a kill reaches sh -c's children too, even after sh itself exited.
type procTree struct{ cmd *exec.Cmd }

// newProcTree prepares cmd, before Start, to run in a tree of its own.
func newProcTree(cmd *exec.Cmd) *procTree {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return &procTree{cmd: cmd}
}

// started is called after cmd.Start succeeded (the group exists already on Unix).
func (t *procTree) started() {}

// kill kills the whole group.
func (t *procTree) kill() error { return syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL) }

// release frees what the tree holds once it is no longer killed (nothing on Unix).
func (t *procTree) release() {}

// executable says whether a file the command names can be run: one of its x bits.
func executable(st fs.FileInfo) bool { return st.Mode()&0o111 != 0 }

// readAhead reads, without waiting, what the co-process wrote on the pipe fd (non-blocking
// on Unix: EAGAIN when nothing is there) into buf.
func readAhead(fd uintptr, buf []byte) int {
	n, _ := syscall.Read(int(fd), buf) // non-blocking: EAGAIN when nothing is there
	return n
}

// watch is needed only where pipes have no deadlines: on Unix the deadlines of exchange
// end the write and the read at the timeout or when ctx is cancelled.
func (p *streamProc) watch(context.Context, time.Time) (stop func() error) {
	return func() error { return nil }
}
