package options

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/query"
)

// Unread is what the options table Sentry does not read for an outbox here would change if
// the deployment were the other one: the shards it disables that the table read does not.
// Both tables exist in every database since migration 0439, so a kill switch written to the
// wrong one (sentry_controloption in a monolith, sentry_option in a control database) is
// otherwise ignored without a word.
type Unread struct {
	// Table is the options table not read; Read the one Sentry reads.
	Table, Read string
	// Deployment is the one under which Sentry would read Table (what --deployment to pass).
	Deployment query.Deployment
	// Disabled maps scope to the shards Table disables and Read does not, sorted.
	Disabled map[int][]int64
}

// UnreadTable is the options table Sentry would read for silo's outbox under the other
// deployment, when it is here and is not the one read under this one; "" otherwise. Only the
// control outbox has one: every deployment reads sentry_option for the cell outbox.
func UnreadTable(silo query.Silo, sch query.Schema) (string, query.Deployment) {
	if sch.Tables == nil {
		return "", query.DeploymentUnknown
	}
	other := sch
	other.Deployment = query.DeploymentMonolith
	if sch.Deployment == query.DeploymentMonolith {
		other.Deployment = query.DeploymentSplit
	}
	alt := OptionTableFor(silo, other)
	if alt == "" || alt == OptionTableFor(silo, sch) {
		return "", query.DeploymentUnknown
	}
	return alt, other.Deployment
}

// ReadUnread reads the kill switches of UnreadTable and returns what they disable that read
// (the kill switches Sentry reads) does not; nil when nothing. It is read only to warn: it
// runs in a savepoint when q can take one (a pgx.Tx), so a failed read leaves the caller's
// transaction usable, and a value that cannot be decoded there warns of nothing in its scope.
// The error is for the caller to drop or note, never to change its verdict with.
func ReadUnread(ctx context.Context, q query.Querier, schema string, sch query.Schema, silo query.Silo, read *Killswitches) (*Unread, error) {
	table, dep := UnreadTable(silo, sch)
	if table == "" || !read.Known() {
		return nil, nil
	}
	if tx, ok := q.(pgx.Tx); ok {
		sp, err := tx.Begin(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", table, err)
		}
		defer func() { _ = sp.Rollback(context.WithoutCancel(ctx)) }() // it only read
		q = sp
	}
	other, err := ReadKillswitchesFrom(ctx, q, schema, table)
	if other == nil { // a database error; a malformed scope is only in other.Failed
		return nil, fmt.Errorf("reading %s: %w", table, err)
	}
	u := &Unread{Table: table, Read: read.Table, Deployment: dep, Disabled: map[int][]int64{}}
	for scope, ids := range other.Disabled {
		if other.Failed[scope] != nil {
			continue
		}
		for id := range ids {
			if d := read.IsDisabled(scope, id); d != nil && !*d {
				u.Disabled[scope] = append(u.Disabled[scope], id)
			}
		}
		slices.Sort(u.Disabled[scope])
	}
	for _, ids := range u.Disabled {
		if len(ids) > 0 {
			return u, nil
		}
	}
	return nil, nil
}

// Disables reports whether the unread table disables the shard (and the table read does not).
func (u *Unread) Disables(scope int, shard int64) bool {
	return u != nil && slices.Contains(u.Disabled[scope], shard)
}

// Why is the warning's end: the table Sentry reads and why, and the --deployment that would
// read the other one.
func (u *Unread) Why(outbox string, sch query.Schema) string {
	when := "if this database is a split deployment's control database"
	if u.Deployment == query.DeploymentMonolith {
		when = "if this database is a monolith (self-hosted: both outboxes in one database)"
	}
	return fmt.Sprintf("Sentry reads %s for %s here (%s); %s, pass --deployment %s", u.Read, outbox, sch.DeploymentWhy, when, u.Deployment)
}

// ShardWarning is the one-line warning of drain and killswitch check for one shard.
func (u *Unread) ShardWarning(scopeName string, shard int64, outbox string, sch query.Schema) string {
	return fmt.Sprintf("%s disables %s shard %d, but it is NOT disabled: %s", u.Table, scopeName, shard, u.Why(outbox, sch))
}
