package cmd_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// BenchmarkKillswitchList100k runs `killswitch list -o csv` in-process on 100,000 disabled
// organization ids (and 20,000 outbox rows behind the first 10,000 of them, in both outboxes):
// one set-based statement, where the per-id path took two round trips per id (47.5 s).
func BenchmarkKillswitchList100k(b *testing.B) {
	schema := testdb.Schema(b, fixture.Options{})
	pool := testdb.Pool(b)
	ctx := context.Background()
	ids := make([]string, 100_000)
	for i := range ids {
		ids[i] = fmt.Sprint(i + 1)
	}
	for _, sql := range []string{
		fmt.Sprintf(`INSERT INTO %s.sentry_option (key, value, last_updated) VALUES ('hybrid_cloud.authentication.disabled_organization_shards', '[%s]', now())`, schema, strings.Join(ids, ",")),
		fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, scheduled_from, scheduled_for)
			SELECT 0, i %% 10000 + 1, 2, i, now(), '2016-08-01' FROM generate_series(1, 20000) i`, schema),
		fmt.Sprintf(`INSERT INTO %s.sentry_controloutbox (shard_scope, shard_identifier, category, object_identifier, scheduled_from, scheduled_for, region_name)
			SELECT 0, i %% 10000 + 1, 2, i, now(), '2016-08-01', 'us' FROM generate_series(1, 20000) i`, schema),
		fmt.Sprintf(`ANALYZE %s.sentry_regionoutbox, %s.sentry_controloutbox`, schema, schema),
	} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		io, out, errOut := render.Test()
		if code := cmd.Main(ctx, []string{"--dsn", testdb.DSN(), "--schema", schema, "killswitch", "list", "-o", "csv"}, io); code != 0 {
			b.Fatalf("exit %d: %s", code, errOut)
		}
		// One header per section plus a row per listed (id, outbox): 10,000 ids have rows in
		// both outboxes, 90,000 have none.
		if n := strings.Count(out.String(), "\n"); n < 110_000 {
			b.Fatalf("%d lines of output", n)
		}
	}
}
