// Package doctor puts the queue view and the database view side by side: it runs a set of
// checks over one read-only snapshot (drain workers not running, poison shards, kill
// switches, backfills, vacuum, the xmin horizon, lock waits, replicas, schema drift) and turns
// what they read into findings, each with a severity, a one-line summary, the evidence as
// numbers, and the next command to run. It never changes anything: the commands it suggests
// (pg_terminate_backend, ROLLBACK PREPARED, …) are shown, never run.
package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// Severity ranks a finding.
type Severity int

// The severities, in rising order.
const (
	OK Severity = iota
	Warn
	Crit
)

func (s Severity) String() string {
	switch s {
	case Warn:
		return "warn"
	case Crit:
		return "crit"
	case OK:
	}
	return "ok"
}

// KV is one piece of evidence.
type KV struct {
	Key   string
	Value any
}

// Evidence is a finding's numbers, in the order they read best.
type Evidence []KV

// MarshalJSON writes the evidence as one object with its keys in order.
func (e Evidence) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range e {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv.Key)
		v, err := json.Marshal(jsonable(kv.Value))
		if err != nil {
			return nil, fmt.Errorf("evidence %s: %w", kv.Key, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func jsonable(v any) any {
	if t, ok := v.(time.Time); ok {
		return t.UTC().Format(time.RFC3339)
	}
	return v
}

// String is the evidence on one line: "key=value, key=value".
func (e Evidence) String() string {
	parts := make([]string, len(e))
	for i, kv := range e {
		parts[i] = kv.Key + "=" + plainValue(kv.Value)
	}
	return strings.Join(parts, ", ")
}

func plainValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case time.Time:
		return x.UTC().Format(time.RFC3339)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case []int64:
		parts := make([]string, len(x))
		for i, n := range x {
			parts[i] = fmt.Sprint(n)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprint(v)
}

// Finding is what one check found.
type Finding struct {
	Check    string
	Severity Severity
	Summary  string
	Evidence Evidence
	// Next is the command to run next: an outboxctl command, or SQL to paste (never run by
	// outboxctl).
	Next string
	// Then are the commands after Next, in order (a poison suspect: inspect the message, then
	// skip it).
	Then []string
	// Target is what the finding is about, for the compact table: a shard
	// (ORGANIZATION_SCOPE/42), a group of shards, or (empty) the evidence's table.
	Target string
	// Short is the summary in a few words, for the compact table (empty: Summary).
	Short string
}

// The checks, in the order a run reports them when severities tie.
const (
	CheckScheduler  = "scheduler"
	CheckStuck      = "stuck"
	CheckKillswitch = "killswitch"
	CheckBackfill   = "backfill"
	CheckVacuum     = "vacuum"
	CheckXmin       = "xmin"
	CheckLocks      = "locks"
	CheckReplica    = "replica"
	CheckSchema     = "schema"
)

// Names lists every check. The lock check runs last: it shortens the statement timeout for
// the rest of the transaction.
var Names = []string{CheckSchema, CheckReplica, CheckReplicas, CheckEra, CheckScheduler, CheckStuck, CheckKillswitch, CheckBackfill, CheckTombstones, CheckMailboxes, CheckVacuum, CheckXmin, CheckLocks} //nolint:gochecknoglobals // constant list

// ParseChecks reads --check NAME,…; empty means every check. The result is in run order.
func ParseChecks(names []string) ([]string, error) {
	if len(names) == 0 {
		return append([]string(nil), Names...), nil
	}
	want := map[string]bool{}
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		if !contains(Names, n) {
			return nil, fmt.Errorf("unknown check %q: valid checks are %s", n, strings.Join(sortedNames(), ", "))
		}
		want[n] = true
	}
	var out []string
	for _, n := range Names {
		if want[n] {
			out = append(out, n)
		}
	}
	return out, nil
}

func sortedNames() []string {
	out := append([]string(nil), Names...)
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Config holds the thresholds. Zero values take the defaults.
type Config struct {
	// Unclaimed: a due shard whose head was last claimed longer ago is a warning; six times
	// longer, critical.
	Unclaimed time.Duration
	// XminWarn / XminCrit: a transaction, prepared transaction or slot holding the xmin horizon
	// for longer; XminWarnXids / XminCritXids: the same in transaction ids (used too when the
	// role cannot see how long a session has been in its transaction).
	XminWarn, XminCrit         time.Duration
	XminWarnXids, XminCritXids int64
	// Sample is how many of the oldest rows' shards the scheduler check examines.
	Sample int
	// Limit caps the findings of one check.
	Limit int
	// LockTimeout is the statement timeout of the lock query.
	LockTimeout time.Duration
	// SelfHosted: backfill targets are the coded versions (self-hosted Sentry ignores options).
	SelfHosted bool
	// TombstoneStall: a tombstone watermark waiting on a tombstone older than this is
	// stalled (--tombstone-stall).
	TombstoneStall time.Duration
	// MailboxBlocked: a mailbox blocked behind its head for longer is a warning
	// (--mailbox-blocked); MailboxNearDrop: a head Sentry drops undelivered within this is
	// critical (--mailbox-near-drop); MailboxLarge: a mailbox of at least this many
	// payloads is a warning (--mailbox-large).
	MailboxBlocked, MailboxNearDrop time.Duration
	MailboxLarge                    int64
	// Deployment is --deployment, for printed SQL (a run reads the options table introspection
	// chose): it decides which options table holds a silo's kill switches.
	Deployment query.Deployment
}

// Defaults, documented in `outboxctl doctor --help` and docs/runbooks.md.
const (
	DefaultUnclaimed    = 5 * time.Minute
	DefaultXminWarn     = 5 * time.Minute
	DefaultXminCrit     = time.Hour
	DefaultXminWarnXids = 10_000_000
	DefaultXminCritXids = 100_000_000
	DefaultSample       = 1000
	DefaultLimit        = 10
	DefaultLockTimeout  = time.Second
	// UnclaimedCritFactor: a due shard unclaimed for this many times --unclaimed is critical.
	UnclaimedCritFactor = 6
	// StuckCritAge: a poison suspect whose head message is older than this is critical.
	StuckCritAge = 24 * time.Hour
)

// WithDefaults fills zero thresholds.
func (c Config) WithDefaults() Config {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.Unclaimed, DefaultUnclaimed)
	def(&c.XminWarn, DefaultXminWarn)
	def(&c.XminCrit, DefaultXminCrit)
	def(&c.LockTimeout, DefaultLockTimeout)
	def(&c.TombstoneStall, DefaultTombstoneStall)
	def(&c.MailboxBlocked, MailboxBlockedWarn)
	def(&c.MailboxNearDrop, MailboxDropMargin)
	if c.MailboxLarge <= 0 {
		c.MailboxLarge = MailboxLarge
	}
	if c.XminWarnXids <= 0 {
		c.XminWarnXids = DefaultXminWarnXids
	}
	if c.XminCritXids <= 0 {
		c.XminCritXids = DefaultXminCritXids
	}
	if c.Sample <= 0 {
		c.Sample = DefaultSample
	}
	if c.Limit <= 0 {
		c.Limit = DefaultLimit
	}
	return c
}

// Env is what the checks read from: one read-only snapshot and what introspection learned.
type Env struct {
	Tx         pgx.Tx
	SchemaName string
	Schema     query.Schema
	// Targets are the outbox tables checked: both in a monolith, one in a split silo.
	Targets  []query.Target
	Registry *enums.Registry
	Now      time.Time
	Config   Config
	// ReplicationOptions reads each table's outbox_replication option (injected: the
	// backfill command's reader).
	ReplicationOptions func(ctx context.Context, tx pgx.Tx, tables []backfill.Table) (map[string]*int64, error)
	// Prefix is how the suggested outboxctl commands start ("outboxctl --schema x").
	Prefix string
	// Demo is true on a schema outboxctl demo seed made: no Sentry worker drains it, so a
	// due shard nobody claims is expected there.
	Demo bool

	// LedgerPath is outboxctl's ledger of the shards it made due (internal/ledger): the
	// stuck check's evidence of a fresh attempt. Empty: none is read.
	LedgerPath string

	// Cursors is what the backfill check read, for a second read after --sample.
	Cursors map[string]backfill.Cursor
	server  *serverInfo
	ident   *query.IdentityRow
}

type checkFunc func(ctx context.Context, env *Env) ([]Finding, error)

func checkFuncs() map[string]checkFunc {
	return map[string]checkFunc{
		CheckSchema: checkSchema, CheckReplica: checkReplica, CheckScheduler: checkScheduler,
		CheckStuck: checkStuck, CheckKillswitch: checkKillswitch, CheckBackfill: checkBackfill,
		CheckVacuum: checkVacuum, CheckXmin: checkXmin, CheckLocks: checkLocks, CheckReplicas: checkReplicas, CheckMailboxes: checkMailboxes, CheckEra: checkEra, CheckTombstones: checkTombstones,
	}
}

// Run runs the named checks (in run order) and returns their findings, most severe first.
// Each check runs in a savepoint: one that fails (a permission, a timeout) becomes a warning
// saying why, and the others still run.
func Run(ctx context.Context, env *Env, names []string) []Finding {
	env.Config = env.Config.WithDefaults()
	funcs := checkFuncs()
	var out []Finding
	for _, name := range names {
		out = append(out, runOne(ctx, env, name, funcs[name])...)
	}
	Sort(out)
	return out
}

func runOne(ctx context.Context, env *Env, name string, fn checkFunc) []Finding {
	sp, err := env.Tx.Begin(ctx)
	if err != nil {
		return []Finding{failed(name, err)}
	}
	fs, err := fn(ctx, env)
	if err != nil {
		_ = sp.Rollback(context.WithoutCancel(ctx))
		return []Finding{failed(name, err)}
	}
	if err := sp.Commit(ctx); err != nil {
		return []Finding{failed(name, err)}
	}
	return fs
}

// failed is the finding of a check that could not run.
func failed(name string, err error) Finding {
	return Finding{Check: name, Severity: Warn, Summary: "check could not run: " + Clean(db.Classify(err, "doctor-"+name).Error()),
		Next: "outboxctl doctor --check " + name + " --print-sql"}
}

// Sort orders findings most severe first, keeping run order within a severity.
func Sort(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Severity > fs[j].Severity })
}

// Worst is the highest severity among fs.
func Worst(fs []Finding) Severity {
	w := OK
	for _, f := range fs {
		w = max(w, f.Severity)
	}
	return w
}

// Count counts the findings of one severity.
func Count(fs []Finding, s Severity) int {
	n := 0
	for _, f := range fs {
		if f.Severity == s {
			n++
		}
	}
	return n
}

// Clean makes text read from the database safe for a terminal: control characters become
// "?", so a crafted application_name or query cannot move the cursor or end a line.
func Clean(s string) string { return textsafe.Clean(s) }

// Script is every statement the named checks run, for --print-sql. Statements that take
// values read from the database (the kill-switched shard ids) are printed with an empty
// list, so the script stays executable.
func Script(targets []query.Target, schema string, names []string, cfg Config) query.Script {
	cfg = cfg.WithDefaults()
	var sc query.Script
	for _, name := range names {
		sc = append(sc, statements(targets, schema, name, cfg)...)
	}
	return dedupe(sc)
}

func statements(targets []query.Target, schema, name string, cfg Config) query.Script {
	tables := tableNames(targets)
	switch name {
	case CheckSchema:
		return query.Script{query.Introspect(schema, schemaTables(targets)), query.DoctorIndexes(schema, tables)}
	case CheckReplica, CheckVacuum:
		sc := query.Script{query.DoctorServer()}
		if name == CheckVacuum {
			sc = append(sc, query.DoctorTables(schema, tables))
		}
		return sc
	case CheckScheduler, CheckStuck, CheckKillswitch:
		var sc query.Script
		for _, t := range targets {
			sc = append(sc, queueStatements(t, name, cfg)...)
		}
		return sc
	case CheckBackfill:
		return backfillStatements(schema)
	case CheckMailboxes:
		return mailboxStatements(schema, cfg.Deployment, cfg)
	case CheckTombstones:
		return tombstoneStatements(schema, cfg)
	case CheckReplicas:
		return replicasStatements(schema)
	case CheckEra:
		return eraStatements(targets)
	case CheckXmin:
		return query.Script{query.DoctorServer(), query.DoctorXminSessions(cfg.Limit), query.DoctorPreparedXacts(cfg.Limit), query.DoctorReplicationSlots()}
	case CheckLocks:
		return query.Script{query.DoctorLockTimeout(cfg.LockTimeout), query.DoctorLockWaits(targets)}
	}
	return nil
}

func tableNames(targets []query.Target) []string {
	out := make([]string, len(targets))
	for i, t := range targets {
		out[i] = t.TableName()
	}
	return out
}

// schemaTables are the tables the schema check introspects: the outbox tables and both
// options tables.
func schemaTables(targets []query.Target) []string {
	out := tableNames(targets)
	for _, n := range []string{query.OptionTable, query.ControlOptionTable} {
		if !contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func dedupe(sc query.Script) query.Script {
	seen := map[string]bool{}
	var out query.Script
	for _, st := range sc {
		text, _ := st.Render()
		if !seen[text] {
			seen[text] = true
			out = append(out, st)
		}
	}
	return out
}
