package cmd

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestContextUseUnwritableDir: a config whose directory cannot be written is a runtime
// failure (exit 1) naming the directory to fix, and the file is unchanged. On main it was a
// usage error (exit 2), as if the command line were wrong.
func TestContextUseUnwritableDir(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "conf")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(twoContexts), 0o600); err != nil {
		t.Fatal(err)
	}
	reason := unwritableDir(t, dir)
	a, out, errOut := contextApp(path)
	err := runContextUse(a.factory(), a.configFile, "control")
	ctx := context.Background()
	if code := exitCode(ctx, err); code != ExitError {
		t.Fatalf("exit %d, want %d: %v", code, ExitError, err)
	}
	printError(ctx, a.io, err, "outboxctl context use")
	want := "Error: cannot change current-context in " + path + ": open " + filepath.Join(dir, ".config.yaml.lock") + ": " + reason +
		": make " + dir + " writable by you (the new file and its lock are written there), or set OUTBOXCTL_CONFIG to a copy in a writable directory\n"
	if errOut.String() != want || out.Len() != 0 {
		t.Fatalf("stderr %q\nwant   %q\nstdout %q", errOut, want, out)
	}
	if got, _ := os.ReadFile(path); string(got) != twoContexts {
		t.Fatalf("the file changed:\n%s", got)
	}
}

// unwritableDir makes dir unwritable until the test ends and returns the error text a write
// into it gets. Root ignores permissions, so as root the directory is made immutable.
func unwritableDir(t *testing.T, dir string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
		return "permission denied"
	}
	if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot make a directory unwritable as root here (chattr +i: %v: %s)", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("chattr", "-i", dir).Run() })
	if f, err := os.Create(filepath.Join(dir, "probe")); err == nil || !errors.Is(err, os.ErrPermission) {
		if f != nil {
			f.Close()
		}
		t.Fatalf("chattr +i left %s writable: %v", dir, err)
	}
	return "operation not permitted"
}
