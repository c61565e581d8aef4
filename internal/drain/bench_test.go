package drain_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// BenchmarkDrainModes drains two shards with a no-op handler in each mode and, as the
// physical limit, with one set-based DELETE: 100,000 rows over 1,000 objects
// (coalesce-heavy) and 20,000 rows of distinct objects (unique-heavy). It reports messages
// and rows per second. `make bench` runs it; each iteration seeds a fresh schema.
func BenchmarkDrainModes(b *testing.B) {
	shapes := []struct {
		name          string
		rows, objects int
	}{{"coalesce-heavy", 100_000, 1_000}, {"unique-heavy", 20_000, 20_000}}
	for _, sh := range shapes {
		for _, mode := range []string{"exact", "batch", "single-delete"} {
			b.Run(sh.name+"/"+mode, func(b *testing.B) {
				var msgs, rows int64
				var elapsed time.Duration
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					schema := testdb.Schema(b, fixture.Options{})
					ctx := context.Background()
					_, err := testdb.Pool(b).Exec(ctx, fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox
						(shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
						SELECT 0, 1, 3, i %% %d, '{"n": 1}', now(), '2016-08-01' FROM generate_series(1, %d) i`,
						pgx.Identifier{schema}.Sanitize(), sh.objects, sh.rows))
					if err != nil {
						b.Fatal(err)
					}
					if _, err := testdb.Pool(b).Exec(ctx, "VACUUM ANALYZE "+pgx.Identifier{schema}.Sanitize()+".sentry_regionoutbox"); err != nil {
						b.Fatal(err)
					}
					c, err := db.Connect(ctx, db.Config{DSN: testdb.DSN(), Command: "drain-bench"})
					if err != nil {
						b.Fatal(err)
					}
					target := query.Target{Silo: query.SiloCell, Schema: schema}
					b.StartTimer()
					start := time.Now()
					switch mode {
					case "single-delete":
						tag, err := c.Exec(ctx, "DELETE FROM "+pgx.Identifier{schema}.Sanitize()+".sentry_regionoutbox WHERE shard_scope = 0 AND shard_identifier = 1")
						if err != nil {
							b.Fatal(err)
						}
						rows += tag.RowsAffected()
						msgs += int64(sh.objects)
					default:
						res, err := drain.Run(ctx, c, drain.Options{Target: target, Shard: org(1), Mode: drain.Mode(mode),
							Handler: drain.HandlerFunc(func(context.Context, drain.Message) error { return nil })})
						if err != nil {
							b.Fatal(err)
						}
						msgs += int64(res.Delivered)
						rows += res.Deleted
					}
					elapsed += time.Since(start)
					b.StopTimer()
					_ = c.Close(ctx)
				}
				b.ReportMetric(float64(msgs)/elapsed.Seconds(), "messages/s")
				b.ReportMetric(float64(rows)/elapsed.Seconds(), "rows/s")
			})
		}
	}
}
