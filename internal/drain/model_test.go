package drain_test

// A differential test of the drain engine against a small model of Sentry's drain written
// from the reference (sentry-outboxes.md §3.4–3.7), independent of the engine's code: the
// model is a list of rows and the loop of process_shard / drain_shard(flush_all), nothing
// more. Both drain modes must deliver exactly what the model delivers (same rows, same
// order, same payloads) and leave exactly the rows it leaves, on random shards shaped to
// cross every page and batch boundary, with rows inserted while the drain runs.

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

var (
	diffCases = flag.Int("diff.cases", 200, "random shards the differential test drains (make fuzz runs more)")
	diffSeed  = flag.Uint64("diff.seed", 1, "first seed of the differential test")
)

// mrow is a row of the model's table.
type mrow struct {
	id      int64
	cell    string
	scope   int
	shard   int64
	cat     int
	obj     int64
	payload *string
}

func (r mrow) sameShard(o mrow) bool {
	return r.cell == o.cell && r.scope == o.scope && r.shard == o.shard
}

// modelDrain is Sentry's loop: take the shard's lowest row (at or below the bound, if any),
// deliver the newest row of its coalesce group (no bound), delete the group's rows up to
// that one, repeat until no row is left at or below the bound. inserted(n) returns the rows
// that arrive while the n-th message (1-based) is being delivered.
func modelDrain(rows []mrow, key mrow, bound int64, maxMessages int, inserted func(n int) []mrow) (delivered, left []mrow) {
	table := slices.Clone(rows)
	for maxMessages == 0 || len(delivered) < maxMessages {
		head := -1
		for i, r := range table {
			if r.sameShard(key) && (bound == 0 || r.id <= bound) && (head < 0 || r.id < table[head].id) {
				head = i
			}
		}
		if head < 0 {
			break
		}
		h := table[head]
		newest := h
		for _, r := range table {
			if r.sameShard(h) && r.cat == h.cat && r.obj == h.obj && r.id > newest.id {
				newest = r
			}
		}
		delivered = append(delivered, newest)
		table = append(table, inserted(len(delivered))...)
		table = slices.DeleteFunc(table, func(r mrow) bool {
			return r.sameShard(h) && r.cat == h.cat && r.obj == h.obj && r.id <= newest.id
		})
	}
	slices.SortFunc(table, func(a, b mrow) int { return int(a.id - b.id) })
	return delivered, table
}

// diffCase is one random shard and what happens around its drain.
type diffCase struct {
	seed       uint64
	control    bool
	key        mrow
	rows       []mrow          // in insertion order (ids assigned by the database)
	inserts    map[int][]mrow  // delivery number -> rows that arrive during it
	follow     bool            // no bound
	maxMsgs    int             // 0: all
	batch      int             // BatchSize
	jsonb      bool            // payload column type
	insertedID map[int][]int64 // filled by the engine run: ids the database gave the arrivals
	backoff    time.Duration   // the shard's last delay before the drain (0: fresh rows)
	// late rows are inserted (ids taken) between rows[:lateSplit] and rows[lateSplit:] by a
	// transaction that commits only during delivery lateAt: lower ids that become visible
	// mid-drain, as an outbox row written inside a long transaction does.
	late      []mrow
	lateSplit int
	lateAt    int
}

func payloadFor(r *rand.Rand, jsonb bool, n int) *string {
	switch x := r.IntN(10); {
	case x == 0:
		return nil
	case x == 1 && !jsonb:
		s := fmt.Sprintf("not json %d\t'quoted'", n)
		return &s
	default:
		s := fmt.Sprintf(`{"n": %d, "v": "%x"}`, n, r.Uint32())
		return &s
	}
}

// newDiffCase draws a shard: a mix of ordinary groups and hot groups larger than a page,
// interleaved with rows of other shards (and, in the control silo, of other cells).
func newDiffCase(seed uint64) *diffCase {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	c := &diffCase{seed: seed, control: r.IntN(4) == 0, jsonb: r.IntN(2) == 0, inserts: map[int][]mrow{}, insertedID: map[int][]int64{}}
	c.key = mrow{scope: 0, shard: 42}
	cells := []string{""}
	if c.control {
		c.key.scope = 1
		cells = []string{"us", "de", "eu"}
		c.key.cell = cells[r.IntN(len(cells))]
	}
	c.batch = []int{1, 2, 3, 7, 13, 500}[r.IntN(6)]
	nGroups := 1 + r.IntN([]int{5, 30, 120}[r.IntN(3)])
	type group struct {
		cat  int
		obj  int64
		rows int
	}
	groups := make([]group, nGroups)
	for i := range groups {
		groups[i] = group{cat: 2 + r.IntN(3), obj: int64(r.IntN(40)), rows: 1 + r.IntN(3)}
		if r.IntN(12) == 0 {
			groups[i].rows = 20 + r.IntN(120) // hot: larger than small pages and batches
		}
	}
	// Interleave: each step emits a row of a random group that still has rows, or a row of
	// another shard.
	n := 0
	for {
		live := groups[:0:0]
		for _, g := range groups {
			if g.rows > 0 {
				live = append(live, g)
			}
		}
		if len(live) == 0 {
			break
		}
		i := r.IntN(len(groups))
		if groups[i].rows == 0 {
			continue
		}
		groups[i].rows--
		n++
		row := c.key
		row.cat, row.obj, row.payload = groups[i].cat, groups[i].obj, payloadFor(r, c.jsonb, n)
		c.rows = append(c.rows, row)
		if r.IntN(4) == 0 {
			other := row
			switch r.IntN(3) {
			case 0:
				other.shard = 43
			case 1:
				other.scope = 3 // same shard id, another scope
			default:
				other.cell = cells[r.IntN(len(cells))]
				if !c.control {
					other.shard = 41
				}
			}
			c.rows = append(c.rows, other)
		}
	}
	c.follow = r.IntN(3) == 0
	if len(c.rows) > 1 && r.IntN(3) == 0 {
		c.lateSplit, c.lateAt = 1+r.IntN(len(c.rows)-1), 1+r.IntN(3)
		for range 1 + r.IntN(3) {
			row := c.key
			g := groups[r.IntN(nGroups)]
			row.cat, row.obj = g.cat, g.obj
			n++
			row.payload = payloadFor(r, c.jsonb, n)
			c.late = append(c.late, row)
		}
	}
	if r.IntN(3) == 0 {
		c.backoff = time.Duration(1+r.IntN(4000)) * time.Second // already backing off, maybe at the cap
	}
	if r.IntN(5) == 0 {
		c.maxMsgs = 1 + r.IntN(4)
	}
	// Rows that arrive during deliveries: into the group just delivered, a later group, a new
	// group, another shard.
	if r.IntN(2) == 0 {
		for range 1 + r.IntN(4) {
			at := 1 + r.IntN(nGroups)
			row := c.key
			switch r.IntN(4) {
			case 0, 1:
				g := groups[r.IntN(nGroups)]
				row.cat, row.obj = g.cat, g.obj
			case 2:
				row.cat, row.obj = 4, int64(1000+r.IntN(5))
			default:
				row.shard, row.cat, row.obj = 43, 2, 7
			}
			n++
			row.payload = payloadFor(r, c.jsonb, n)
			c.inserts[at] = append(c.inserts[at], row)
		}
	}
	return c
}

// bigCases are the repros at the default page and batch sizes.
func bigCases() []*diffCase {
	mk := func(seed uint64, groups ...[3]int) *diffCase {
		c := &diffCase{seed: seed, key: mrow{scope: 0, shard: 42}, inserts: map[int][]mrow{}, insertedID: map[int][]int64{}, jsonb: true}
		n := 0
		for _, g := range groups {
			for range g[2] {
				n++
				s := fmt.Sprintf(`{"n": %d}`, n)
				c.rows = append(c.rows, mrow{scope: 0, shard: 42, cat: g[0], obj: int64(g[1]), payload: &s})
			}
		}
		return c
	}
	many := [][3]int{{3, 1, 6000}}
	for i := range 705 {
		many = append(many, [3]int{3, 100 + i, 1})
	}
	thousands := make([][3]int, 0, 2500)
	for i := range 2500 {
		thousands = append(thousands, [3]int{2 + i%3, i, 1 + i%2})
	}
	return []*diffCase{
		mk(9004, thousands...), // 2,500 groups, more than any batch
		mk(9001, [3]int{3, 7, 5000}, [3]int{2, 42, 1}),
		mk(9002, [3]int{3, 7, 6000}, [3]int{2, 1, 1}, [3]int{2, 2, 1}, [3]int{3, 8, 1}, [3]int{4, 9, 1}),
		mk(9003, many...),
	}
}

func insertRows(ctx context.Context, tx interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, schema, table string, jsonb bool, rows []mrow) ([]int64, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	cells, scopes, shards, cats, objs := make([]string, len(rows)), make([]int64, len(rows)), make([]int64, len(rows)), make([]int64, len(rows)), make([]int64, len(rows))
	payloads := make([]*string, len(rows))
	for i, r := range rows {
		cells[i], scopes[i], shards[i], cats[i], objs[i], payloads[i] = r.cell, int64(r.scope), r.shard, int64(r.cat), r.obj, r.payload
	}
	cellCol, cellVal := "", ""
	if strings.Contains(table, "control") {
		cellCol, cellVal = ", region_name", ", g.cell"
	}
	q := fmt.Sprintf(`INSERT INTO %s.%s (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added%s)
SELECT g.scope, g.shard, g.cat, g.obj, g.payload::%s, now(), '%s', now()%s
  FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::text[]) WITH ORDINALITY AS g(cell, scope, shard, cat, obj, payload, n)
 ORDER BY g.n
RETURNING id`, pgx.Identifier{schema}.Sanitize(), table, cellCol, map[bool]string{true: "jsonb", false: "text"}[jsonb], fixture.ThePast, cellVal)
	res, err := tx.Query(ctx, q, cells, scopes, shards, cats, objs, payloads)
	if err != nil {
		return nil, err
	}
	ids, err := pgx.CollectRows(res, pgx.RowTo[int64])
	if err == nil && len(ids) != len(rows) {
		err = fmt.Errorf("inserted %d rows, want %d", len(ids), len(rows))
	}
	return ids, err
}

// diffEnv is one worker's tables (one schema per payload type, emptied between cases) and
// the connections that seed, watch and drain them.
type diffEnv struct {
	schemas map[bool]string
	// dsn and pool commit without waiting for the WAL flush (synchronous_commit = off): a
	// run commits thousands of transactions (exact mode: one per message) and each waited
	// for an fsync of a disk shared with every other test. A commit is visible to other
	// sessions as soon as it returns either way, which is all the drain's semantics (and
	// this test) depend on; only a server crash could lose it.
	dsn  string
	pool *pgxpool.Pool
	// last is the table the previous case wrote, the only one to empty.
	last string
}

func newDiffEnv(t *testing.T) *diffEnv {
	t.Helper()
	testdb.Pool(t) // skips, or fails under CI, when the server is unreachable
	e := &diffEnv{dsn: withRuntimeParam(testdb.DSN(), "synchronous_commit", "off")}
	cfg, err := pgxpool.ParseConfig(e.dsn)
	if err != nil {
		t.Fatal(err)
	}
	// Three: the late rows' open transaction, the seeding beside it, the handler's inserts.
	cfg.MaxConns = 3
	if e.pool, err = pgxpool.NewWithConfig(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.pool.Close)
	e.schemas = map[bool]string{
		true:  testdb.Schema(t, fixture.Options{Payload: fixture.PayloadJSONB}),
		false: testdb.Schema(t, fixture.Options{Payload: fixture.PayloadText}),
	}
	return e
}

// withRuntimeParam adds a server setting to a URL or key=value connection string. The
// server takes it as a startup parameter (a PgBouncer would refuse it: this test runs
// against the server directly).
func withRuntimeParam(dsn, key, value string) string {
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return dsn + " " + key + "=" + value
	}
	if strings.Contains(dsn, "?") {
		return dsn + "&" + key + "=" + value
	}
	return dsn + "?" + key + "=" + value
}

// reset empties the table the previous case wrote and seeds the case into table.
//
// DELETE and VACUUM, not TRUNCATE: a TRUNCATE gives the table and its four indexes new
// files, 30–130 ms on this machine, more than seeding and draining a small case; a DELETE
// of a few hundred rows and the VACUUM after it cost a few ms. The VACUUM keeps the tables
// from filling with dead rows over hundreds of cases (TRUNCATE false: shrinking the file
// needs a lock that the late rows' open transaction blocks, and VACUUM retries it for up
// to 5 s). Its ANALYZE gives the planner the case's statistics: the test server runs
// without autovacuum, and on a table never analyzed the claim's join is planned for one
// row, a nested loop that took 4–13 s per claim of the big cases instead of 0.1–0.3 s.
func (e *diffEnv) reset(ctx context.Context, t *testing.T, schema, table string, c *diffCase) ([]int64, []int64, pgx.Tx) {
	name := pgx.Identifier{schema, table}.Sanitize()
	vacuum := name
	if e.last != "" {
		if _, err := e.pool.Exec(ctx, "DELETE FROM "+e.last); err != nil {
			t.Fatal(err)
		}
		if e.last != name {
			vacuum += ", " + e.last
		}
	}
	e.last = name
	ids, lateIDs, lateTx := insertWithLate(ctx, t, e.pool, schema, table, c)
	if _, err := e.pool.Exec(ctx, "VACUUM (ANALYZE, TRUNCATE false) "+vacuum); err != nil {
		t.Fatal(err)
	}
	return ids, lateIDs, lateTx
}

func (e *diffEnv) run(t *testing.T, c *diffCase, mode drain.Mode) {
	ctx := context.Background()
	pool := e.pool
	schema := e.schemas[c.jsonb]
	table := "sentry_regionoutbox"
	target := query.Target{Silo: query.SiloCell, Schema: schema}
	if c.control {
		table = "sentry_controloutbox"
		target = query.Target{Silo: query.SiloControl, Schema: schema, Cell: c.key.cell}
	}
	ids, lateIDs, lateTx := e.reset(ctx, t, schema, table, c)
	defer func() { _ = lateTx.Rollback(context.Background()) }()
	late := slices.Clone(c.late)
	for i := range late {
		late[i].id = lateIDs[i]
	}
	lateDone := false
	commitLate := func() {
		if !lateDone && len(late) > 0 {
			lateDone = true
			if err := lateTx.Commit(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	rows := slices.Clone(c.rows)
	var bound int64
	for i := range rows {
		rows[i].id = ids[i]
		if rows[i].sameShard(c.key) {
			bound = max(bound, ids[i])
		}
	}
	if bound == 0 {
		return // nothing of this shard was drawn
	}
	shardPred := fmt.Sprintf("shard_scope = %d AND shard_identifier = %d", c.key.scope, c.key.shard)
	if c.control {
		shardPred += fmt.Sprintf(" AND region_name = '%s'", c.key.cell)
	}
	if c.backoff > 0 {
		if _, err := pool.Exec(ctx, fmt.Sprintf("UPDATE %s.%s SET scheduled_from = now() - interval '1 day', scheduled_for = now() - interval '1 day' + $1::interval WHERE %s",
			pgx.Identifier{schema}.Sanitize(), table, shardPred), c.backoff); err != nil {
			t.Fatal(err)
		}
	}
	if c.follow {
		bound = 0
	}
	k := query.ShardKey{Scope: query.Enum{Value: c.key.scope, Name: "SCOPE"}, ID: c.key.shard}
	// One connection per drain, closed at once: hundreds of cases must not hold hundreds of
	// connections until the test ends.
	cn, err := db.Connect(ctx, db.Config{DSN: e.dsn, Command: "drain-model-test"})
	if err != nil {
		testdb.Unreachable(t, err)
	}
	defer cn.Close(context.Background())
	claimed, err := drain.Claim(ctx, cn, target, k)
	if err != nil {
		t.Fatal(err)
	}
	wantDelay := 2 * max(c.backoff, time.Second)
	if wantDelay > time.Hour {
		wantDelay = time.Hour
	}
	if claimed.Delay() != wantDelay {
		t.Errorf("seed %d: claim delay %s, want %s (2 × last delay of the lowest row, capped at 1 h)", c.seed, claimed.Delay(), wantDelay)
	}
	var got []mrow
	n := 0
	h := drain.HandlerFunc(func(ctx context.Context, m drain.Message) error {
		n++
		got = append(got, mrow{id: m.ID, cell: m.Cell, scope: m.Scope, shard: m.Shard, cat: m.Category, obj: m.Object, payload: m.Payload})
		if n == c.lateAt {
			commitLate()
		}
		if arr := c.inserts[n]; len(arr) > 0 {
			ids, err := insertRows(ctx, pool, schema, table, c.jsonb, arr)
			if err != nil {
				return err
			}
			c.insertedID[n] = ids
		}
		return nil
	})
	res, err := drain.Run(ctx, cn, drain.Options{Target: target, Shard: k, Mode: mode, Handler: h, Watermark: bound,
		MaxMessages: c.maxMsgs, BatchSize: c.batch})
	if err != nil || res.Failed != nil || res.Contended {
		t.Fatalf("seed %d %s: %+v %v", c.seed, mode, res, err)
	}
	commitLate() // a drain that ended before lateAt: the rows are there afterwards
	next := int64(1 << 40)
	modelLate := false
	want, wantLeft := modelDrain(rows, c.key, bound, c.maxMsgs, func(d int) []mrow {
		arr := slices.Clone(c.inserts[d])
		for i := range arr {
			if got := c.insertedID[d]; i < len(got) {
				arr[i].id = got[i]
			} else {
				next++
				arr[i].id = next // the engine never got here: the comparison fails anyway
			}
		}
		if d == c.lateAt && len(late) > 0 {
			modelLate = true
			arr = append(arr, late...)
		}
		return arr
	})
	if !modelLate && len(late) > 0 {
		wantLeft = append(wantLeft, late...)
		slices.SortFunc(wantLeft, func(a, b mrow) int { return int(a.id - b.id) })
	}
	if res.Delivered != len(got) {
		t.Errorf("seed %d %s: Result.Delivered %d, handler saw %d", c.seed, mode, res.Delivered, len(got))
	}
	if d := diffRows(got, want); d != "" {
		t.Errorf("seed %d %s (batch %d, follow %v, max %d, control %v, late %d at %d): deliveries differ from the model: %s",
			c.seed, mode, c.batch, c.follow, c.maxMsgs, c.control, len(c.late), c.lateAt, d)
	}
	left, err := pool.Query(ctx, fmt.Sprintf("SELECT id, %s, shard_scope, shard_identifier, category, object_identifier, payload::text FROM %s.%s ORDER BY id",
		map[bool]string{true: "region_name", false: "''"}[c.control], pgx.Identifier{schema}.Sanitize(), table))
	if err != nil {
		t.Fatal(err)
	}
	var gotLeft []mrow
	for left.Next() {
		var r mrow
		var scope, cat int64
		if err := left.Scan(&r.id, &r.cell, &scope, &r.shard, &cat, &r.obj, &r.payload); err != nil {
			t.Fatal(err)
		}
		r.scope, r.cat = int(scope), int(cat)
		gotLeft = append(gotLeft, r)
	}
	if d := diffRows(gotLeft, wantLeft); d != "" {
		t.Errorf("seed %d %s: rows left differ from the model: %s", c.seed, mode, d)
	}
}

func show(r mrow) string {
	p := "NULL"
	if r.payload != nil {
		p = *r.payload
	}
	return fmt.Sprintf("{id %d %s/%d/%d cat %d obj %d %s}", r.id, r.cell, r.scope, r.shard, r.cat, r.obj, p)
}

func diffRows(got, want []mrow) string {
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			return fmt.Sprintf("%d rows, want %d; first missing: %s", len(got), len(want), show(want[i]))
		case i >= len(want):
			return fmt.Sprintf("%d rows, want %d; first extra: %s", len(got), len(want), show(got[i]))
		case show(got[i]) != show(want[i]):
			return fmt.Sprintf("row %d: got %s, want %s", i, show(got[i]), show(want[i]))
		}
	}
	return ""
}

// TestDrainMatchesSentryModel drains random shards in both modes and compares each with the
// model. -diff.cases and -diff.seed run more (make fuzz).
func TestDrainMatchesSentryModel(t *testing.T) {
	t.Parallel()
	cases := bigCases()
	n := *diffCases
	if raceEnabled && n > 40 {
		n = 40
	}
	// make test/race (-short) drains the large shapes and 10 random ones: make test drains
	// the 200, and the code under the race detector is the same for every case.
	if testing.Short() && n > 10 {
		n = 10
	}
	for i := range n {
		cases = append(cases, newDiffCase(*diffSeed+uint64(i)))
	}
	const workers = 2
	for w := range workers {
		t.Run(fmt.Sprintf("worker%d", w), func(t *testing.T) {
			t.Parallel()
			env := newDiffEnv(t)
			for i := w; i < len(cases); i += workers {
				for _, mode := range []drain.Mode{drain.ModeExact, drain.ModeBatch} {
					c := cases[i]
					c.insertedID = map[int][]int64{}
					env.run(t, c, mode)
				}
				if t.Failed() {
					return // the first difference says enough
				}
			}
		})
	}
}

// insertWithLate inserts the case's rows, with its late rows in a transaction left open
// between the two halves (their ids are lower than the second half's). It returns the
// committed rows' ids, the late rows' ids and the open transaction.
func insertWithLate(ctx context.Context, t *testing.T, pool *pgxpool.Pool, schema, table string, c *diffCase) ([]int64, []int64, pgx.Tx) {
	split := len(c.rows)
	if len(c.late) > 0 {
		split = c.lateSplit
	}
	ids, err := insertRows(ctx, pool, schema, table, c.jsonb, c.rows[:split])
	if err != nil {
		t.Fatal(err)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lateIDs, err := insertRows(ctx, tx, schema, table, c.jsonb, c.late)
	if err != nil {
		t.Fatal(err)
	}
	more, err := insertRows(ctx, pool, schema, table, c.jsonb, c.rows[split:])
	if err != nil {
		t.Fatal(err)
	}
	return append(ids, more...), lateIDs, tx
}
