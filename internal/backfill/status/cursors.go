package status

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/bytesize"
	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
)

// CursorRead is one table's cursor as read from a store.
type CursorRead struct {
	Store  string
	Cursor *backfill.Cursor
	// Err is why the cursor could not be read (a *db.Error: unreachable) or is malformed.
	Err error
	At  time.Time
	// Updated is the watermark's date_updated (zero for Redis, which keeps no date).
	Updated time.Time
}

// errNoStore is the row error when neither watermark tables nor a Redis are there.
var errNoStore = errors.New("no watermark tables here and no Redis given: pass --redis-url (or OUTBOXCTL_REDIS_URL)")

// Unreachable reports whether the read failed for want of its store (Redis down, none
// given) rather than for a malformed cursor.
func (c CursorRead) Unreachable() bool {
	var dbErr *db.Error
	return c.Err != nil && (errors.As(c.Err, &dbErr) || errors.Is(c.Err, errNoStore))
}

// Cursors reads the cursors of the selected tables, from the store chosen once.
type Cursors struct {
	src      Source
	sch      query.Schema
	postgres bool
	rc       redis.UniversalClient
	redisErr error
}

// OpenCursors chooses the store (watermark tables when --store says so or, on auto, when
// either exists; else Redis) and connects to Redis if that is it. Close releases it.
func (s Source) OpenCursors(ctx context.Context, sch query.Schema) *Cursors {
	c := &Cursors{src: s, sch: sch}
	c.postgres = s.Store == StorePostgres || (s.Store == StoreAuto && (sch.Table(query.CellWatermark).Present || sch.Table(query.ControlWatermark).Present))
	if c.postgres {
		return c
	}
	if !s.Redis.Given() {
		c.redisErr = errNoStore
		return c
	}
	c.rc, c.redisErr = db.ConnectRedis(ctx, s.Redis)
	return c
}

// Close closes the Redis client, if any.
func (c *Cursors) Close() {
	if c.rc != nil {
		_ = c.rc.Close()
	}
}

// Read reads every table's cursor once.
func (c *Cursors) Read(ctx context.Context, tables []backfill.Table) (map[string]CursorRead, error) {
	if c.postgres {
		return c.readWatermarks(ctx, tables)
	}
	out := map[string]CursorRead{}
	for _, t := range tables {
		if c.redisErr != nil {
			out[t.Name] = CursorRead{Store: StoreRedis, Err: c.redisErr}
			continue
		}
		out[t.Name] = c.readRedis(ctx, query.BackfillRedisKey(c.src.KeyPrefix, t.Name))
	}
	return out, nil
}

// readWatermarks reads the cursors from the watermark tables, the table's silo first.
func (c *Cursors) readWatermarks(ctx context.Context, tables []backfill.Table) (map[string]CursorRead, error) {
	byTable := map[string]map[string]CursorRead{}
	err := db.ReadTx(ctx, c.src.Conn, func(tx pgx.Tx) error {
		for _, wt := range []string{query.CellWatermark, query.ControlWatermark} {
			if !c.sch.Table(wt).Present {
				continue
			}
			rows, err := query.All[query.WatermarkRow](ctx, tx, query.Watermarks(c.src.Schema, wt, Names(tables)))
			if err != nil {
				return db.Classify(err, "backfill-watermarks")
			}
			byTable[wt] = map[string]CursorRead{}
			for _, r := range rows {
				byTable[wt][r.TableName] = watermarkCursor(wt, r, c.src.now())
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := map[string]CursorRead{}
	for _, t := range tables {
		order := []string{query.CellWatermark, query.ControlWatermark}
		if t.Silo == backfill.Control {
			order = []string{query.ControlWatermark, query.CellWatermark}
		}
		cr := CursorRead{Store: storeLabel(order[0]), At: c.src.now()}
		for _, wt := range order {
			if found, ok := byTable[wt][t.Name]; ok {
				cr = found
				break
			}
		}
		out[t.Name] = cr
	}
	return out, nil
}

// watermarkCursor is one watermark row as a cursor. A NULL low_bound or version (Sentry's
// columns are NOT NULL; a hand-made or older table may not be) is a malformed cursor, never
// a 0 read as a position.
func watermarkCursor(wt string, r query.WatermarkRow, at time.Time) CursorRead {
	cr := CursorRead{Store: storeLabel(wt), At: at, Updated: utc(r.DateUpdated)}
	var nulls []string
	if r.LowBound == nil {
		nulls = append(nulls, "low_bound")
	}
	if r.Version == nil {
		nulls = append(nulls, "version")
	}
	if len(nulls) > 0 {
		cr.Err = fmt.Errorf("the row of %s in %s holds a NULL %s, not the pair (low_bound, version)", r.TableName, wt, strings.Join(nulls, " and "))
		return cr
	}
	cr.Cursor = &backfill.Cursor{Low: *r.LowBound, Version: *r.Version}
	return cr
}

// storeLabel names a watermark table briefly: postgres:cell or postgres:control.
func storeLabel(watermarkTable string) string {
	if watermarkTable == query.ControlWatermark {
		return "postgres:control"
	}
	return "postgres:cell"
}

func (c *Cursors) readRedis(ctx context.Context, key string) CursorRead {
	cr := CursorRead{Store: StoreRedis, At: c.src.now()}
	raw, err := c.getCapped(ctx, key)
	var tooBig *CursorTooLargeError
	switch {
	case errors.Is(err, redis.Nil):
		return cr
	case errors.As(err, &tooBig):
		cr.Err = err
		return cr
	case err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE"):
		// A key that is not a string is a malformed cursor, like a string that is not JSON.
		cr.Err = fmt.Errorf("key %s holds a %s, not the JSON string [low, version]", query.RedisArg(key), c.redisType(ctx, key))
		return cr
	case err != nil:
		cr.Err = &db.Error{Kind: db.KindUnreachable, Msg: "reading Redis key " + query.RedisArg(key) + ": " + db.RedactDSN(err.Error()), Err: err}
		return cr
	}
	cur, perr := backfill.ParseRedisCursor(raw)
	if perr != nil {
		start := raw
		if len(start) > 40 {
			start = start[:40] + "…"
		}
		cr.Err = fmt.Errorf("key %s holds %q: %w", query.RedisArg(key), start, perr)
		return cr
	}
	cr.Cursor = &cur
	return cr
}

// DefaultMaxCursor is backfill status's cap on one Redis cursor value (--max-cursor-bytes
// raises it). Sentry's cursor is the JSON [low, version] of two integers, a few dozen bytes at
// most: 64 KiB is never reached by one, and a value past it is refused having cost at most the cap.
const DefaultMaxCursor int64 = 64 << 10

// CursorTooLargeError is a Redis cursor value over the cap: a malformed cursor of its row,
// refused before it is fetched.
type CursorTooLargeError struct {
	Key       string
	Size, Max int64
}

func (e *CursorTooLargeError) Error() string {
	return fmt.Sprintf("key %s holds %d bytes, over the %s cap on a cursor (Sentry's is the JSON [low, version], a few bytes): to read it, raise the cap with --max-cursor-bytes %s",
		query.RedisArg(e.Key), e.Size, bytesize.Format(e.Max), bytesize.Format(nextCap(e.Size, e.Max)))
}

// nextCap is a cap that takes size: the cap doubled until it does.
func nextCap(size, limit int64) int64 {
	for limit < size && limit < 1<<61 {
		limit *= 2
	}
	return limit
}

// getCapped is GET bounded by the cap, in one round trip: STRLEN sizes the value and
// GETRANGE fetches at most one byte past the cap, so a value over it (even one that grew
// between the two) costs at most the cap, never its size (a 60 MB value took 257 MiB).
// EXISTS tells a missing key (redis.Nil) from an empty string.
func (c *Cursors) getCapped(ctx context.Context, key string) (string, error) {
	limit := c.src.MaxCursor
	if limit <= 0 {
		limit = DefaultMaxCursor
	}
	var size *redis.IntCmd
	var value *redis.StringCmd
	var exists *redis.IntCmd
	_, _ = c.rc.Pipelined(ctx, func(p redis.Pipeliner) error {
		size, value, exists = p.StrLen(ctx, key), p.GetRange(ctx, key, 0, limit), p.Exists(ctx, key)
		return nil
	})
	for _, cmd := range []redis.Cmder{size, value, exists} {
		if err := cmd.Err(); err != nil {
			return "", err //nolint:wrapcheck // readRedis tells WRONGTYPE from an unreachable Redis
		}
	}
	raw := value.Val()
	switch {
	case size.Val() > limit || int64(len(raw)) > limit:
		return "", &CursorTooLargeError{Key: key, Size: max(size.Val(), int64(len(raw))), Max: limit}
	case raw == "" && exists.Val() == 0:
		return "", redis.Nil
	}
	return raw, nil
}

// redisType names a key's Redis type, for an error.
func (c *Cursors) redisType(ctx context.Context, key string) string {
	if t, err := c.rc.Type(ctx, key).Result(); err == nil {
		return t
	}
	return "value of another type"
}

// CursorTables lists the tables that have a cursor in the watermark tables or, without
// them, in Redis (SCAN on every master of a cluster, never KEYS). An unreachable Redis is
// left to the main read to report, per row.
func (s Source) CursorTables(ctx context.Context) ([]string, error) {
	names, usedPG, err := s.watermarkTables(ctx)
	if err != nil || usedPG || s.Store == StorePostgres || !s.Redis.Given() {
		return names, err
	}
	rc, err := db.ConnectRedis(ctx, s.Redis)
	if err != nil {
		return names, nil //nolint:nilerr // the main read reports an unreachable Redis per row
	}
	defer rc.Close()
	keys, err := ScanPrefix(ctx, rc, query.BackfillRedisKey(s.KeyPrefix, ""))
	return append(names, keys...), err
}

func (s Source) watermarkTables(ctx context.Context) (names []string, usedPG bool, err error) {
	err = db.ReadTx(ctx, s.Conn, func(tx pgx.Tx) error {
		sch, err := outbox.LoadCatalog(ctx, tx, s.Schema, []string{query.CellWatermark, query.ControlWatermark})
		if err != nil {
			return err
		}
		for _, wt := range []string{query.CellWatermark, query.ControlWatermark} {
			if !sch.Table(wt).Present || s.Store == StoreRedis {
				continue
			}
			usedPG = true
			rows, err := query.All[query.WatermarkTableRow](ctx, tx, query.WatermarkTables(s.Schema, wt))
			if err != nil {
				return db.Classify(err, "backfill-cursor-tables")
			}
			for _, r := range rows {
				if r.TableName != nil {
					names = append(names, *r.TableName)
				}
			}
		}
		return nil
	})
	return names, usedPG, err
}

// ScanPrefix lists, without the prefix, every key that starts with prefix: SCAN (never
// KEYS), on every master of a Redis Cluster.
func ScanPrefix(ctx context.Context, rc redis.UniversalClient, prefix string) ([]string, error) {
	var names []string
	var mu sync.Mutex // ForEachMaster scans the masters concurrently
	scan := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, GlobEscape(prefix)+"*", 500).Iterator()
		for iter.Next(ctx) {
			mu.Lock()
			names = append(names, strings.TrimPrefix(iter.Val(), prefix))
			mu.Unlock()
		}
		return iter.Err()
	}
	var err error
	if cc, ok := rc.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, scan)
	} else if c, ok := rc.(*redis.Client); ok {
		err = scan(ctx, c)
	}
	return names, err
}

// GlobEscape makes a key prefix match itself in SCAN's MATCH pattern: a prefix holding *, ?,
// [ or \ would otherwise match other keys.
func GlobEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`, `]`, `\]`).Replace(s)
}

func utc(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// WithCursorTables is all with every table that has a cursor added (Sentry's default
// replication_version 1, unregistered), and the names refused as a table's (CheckName),
// which the caller warns about and skips.
func (s Source) WithCursorTables(ctx context.Context, all []backfill.Table) ([]backfill.Table, []error, error) {
	extra, err := s.CursorTables(ctx)
	if err != nil {
		return nil, nil, err
	}
	var skipped []error
	for _, name := range extra {
		if err := backfill.CheckName("table", name); err != nil {
			skipped = append(skipped, err)
			continue
		}
		if _, ok := backfill.Lookup(all, name); !ok {
			all = append(all, backfill.Table{Name: name, Silo: backfill.Cell, Coded: 1, Unregistered: true})
		}
	}
	return all, skipped, nil
}

// RedisComments are the redis-cli commands that read the selected tables' Redis-era cursors
// (before September 2026), as SQL comments, so a printed script stays pasteable.
func RedisComments(keyPrefix string, selected []backfill.Table) string {
	comments := "\n-- Before September 2026 the cursors live in Redis; read them with:\n"
	for _, n := range Names(selected) {
		comments += query.RedisGetComment(query.BackfillRedisKey(keyPrefix, n)) + "\n"
	}
	return comments
}
