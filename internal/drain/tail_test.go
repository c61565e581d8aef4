package drain

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// noiseScript prints 50 short noise lines and then its reason on stderr; longScript prints
// one 200,000-byte line ending in its reason. Both fail with exit 4.
const (
	noiseScript = `for i in $(seq 1 50); do echo "noise line $i" >&2; done; echo "REASON final" >&2; exit 4`
	longScript  = `head -c 200000 /dev/zero | tr '\0' a >&2; echo ' TAILMARK the real reason' >&2; exit 4`
)

// noiseTail is what a failure message carries of noiseScript's stderr: its last 499 runes
// after a "…".
func noiseTail() string {
	var lines []string
	for i := 1; i <= 50; i++ {
		lines = append(lines, fmt.Sprintf("noise line %d", i))
	}
	all := strings.Join(append(lines, "REASON final"), " ")
	return "…" + all[len(all)-499:]
}

// longTail is what a failure message carries of longScript's stderr: the end of its line.
var longTail = "…" + strings.Repeat("a", 499-len(" TAILMARK the real reason")) + " TAILMARK the real reason"

// TestStderrTailKeepsTheEnd: a failing handler's error ends with the last lines of its
// stderr, also past 500 bytes of short lines and at the end of a long last line, for an exec
// handler and for a stream co-process that exits before its acknowledgement (both keep
// stderr in a tailBuffer). On 99e59e3 the joined lines were cut to their first 500 runes:
// "… noise line 48 noise lin…" without lines 49, 50 and the reason, and the long line's
// head of a's without its reason.
func TestStderrTailKeepsTheEnd(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, script, want string }{
		{"short lines", noiseScript, noiseTail()},
		{"long last line", longScript, longTail},
	} {
		t.Run("exec "+tt.name, func(t *testing.T) {
			t.Parallel()
			command := "cat >/dev/null; " + tt.script
			h, err := ParseHandler(HandlerConfig{Spec: "exec:" + command, Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			err = h.Deliver(context.Background(), Message{ID: 7})
			if want := "handler " + command + ": exit status 4: " + tt.want; err == nil || err.Error() != want {
				t.Fatalf("error %v\nwant  %s", err, want)
			}
		})
		t.Run("stream "+tt.name, func(t *testing.T) {
			t.Parallel()
			script := "IFS= read -r l; " + tt.script
			s := streamFor(t, script, 10*time.Second)
			s.Stderr = &strings.Builder{}
			defer s.Close()
			err := s.Deliver(context.Background(), Message{ID: 1})
			if want := "handler stream:" + script + " exited (exit status 4) before acknowledging message 1: " + tt.want; err == nil || err.Error() != want {
				t.Fatalf("error %v\nwant  %s", err, want)
			}
		})
	}
}

// TestTailCutsOnARuneThenEscapes: the tail is cut from the left on a rune (never half of é)
// and escaped after the cut (ESC is \x1b whole), its lines' white space collapsed.
func TestTailCutsOnARuneThenEscapes(t *testing.T) {
	t.Parallel()
	var tb tailBuffer
	tb.add(strings.Repeat("é", 600))
	tb.add("\x1b[2J  the\treason ")
	if got, want := tb.String(), "…"+strings.Repeat("é", 499-len(" \x1b[2J the reason"))+` \x1b[2J the reason`; got != want {
		t.Fatalf("tail %q\nwant %q", got, want)
	}
	var short tailBuffer
	short.add("one")
	short.add("   ")
	short.add("two\x07")
	if got, want := short.String(), `one two\x07`; got != want {
		t.Fatalf("tail %q, want %q", got, want)
	}
}
