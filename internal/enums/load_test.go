package enums

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/internal/exitcode"
)

// TestLoad: no path is the built-in registry; a missing file is a usage error whose Try:
// line lints it; a file over its cap is its own error, not a usage error.
func TestLoad(t *testing.T) {
	t.Parallel()
	if reg, err := Load("", 1); err != nil || len(reg.categories) == 0 {
		t.Fatalf("built-in: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "category.py")
	_, err := Load(missing, DefaultMaxSourceBytes)
	var o *exitcode.Outcome
	if !errors.As(err, &o) || o.Try != "outboxctl enums lint "+missing || !strings.HasPrefix(o.Msg, "`--enums`: ") {
		t.Fatalf("missing file: %#v", err)
	}
	big := filepath.Join(t.TempDir(), "big.py")
	if err := os.WriteFile(big, []byte(strings.Repeat("#\n", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(big, 10); err == nil || exitcode.Code(context.Background(), err) == exitcode.ExitUsage {
		t.Fatalf("over its cap: %v, want a runtime error", err)
	}
}
