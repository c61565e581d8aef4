package outbox

import (
	"context"
	"testing"

	"github.com/outboxctl/outboxctl/internal/testdb"
)

// JITPass lifts outboxctl's own jit = off for a pass over a large table only: the server's
// setting with inlining and optimisation off inside, the transaction's settings back after;
// a DSN's jit choice, and a small table, are left alone.
func TestJITPass(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	settings := func(s *Snapshot) [3]string {
		t.Helper()
		var v [3]string
		if err := s.tx.QueryRow(ctx, "SELECT current_setting('jit'), current_setting('jit_inline_above_cost'), current_setting('jit_optimize_above_cost')").Scan(&v[0], &v[1], &v[2]); err != nil {
			t.Fatal(err)
		}
		return v
	}
	var server string
	if err := testdb.Pool(t).QueryRow(ctx, "SELECT reset_val FROM pg_settings WHERE name = 'jit'").Scan(&server); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		jitOff bool
		rows   int64
		inside [3]string
	}{
		{"outboxctl's off, a large table: the server's, light", true, JITPassRows, [3]string{server, "-1", "-1"}},
		{"outboxctl's off, a small table: off", true, JITPassRows - 1, [3]string{"off", "500000", "500000"}},
		{"the DSN's off: kept", false, 100 * JITPassRows, [3]string{"off", "500000", "500000"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tx, err := testdb.Pool(t).Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx) //nolint:errcheck // read only
			if _, err := tx.Exec(ctx, "SET LOCAL jit = off"); err != nil {
				t.Fatal(err)
			}
			s := &Snapshot{ctx: ctx, tx: tx, jitOff: tt.jitOff}
			before := settings(s)
			if before != [3]string{"off", "500000", "500000"} {
				t.Fatalf("before: %v (the server's defaults assumed: 500000)", before)
			}
			var inside [3]string
			if err := s.JITPass(tt.rows, func() error { inside = settings(s); return nil }); err != nil {
				t.Fatal(err)
			}
			if inside != tt.inside {
				t.Fatalf("inside the pass %v, want %v", inside, tt.inside)
			}
			if after := settings(s); after != before {
				t.Fatalf("after the pass %v, want %v back", after, before)
			}
		})
	}
}
