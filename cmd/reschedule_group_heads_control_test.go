package cmd_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestRescheduleGroupHeadsControlCells: in the control outbox the cell (region_name) is part
// of the shard key and so of every coalesce group: cells us and de hold the same shard with
// the same (category, object) groups, ids interleaved across the cells. --group-heads --cell us
// rewrites exactly the lowest id of each of us's groups (single form on organization 1, bulk
// form on every stuck organization shard); de's rows, and every other row of us, are
// untouched (de's rows hold the lower ids: a group that forgot the cell would pick them).
// The model is written here: lowest id per (region_name, scope, shard, category, object).
func TestRescheduleGroupHeadsControlCells(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	table := pgx.Identifier{schema}.Sanitize() + ".sentry_controloutbox"
	ctx := context.Background()
	if _, err := testdb.Pool(t).Exec(ctx, fmt.Sprintf(`INSERT INTO %s
		(region_name, shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for)
		SELECT cell, 0, s, 2, o, '{}', now() - interval '20 minutes', now() + interval '40 minutes'
		  FROM generate_series(1, 3) s, generate_series(1, 2) o, generate_series(1, 3) i, unnest(ARRAY['us', 'de']) cell
		 ORDER BY i, s, o, cell`, table)); err != nil {
		t.Fatal(err)
	}
	// rewritten lists the ids at THE_PAST; heads, the model's group heads of cell in shards.
	rewritten := func() string {
		var ids []int64
		if err := testdb.Pool(t).QueryRow(ctx, "SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM "+table+
			" WHERE scheduled_for = '2016-08-01 00:00:00+00'").Scan(&ids); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(ids)
	}
	heads := func(cell string, shards string) string {
		var ids []int64
		if err := testdb.Pool(t).QueryRow(ctx, "SELECT coalesce(array_agg(h ORDER BY h), '{}') FROM (SELECT min(id) AS h FROM "+table+
			" WHERE region_name = $1 AND shard_identifier = ANY ($2::bigint[]) GROUP BY region_name, shard_scope, shard_identifier, category, object_identifier) g",
			cell, "{"+shards+"}").Scan(&ids); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(ids)
	}
	want := heads("us", "1")
	mustRun(t, 0, schema, "--silo", "control", "--cell", "us", "reschedule", "organization", "1", "--group-heads", "--yes")
	if got := rewritten(); got != want || strings.Count(want, " ") != 1 {
		t.Fatalf("single form: rows at THE_PAST %s, want us's two group heads of shard 1 %s", got, want)
	}
	want = heads("us", "1,2,3")
	out, _ := mustRun(t, 0, schema, "--silo", "control", "--cell", "us", "reschedule", "--stuck", "--scope", "organization", "--group-heads", "--yes")
	if got := rewritten(); got != want || strings.Count(want, " ") != 5 || !strings.Contains(out, "selected\t2\n") {
		t.Fatalf("bulk form: rows at THE_PAST %s, want us's six group heads %s\n%s", got, want, out)
	}
}
