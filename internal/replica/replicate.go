package replica

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/outboxctl/outboxctl/internal/query"
)

// Object is one object replicate writes an outbox row for, with the identifiers Sentry's
// outbox_for_update() gives it: the shard (ORGANIZATION_SCOPE: the organization), the user
// its payload names, and whether its source row is gone (the row is then the deletion
// outbox Sentry writes as it deletes: the same identifiers, taken from the replica).
type Object struct {
	ObjectID, Shard int64
	UserID          *int64
	Gone            bool
}

// Payload is payload_for_update()'s for o, as sentry.utils.json writes it into a text column
// (compact separators; a jsonb column normalises it): {"user_id":N} for a member, "" (SQL
// NULL) for a pair without one.
func (p Pair) Payload(o Object) string {
	if !p.UserIDPayload {
		return ""
	}
	if o.UserID == nil {
		return `{"user_id":null}`
	}
	return `{"user_id":` + strconv.FormatInt(*o.UserID, 10) + `}`
}

// ReplicateObjects reads the identifiers of ids: from the source (srcQ, its schema) for the
// objects that exist, from the replica (repQ) for the ones that are gone. unknown are the
// ids neither side has (nothing Sentry could replicate).
func ReplicateObjects(ctx context.Context, srcQ, repQ query.Querier, p Pair, srcSchema, repSchema string, ids []int64) (objs []Object, unknown []int64, err error) {
	found, err := objects(ctx, srcQ, query.ReplicateSource(p.Tables(srcSchema), p.Name, ids))
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
		fromReplica, err := objects(ctx, repQ, query.ReplicateReplica(p.Tables(repSchema), p.Name, gone))
		if err != nil {
			return nil, nil, err
		}
		for _, id := range gone {
			o, ok := fromReplica[id]
			switch {
			case ok:
				o.Gone = true
				found[id] = o
			case p.Name == organizations.Name:
				// An organization's shard is its own id: its deletion outbox needs no replica.
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

func objects(ctx context.Context, q query.Querier, st query.Statement) (map[int64]Object, error) {
	res, err := query.Run(ctx, q, st)
	if err != nil {
		return nil, err
	}
	rows, err := query.Rows[objectRow](res)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", st.Name, err)
	}
	out := map[int64]Object{}
	for _, r := range rows {
		if _, dup := out[r.ObjectID]; !dup { // a member's newest mapping row is the statement's first
			out[r.ObjectID] = Object{ObjectID: r.ObjectID, Shard: r.Shard, UserID: r.UserID}
		}
	}
	return out, nil
}

type objectRow struct {
	ObjectID int64  `db:"object_id"`
	Shard    int64  `db:"shard_identifier"`
	UserID   *int64 `db:"user_id"`
}

// OutboxRows are the rows replicate inserts for objs, in the pair's outbox.
func (p Pair) OutboxRows(objs []Object, payloadType, thePast string) query.OutboxRows {
	r := query.OutboxRows{Scope: p.Scope, Category: p.Category, PayloadType: payloadType, ThePast: thePast}
	for _, o := range objs {
		r.Shards = append(r.Shards, o.Shard)
		r.Objects = append(r.Objects, o.ObjectID)
		r.Payloads = append(r.Payloads, p.Payload(o))
	}
	return r
}
