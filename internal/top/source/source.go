// Package source is top's data source on one context's database (top.Source): one poller
// per context on one connection, each read a read-only snapshot (internal/outbox) on the
// catalog read once, reading what the read commands read (shards --stuck's listing,
// doctor's checks, inspect's shard and message through internal/inspect). cmd builds one
// per context from an Env of plain values and funcs and hands it to internal/top; nothing
// here knows cobra or cmd.
package source

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/outboxctl/outboxctl/internal/config"
	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/doctor"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/inspect"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/report"
	"github.com/outboxctl/outboxctl/internal/textsafe"
	"github.com/outboxctl/outboxctl/internal/top"
)

// CheapChecks are the doctor checks top's cheap tier runs every --interval: the ones of
// the shards (the scheduler's oldest rows, the shards at the cap, the kill switches). r runs
// every check.
var CheapChecks = []string{doctor.CheckScheduler, doctor.CheckStuck, doctor.CheckKillswitch} //nolint:gochecknoglobals // constant list

// Env is what a source takes of its context's invocation (the flags layered over the
// context's settings).
type Env struct {
	// Target is the outbox table the flags select.
	Target func() (query.Target, error)
	// Config is the connection settings of command (the DSN, the timeouts, its
	// application_name).
	Config           func(command string) db.Config
	StatementTimeout time.Duration
	Deployment       query.Deployment
	Registry         func() (*enums.Registry, error)
	Now              func() time.Time
	// Next is a suggested command line (outboxctl and the context's flags, the flags naming
	// t's table when t is not nil, then args).
	Next       func(t *query.Target, args ...string) string
	SchemaName string // --schema as given: doctor's
	LedgerPath string // the ledger doctor's stuck check reads ("": none)
	// ShardFilter is shards --stuck's filter narrowed by f's words (--at-cap, --scope,
	// --category) and --limit, its names resolved.
	ShardFilter func(f top.Filter) (query.ShardFilter, error)
	// Exec runs a printed command line through the CLI's own code path (cmd's Main): Run.
	Exec func(ctx context.Context, command string, width int, extra ...string) *top.Exec
	// Context is the context read (nil: none): its readonly and allow keys answer Permits.
	Context *config.Context
	// Broken is why this context cannot be read at all (its settings): every read fails
	// with it.
	Broken error
}

// Source is top's one poller on the context: one connection, held between polls and
// opened again after an error, each read a read-only snapshot under the session's
// timeouts. A shard's or a message's read waits for a poll in progress; the statement
// count never waits (top's loop reads it, and a key must not wait for a read).
type Source struct {
	env Env
	mu  sync.Mutex // held by a read: one at a time on the connection
	// conn is the poller's connection (nil between an error and the next read).
	conn atomic.Pointer[db.Conn]
	sent atomic.Int64 // the statements of connections closed
	// catalog is what the connection's first snapshot read of the catalog (the tables,
	// their columns, the deployment applied): later snapshots reuse it, so that a poll
	// costs its reads alone. It goes with the connection, and r reads it again.
	catalog *query.Schema
}

// New is a source on env's context; it connects on its first read.
func New(env Env) *Source { return &Source{env: env} }

var _ top.Source = (*Source)(nil)

// drop closes the connection (s.mu held), keeping its statement count.
func (s *Source) drop(ctx context.Context) {
	if c := s.conn.Swap(nil); c != nil {
		s.sent.Add(c.Statements())
		c.Close(context.WithoutCancel(ctx))
	}
	s.catalog = nil
}

// Close closes the connection.
func (s *Source) Close(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drop(ctx)
}

// Statements is what the poller has sent: top's footer divides it by the time.
func (s *Source) Statements() int64 {
	n := s.sent.Load()
	if c := s.conn.Load(); c != nil {
		n += c.Statements()
	}
	return n
}

// with runs fn in a read-only snapshot on the poller's connection, on the catalog read
// once (fresh: read again); a failure drops the connection and the catalog, so a broken
// one is never reused.
func (s *Source) with(ctx context.Context, fresh bool, fn func(*outbox.Snapshot) error) error {
	if s.env.Broken != nil {
		return s.env.Broken
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.env.Target()
	if err != nil {
		return err
	}
	// The connection runs under the catalog read's budget when --statement-timeout is
	// lower, and its statements are lowered after the catalog read (outbox.Open's rule).
	connectTimeout, lower := outbox.CatalogBudget(s.env.StatementTimeout)
	conn := s.conn.Load()
	if conn == nil {
		cfg := s.env.Config("top")
		cfg.StatementTimeout = connectTimeout
		if conn, err = db.Connect(ctx, cfg); err != nil {
			return err
		}
		s.conn.Store(conn)
	}
	o := outbox.Options{Deployment: s.env.Deployment, Lower: lower}
	if !fresh {
		o.Known = s.catalog
	}
	err = outbox.On(ctx, conn, t, o, func(ses *outbox.Snapshot) error {
		s.catalog = ses.KnownCatalog()
		return fn(ses)
	})
	if err != nil {
		s.drop(ctx)
	}
	return err
}

// Poll reads the stuck shards narrowed by f and, from top.TierFindings on, the findings
// (the cheap checks, or every one), in one snapshot.
func (s *Source) Poll(ctx context.Context, f top.Filter, tier top.Tier) top.Snapshot {
	snap := top.Snapshot{At: s.env.Now(), Tier: tier}
	names := CheapChecks
	if tier == top.TierFull {
		names = doctor.Names
	}
	reg, err := s.env.Registry()
	if err != nil {
		snap.Err = err
		return snap
	}
	filter, ferr := s.env.ShardFilter(f)
	snap.Err = s.with(ctx, tier == top.TierFull, func(ses *outbox.Snapshot) error {
		if tier == top.TierShards {
			if ferr != nil {
				return ferr
			}
			var err error
			snap.Shards, err = s.stuckTable(ses, reg, filter)
			return err
		}
		fs, err := s.findings(ctx, ses, reg, names)
		if err != nil {
			return err
		}
		snap.Findings = fs
		if ferr != nil {
			return ferr
		}
		snap.Shards, err = s.stuckTable(ses, reg, filter)
		return err
	})
	return snap
}

// findings are doctor's checks names in ses, at doctor's default thresholds over every
// outbox table present.
func (s *Source) findings(ctx context.Context, ses *outbox.Snapshot, reg *enums.Registry, names []string) ([]doctor.Finding, error) {
	t, err := s.env.Target()
	if err != nil {
		return nil, err
	}
	cfg := doctor.Config{Unclaimed: doctor.DefaultUnclaimed, XminWarn: doctor.DefaultXminWarn, XminCrit: doctor.DefaultXminCrit,
		XminWarnXids: doctor.DefaultXminWarnXids, XminCritXids: doctor.DefaultXminCritXids, Sample: doctor.DefaultSample, Limit: doctor.DefaultLimit,
		LockTimeout: min(doctor.DefaultLockTimeout, s.env.StatementTimeout), Deployment: s.env.Deployment}
	fs, _, err := doctor.InSnapshot(ctx, ses, doctor.Invocation{Target: t, SchemaName: s.env.SchemaName, Registry: reg, Now: s.env.Now(),
		Prefix: s.env.Next(nil), LedgerPath: s.env.LedgerPath, Config: cfg}, names)
	return fs, err
}

// stuckTable is shards --stuck's table of the shards of filter, in the snapshot ses.
func (s *Source) stuckTable(ses *outbox.Snapshot, reg *enums.Registry, filter query.ShardFilter) (*render.Table, error) {
	if err := ses.Schema.CheckOutbox(ses.Target); err != nil {
		return nil, err
	}
	res, err := ses.Run(query.StuckShards(ses.Target, filter))
	if err != nil {
		return nil, err
	}
	ks, _, err := ses.Killswitches(s.env.StatementTimeout)
	if err != nil {
		return nil, err
	}
	doc, err := report.Shards(reg, res, ks, s.env.Now(), true)
	if err != nil {
		return nil, err
	}
	return doc[0].Table, nil
}

// shardTarget is the session's table narrowed to shard k's cell (the control silo).
func shardTarget(ses *outbox.Snapshot, k top.ShardRef) {
	if k.Cell != "" && ses.Target.Control() {
		ses.Target.Cell = k.Cell
	}
}

// inspectEnv is what internal/inspect's reads take, their notes going nowhere: top shows
// documents, not stderr.
func (s *Source) inspectEnv() (inspect.Env, error) {
	reg, err := s.env.Registry()
	if err != nil {
		return inspect.Env{}, err
	}
	quiet := render.NewPrinter(&render.Streams{Out: io.Discard, Err: io.Discard}, render.FormatTable, true)
	return inspect.Env{Registry: reg, Printer: quiet, Now: s.env.Now, Next: s.env.Next}, nil
}

// Shard is inspect shard's document of k: its state card with its next steps, its
// categories and its first messages (the head, then the newest).
func (s *Source) Shard(ctx context.Context, k top.ShardRef) (render.Doc, error) {
	env, err := s.inspectEnv()
	if err != nil {
		return nil, err
	}
	key := query.ShardKey{Scope: query.Enum{Value: int(k.Scope), Name: env.Registry.ScopeName(int(k.Scope))}, ID: k.ID}
	var doc render.Doc
	err = s.with(ctx, false, func(ses *outbox.Snapshot) (err error) {
		shardTarget(ses, k)
		doc, err = env.ShardDoc(ses, key)
		return err
	})
	if err == nil && doc == nil {
		err = fmt.Errorf("shard %s/%d is empty: it drained since the listing", key.Scope.Name, k.ID)
	}
	return doc, err
}

// Message is inspect message's card of message id (its payload in full: top's viewer
// redacts it).
func (s *Source) Message(ctx context.Context, k top.ShardRef, id int64) (render.Doc, error) {
	env, err := s.inspectEnv()
	if err != nil {
		return nil, err
	}
	var doc render.Doc
	err = s.with(ctx, false, func(ses *outbox.Snapshot) error {
		shardTarget(ses, k)
		res, err := ses.Run(query.Message(ses.Target, id))
		if err != nil {
			return err
		}
		if len(res.Rows) == 0 {
			return fmt.Errorf("no outbox row with id %d: delivered or removed since", id)
		}
		card, err := env.MessageCard(ses.Target, res)
		doc = render.Doc{{Name: "message", Title: fmt.Sprintf("Message %d", id), Card: card}}
		return err
	})
	return doc, err
}

// Run runs command (a printed outboxctl command line, extra appended) through the CLI, as
// on a terminal width columns wide (Env.Exec).
func (s *Source) Run(ctx context.Context, command string, width int, extra ...string) *top.Exec {
	return s.env.Exec(ctx, command, width, extra...)
}

// Command is args as a printed next command on this context and schema.
func (s *Source) Command(args ...string) string { return s.env.Next(nil, args...) }

// Permits is the context's answer to command writing (readonly, allow): nil for a read, or
// a context that allows it.
func (s *Source) Permits(command string) error {
	words, err := textsafe.Words(command)
	if err != nil || len(words) < 2 {
		return nil
	}
	if path := top.CommandPath(words[1:]); s.env.Context != nil && slices.Contains(config.WriteCommands, path) {
		return s.env.Context.Permits(path)
	}
	return nil
}
