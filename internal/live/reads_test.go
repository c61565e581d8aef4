package live

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/exitcode"
	"github.com/outboxctl/outboxctl/internal/fanout"
	"github.com/outboxctl/outboxctl/internal/render"
)

// TestReadWatchUntilDone: a watch that ends when done draws frames until a run succeeds
// (exit 0): "not yet" is a frame like any other, with no Error: line.
func TestReadWatchUntilDone(t *testing.T) {
	t.Parallel()
	runs := 0
	var out, errOut bytes.Buffer
	r := Read{Key: []string{"table"}, UntilDone: true, Interval: time.Millisecond, Title: "backfill status", Out: &out, Err: &errOut,
		Run: func(_ context.Context, direct, errs io.Writer) (render.Doc, []fanout.Gone, error) {
			runs++
			if runs < 3 {
				return nil, nil, exitcode.Verdictf(exitcode.Pending, "not yet %d", runs)
			}
			_, _ = io.WriteString(direct, "done\n")
			return nil, nil, nil
		},
		Print: func(io.Writer, io.Writer, render.Doc) error { return nil }}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Watch(ctx); err != nil || ctx.Err() != nil {
		t.Fatalf("watch: %v (ctx %v)", err, ctx.Err())
	}
	if runs != 3 || !strings.Contains(out.String(), "done") || errOut.Len() != 0 {
		t.Fatalf("%d runs; out %q; stderr %q", runs, out.String(), errOut.String())
	}
}
