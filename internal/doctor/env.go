package doctor

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/backfill/status"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query"
)

// Snapshot is the read snapshot the checks run in (an outbox.Snapshot): each check takes a
// savepoint of its transaction.
type Snapshot interface {
	Context() context.Context
	Tx() pgx.Tx
}

// EnvIn is the checks' environment in snapshot s of schemaName, whose catalog is sch: its
// transaction, whether it is the demo's schema, and the options reader the backfill check
// uses. The caller adds the tables, the registry, the clock and the command prefix.
func EnvIn(s Snapshot, schemaName string, sch query.Schema) *Env {
	tx := s.Tx()
	return &Env{
		Tx: tx, SchemaName: schemaName, Schema: sch, Demo: fixture.IsDemo(s.Context(), tx, schemaName),
		ReplicationOptions: func(ctx context.Context, tx pgx.Tx, tables []backfill.Table) (map[string]*int64, error) {
			// A malformed option leaves its table unknown (nil); only a database error fails
			// the check.
			read, _, err := status.ReadOptions(ctx, tx, schemaName, sch, tables)
			out := make(map[string]*int64, len(read))
			for k, v := range read {
				out[k] = v.Value
			}
			return out, err
		},
	}
}
