package replica

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/outboxctl/outboxctl/internal/query"
)

// A verify reads, per pair, either one statement of one database (a monolith: the set-based
// comparison, VerifyMonolith) or one stream from each silo merged in object order
// (VerifySplit); both hand their records to the same Collector, so they classify alike.

// MonolithScript is what a monolith verify of p runs, in order: the source count, then the
// comparison.
func MonolithScript(p Pair, schema, cell string, ids []int64) query.Script {
	t, sel := p.Tables(schema), p.Select(cell, ids)
	return query.Script{query.ReplicaSourceCount(t, sel), query.VerifyPair(t, sel)}
}

// SplitStatements are what a split verify of p runs: the cell's stream, then the control
// silo's.
func SplitStatements(p Pair, cellSchema, controlSchema, cell string, ids []int64) (source, rows query.Statement) {
	sel := p.Select(cell, ids)
	return query.ReplicaSource(p.Tables(cellSchema), sel), query.ReplicaRows(p.Tables(controlSchema), sel)
}

// VerifyMonolith compares p in one database, in the snapshot q is.
func VerifyMonolith(ctx context.Context, q query.Querier, schema, cell string, ids []int64, c *Collector) error {
	script := MonolithScript(c.Pair, schema, cell, ids)
	count, err := query.Run(ctx, q, script[0])
	if err != nil {
		return err
	}
	if len(count.Rows) != 1 {
		return fmt.Errorf("%s: %d rows, want 1", script[0].Name, len(count.Rows))
	}
	sources, ok := count.Rows[0][0].(int64)
	if !ok {
		return fmt.Errorf("%s: sources is %T", script[0].Name, count.Rows[0][0])
	}
	var cols columns
	err = query.Stream(ctx, q, script[1], func(names []string) error {
		cols, err = columnsOf(c.Pair, names, true, true)
		return err
	}, func(row []any) error {
		r, err := cols.record(row)
		if err != nil {
			return fmt.Errorf("%s: %w", script[1].Name, err)
		}
		c.Add(r)
		return nil
	})
	if err != nil {
		return err
	}
	c.Done(sources)
	return nil
}

// streamed is one record of a split stream, or the stream's end (err, or done).
type streamed struct {
	r    Record
	err  error
	done bool
}

// VerifySplit compares p across two databases: the cell's rows (cellQ, in its own snapshot)
// and the control silo's (controlQ, in its own), each streamed in object order and merged,
// so memory holds a few rows of each side whatever the tables' size.
func VerifySplit(ctx context.Context, cellQ, controlQ query.Querier, cellSchema, controlSchema, cell string, ids []int64, c *Collector) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srcSt, repSt := SplitStatements(c.Pair, cellSchema, controlSchema, cell, ids)
	src := produce(ctx, cellQ, srcSt, c.Pair, true, false)
	rep := produce(ctx, controlQ, repSt, c.Pair, false, true)
	a, b := <-src, <-rep
	for {
		if a.err != nil {
			return a.err
		}
		if b.err != nil {
			return b.err
		}
		switch {
		case a.done && b.done:
			c.Done(-1)
			return nil
		case b.done || (!a.done && a.r.ObjectID < b.r.ObjectID):
			c.Add(a.r)
			a = <-src
		case a.done || b.r.ObjectID < a.r.ObjectID:
			c.Add(b.r)
			b = <-rep
		default:
			r := a.r
			r.Replica = b.r.Replica
			c.Add(r)
			a, b = <-src, <-rep
		}
	}
}

// produce streams st on q into a channel of records, in the order the statement returns
// them (object order), checking that order; the channel ends with a done or an error.
func produce(ctx context.Context, q query.Querier, st query.Statement, p Pair, source, replica bool) <-chan streamed {
	out := make(chan streamed, 256)
	go func() {
		var cols columns
		var err error
		last, first := int64(0), true
		err = query.Stream(ctx, q, st, func(names []string) error {
			cols, err = columnsOf(p, names, source, replica)
			return err
		}, func(row []any) error {
			r, err := cols.record(row)
			if err != nil {
				return fmt.Errorf("%s: %w", st.Name, err)
			}
			if !first && r.ObjectID <= last {
				return fmt.Errorf("%s: object %d after %d: the stream is not in object order", st.Name, r.ObjectID, last)
			}
			first, last = false, r.ObjectID
			select {
			case out <- streamed{r: r}:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		if err != nil {
			select {
			case out <- streamed{err: err}:
			case <-ctx.Done():
			}
			return
		}
		select {
		case out <- streamed{done: true}:
		case <-ctx.Done():
		}
	}()
	return out
}

// columns are the positions of a statement's columns.
type columns struct {
	object, hasSource, hasReplica int
	source, replica               []int
	pShard, pRows, pNext, pDue    int
}

func columnsOf(p Pair, names []string, source, replica bool) (columns, error) {
	at := map[string]int{}
	for i, n := range names {
		at[n] = i
	}
	need := func(n string) (int, error) {
		i, ok := at[n]
		if !ok {
			return 0, fmt.Errorf("column %s missing", n)
		}
		return i, nil
	}
	var c columns
	var errs []error
	var err error
	c.hasSource, c.hasReplica, c.pShard = -1, -1, -1
	if c.object, err = need("object_id"); err != nil {
		errs = append(errs, err)
	}
	if source {
		if c.hasSource, err = need("has_source"); err != nil {
			errs = append(errs, err)
		}
		for _, n := range []string{"pending_shard", "pending_rows", "pending_next", "pending_due"} {
			i, err := need(n)
			errs = append(errs, err)
			switch n {
			case "pending_shard":
				c.pShard = i
			case "pending_rows":
				c.pRows = i
			case "pending_next":
				c.pNext = i
			default:
				c.pDue = i
			}
		}
	}
	if source && replica {
		if c.hasReplica, err = need("has_replica"); err != nil {
			errs = append(errs, err)
		}
	}
	for _, f := range p.Fields {
		if source {
			i, err := need("s_" + f)
			errs = append(errs, err)
			c.source = append(c.source, i)
		}
		if replica {
			i, err := need("r_" + f)
			errs = append(errs, err)
			c.replica = append(c.replica, i)
		}
	}
	return c, errors.Join(errs...)
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
