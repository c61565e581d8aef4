package status_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/backfill/status"
	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// setup creates a schema with Sentry's tables and a replicated table sentry_organization
// holding ids 1..100, and returns a connection to it.
func setup(t *testing.T) (string, *db.Conn) {
	t.Helper()
	schema := testdb.Schema(t, fixture.Options{})
	ctx := context.Background()
	exec(t, fmt.Sprintf(`CREATE TABLE %[1]s.sentry_organization (id bigint PRIMARY KEY);
INSERT INTO %[1]s.sentry_organization SELECT generate_series(1, 100)`, schema))
	conn, err := db.Connect(ctx, db.Config{DSN: testdb.DSN(), Command: "status-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return schema, conn
}

func exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := testdb.Pool(t).Exec(context.Background(), sql, args...); err != nil {
		t.Fatal(err)
	}
}

// watermark stores sentry_organization's cursor in the cell watermark table.
func watermark(t *testing.T, schema string, low, version int64) {
	t.Helper()
	exec(t, fmt.Sprintf(`INSERT INTO %s.hybridcloud_celloutboxbackfillwatermark (date_updated, date_added, table_name, low_bound, version)
VALUES (now(), now(), 'sentry_organization', $1, $2)`, schema), low, version)
}

func redisAddr() string {
	return testdb.RedisAddr()
}

// testRedis returns a client and a key prefix of the test's own, whose keys are deleted
// afterwards (never FLUSHDB: tests share the server).
func testRedis(t *testing.T, prefix string) *redis.Client {
	t.Helper()
	rc := redis.NewClient(&redis.Options{Addr: redisAddr()})
	if err := rc.Ping(context.Background()).Err(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Redis at %s is unreachable: %v", redisAddr(), err)
		}
		t.Skipf("Redis at %s is unreachable: %v", redisAddr(), err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		keys, _ := status.ScanPrefix(ctx, rc, prefix)
		for _, k := range keys {
			_ = rc.Del(ctx, prefix+k).Err()
		}
		_ = rc.Close()
	})
	return rc
}

func org(t *testing.T) backfill.Table {
	t.Helper()
	tb, ok := backfill.Lookup(backfill.Registered(nil), "sentry_organization")
	if !ok {
		t.Fatal("sentry_organization is not registered")
	}
	return tb
}

// TestStatusFromWatermarks reads a cursor from the cell watermark table and the gating
// option, and checks every field of the row.
func TestStatusFromWatermarks(t *testing.T) {
	t.Parallel()
	schema, conn := setup(t)
	tb := org(t)
	watermark(t, schema, 51, tb.Coded)
	src := status.Source{Conn: conn, Schema: schema, Store: status.StoreAuto}
	rep, err := src.Status(context.Background(), status.Request{Tables: []backfill.Table{tb}, Exact: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 1 || rep.Failed != 0 || rep.Incomplete != 1 || rep.Sampled {
		t.Fatalf("report %+v", rep)
	}
	r := rep.Rows[0]
	if r.Store != "postgres:cell" || *r.Cursor != (backfill.Cursor{Low: 51, Version: tb.Coded}) || r.State != string(backfill.StateGated) {
		t.Fatalf("row %+v cursor %+v", r, *r.Cursor)
	}
	// No option row: Sentry's default 0 gates everything.
	if r.Option != nil || *r.MaxID != 100 || *r.RowsDone != 50 || r.OptionIn != query.OptionTable || r.Rate != nil {
		t.Fatalf("row %+v", r)
	}
}

// TestStatusInProgressProgressAndOption sets the option to the coded version, so the walk
// is in progress, and checks the progress by id span.
func TestStatusInProgressProgressAndOption(t *testing.T) {
	t.Parallel()
	schema, conn := setup(t)
	tb := org(t)
	watermark(t, schema, 26, tb.Coded)
	exec(t, fmt.Sprintf(`INSERT INTO %s.sentry_option (key, value, last_updated) VALUES ($1, $2::jsonb, now())`, schema),
		backfill.OptionKey(tb.Name), fmt.Sprint(tb.Coded))
	src := status.Source{Conn: conn, Schema: schema, Store: status.StorePostgres}
	rep, err := src.Status(context.Background(), status.Request{Tables: []backfill.Table{tb}})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Rows[0]
	if r.State != string(backfill.StateInProgress) || *r.Option != tb.Coded || *r.Progress != 0.25 || r.RowsDone != nil {
		t.Fatalf("row %+v", r)
	}
}

// TestStatusRateWithClock samples twice with an injected clock one minute apart while the
// cursor moves by 20 ids: rate 20/min, ETA (100+1-46)/20 min = 165 s.
func TestStatusRateWithClock(t *testing.T) {
	t.Parallel()
	schema, conn := setup(t)
	tb := org(t)
	watermark(t, schema, 26, tb.Coded)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start
	src := status.Source{Conn: conn, Schema: schema, Store: status.StoreAuto, Now: func() time.Time { return now }}
	wait := func(ctx context.Context, d time.Duration) error {
		if d != time.Minute {
			t.Errorf("waited %s", d)
		}
		now = start.Add(d)
		exec(t, fmt.Sprintf(`UPDATE %s.hybridcloud_celloutboxbackfillwatermark SET low_bound = 46`, schema))
		return nil
	}
	rep, err := src.Status(context.Background(), status.Request{Tables: []backfill.Table{tb}, Sample: time.Minute, Wait: wait})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Rows[0]
	if !rep.Sampled || r.Rate == nil || *r.Rate != 20 || r.ETA == nil || *r.ETA != 165 || r.Cursor.Low != 26 {
		t.Fatalf("sampled %v row %+v", rep.Sampled, r)
	}
}

// TestStatusRedisCursors reads cursors from Redis under a prefix holding glob characters:
// a good one, a malformed one, a key of another type, and an unregistered table found by
// SCAN. A key outside the prefix that the unescaped glob would match is not listed.
func TestStatusRedisCursors(t *testing.T) {
	t.Parallel()
	schema, conn := setup(t)
	prefix := "statustest:" + schema + ":*?["
	rc := testRedis(t, prefix)
	other := "statustest:" + schema + ":xx["
	t.Cleanup(func() { _ = rc.Del(context.Background(), other+"outbox_backfill.stray").Err() })
	ctx := context.Background()
	for k, v := range map[string]string{"sentry_organization": "[51, 4]", "sentry_team": "not json", "sentry_project_x": "[3, 1]"} {
		if err := rc.Set(ctx, query.BackfillRedisKey(prefix, k), v, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rc.LPush(ctx, query.BackfillRedisKey(prefix, "sentry_user"), "1").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Set(ctx, other+"outbox_backfill.stray", "[1, 1]", 0).Err(); err != nil {
		t.Fatal(err)
	}
	src := status.Source{Conn: conn, Schema: schema, Store: status.StoreRedis, KeyPrefix: prefix,
		Redis: db.RedisConfig{URL: "redis://" + redisAddr() + "/0"}}
	names, err := src.CursorTables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	if want := []string{"sentry_organization", "sentry_project_x", "sentry_team", "sentry_user"}; !slices.Equal(names, want) {
		t.Fatalf("cursor tables %v, want %v", names, want)
	}
	snap := status.Snapshot{Schema: query.Schema{}}
	cursors := src.OpenCursors(ctx, snap.Schema)
	defer cursors.Close()
	tables := []backfill.Table{{Name: "sentry_organization"}, {Name: "sentry_team"}, {Name: "sentry_user"}, {Name: "sentry_absent"}}
	got, err := cursors.Read(ctx, tables)
	if err != nil {
		t.Fatal(err)
	}
	if c := got["sentry_organization"]; c.Err != nil || *c.Cursor != (backfill.Cursor{Low: 51, Version: 4}) || c.Store != "redis" {
		t.Fatalf("organization %+v", c)
	}
	if c := got["sentry_team"]; c.Cursor != nil || c.Unreachable() || c.Err == nil {
		t.Fatalf("team %+v", c)
	}
	wantType := fmt.Sprintf("key %s holds a list, not the JSON string [low, version]", query.RedisArg(query.BackfillRedisKey(prefix, "sentry_user")))
	if c := got["sentry_user"]; c.Err == nil || c.Err.Error() != wantType {
		t.Fatalf("user %+v, want error %q", c, wantType)
	}
	if c := got["sentry_absent"]; c.Err != nil || c.Cursor != nil {
		t.Fatalf("absent %+v", c)
	}
}

// TestStatusNoStoreIsUnreachable: no watermark table and no Redis given makes every row
// unknown and counts it as a failure.
func TestStatusNoStoreIsUnreachable(t *testing.T) {
	t.Parallel()
	schema, conn := setup(t)
	exec(t, fmt.Sprintf(`DROP TABLE %[1]s.hybridcloud_celloutboxbackfillwatermark, %[1]s.hybridcloud_controloutboxbackfillwatermark`, schema))
	src := status.Source{Conn: conn, Schema: schema, Store: status.StoreAuto}
	rep, err := src.Status(context.Background(), status.Request{Tables: []backfill.Table{org(t)}})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Rows[0]
	if rep.Failed != 1 || !r.Unreachable || r.State != string(backfill.StateUnknown) ||
		r.Note != "no watermark tables here and no Redis given: pass --redis-url (or OUTBOXCTL_REDIS_URL)" {
		t.Fatalf("failed %d row %+v", rep.Failed, r)
	}
}

// TestStatusMalformedOption: a malformed gate leaves that table's option unknown and is
// reported as OptionErr, while the status still answers.
func TestStatusMalformedOption(t *testing.T) {
	t.Parallel()
	schema, conn := setup(t)
	tb := org(t)
	exec(t, fmt.Sprintf(`INSERT INTO %s.sentry_option (key, value, last_updated) VALUES ($1, '"three"'::jsonb, now())`, schema), backfill.OptionKey(tb.Name))
	src := status.Source{Conn: conn, Schema: schema, Store: status.StorePostgres}
	rep, err := src.Status(context.Background(), status.Request{Tables: []backfill.Table{tb}})
	if err != nil {
		t.Fatal(err)
	}
	_, want := options.DecodeInt(backfill.OptionKey(tb.Name), `"three"`)
	var malformed *options.MalformedError
	if rep.OptionErr == nil || rep.OptionErr.Error() != want.Error() || !errors.As(rep.OptionErr, &malformed) || rep.Rows[0].Option != nil {
		t.Fatalf("option error %v (want %v), option %v", rep.OptionErr, want, rep.Rows[0].Option)
	}
	if rep.Rows[0].State != string(backfill.StateGated) { // unknown reads as Sentry's default 0
		t.Fatalf("state %q", rep.Rows[0].State)
	}
}

// TestRateAndProgress checks the arithmetic without a database.
func TestRateAndProgress(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	maxID := int64(1000)
	first := status.CursorRead{Cursor: &backfill.Cursor{Low: 100, Version: 2}, At: at}
	second := status.CursorRead{Cursor: &backfill.Cursor{Low: 400, Version: 2}, At: at.Add(30 * time.Second)}
	rate, eta := status.Rate(first, second, &maxID)
	if *rate != 600 || *eta != 60.1 {
		t.Fatalf("rate %v eta %v", *rate, *eta)
	}
	second.Cursor.Version = 3 // a new walk: no rate
	if rate, eta = status.Rate(first, second, &maxID); rate != nil || eta != nil {
		t.Fatalf("rate across versions %v %v", rate, eta)
	}
	minID := int64(1)
	p := status.Progress(&backfill.Cursor{Low: 334}, status.Bounds{Min: &minID, Max: &maxID}, backfill.Status{State: backfill.StateInProgress})
	if *p != 0.333 {
		t.Fatalf("progress %v", *p)
	}
	if p := status.Progress(nil, status.Bounds{}, backfill.Status{Complete: true}); *p != 1 {
		t.Fatalf("complete progress %v", *p)
	}
}

// TestEvaluateSecondReadMalformed: a cursor rewritten malformed between the two reads of
// --sample is a malformed cursor (one failure, the exact reason), not a row without a rate.
func TestEvaluateSecondReadMalformed(t *testing.T) {
	t.Parallel()
	tb := backfill.Table{Name: "sentry_team", Silo: backfill.Cell, Coded: 1}
	first := status.CursorRead{Store: status.StoreRedis, Cursor: &backfill.Cursor{Low: 5, Version: 1}}
	second := status.CursorRead{Store: status.StoreRedis, Err: errors.New(`key outbox_backfill.sentry_team holds "x": not a JSON [low, version] pair`)}
	row, failures := status.Snapshot{}.Evaluate(tb, first, second, true, true)
	want := `on the second read: key outbox_backfill.sentry_team holds "x": not a JSON [low, version] pair`
	if failures != 1 || row.State != string(backfill.StateMalformed) || row.Note != want || row.Rate != nil {
		t.Fatalf("failures %d row %+v, want the note %q", failures, row, want)
	}
}

// TestRedisCursorCap: a value over MaxCursor is refused by its size, before it is fetched,
// with the cap and the flag that raises it named; a value of exactly the cap is read; a
// missing key is no cursor and an empty string a malformed one.
func TestRedisCursorCap(t *testing.T) {
	t.Parallel()
	schema, conn := setup(t)
	prefix := "statustest:" + schema + ":"
	rc := testRedis(t, prefix)
	ctx := context.Background()
	for k, v := range map[string]string{"sentry_organization": "[51, 4]", "sentry_team": "[51, 40]", "sentry_apikey": ""} {
		if err := rc.Set(ctx, query.BackfillRedisKey(prefix, k), v, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	src := status.Source{Conn: conn, Schema: schema, Store: status.StoreRedis, KeyPrefix: prefix, MaxCursor: 7,
		Redis: db.RedisConfig{URL: "redis://" + redisAddr() + "/0"}}
	cursors := src.OpenCursors(ctx, query.Schema{})
	defer cursors.Close()
	got, err := cursors.Read(ctx, []backfill.Table{{Name: "sentry_organization"}, {Name: "sentry_team"}, {Name: "sentry_apikey"}, {Name: "sentry_absent"}})
	if err != nil {
		t.Fatal(err)
	}
	if c := got["sentry_organization"]; c.Err != nil || *c.Cursor != (backfill.Cursor{Low: 51, Version: 4}) {
		t.Fatalf("a cursor of exactly the cap: %+v", c)
	}
	want := "key " + prefix + "outbox_backfill.sentry_team holds 8 bytes, over the 7B cap on a cursor (Sentry's is the JSON [low, version], a few bytes): to read it, raise the cap with --max-cursor-bytes 14B"
	var tooBig *status.CursorTooLargeError
	if c := got["sentry_team"]; c.Cursor != nil || c.Unreachable() || c.Err == nil || c.Err.Error() != want || !errors.As(c.Err, &tooBig) {
		t.Fatalf("over the cap: %+v, want the error %q", c, want)
	}
	if c := got["sentry_apikey"]; c.Cursor != nil || c.Err == nil || c.Err.Error() != `key `+prefix+`outbox_backfill.sentry_apikey holds "": not a JSON [low, version] pair` {
		t.Fatalf("empty string: %+v", c)
	}
	if c := got["sentry_absent"]; c.Err != nil || c.Cursor != nil {
		t.Fatalf("missing key: %+v", c)
	}
}

// TestRedisCursorOverDefaultCapIsNotFetched: a 4 MiB value under the default 64 KiB cap is
// refused having allocated less than 1 MiB (the whole GET and JSON decoding of it cost
// several times its size). Not parallel: the allocation count is the process's.
func TestRedisCursorOverDefaultCapIsNotFetched(t *testing.T) {
	schema, conn := setup(t)
	prefix := "statustest:" + schema + ":"
	rc := testRedis(t, prefix)
	ctx := context.Background()
	big := "[" + strings.Repeat("1", 4<<20) + ",1]"
	if err := rc.Set(ctx, query.BackfillRedisKey(prefix, "sentry_team"), big, 0).Err(); err != nil {
		t.Fatal(err)
	}
	src := status.Source{Conn: conn, Schema: schema, Store: status.StoreRedis, KeyPrefix: prefix,
		Redis: db.RedisConfig{URL: "redis://" + redisAddr() + "/0"}}
	cursors := src.OpenCursors(ctx, query.Schema{})
	defer cursors.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := cursors.Read(ctx, []backfill.Table{{Name: "sentry_team"}})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("key %soutbox_backfill.sentry_team holds %d bytes, over the 64KiB cap on a cursor (Sentry's is the JSON [low, version], a few bytes): to read it, raise the cap with --max-cursor-bytes 8MiB", prefix, len(big))
	if c := got["sentry_team"]; c.Err == nil || c.Err.Error() != want {
		t.Fatalf("cursor %+v, want the error %q", c, want)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Fatalf("refusing a %d-byte cursor allocated %d bytes: it was fetched", len(big), alloc)
	}
}
