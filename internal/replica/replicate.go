package replica

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/outboxctl/outboxctl/internal/query"
)

// Object is one object replicate writes an outbox row for, with the identifiers Sentry's
// outbox_for_update() gives it: the shard (ORGANIZATION_SCOPE: the organization), the values
// of its payload's keys (nil for NULL, in the pair's Payload order), and whether its source
// row is gone (the row is then the deletion outbox Sentry writes as it deletes: the same
// identifiers, taken from the replica).
type Object struct {
	ObjectID, Shard int64
	PayloadValues   []*string
	Gone            bool
}

// Payload is payload_for_update()'s for o, as sentry.utils.json writes it into a text column
// (compact separators; a jsonb column normalises it): {"user_id":N} for a member, "" (SQL
// NULL) for a pair without one. A value that is an integer is a JSON number, else a string.
func (p Pair) Payload(o Object) string {
	if len(p.ReplicaSpec.Payload) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range p.ReplicaSpec.Payload {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(k.Key)
		b.Write(key)
		b.WriteByte(':')
		var v *string
		if i < len(o.PayloadValues) {
			v = o.PayloadValues[i]
		}
		switch {
		case v == nil:
			b.WriteString("null")
		case isInt(*v):
			b.WriteString(*v)
		default:
			s, _ := json.Marshal(*v)
			b.Write(s)
		}
	}
	b.WriteByte('}')
	return b.String()
}

func isInt(s string) bool {
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

// ReplicateObjects reads the identifiers of ids: from the source (srcQ, its schema) for the
// objects that exist, from the replica (repQ) for the ones that are gone. unknown are the
// ids neither side has (nothing Sentry could replicate).
func ReplicateObjects(ctx context.Context, srcQ, repQ query.Querier, p Pair, s Sides, ids []int64) (objs []Object, unknown []int64, err error) {
	found, err := objects(ctx, srcQ, query.ReplicateSource(p.ReplicaSpec, s.SourceSchema, ids), len(p.ReplicaSpec.Payload))
	if err != nil {
		return nil, nil, err
	}
	var gone []int64
	for _, id := range ids {
		if _, ok := found[id]; !ok && !slices.Contains(gone, id) {
			gone = append(gone, id)
		}
	}
	if len(gone) > 0 {
		fromReplica, err := objects(ctx, repQ, query.ReplicateReplica(p.ReplicaSpec, s.ReplicaSchema, gone), len(p.ReplicaSpec.Payload))
		if err != nil {
			return nil, nil, err
		}
		for _, id := range gone {
			o, ok := fromReplica[id]
			switch {
			case ok:
				o.Gone = true
				found[id] = o
			case p.ShardIsKey() && len(p.ReplicaSpec.Payload) == 0:
				// The shard is the object's own id (an Organization's): its deletion outbox
				// needs no row.
				found[id] = Object{ObjectID: id, Shard: id, Gone: true}
			default:
				unknown = append(unknown, id)
			}
		}
	}
	seen := map[int64]bool{}
	for _, id := range ids {
		if o, ok := found[id]; ok && !seen[id] {
			seen[id] = true
			objs = append(objs, o)
		}
	}
	return objs, unknown, nil
}

// objects reads object_id, shard_identifier and the payload's p_<key> columns; an object's
// first row wins (the replica statement lists the newest replica row first).
func objects(ctx context.Context, q query.Querier, st query.Statement, payloadKeys int) (map[int64]Object, error) {
	res, err := query.Run(ctx, q, st)
	if err != nil {
		return nil, err
	}
	out := map[int64]Object{}
	for _, row := range res.Rows {
		if len(row) != 2+payloadKeys {
			return nil, fmt.Errorf("%s: %d columns, want %d", st.Name, len(row), 2+payloadKeys)
		}
		id, ok1 := row[0].(int64)
		shard, ok2 := row[1].(int64)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("%s: object %v has no shard (%T)", st.Name, row[0], row[1])
		}
		if _, dup := out[id]; dup {
			continue
		}
		vals, err := texts(row, seq(2, payloadKeys))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", st.Name, err)
		}
		out[id] = Object{ObjectID: id, Shard: shard, PayloadValues: vals}
	}
	return out, nil
}

func seq(from, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = from + i
	}
	return out
}

// OutboxRows are the rows replicate inserts for objs, in the pair's outbox (cells: the
// target cell of each object, for a control outbox; nil for the cell outbox).
func (p Pair) OutboxRows(objs []Object, cells []string, payloadType, thePast string) query.OutboxRows {
	r := query.OutboxRows{Scope: p.Scope, Category: p.Category, PayloadType: payloadType, ThePast: thePast, Cells: cells}
	for _, o := range objs {
		r.Shards = append(r.Shards, o.Shard)
		r.Objects = append(r.Objects, o.ObjectID)
		r.Payloads = append(r.Payloads, p.Payload(o))
	}
	return r
}

// OutboxTable is the pair's outbox in schema, qualified.
func (p Pair) OutboxTable(schema string) string { return query.QualifiedTable(schema, p.Outbox()) }
