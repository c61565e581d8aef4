package replica

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/query/session"
)

// A verify reads, per pair, either one statement of one database (a monolith: the set-based
// comparison, VerifyMonolith) or one stream from each silo merged in object order
// (VerifySplit). Both classify with Classify: the monolith's counts come from its one pass
// (the same rules, in SQL) and its listed objects through Classify, the split's every
// record through the Collector.

// Sides are where a pair's tables are: the source's schema and the replica's ("" for the
// search path; the same in a monolith).
type Sides struct {
	SourceSchema, ReplicaSchema string
}

// Select is the pair's selection of one cell.
func (s Sides) Select(cell string, ids []int64, limit int) query.ReplicaSelect {
	return query.ReplicaSelect{SourceSchema: s.SourceSchema, ReplicaSchema: s.ReplicaSchema, Cell: cell, IDs: ids, Limit: limit}
}

// ColumnsStatement is what verify runs first on each side: the columns of the pair's tables.
func ColumnsStatement(tables ...string) query.Statement { return query.ReplicaColumns(tables) }

// LoadColumns reads the columns of tables (qualified) on q.
func LoadColumns(ctx context.Context, q query.Querier, tables ...string) (map[string]map[string]bool, error) {
	rows, err := query.All[query.ReplicaColumnRow](ctx, q, ColumnsStatement(tables...))
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]bool{}
	for _, r := range rows {
		if out[r.Table] == nil {
			out[r.Table] = map[string]bool{}
		}
		out[r.Table][r.Column] = true
	}
	return out, nil
}

// Introspect narrows c's pair to the fields both databases' tables have (srcQ holds the
// source, repQ the replica: the same in a monolith), recording the others in c.Skipped.
func Introspect(ctx context.Context, srcQ, repQ query.Querier, s Sides, c *Collector) error {
	src, rep := query.QualifiedTable(s.SourceSchema, c.Pair.Source), query.QualifiedTable(s.ReplicaSchema, c.Pair.Replica)
	cols, err := LoadColumns(ctx, srcQ, src)
	if err != nil {
		return err
	}
	repCols, err := LoadColumns(ctx, repQ, rep)
	if err != nil {
		return err
	}
	for t, cs := range repCols {
		cols[t] = cs
	}
	p, skipped, err := c.Pair.Compared(src, rep, cols)
	if err != nil {
		return err
	}
	if p.NullableKey && cols[rep][p.ReplicaKey] {
		n, err := query.One[query.ReplicaUnkeyedRow](ctx, repQ, UnkeyedStatement(p, s))
		if err != nil {
			return err
		}
		if n.Unkeyed > 0 {
			skipped = append(skipped, Skipped{fmt.Sprintf("%d %s row(s)", n.Unkeyed, p.Replica),
				"their " + p.ReplicaKey + " is NULL (written before Sentry keyed them): Sentry's receiver finds replicas by that key only and never updates them"})
		}
	}
	c.Pair, c.Skipped = p, skipped
	return nil
}

// UnkeyedStatement counts p's replica rows that name no object (a NullableKey pair's).
func UnkeyedStatement(p Pair, s Sides) query.Statement {
	return query.ReplicaUnkeyed(p.ReplicaSpec, s.ReplicaSchema)
}

// MonolithStatement is what a monolith verify of p runs (after the columns).
func MonolithStatement(p Pair, s Sides, cell string, ids []int64, limit int) query.Statement {
	return query.VerifyPair(p.ReplicaSpec, s.Select(cell, ids, limit))
}

// SplitStatements are what a split verify of p runs: the source silo's stream, then the
// replica silo's.
func SplitStatements(p Pair, s Sides, cell string, ids []int64) (source, rows query.Statement) {
	sel := s.Select(cell, ids, 0)
	return query.ReplicaSource(p.ReplicaSpec, sel), query.ReplicaRows(p.ReplicaSpec, sel)
}

// VerifyMonolith compares c's pair in one database, in the snapshot q is: the counts of its
// one pass, and the first c.Limit drifted objects classified from their values.
func VerifyMonolith(ctx context.Context, q query.Querier, schema, cell string, ids []int64, c *Collector) error {
	st := MonolithStatement(c.Pair, Sides{schema, schema}, cell, ids, c.Limit)
	var cols columns
	var counted bool
	var err error
	err = query.Stream(ctx, q, st, func(names []string) error {
		cols, err = columnsOf(c.Pair, names, true, true)
		return err
	}, func(row []any) error {
		if !counted {
			counted = true
			if c.Counts, err = cols.counts(row); err != nil {
				return fmt.Errorf("%s: %w", st.Name, err)
			}
		}
		if row[cols.object] == nil {
			return nil // nothing drifted: the counts' row alone
		}
		r, err := cols.record(row)
		if err != nil {
			return fmt.Errorf("%s: %w", st.Name, err)
		}
		d, ok := Classify(c.Pair, r)
		if !ok {
			return fmt.Errorf("%s: object %d is listed as drifted but its values are in sync", st.Name, r.ObjectID)
		}
		c.keep(d)
		return nil
	})
	if err != nil {
		return err
	}
	if !counted {
		return fmt.Errorf("%s: no rows, want at least the counts' row", st.Name)
	}
	return nil
}

// streamed is one record of a split stream, or the stream's end (err, or done).
type streamed struct {
	r    Record
	err  error
	done bool
}

// comparableText are the settings that change the text of a value, each with the value a
// split verify reads both sides in: TimeZone (a timestamptz), DateStyle (a date or a
// timestamp), IntervalStyle (an interval), extra_float_digits (a float: 1 is PostgreSQL
// 12's default, the shortest exact text) and bytea_output (a bytea).
var comparableText = [][2]string{ //nolint:gochecknoglobals // constant table
	{"TimeZone", session.Quote("UTC")},
	{"DateStyle", session.Quote("ISO, MDY")},
	{"IntervalStyle", session.Quote("postgres")},
	{"extra_float_digits", "1"},
	{"bytea_output", session.Quote("hex")},
}

// PinValueText makes the transaction tx render every value's text the one way, whatever the
// server's, the role's or the dsn's settings: a split verify compares the two sides' values
// as text from two sessions, which would otherwise disagree on every timestamp (TimeZone,
// DateStyle), interval, float or bytea field of servers configured apart.
func PinValueText(ctx context.Context, tx pgx.Tx) error {
	for _, s := range comparableText {
		if _, err := tx.Exec(ctx, session.SetLocal(s[0], s[1])); err != nil {
			return err
		}
	}
	return nil
}

// VerifySplit compares c's pair across two databases: the source silo's rows (srcQ, in its
// own snapshot) and the replica silo's (repQ, in its own), each streamed in object order
// and merged, so memory holds a few rows of each side whatever the tables' size.
func VerifySplit(ctx context.Context, srcQ, repQ query.Querier, s Sides, cell string, ids []int64, c *Collector) error {
	ctx, cancel := context.WithCancel(ctx)
	srcSt, repSt := SplitStatements(c.Pair, s, cell, ids)
	src := produce(ctx, srcQ, srcSt, c.Pair, true)
	rep := produce(ctx, repQ, repSt, c.Pair, false)
	// On an error one side may still be streaming: both producers are stopped and waited
	// for before returning, so the caller's next statement (a rollback) never meets a
	// connection still in use by a producer.
	defer func() {
		cancel()
		for range src {
		}
		for range rep {
		}
	}()
	// A producer the context stopped may close its channel without its last record (its
	// send lost to ctx.Done): that end is the context's error, never a zero record (which
	// would merge as object 0, again and again).
	recv := func(ch <-chan streamed) streamed {
		if s, ok := <-ch; ok {
			return s
		}
		if err := ctx.Err(); err != nil {
			return streamed{err: err}
		}
		return streamed{err: errors.New("verify: a side's stream ended before its end")}
	}
	a, b := recv(src), recv(rep)
	for {
		if a.err != nil {
			return a.err
		}
		if b.err != nil {
			return b.err
		}
		switch {
		case a.done && b.done:
			return nil
		case b.done || (!a.done && a.r.ObjectID < b.r.ObjectID):
			c.Add(a.r)
			a = recv(src)
		case a.done || b.r.ObjectID < a.r.ObjectID:
			c.Add(b.r)
			b = recv(rep)
		default:
			r := a.r
			r.Replica, r.ReplicaShard = b.r.Replica, b.r.ReplicaShard
			if !r.HasSource() {
				// A deletion queued: pending only in the shard the object had, the replica's.
				for i := range r.candidates {
					if r.candidates[i].Shard == r.ReplicaShard {
						r.Pending = &r.candidates[i]
					}
				}
			}
			c.Add(r)
			a, b = recv(src), recv(rep)
		}
	}
}

// produce streams st on q into a channel of records, one per object in object order
// (checked), folding an object's rows into one: the source stream's row of the source and
// its pending rows of other shards (candidates when there is no source row), the replica
// stream's newest row of the object; the channel ends with a done or an error.
func produce(ctx context.Context, q query.Querier, st query.Statement, p Pair, source bool) <-chan streamed {
	out := make(chan streamed, 256)
	go func() {
		defer close(out)
		var cols columns
		var err error
		var cur *Record
		send := func(s streamed) bool {
			select {
			case out <- s:
				return true
			case <-ctx.Done():
				return false
			}
		}
		err = query.Stream(ctx, q, st, func(names []string) error {
			cols, err = columnsOf(p, names, source, !source)
			return err
		}, func(row []any) error {
			r, err := cols.record(row)
			if err != nil {
				return fmt.Errorf("%s: %w", st.Name, err)
			}
			if cur != nil && r.ObjectID == cur.ObjectID {
				if source && !r.HasSource() && !cur.HasSource() && r.Pending != nil {
					cur.candidates = append(cur.candidates, *r.Pending)
				}
				return nil // a pending row of another shard, or an older replica row
			}
			if cur != nil && r.ObjectID < cur.ObjectID {
				return fmt.Errorf("%s: object %d after %d: the stream is not in object order", st.Name, r.ObjectID, cur.ObjectID)
			}
			if cur != nil && !send(streamed{r: *cur}) {
				return ctx.Err()
			}
			if source && !r.HasSource() && r.Pending != nil {
				r.candidates, r.Pending = []PendingRows{*r.Pending}, nil
			}
			cur = &r
			return nil
		})
		if err == nil && cur != nil && !send(streamed{r: *cur}) {
			return
		}
		if err != nil {
			send(streamed{err: err})
			return
		}
		send(streamed{done: true})
	}()
	return out
}

// columns are the positions of a statement's columns.
type columns struct {
	object, hasSource, hasReplica, replicaShard int
	source, replica                             []int
	pShard, pRows, pNext, pDue                  int
	counts5                                     []int
}

func columnsOf(p Pair, names []string, source, replica bool) (columns, error) {
	at := map[string]int{}
	for i, n := range names {
		at[n] = i
	}
	var errs []error
	need := func(n string) int {
		i, ok := at[n]
		if !ok {
			errs = append(errs, fmt.Errorf("column %s missing", n))
		}
		return i
	}
	c := columns{hasSource: -1, hasReplica: -1, pShard: -1, replicaShard: -1}
	c.object = need("object_id")
	if source {
		c.hasSource = need("has_source")
		c.pShard, c.pRows, c.pNext, c.pDue = need("pending_shard"), need("pending_rows"), need("pending_next"), need("pending_due")
	}
	if source && replica {
		c.hasReplica = need("has_replica")
		for _, n := range []string{"in_sync", "missing", "stale", "orphan", "pending"} {
			c.counts5 = append(c.counts5, need(n))
		}
	}
	if replica && !source {
		c.replicaShard = need("r_shard")
	}
	c.source, c.replica = []int{}, []int{}
	for _, f := range p.Fields {
		if source {
			c.source = append(c.source, need("s_"+f.Name))
		}
		if replica {
			c.replica = append(c.replica, need("r_"+f.Name))
		}
	}
	if !source {
		c.source = nil
	}
	if !replica {
		c.replica = nil
	}
	return c, errors.Join(errs...)
}

// counts reads the monolith's counts.
func (c columns) counts(row []any) (Counts, error) {
	var v [5]int64
	for i, at := range c.counts5 {
		n, ok := row[at].(int64)
		if !ok {
			return Counts{}, fmt.Errorf("count %d is %T", i, row[at])
		}
		v[i] = n
	}
	return Counts{InSync: v[0], Missing: v[1], Stale: v[2], Orphan: v[3], Pending: v[4]}, nil
}

// record reads one row: the source values when has_source (or, for a replica stream, the
// replica's always), the replica's when has_replica, and the pending rows when there are.
func (c columns) record(row []any) (Record, error) {
	id, ok := row[c.object].(int64)
	if !ok {
		return Record{}, fmt.Errorf("object_id is %T", row[c.object])
	}
	r := Record{ObjectID: id}
	var err error
	if c.source != nil && truth(row, c.hasSource) {
		if r.Source, err = texts(row, c.source); err != nil {
			return r, err
		}
	}
	if c.replica != nil && (c.hasReplica < 0 || truth(row, c.hasReplica)) {
		if r.Replica, err = texts(row, c.replica); err != nil {
			return r, err
		}
	}
	if c.replicaShard >= 0 {
		if v, ok := row[c.replicaShard].(int64); ok {
			r.ReplicaShard = v
		}
	}
	if c.pShard >= 0 && row[c.pShard] != nil {
		p := &PendingRows{}
		var okS, okR, okN bool
		p.Shard, okS = row[c.pShard].(int64)
		p.Rows, okR = row[c.pRows].(int64)
		p.Next, okN = row[c.pNext].(time.Time)
		p.Due, _ = row[c.pDue].(bool)
		if !okS || !okR || !okN {
			return r, fmt.Errorf("pending columns of object %d are not (bigint, bigint, timestamptz)", id)
		}
		r.Pending = p
	}
	return r, nil
}

func truth(row []any, i int) bool {
	b, _ := row[i].(bool)
	return b
}

func texts(row []any, at []int) ([]*string, error) {
	out := make([]*string, len(at))
	for j, i := range at {
		switch v := row[i].(type) {
		case nil:
		case string:
			out[j] = &v
		default:
			return nil, fmt.Errorf("a replicated field is %T, want text", v)
		}
	}
	return out, nil
}
