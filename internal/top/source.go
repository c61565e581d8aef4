// Package top is `outboxctl top`, the on-call cockpit: doctor's findings grouped by cause
// and the shards in backoff on one live screen, drilled into with enter (finding → its
// shards → a shard → a message's payload), with each finding's printed repair shown as the
// plan its --dry-run prints. It reads through a Source (cmd's read sessions: read-only
// snapshots under the session's timeouts) and draws through internal/render's screen
// layout; it never writes.
package top

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/outboxctl/outboxctl/internal/doctor"
	"github.com/outboxctl/outboxctl/internal/render"
)

// Source is what top reads, on one context's database. cmd implements it on one connection
// (one poller per context): every call runs in a read-only snapshot.
type Source interface {
	// Poll reads the shards in backoff narrowed by f and, from TierFindings on, the
	// findings (TierFull: every doctor check, with the catalog read again).
	Poll(ctx context.Context, f Filter, tier Tier) Snapshot
	// Shard is inspect shard's document for a shard: its state card, its categories and
	// its messages (a section named "messages", the head first).
	Shard(ctx context.Context, k ShardRef) (render.Doc, error)
	// Message is inspect message's card for message id of shard k (its payload included).
	Message(ctx context.Context, k ShardRef, id int64) (render.Doc, error)
	// Run runs command (an outboxctl command line as printed, extra appended) through the
	// CLI's own code path, as on a terminal width columns wide: its stdin is what the
	// operator types (Exec.Answer), its output the view's text.
	Run(ctx context.Context, command string, width int, extra ...string) *Exec
	// Command is the command line of args on this invocation's database and context (the
	// prefix every printed next command has).
	Command(args ...string) string
	// Permits is the context's answer to command writing: nil, or the one line a read-only
	// context (readonly, allow) answers; the command checks it again itself.
	Permits(command string) error
	// Statements is how many statements the source has sent so far.
	Statements() int64
}

// Tier is what a poll reads: its cost.
type Tier int

const (
	// TierShards is the stuck shards listing alone (shards --stuck, at most --limit): every
	// --interval, a handful of statements on the catalog top read once.
	TierShards Tier = iota
	// TierFindings adds doctor's checks of the shards (scheduler, stuck, killswitch): every
	// --findings-interval, when the listing's shards changed (at most once a minute), after
	// an action, and first.
	TierFindings
	// TierFull is every doctor check, with the catalog read again (r).
	TierFull
)

// Snapshot is one poll's answer, shared by every pane.
type Snapshot struct {
	// Findings are doctor's, nil for a TierShards poll (the panes keep the last ones).
	Findings []doctor.Finding
	// Shards is the stuck shards listing (shards --stuck's table), nil when it failed.
	Shards *render.Table
	// At is when the poll started (the data's age counts from it); FindingsAt when the
	// findings were read (an earlier poll's, for a TierShards poll).
	At, FindingsAt time.Time
	// Tier is what the poll read.
	Tier Tier
	// Err is what failed (the panes keep the last good data).
	Err error
}

// ShardRef names a shard of the listing: its cell (control silo; "" in a cell silo), its
// scope (the integer) and its identifier.
type ShardRef struct {
	// Context is the context of the row (several contexts only: "" with one).
	Context string
	Cell    string
	Scope   int64
	ID      int64
}

// String is the shard as its key: cell/scope/id.
func (k ShardRef) String() string {
	if k.Context != "" {
		return fmt.Sprintf("%s:%s/%d/%d", k.Context, k.Cell, k.Scope, k.ID)
	}
	return fmt.Sprintf("%s/%d/%d", k.Cell, k.Scope, k.ID)
}

// shardRefOf reads a shard's key from a row of a table with the listing's columns
// (region_name or cell_name, shard_scope, shard_identifier); false when it has none.
func shardRefOf(t *render.Table, row []any) (ShardRef, bool) {
	var k ShardRef
	var okScope, okID bool
	for i, c := range t.Columns {
		switch c {
		case "context":
			if s, ok := row[i].(string); ok {
				k.Context = s
			}
		case "region_name", "cell_name":
			if s, ok := row[i].(*string); ok && s != nil {
				k.Cell = *s
			} else if s, ok := row[i].(string); ok {
				k.Cell = s
			}
		case "shard_scope":
			k.Scope, okScope = asInt(row[i])
		case "shard_identifier":
			k.ID, okID = asInt(row[i])
		}
	}
	return k, okScope && okID
}

func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case int16:
		return int64(x), true
	}
	return 0, false
}

// Filter is the selector subset typed in place after /: at-cap, scope:NAME,
// category:NAME (the flags --at-cap, --scope and --category of shards and the bulk
// repairs).
type Filter struct {
	AtCap    bool
	Scope    string
	Category string
}

// ParseFilter reads the words typed after /; an unknown word is an error that lists the
// known ones.
func ParseFilter(s string) (Filter, error) {
	var f Filter
	for _, w := range strings.Fields(s) {
		key, val, hasVal := strings.Cut(w, ":")
		switch {
		case w == "at-cap":
			f.AtCap = true
		case key == "scope" && hasVal && val != "":
			f.Scope = val
		case key == "category" && hasVal && val != "":
			f.Category = val
		default:
			return Filter{}, fmt.Errorf("unknown filter %q: use at-cap, scope:NAME, category:NAME", w)
		}
	}
	return f, nil
}

// String is the filter as typed.
func (f Filter) String() string {
	var words []string
	if f.AtCap {
		words = append(words, "at-cap")
	}
	if f.Scope != "" {
		words = append(words, "scope:"+f.Scope)
	}
	if f.Category != "" {
		words = append(words, "category:"+f.Category)
	}
	return strings.Join(words, " ")
}
