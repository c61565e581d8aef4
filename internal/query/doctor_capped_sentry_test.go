package query

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// sentryOutbox is an outbox table as Sentry's workers leave it, written from the reference
// (§3) and from nothing in this package: rows are inserted with scheduled_for = THE_PAST
// and scheduled_from = their creation; every minute the scheduler finds the shards with a
// due row (§3.3), and each is claimed (§3.4: the delay of the lowest-id row, doubled, at
// least 2 s, at most the 1 h cap, set on every row of the shard) and drained (§3.5-3.7:
// the head's coalesce group delivered as its newest row, the group deleted, the next head,
// until the shard is empty or a delivery fails and leaves the rows with the claim's
// schedule).
type sentryOutbox struct {
	nextID int64
	shards map[sentryShard][]*sentryRow // each shard's rows, lowest id first
}

type sentryRow struct {
	testdb.Row
	id int64
}

type sentryShard struct {
	cell  string
	scope int
	id    int64
}

// thePast is Sentry's THE_PAST (2016-08-01), the scheduled_for of a new row.
var thePast = time.Date(2016, 8, 1, 0, 0, 0, 0, time.UTC)

func (o *sentryOutbox) insert(k sentryShard, category int, object int64, at time.Time) {
	o.nextID++
	o.shards[k] = append(o.shards[k], &sentryRow{id: o.nextID, Row: testdb.Row{Cell: k.cell, Scope: k.scope, Shard: k.id, Category: category, Object: object,
		ScheduledFrom: at, ScheduledFor: thePast, DateAdded: at}})
}

// tick is one run of the scheduler at now: every shard with a due row is claimed and
// drained; fails says whether delivering a group's newest row fails.
func (o *sentryOutbox) tick(now time.Time, fails func(k sentryShard, r *sentryRow) bool) {
	for k, rows := range o.shards {
		if !slices.ContainsFunc(rows, func(r *sentryRow) bool { return !r.ScheduledFor.After(now) }) {
			continue
		}
		// prepare_next_from_shard: the backoff from the lowest-id row, on every row.
		head := rows[0]
		last := max(head.ScheduledFor.Sub(head.ScheduledFrom), time.Second)
		next := now.Add(min(2*last, BackoffCapSeconds*time.Second))
		for _, r := range rows {
			r.ScheduledFrom, r.ScheduledFor = now, next
		}
		// drain_shard(flush_all=True): head group by head group until one fails; a
		// delivered group (its newest row sent) is deleted whole.
		for len(rows) > 0 {
			h := rows[0]
			inGroup := func(r *sentryRow) bool { return r.Category == h.Category && r.Object == h.Object }
			newest := rows[0]
			for _, r := range rows {
				if inGroup(r) {
					newest = r
				}
			}
			if fails(k, newest) {
				break
			}
			rows = slices.DeleteFunc(rows, inGroup)
		}
		o.shards[k] = rows
	}
}

// sentryShape runs Sentry's workers for four hours of one-minute scheduler ticks ending at
// end, in each of cells, over shards that fail from some minute on (most long enough ago
// to be at the 1 h cap, more of them than doctor reads; the rest below it), shards that
// deliver, a hot shard deeper than StuckDepthCap that never finishes, and failing shards
// that get a row after their last claim (due again, capped rows behind it). Returns the
// rows and their ids.
func sentryShape(end time.Time, cells []string, seed uint64) ([]testdb.Row, []int64) {
	o := &sentryOutbox{shards: map[sentryShard][]*sentryRow{}}
	rnd := rand.New(rand.NewPCG(seed, 1))
	start := end.Add(-4 * time.Hour)
	failFrom := map[sentryShard]time.Time{}
	var shards []sentryShard
	for _, cell := range cells {
		for i := range int64(2600) {
			k := sentryShard{cell, int(i % 2), 100 + i*3}
			shards = append(shards, k)
			switch {
			case i < 1500: // fails from the first 100 minutes on: most at the cap by the end
				failFrom[k] = start.Add(time.Duration(rnd.IntN(100)) * time.Minute)
			case i < 1800: // fails from the last 60 minutes on: below the cap
				failFrom[k] = end.Add(-time.Duration(1+rnd.IntN(60)) * time.Minute)
			}
		}
		hot := sentryShard{cell, 0, 1}
		shards = append(shards, hot)
		failFrom[hot] = start
		for j := range int64(StuckDepthCap + 300) {
			o.insert(hot, 3, j%7, start)
		}
	}
	late := map[sentryShard]bool{}
	for _, k := range shards {
		if k.id%17 == 5 && failFrom[k].Before(start.Add(time.Hour)) && !failFrom[k].IsZero() {
			late[k] = true
		}
	}
	fails := func(now time.Time) func(sentryShard, *sentryRow) bool {
		return func(k sentryShard, _ *sentryRow) bool { f, ok := failFrom[k]; return ok && !now.Before(f) }
	}
	var now time.Time
	for m := 0; m < 240; m++ {
		now = start.Add(time.Duration(m) * time.Minute).Truncate(time.Microsecond)
		for _, k := range shards {
			if k.id != 1 && rnd.IntN(40) == 0 {
				o.insert(k, 2+rnd.IntN(4), rnd.Int64N(5), now)
			}
			if m == 0 && k.id != 1 { // every shard starts with a row or three
				for j := range 1 + int(k.id%3) {
					o.insert(k, 2+j, int64(j), now)
				}
			}
		}
		o.tick(now, fails(now))
	}
	for k := range late { // written after the last claim: the shard is due again
		o.insert(k, 4, 9, now.Add(time.Second))
	}
	var all []*sentryRow
	for _, rows := range o.shards {
		all = append(all, rows...)
	}
	slices.SortFunc(all, func(a, b *sentryRow) int { return cmp.Compare(a.id, b.id) })
	rows, ids := make([]testdb.Row, len(all)), make([]int64, len(all))
	for i, r := range all {
		rows[i], ids[i] = r.Row, r.id
	}
	return rows, ids
}

// copyWithIDs writes rows into schema.table in one COPY with their ids.
func copyWithIDs(t *testing.T, schema, table string, rows []testdb.Row, ids []int64) {
	t.Helper()
	cols := []string{"id", "shard_scope", "shard_identifier", "category", "object_identifier", "scheduled_from", "scheduled_for", "date_added", "region_name"}
	if table == CellTable {
		cols = cols[:8]
	}
	src := make([][]any, len(rows))
	for i, r := range rows {
		src[i] = []any{ids[i], r.Scope, r.Shard, r.Category, r.Object, r.ScheduledFrom, r.ScheduledFor, r.DateAdded, r.Cell}[:len(cols)]
	}
	if _, err := testdb.Pool(t).CopyFrom(context.Background(), pgx.Identifier{schema, table}, cols, pgx.CopyFromRows(src)); err != nil {
		t.Fatal(err)
	}
}

// TestDoctorCappedShardsSentryWorkers is the differential test of the bounded walk (#40):
// on tables Sentry's workers left (sentryShape, from the reference), doctor-capped-shards
// answers what the model answers (cappedModel, every field) and what the plain statement
// answers (selected-shards --stuck --at-cap --limit: one GROUP BY pass over every shard in
// backoff, in key order), at limits under, at and over the capped shards there are (more
// than doctor's 1,000), in both silos, with and without --cell.
func TestDoctorCappedShardsSentryWorkers(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	end := time.Now().Add(-2 * time.Minute).Truncate(time.Microsecond)
	cellRows, cellIDs := sentryShape(end, []string{""}, 40)
	copyWithIDs(t, schema, CellTable, cellRows, cellIDs)
	controlRows, controlIDs := sentryShape(end, []string{"eu", "us"}, 41)
	copyWithIDs(t, schema, ControlTable, controlRows, controlIDs)
	ctx := context.Background()
	for _, tc := range []struct {
		target Target
		rows   []testdb.Row
		ids    []int64
	}{
		{Target{Silo: SiloCell, Schema: schema}, cellRows, cellIDs},
		{Target{Silo: SiloControl, Schema: schema}, controlRows, controlIDs},
		{Target{Silo: SiloControl, Schema: schema, Cell: "us"}, controlRows, controlIDs},
	} {
		tx, err := testdb.Pool(t).BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly, IsoLevel: pgx.RepeatableRead})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tx.Rollback(ctx) }) // before the schema is dropped, also on a failure
		var txNow time.Time
		if err := tx.QueryRow(ctx, "SELECT now()").Scan(&txNow); err != nil {
			t.Fatal(err)
		}
		_, total := cappedModel(tc.rows, tc.ids, tc.target.Cell, txNow, 1)
		if total <= 1000 {
			t.Fatalf("%s: the shape lost its point: %d capped shards, want more than doctor reads (1,000)", tc.target.Describe(), total)
		}
		for _, limit := range []int{1, 10, 1000, total - 1, total, total + 1, 10000} {
			want, _ := cappedModel(tc.rows, tc.ids, tc.target.Cell, txNow, limit)
			res, err := Run(ctx, tx, DoctorCappedShards(tc.target, limit))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Rows[DoctorCappedRow](res)
			if err != nil {
				t.Fatal(err)
			}
			plainRes, err := Run(ctx, tx, SelectedShards(tc.target, ShardSelector{Stuck: true, AtCap: true, Limit: limit}, nil))
			if err != nil {
				t.Fatal(err)
			}
			plain, err := Rows[SelectedShard](plainRes)
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("%s limit %d", tc.target.Describe(), limit)
			if len(got) != len(want) || len(plain) != len(want) {
				t.Fatalf("%s: %d rows, model %d, plain %d", name, len(got), len(want), len(plain))
			}
			cellCol := res.Col("region_name")
			byKey := map[string]DoctorCappedRow{}
			deep := false
			for i, w := range want {
				g := got[i]
				cell := ""
				if cellCol >= 0 {
					cell, _ = res.Rows[i][cellCol].(string)
				}
				if cell != w.cell || int(g.ShardScope) != w.scope || g.ShardIdentifier != w.shard || g.Depth != w.depth || g.DepthAtLeast != w.atLeast || !g.NextAttempt.Equal(w.next) ||
					g.HeadID != w.headID || !g.HeadAdded.Equal(w.headAdded) || !g.LastAttempt.Equal(w.lastAttempt) || g.LastDelaySeconds != w.delaySeconds || g.CappedShards != int64(len(want)) {
					t.Fatalf("%s row %d: got %s %+v, model %+v", name, i, cell, g, w)
				}
				byKey[fmt.Sprint(cell, g.ShardScope, g.ShardIdentifier)] = g
				deep = deep || g.DepthAtLeast
			}
			for _, p := range plain {
				cell := ""
				if p.Cell != nil {
					cell = *p.Cell
				}
				g, ok := byKey[fmt.Sprint(cell, p.Scope, p.ID)]
				if !ok || g.HeadID != p.HeadID || int(g.HeadCategory) != p.HeadCategory || g.LastDelaySeconds != p.LastDelaySeconds ||
					!g.LastAttempt.Equal(p.LastAttempt) || !g.HeadAdded.Equal(p.OldestMessage) || !g.NextAttempt.Equal(p.NextAttempt) ||
					g.Depth != min(p.Depth, StuckDepthCap) || g.DepthAtLeast != (p.Depth >= StuckDepthCap) {
					t.Fatalf("%s: plain %s %+v, doctor %+v (found %v)", name, cell, p, g, ok)
				}
			}
			if limit >= 1000 && !deep {
				t.Fatalf("%s: the shape lost its hot shard", name)
			}
		}
	}
}
