package drain

import (
	"strings"
	"testing"
)

// TestClipCutsBeforeEscaping: a handler's refusal text is cut before it is escaped, so the
// message never ends inside an escape. On main it was escaped first and cut at 500 bytes:
// 498 letters and ESC[2J ended in `\x…`, half of `\x1b`.
func TestClipCutsBeforeEscaping(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 498)
	for _, tt := range []struct{ in, want string }{
		{long + "\x1b[2J", long + `\x1b…`},
		{long + "é\x07", long + `é\x07`}, // 500 runes fit
		{long + "éü\x07", long + `é…`},   // cut on a rune, never half of é
		{"short \x1b]0;t\a", `short \x1b]0;t\x07`},
	} {
		if got := clip(tt.in); got != tt.want {
			t.Errorf("clip(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
