package render

import (
	"os"
	"testing"

	"github.com/outboxctl/outboxctl/internal/jqrun"
)

// TestMain: a --jq evaluation runs in a copy of the running executable, this test binary.
func TestMain(m *testing.M) {
	jqrun.RunChildIfAsked()
	os.Exit(m.Run())
}
