package outbox

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// shards --limit's pass (topPass) takes the kept form when the floor is worth it, the plain
// one when it is not, and the plain one again when the kept were not enough: each observed
// in the statements the pass sent, each answer equal to the model (the deepest shards by
// depth, then key, and every shard counted).

// recordingTx notes which of the listing's statements ran (the floor's, the kept form's,
// the plain form's), and calls before ahead of each.
type recordingTx struct {
	pgx.Tx
	ran    *[]string
	before func(kind string)
}

func statementKind(sql string) string {
	switch {
	case strings.Contains(sql, "TABLESAMPLE"):
		return "floor"
	case strings.Contains(sql, "kept AS ("):
		return "kept"
	case strings.Contains(sql, "count(*) OVER ()"):
		return "plain"
	}
	return "other"
}

func (r recordingTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	kind := statementKind(sql)
	if kind != "other" {
		*r.ran = append(*r.ran, kind)
		r.before(kind)
	}
	return r.Tx.Query(ctx, sql, args...)
}

func (r recordingTx) Begin(ctx context.Context) (pgx.Tx, error) {
	sp, err := r.Tx.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return recordingTx{Tx: sp, ran: r.ran, before: r.before}, nil
}

func TestTopPassForms(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.Pool(t)
	exec := func(sql string) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatalf("%v\n%s", err, sql)
		}
	}
	// deep: shards 1-12 of scope 0, 50 to 61 rows; 300 shards of one row in scope 1.
	seed := func(schema string, deep bool) {
		if deep {
			exec(fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added)
SELECT 0, sh, 3, i, NULL, now(), now(), now() FROM generate_series(1, 12) sh CROSS JOIN LATERAL generate_series(1, 49 + sh) i`, query.Ident(schema)))
		}
		exec(fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added)
SELECT 1, sh, 5, 1, NULL, now(), now(), now() FROM generate_series(1, 300) sh`, query.Ident(schema)))
	}
	type shard struct{ scope, id, depth int64 }
	// model: the deepest 10 of the shards as the SQL-free shape says, and how many there are.
	model := func(deepIDs []int64) ([]shard, int64) {
		var all []shard
		for i := len(deepIDs) - 1; i >= 0; i-- { // deeper ids hold more rows
			all = append(all, shard{0, deepIDs[i], 49 + deepIDs[i]})
		}
		for id := int64(1); id <= 300; id++ {
			all = append(all, shard{1, id, 1})
		}
		return all[:10], int64(len(all))
	}
	for _, tt := range []struct {
		name      string
		deep      bool
		iso       pgx.TxIsoLevel
		drainNine bool // another session deletes shards 1-9 between the floor and the listing
		view      bool // the outbox is a view: TABLESAMPLE refuses it, the floor fails
		ran       string
		deepIDs   []int64
	}{
		{"skewed: the kept form", true, pgx.RepeatableRead, false, false, "floor kept", []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
		{"flat: the plain form", false, pgx.RepeatableRead, false, false, "floor plain", nil},
		{"kept too few: the plain form after it", true, pgx.ReadCommitted, true, false, "floor kept plain", []int64{10, 11, 12}},
		{"the floor fails: the plain form", true, pgx.RepeatableRead, false, true, "floor plain", []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			schema := testdb.Schema(t, fixture.Options{})
			seed(schema, tt.deep)
			exec(fmt.Sprintf("ANALYZE %s.sentry_regionoutbox", query.Ident(schema)))
			if tt.view {
				exec(fmt.Sprintf("ALTER TABLE %[1]s.sentry_regionoutbox RENAME TO outbox_rows; CREATE VIEW %[1]s.sentry_regionoutbox AS SELECT * FROM %[1]s.outbox_rows", query.Ident(schema)))
			}
			tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: tt.iso})
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx) //nolint:errcheck // read only
			var ran []string
			before := func(kind string) {
				if kind == "kept" && tt.drainNine {
					exec(fmt.Sprintf("DELETE FROM %s.sentry_regionoutbox WHERE shard_scope = 0 AND shard_identifier <= 9", query.Ident(schema)))
				}
			}
			s := &Snapshot{ctx: ctx, tx: recordingTx{Tx: tx, ran: &ran, before: before}, Target: query.Target{Silo: query.SiloCell, Schema: schema}}
			f := query.ShardFilter{Limit: 10, Exact: true} // --exact: the kept form counts every shard
			var pages int64
			if err := pool.QueryRow(ctx, "SELECT 1 + pg_relation_size($1::regclass) / 8192", schema+".sentry_regionoutbox").Scan(&pages); err != nil {
				t.Fatal(err)
			}
			res, timedOut, err := s.topPass(f, pages, query.FloorSeed, func(t query.Target) query.Statement { return query.TopShards(t, f) })
			if err != nil || timedOut {
				t.Fatalf("topPass: %v (timed out %v)", err, timedOut)
			}
			if got := strings.Join(ran, " "); got != tt.ran {
				t.Fatalf("statements %q, want %q", got, tt.ran)
			}
			top, err := query.Rows[query.TopShardsRow](res)
			if err != nil {
				t.Fatal(err)
			}
			var got []shard
			for _, r := range top {
				got = append(got, shard{r.ShardScope, r.ShardIdentifier, r.Depth})
			}
			want, total := model(tt.deepIDs)
			if !reflect.DeepEqual(got, want) || top[0].TotalShards != total {
				t.Fatalf("listing\n got %v of %d\nwant %v of %d", got, top[0].TotalShards, want, total)
			}
		})
	}
}
