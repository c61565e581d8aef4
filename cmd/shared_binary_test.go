package cmd

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	sharedBinOnce sync.Once
	sharedBinDir  string
	sharedBinPath string
	sharedBinErr  error
)

// SharedBinary builds outboxctl once for all of the package's tests that run it as a process
// (signals, kills, a real terminal): a build apiece cost a link each, seconds on a loaded
// machine. TestMain removes it (RemoveSharedBinary).
func SharedBinary(t testing.TB) string {
	t.Helper()
	sharedBinOnce.Do(func() {
		sharedBinDir, sharedBinErr = os.MkdirTemp("", "outboxctl-bin")
		if sharedBinErr != nil {
			return
		}
		sharedBinPath = filepath.Join(sharedBinDir, "outboxctl")
		if out, err := exec.Command("go", "build", "-o", sharedBinPath, "..").CombinedOutput(); err != nil {
			sharedBinErr = fmt.Errorf("building: %v\n%s", err, out)
		}
	})
	if sharedBinErr != nil {
		t.Fatal(sharedBinErr)
	}
	return sharedBinPath
}

// RemoveSharedBinary removes SharedBinary's build, once every test ran.
func RemoveSharedBinary() {
	if sharedBinDir != "" {
		_ = os.RemoveAll(sharedBinDir)
	}
}
