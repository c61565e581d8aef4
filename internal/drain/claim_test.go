package drain_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// claimRows is more than any page or batch the claim, its unclaim or the archive works in
// (query.DeleteChunk, the batch mode's messages), in two coalesce groups of organization
// shard 1.
const claimRows = 2*query.DeleteChunk + 5_000

// schedRow is one row's schedule as a plain SELECT reads it: the model the claim record is
// compared with.
type schedRow struct {
	id, shard int64
	from, to  pgtype.Timestamptz
}

func (r schedRow) String() string {
	show := func(t pgtype.Timestamptz) string {
		if t.InfinityModifier != pgtype.Finite {
			return t.InfinityModifier.String()
		}
		return t.Time.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("%d (shard %d) %s %s", r.id, r.shard, show(r.from), show(r.to))
}

// seedSchedules fills shard 1 with claimRows rows under many schedules: three shared by most
// rows (rows a claim pushed together), one of its own for every seventh (a fresh row, its
// scheduled_from the microsecond it was written), and two infinite timestamps; shard 2 holds
// rows the claim must not touch. It returns shard 1's infinite rows.
func seedSchedules(t *testing.T, schema string) (infinite []int64) {
	t.Helper()
	table := pgx.Identifier{schema}.Sanitize() + ".sentry_regionoutbox"
	ctx := context.Background()
	for _, sql := range []string{
		fmt.Sprintf(`INSERT INTO %s (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added)
			SELECT 0, s, 2, i %% 2, '{"n": 1}',
			       CASE WHEN i %% 7 = 0 THEN timestamptz '2026-11-30 10:00:00Z' + i * interval '1 microsecond'
			            ELSE timestamptz '2026-11-30 09:00:00.123456Z' + (i %% 3) * interval '1 minute' END,
			       CASE WHEN i %% 7 = 0 THEN timestamptz '2016-08-01 00:00:00Z'
			            ELSE timestamptz '2026-11-30 09:00:00.123456Z' + (i %% 3) * interval '1 minute' + (1 + i %% 3) * interval '8 seconds' END,
			       timestamptz '2026-11-30 08:00:00Z'
			  FROM generate_series(1, %d) i CROSS JOIN (VALUES (1), (2)) v(s)
			 WHERE s = 1 OR i <= 50
			 ORDER BY i, s`, table, claimRows),
		fmt.Sprintf(`UPDATE %s SET scheduled_for = 'infinity' WHERE id = (SELECT min(id) + 100 FROM %[1]s WHERE shard_identifier = 1)`, table),
		fmt.Sprintf(`UPDATE %s SET scheduled_from = '-infinity' WHERE id = (SELECT min(id) + 201 FROM %[1]s WHERE shard_identifier = 1)`, table),
	} {
		if _, err := testdb.Pool(t).Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := testdb.Pool(t).Query(ctx, "SELECT id FROM "+table+" WHERE scheduled_for = 'infinity' OR scheduled_from = '-infinity' ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	if infinite, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil || len(infinite) != 2 {
		t.Fatalf("infinite rows %v, %v", infinite, err)
	}
	return infinite
}

// schedules reads every row's schedule (both shards), in id order.
func schedules(t *testing.T, schema string) []schedRow {
	t.Helper()
	rows, err := testdb.Pool(t).Query(context.Background(), "SELECT id, shard_identifier, scheduled_from, scheduled_for FROM "+
		pgx.Identifier{schema}.Sanitize()+".sentry_regionoutbox ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (schedRow, error) {
		var s schedRow
		return s, r.Scan(&s.id, &s.shard, &s.from, &s.to)
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// claimedModel is the table the model expects after a claim of shard 1 (claimed: only the
// claim, no unclaim): every row of shard 1 with the claim's schedule, or else as before; with
// the unclaim, only shard 1's infinite rows keep the claim's (no time holds theirs, so
// nothing puts it back).
func claimedModel(before []schedRow, infinite []int64, c *drain.Claimed, claimed bool) []schedRow {
	want := make([]schedRow, len(before))
	copy(want, before)
	for i := range want {
		if want[i].shard == 1 && (claimed || slices.Contains(infinite, want[i].id)) {
			want[i].from = pgtype.Timestamptz{Time: c.At, Valid: true}
			want[i].to = pgtype.Timestamptz{Time: c.Next, Valid: true}
		}
	}
	return want
}

func diffSchedules(t *testing.T, got, want []schedRow, what string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range got {
		if got[i].String() != want[i].String() {
			if bad++; bad <= 5 {
				t.Errorf("%s: row %s, want %s", what, got[i], want[i])
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%s: %d of %d rows differ from the model (the rows read before the claim)", what, bad, len(got))
	}
}

// TestUnclaimPutsBackEverySchedule: the claim's record of the schedules it replaced puts
// back exactly what a plain SELECT read before the claim, on a shard of more rows than any
// page or batch, under thousands of distinct schedules; an infinite timestamp is left where
// the claim put it; the other shard is never touched.
func TestUnclaimPutsBackEverySchedule(t *testing.T) {
	t.Parallel()
	schema, target := setup(t)
	infinite := seedSchedules(t, schema)
	before := schedules(t, schema)
	c, err := drain.Claim(context.Background(), conn(t), target, org(1))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Before.Len(); got != claimRows-len(infinite) {
		t.Fatalf("the claim recorded %d schedules, want %d", got, claimRows-len(infinite))
	}
	diffSchedules(t, schedules(t, schema), claimedModel(before, infinite, c, true), "claimed")
	n, err := drain.Unclaim(context.Background(), conn(t), target, org(1), c)
	if err != nil || n != int64(claimRows-len(infinite)) {
		t.Fatalf("unclaim: %d rows, %v; want %d", n, err, claimRows-len(infinite))
	}
	diffSchedules(t, schedules(t, schema), claimedModel(before, infinite, c, false), "put back")
}

// TestDiscardArchivesSchedulesFromBeforeTheClaim: a discard drain under a claim archives each
// row with the schedule a plain SELECT read before the claim (its infinite rows with the
// claim's: the schedule they were deleted with), every row of the shard, in both modes.
func TestDiscardArchivesSchedulesFromBeforeTheClaim(t *testing.T) {
	t.Parallel()
	for _, mode := range []drain.Mode{drain.ModeExact, drain.ModeBatch} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			schema, target := setup(t)
			infinite := seedSchedules(t, schema)
			before := schedules(t, schema)
			cn := conn(t)
			c, err := drain.Claim(context.Background(), cn, target, org(1))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "a.jsonl")
			arch := openOp(t, path, "")
			res, err := drain.Run(context.Background(), cn, drain.Options{Target: target, Shard: org(1), Handler: drain.Discard{}, Discard: true,
				Mode: mode, Archive: arch, Claimed: c, Command: "drain"})
			if err != nil || res.Deleted != claimRows {
				t.Fatalf("%+v %v", res, err)
			}
			_ = arch.Close()
			want := map[int64]string{}
			for _, r := range claimedModel(before, infinite, c, false) {
				want[r.id] = r.String()
			}
			archived := committedRows(t, path)
			if len(archived) != claimRows {
				t.Fatalf("archived %d rows, want %d", len(archived), claimRows)
			}
			for _, a := range archived {
				got := schedRow{id: a.ID, shard: a.ShardID, from: pgtype.Timestamptz{Time: a.ScheduledFrom, Valid: true}, to: pgtype.Timestamptz{Time: a.ScheduledFor, Valid: true}}
				if a.ShardID != 1 || got.String() != want[a.ID] {
					t.Fatalf("archived row %s, want %s", got, want[a.ID])
				}
				delete(want, a.ID)
			}
			if left := schedules(t, schema); len(left) != 50 || len(want) != 50 {
				t.Fatalf("%d rows left, %d not archived: want shard 2's 50", len(left), len(want))
			}
		})
	}
}

// TestUnclaimWithNothingToPutBackSaysSo: when no row carries the claim's schedule any more (a
// Sentry worker claimed the shard again, or it was drained), UnclaimIfUnavailable reports
// ErrNothingUnclaimed, not a schedule put back: the drain's summary said "back as it was"
// with 0 rows changed.
func TestUnclaimWithNothingToPutBackSaysSo(t *testing.T) {
	t.Parallel()
	schema, target := setup(t)
	seedSchedules(t, schema)
	ctx := context.Background()
	c, err := drain.Claim(ctx, conn(t), target, org(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := testdb.Pool(t).Exec(ctx, "UPDATE "+pgx.Identifier{schema}.Sanitize()+".sentry_regionoutbox SET scheduled_for = scheduled_for + interval '1 second' WHERE shard_identifier = 1"); err != nil {
		t.Fatal(err)
	}
	failed := drain.Result{Failed: &drain.Message{ID: 1}, FailedErr: drain.ErrHandlerUnavailable}
	if restored, err := drain.UnclaimIfUnavailable(ctx, conn(t), target, org(1), c, failed); restored || !errors.Is(err, drain.ErrNothingUnclaimed) {
		t.Fatalf("restored %v, error %v; want false, ErrNothingUnclaimed", restored, err)
	}
}

// TestClaimRecordsAScheduleCommittedWhileItWaited: a row of the shard (not its head) that
// another transaction reschedules and commits while the claim's UPDATE waits for its lock
// is claimed with the schedule that transaction gave it on record, so an unclaim puts that
// one back, not the one it had when the claim began. (In READ COMMITTED the UPDATE re-read
// the newer row while the claim's record came from its older snapshot: the unclaim restored
// a schedule nobody had any more. The claim now runs in REPEATABLE READ and starts again
// when a row changed under it.)
func TestClaimRecordsAScheduleCommittedWhileItWaited(t *testing.T) {
	t.Parallel()
	schema, target := setup(t)
	past := time.Date(2016, 8, 1, 0, 0, 0, 0, time.UTC)
	from := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	ids := testdb.Insert(t, schema, "sentry_regionoutbox",
		testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: 1, ScheduledFrom: from, ScheduledFor: past},
		testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: 2, ScheduledFrom: from, ScheduledFor: past},
		testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: 3, ScheduledFrom: from, ScheduledFor: past})
	table := pgx.Identifier{schema}.Sanitize() + ".sentry_regionoutbox"
	ctx := context.Background()
	other, err := testdb.Pool(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Rollback(ctx) //nolint:errcheck // committed below
	newFrom, newFor := time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 7, 5, 0, 0, time.UTC)
	if _, err := other.Exec(ctx, "UPDATE "+table+" SET scheduled_from = $1, scheduled_for = $2 WHERE id = $3", newFrom, newFor, ids[1]); err != nil {
		t.Fatal(err)
	}
	type claimed struct {
		c   *drain.Claimed
		err error
	}
	done := make(chan claimed, 1)
	// A lock timeout far above the wait below: the claim must wait for the commit, whatever
	// the machine's load (the default 2 s could run out first).
	cn, err := db.Connect(ctx, db.Config{DSN: testdb.DSN(), Command: "drain-test", LockTimeout: time.Minute})
	if err != nil {
		testdb.Unreachable(t, err)
	}
	t.Cleanup(func() { _ = cn.Close(context.Background()) })
	go func() {
		c, err := drain.Claim(ctx, cn, target, org(1))
		done <- claimed{c, err}
	}()
	// The claim's UPDATE waits for the other transaction's row lock (a condition).
	for deadline := time.Now().Add(30 * time.Second); ; {
		var waiting int
		if err := testdb.Pool(t).QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			 WHERE wait_event_type = 'Lock' AND state = 'active' AND query LIKE '%' || $1 || '%' AND query LIKE '%UPDATE%'`, schema).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the claim never waited for the row the other transaction holds")
		}
		time.Sleep(10 * time.Millisecond) // polling the server, a condition
	}
	if err := other.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("claim: %v", r.err)
	}
	if n, err := drain.Unclaim(ctx, cn, target, org(1), r.c); err != nil || n != 3 {
		t.Fatalf("unclaim: %d rows, %v; want 3", n, err)
	}
	got := schedules(t, schema)
	want := []schedRow{
		{id: ids[0], shard: 1, from: pgtype.Timestamptz{Time: from, Valid: true}, to: pgtype.Timestamptz{Time: past, Valid: true}},
		{id: ids[1], shard: 1, from: pgtype.Timestamptz{Time: newFrom, Valid: true}, to: pgtype.Timestamptz{Time: newFor, Valid: true}},
		{id: ids[2], shard: 1, from: pgtype.Timestamptz{Time: from, Valid: true}, to: pgtype.Timestamptz{Time: past, Valid: true}},
	}
	diffSchedules(t, got, want, "put back")
}

// TestClaimGivesUpAfterItsTries: a claim whose UPDATE fails with a serialization failure
// every time (testdb.SerializationFailures) is tried claimTries (5) times, then fails with an error that says
// so and what to do, SQLSTATE 40001 (exit 1); the shard is left as it was.
func TestClaimGivesUpAfterItsTries(t *testing.T) {
	t.Parallel()
	schema, target := setup(t)
	from := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	past := time.Date(2016, 8, 1, 0, 0, 0, 0, time.UTC)
	testdb.Insert(t, schema, "sentry_regionoutbox",
		testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: 1, ScheduledFrom: from, ScheduledFor: past},
		testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: 2, ScheduledFrom: from, ScheduledFor: past})
	before := schedules(t, schema)
	tries := testdb.SerializationFailures(t, schema, "sentry_regionoutbox")
	_, err := drain.Claim(context.Background(), conn(t), target, org(1))
	var dbErr *db.Error
	if !errors.As(err, &dbErr) || dbErr.SQLState != "40001" ||
		dbErr.Msg != "the shard's rows changed under the claim 5 times in a row (in drain-claim)" ||
		!strings.Contains(dbErr.Hint, "pg_stat_activity") {
		t.Fatalf("err %#v, want the claim's give-up error", err)
	}
	if n := tries(); n != 5 {
		t.Fatalf("the UPDATE ran %d times, want 5", n)
	}
	diffSchedules(t, schedules(t, schema), before, "after the failed claim")
}
