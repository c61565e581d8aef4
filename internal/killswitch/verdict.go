package killswitch

import (
	"context"
	"fmt"
	"slices"

	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/query"
)

// Switches are an outbox's kill switches as Sentry decides them: Read, the options table
// its workers for the outbox read here (the verdict that counts), and Unread, what the
// table it does not read here would disable besides (read only to warn: a split
// deployment's control database read as a monolith, or the reverse).
type Switches struct {
	Read   *options.Killswitches
	Unread *options.Unread
	target query.Target
	schema query.Schema
}

// ReadSwitches reads t's kill switches in q (the caller's snapshot). The error is
// ReadKillswitches': a database error (Read is nil), or the first malformed value (Read
// holds every other scope). Unread's own failure is dropped, as it only warns.
func ReadSwitches(ctx context.Context, q query.Querier, t query.Target, sch query.Schema) (Switches, error) {
	s := Switches{target: t, schema: sch}
	var err error
	s.Read, err = options.ReadKillswitches(ctx, q, t.Schema, sch, t.Silo)
	if s.Read != nil {
		s.Unread, _ = options.ReadUnread(ctx, q, t.Schema, sch, t.Silo, s.Read)
	}
	return s, err
}

// IsDisabled is the verdict for one shard: nil when there is no options table to read.
func (s Switches) IsDisabled(scope int, id int64) *bool { return s.Read.IsDisabled(scope, id) }

// TableVerdict is whether one options table's list disables the shard, whether or not
// Sentry reads that table here.
type TableVerdict struct {
	Table    string `json:"table"`
	Disabled bool   `json:"disabled"`
}

// Verdict answers "is this shard disabled": the verdict of the options table Sentry reads
// for the outbox, where it was read and why (the deployment), each options table's own
// list, and a warning when the table Sentry does not read here disables the shard.
type Verdict struct {
	Scope query.Enum `json:"-"`
	Shard int64      `json:"shard"`
	// Disabled is nil when there is no options table to read (unknown).
	Disabled   *bool          `json:"disabled"`
	ReadFrom   string         `json:"read_from"`
	Deployment string         `json:"deployment"`
	Tables     []TableVerdict `json:"tables,omitempty"`
	// Warning is the one line for a shard the unread table disables ("" when none).
	Warning string `json:"warning,omitempty"`
	// ListErr is why one of the shard's scope lists could not be decoded (its state in
	// that table is unknown): a command shows the rest, then fails.
	ListErr error `json:"-"`
}

// Verdict is the verdict on shard id of scope.
func (s Switches) Verdict(scope query.Enum, id int64) Verdict {
	v := Verdict{Scope: scope, Shard: id, Disabled: s.IsDisabled(scope.Value, id), Deployment: s.schema.DeploymentWhy}
	if s.Read != nil {
		v.ReadFrom = s.Read.Table
	}
	if s.Unread.Disables(scope.Value, id) {
		v.Warning = s.Unread.ShardWarning(scope.Name, id, s.target.TableName(), s.schema)
	}
	return v
}

// ShardVerdict reads the verdict on shard id of scope for t in q, with every options
// table's own list (killswitch check shows them all). A malformed value of the table read
// leaves its scope unknown rather than failing: the lists say which.
func ShardVerdict(ctx context.Context, q query.Querier, t query.Target, sch query.Schema, scope query.Enum, id int64) (Verdict, error) {
	lists, err := ReadLists(ctx, q, t.Schema, sch)
	if err != nil {
		return Verdict{}, err
	}
	sw, _ := ReadSwitches(ctx, q, t, sch)
	v := sw.Verdict(scope, id)
	for _, l := range lists {
		if l.Scope != scope.Value {
			continue
		}
		if l.Err != nil {
			v.ListErr = l.Err
		}
		v.Tables = append(v.Tables, TableVerdict{Table: l.Table, Disabled: slices.Contains(l.IDs, id)})
	}
	return v, nil
}

// Excluded fills sel.Excluded with the shards the kill switches Sentry reads for t disable,
// when sel asks for them left out (--not-killswitched). A list that cannot be read is an
// error: leaving its shards in would select what the flag promised to leave alone.
func Excluded(ctx context.Context, q query.Querier, t query.Target, sch query.Schema, sel *query.ShardSelector) error {
	if sel == nil || !sel.NotKillswitched {
		return nil
	}
	sw, err := ReadSwitches(ctx, q, t, sch)
	if err != nil {
		return fmt.Errorf("--not-killswitched: reading the kill switches: %w", err)
	}
	sel.Excluded = sw.Read.Refs()
	return nil
}
