package cmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEnumsFileCapNamesItsFlag: a category.py over the 1 MiB cap is refused, for --enums and
// for enums lint, with one line naming the file, the cap and --max-enums-bytes with a value
// that reads it, exit 1; with that value the same file is read. On 99e59e3 the cap was
// fixed and the refusal ("file is larger than 1048576 bytes") named no way to raise it.
func TestEnumsFileCapNamesItsFlag(t *testing.T) {
	t.Parallel()
	real, err := os.ReadFile("../internal/enums/testdata/category.py")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "category.py")
	padded := append(real, []byte(strings.Repeat("# padding\n", (1<<20)/10+1))...)
	if err := os.WriteFile(path, padded, 0o600); err != nil {
		t.Fatal(err)
	}
	want := "Error: reading enums " + path + ": the file is larger than the 1MiB cap on a category.py (Sentry's is about 14 KB): point --enums at category.py, or raise the cap with --max-enums-bytes 2MiB\n"
	for _, tt := range []struct {
		args []string
		out  string
	}{
		{[]string{"enums", "lint", path}, ""},
		{[]string{"enums", "resolve", "11", "--enums", path}, "TEAM_UPDATE (11)  category in ORGANIZATION_SCOPE\nAPI_TOKEN_SCOPE (11)  scope\n"},
	} {
		if code, out, errOut := run(tt.args...); code != 1 || out != "" || errOut != want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q\nwant exit 1, stderr %q", tt.args, code, out, errOut, want)
		}
		if code, out, _ := run(append(tt.args, "--max-enums-bytes", "2MiB")...); code != 0 || out != tt.out {
			t.Errorf("%v --max-enums-bytes 2MiB: exit %d, stdout %q, want exit 0, stdout %q", tt.args, code, out, tt.out)
		}
	}
}
