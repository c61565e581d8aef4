package cmd

import (
	"context"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
)

// The repairs' read session, until they move to internal/repair: an outbox.Snapshot on the
// connection a repair then writes with. Reads never come here (cmd/read.go; the
// architecture test TestReadsOpenNoTransaction).

// session is a read snapshot as the repairs in cmd still hold it (their plans read on the
// connection they then write with): an outbox.Snapshot under the names they use, until
// they move to internal/repair. The reads take the *outbox.Snapshot itself.
type session struct {
	*outbox.Snapshot
	ctx    context.Context
	tx     db.Tx
	target query.Target
	schema query.Schema
}

// held is snapshot s as a repair's session.
func held(s *outbox.Snapshot) *session {
	return &session{Snapshot: s, ctx: s.Context(), tx: s.Tx(), target: s.Target, schema: s.Schema}
}

// readSessionOn opens a read snapshot of the target's outbox table on a connection the
// command already holds: a repair or a drain reads its catalog and plan on the connection it
// then writes with, one per command.
func (a *app) readSessionOn(ctx context.Context, conn *db.Conn, fn func(*session) error) error {
	t, err := a.target()
	if err != nil {
		return err
	}
	o := outbox.Options{Deployment: a.deployment(), Check: outbox.CheckOutbox}
	return outbox.On(ctx, conn, t, o, func(s *outbox.Snapshot) error { return fn(held(s)) })
}
