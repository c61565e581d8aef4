package query

import (
	"cmp"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// cappedModelRow is what doctor-capped-shards answers for one shard, computed from the
// reference (§ drain algorithm): a shard is in backoff when its earliest scheduled_for is
// in the future; it is at the cap when its head row (lowest id) was scheduled at least
// BackoffCapSeconds after its scheduled_from; its depth is its rows scheduled in the future
// (in a shard in backoff, all of them), counted up to StuckDepthCap (a count of the cap is
// "at least"). The first limit shards in key order (cell, scope, shard: as the selectors
// --stuck --at-cap take them), listed oldest head first, then by shard.
type cappedModelRow struct {
	cell         string
	scope        int
	shard        int64
	depth        int64
	atLeast      bool
	next         time.Time
	headID       int64
	headAdded    time.Time
	lastAttempt  time.Time
	delaySeconds float64
}

// cappedModel answers doctor-capped-shards from every row of the table, at now.
func cappedModel(rows []testdb.Row, ids []int64, cell string, now time.Time, limit int) ([]cappedModelRow, int) {
	type key struct {
		cell  string
		scope int
		shard int64
	}
	byShard := map[key][]int{}
	for i, r := range rows {
		if cell != "" && r.Cell != cell {
			continue
		}
		k := key{r.Cell, r.Scope, r.Shard}
		byShard[k] = append(byShard[k], i)
	}
	var out []cappedModelRow
	for k, idx := range byShard {
		next, head := rows[idx[0]].ScheduledFor, idx[0]
		var depth int64
		for _, i := range idx {
			if rows[i].ScheduledFor.Before(next) {
				next = rows[i].ScheduledFor
			}
			if ids[i] < ids[head] {
				head = i
			}
			if rows[i].ScheduledFor.After(now) {
				depth++
			}
		}
		h := rows[head]
		if !next.After(now) || h.ScheduledFor.Sub(h.ScheduledFrom) < BackoffCapSeconds*time.Second {
			continue
		}
		out = append(out, cappedModelRow{cell: k.cell, scope: k.scope, shard: k.shard, depth: min(depth, StuckDepthCap), atLeast: depth >= StuckDepthCap, next: next,
			headID: ids[head], headAdded: h.DateAdded, lastAttempt: h.ScheduledFrom, delaySeconds: h.ScheduledFor.Sub(h.ScheduledFrom).Seconds()})
	}
	// The first limit capped shards in key order (#40: the walk stops at the limit-th).
	slices.SortFunc(out, func(a, b cappedModelRow) int {
		return cmp.Or(cmp.Compare(a.cell, b.cell), cmp.Compare(a.scope, b.scope), cmp.Compare(a.shard, b.shard))
	})
	total := len(out)
	if len(out) > limit {
		out = out[:limit]
	}
	slices.SortFunc(out, func(a, b cappedModelRow) int {
		return cmp.Or(a.headAdded.Compare(b.headAdded), cmp.Compare(a.cell, b.cell), cmp.Compare(a.scope, b.scope), cmp.Compare(a.shard, b.shard))
	})
	return out, total
}

// cappedShape is a table of shards of every kind doctor-capped-shards tells apart, with
// more capped shards (1,100) than doctor reads (groupScan, 1,000), a capped shard
// (1,500 rows) deeper than any LIMIT and two as deep as StuckDepthCap or deeper (counted up
// to it, "at least"): at the cap, in backoff below the cap, due with a
// future row (not its earliest), due at the cap's schedule, capped heads with uncapped rows
// behind them and the reverse, heads written at the same instant (ties broken by shard).
func cappedShape(now time.Time, cells []string) []testdb.Row {
	var rows []testdb.Row
	base := now.Add(-48 * time.Hour)
	past, _ := time.Parse(time.RFC3339, "2016-08-01T00:00:00Z")
	capFrom, capFor := now.Add(-20*time.Minute), now.Add(40*time.Minute)
	for ci, cell := range cells {
		add := func(scope int, shard int64, n int, from, sfor time.Time, added time.Time) {
			for j := range n {
				rows = append(rows, testdb.Row{Cell: cell, Scope: scope, Shard: shard, Category: 2 + j%3, Object: int64(j % 7),
					ScheduledFrom: from, ScheduledFor: sfor, DateAdded: added})
			}
		}
		for i := range int64(1100) {
			// at the cap, 1-3 rows, heads written in 50 instants (ties)
			add(int(i%2), 1000+i, 1+int(i%3), capFrom, capFor, base.Add(time.Duration((i*7+int64(ci))%50)*time.Second))
		}
		add(0, 1, 1500, capFrom, capFor, base.Add(-time.Hour))                // the deep capped shard
		add(1, 2, StuckDepthCap+500, capFrom, capFor, base.Add(-2*time.Hour)) // deeper than the count goes
		add(1, 3, StuckDepthCap, capFrom, capFor, base.Add(-3*time.Hour))     // exactly the cap: at least
		for i := range int64(200) {
			// in backoff below the cap (2 s doubling to 30 min)
			d := time.Duration(1<<(i%11)) * 2 * time.Second
			add(int(i%2), 5000+i, 2, now.Add(-time.Second), now.Add(-time.Second).Add(d), base)
		}
		for i := range int64(100) {
			// due: a row written after the claim (THE_PAST), behind capped rows
			add(0, 6000+i, 2, capFrom, capFor, base)
			rows = append(rows, testdb.Row{Cell: cell, Scope: 0, Shard: 6000 + i, Category: 2, Object: 1, ScheduledFor: past, DateAdded: base})
		}
		for i := range int64(100) {
			// due at the cap's delay: the backoff has run out
			add(1, 7000+i, 2, now.Add(-2*time.Hour), now.Add(-time.Hour), base)
		}
		for i := range int64(50) {
			// capped head, rows behind it pushed by a shorter delay (later ids): capped
			add(0, 8000+i, 1, capFrom, capFor, base.Add(time.Duration(i)*time.Second))
			add(0, 8000+i, 3, now.Add(-time.Second), now.Add(time.Minute), base)
			// uncapped head, capped rows behind it: not capped
			add(1, 8000+i, 1, now.Add(-time.Second), now.Add(time.Minute), base)
			add(1, 8000+i, 3, capFrom, capFor, base)
		}
		add(0, 9000, 5, past, past, base) // due, never claimed
	}
	return rows
}

// copyRows writes rows into schema.table in one COPY, with ids 1, 2, … in order (the ids
// run backwards through each block of 7 so that the lowest id of a shard is not always its
// first row), and returns the ids.
func copyRows(t *testing.T, schema, table string, rows []testdb.Row) []int64 {
	t.Helper()
	cols := []string{"id", "shard_scope", "shard_identifier", "category", "object_identifier", "scheduled_from", "scheduled_for", "date_added"}
	control := table == ControlTable
	if control {
		cols = append(cols, "region_name")
	}
	ids := make([]int64, len(rows))
	src := make([][]any, len(rows))
	for i, r := range rows {
		ids[i] = int64(i/7*7 + 7 - i%7)
		src[i] = []any{ids[i], r.Scope, r.Shard, r.Category, r.Object, r.ScheduledFrom, r.ScheduledFor, r.DateAdded}
		if control {
			src[i] = append(src[i], r.Cell)
		}
	}
	if _, err := testdb.Pool(t).CopyFrom(context.Background(), pgx.Identifier{schema, table}, cols, pgx.CopyFromRows(src)); err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestDoctorCappedShardsEqualsModel: the skip scan answers exactly what the model does, for
// LIMITs under, at and over the capped shards there are, in both silos (the control silo
// with shards of the same number in two cells, with and without --cell).
func TestDoctorCappedShardsEqualsModel(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	now := time.Now().Truncate(time.Microsecond)
	cellRows := cappedShape(now, []string{""})
	cellIDs := copyRows(t, schema, CellTable, cellRows)
	controlRows := cappedShape(now, []string{"us", "eu"})
	controlIDs := copyRows(t, schema, ControlTable, controlRows)
	ctx := context.Background()
	for _, tc := range []struct {
		target Target
		rows   []testdb.Row
		ids    []int64
	}{
		{Target{Silo: SiloCell, Schema: schema}, cellRows, cellIDs},
		{Target{Silo: SiloControl, Schema: schema}, controlRows, controlIDs},
		{Target{Silo: SiloControl, Schema: schema, Cell: "eu"}, controlRows, controlIDs},
	} {
		for _, limit := range []int{10, 1000, 1151, 5000} {
			tx, err := testdb.Pool(t).BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
			if err != nil {
				t.Fatal(err)
			}
			var txNow time.Time
			if err := tx.QueryRow(ctx, "SELECT now()").Scan(&txNow); err != nil {
				t.Fatal(err)
			}
			res, err := Run(ctx, tx, DoctorCappedShards(tc.target, limit))
			_ = tx.Rollback(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Rows[DoctorCappedRow](res)
			if err != nil {
				t.Fatal(err)
			}
			want, total := cappedModel(tc.rows, tc.ids, tc.target.Cell, txNow, limit)
			if len(got) != len(want) {
				t.Fatalf("%s limit %d: %d rows, want %d", tc.target.Describe(), limit, len(got), len(want))
			}
			cellCol := res.Col("region_name")
			for i, w := range want {
				g := got[i]
				cell := ""
				if cellCol >= 0 {
					cell, _ = res.Rows[i][cellCol].(string)
				}
				if cell != w.cell || int(g.ShardScope) != w.scope || g.ShardIdentifier != w.shard || g.Depth != w.depth || g.DepthAtLeast != w.atLeast || !g.NextAttempt.Equal(w.next) ||
					g.HeadID != w.headID || !g.HeadAdded.Equal(w.headAdded) || !g.LastAttempt.Equal(w.lastAttempt) || g.LastDelaySeconds != w.delaySeconds || g.CappedShards != int64(len(want)) {
					t.Fatalf("%s limit %d row %d: got %s %+v, want %+v (capped %d)", tc.target.Describe(), limit, i, cell, g, w, total)
				}
			}
			capped, deep := 0, 0
			for _, g := range got {
				if g.DepthAtLeast && g.Depth == StuckDepthCap {
					capped++
				}
				if g.ShardIdentifier == 1 && g.Depth == 1500 && !g.DepthAtLeast {
					deep++
				}
			}
			if limit == 5000 && (total < 1153 || capped == 0 || capped%2 != 0 || deep == 0) {
				t.Fatalf("%s: the shape lost its point: %d capped, first %+v", tc.target.Describe(), total, got[0])
			}
		}
	}
}
