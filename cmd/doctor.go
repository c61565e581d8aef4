package cmd

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/doctor"
	"github.com/outboxctl/outboxctl/internal/exitcode"
	"github.com/outboxctl/outboxctl/internal/render"
)

type doctorOptions struct {
	Checks []string
	Config doctor.Config
	// Sample reads the backfill cursors again after this long to find stalled walks.
	Sample time.Duration
	// named is true when the global flags name one outbox table (--silo, --table, --cell):
	// only it is checked, else every one present.
	named bool
}

// Validate checks the flags and returns the checks to run, in run order.
func (o *doctorOptions) Validate() ([]string, error) {
	names, err := doctor.ParseChecks(o.Checks)
	if err != nil {
		return nil, usageErrorf("outboxctl doctor --check scheduler,xmin", "`--check`: %s", err.Error())
	}
	c := o.Config // its durations are never negative: their flag type refuses it
	if c.XminWarnXids < 0 || c.XminCritXids < 0 || c.Sample < 0 || c.Limit < 0 {
		return nil, usageErrorf("outboxctl doctor --help", "`--xmin-warn-xids`, `--xmin-crit-xids`, `--oldest-rows` and `--limit` must not be negative")
	}
	if c.XminCrit > 0 && c.XminWarn > c.XminCrit {
		return nil, usageErrorf("outboxctl doctor --xmin-warn 5m --xmin-crit 1h", "`--xmin-warn` (%s) must not exceed `--xmin-crit` (%s)", c.XminWarn, c.XminCrit)
	}
	return names, nil
}

func newDoctorCmd(a *app) *cobra.Command {
	var o doctorOptions
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Check the outboxes and what PostgreSQL is doing to them, and say what to run next",
		Long: strings.TrimSpace(`
Run every check over one read-only snapshot and print findings, most severe first, each
with its evidence and the next command to run (SQL such as pg_terminate_backend is shown,
never run):

  scheduler   due shards whose head has not been claimed for --unclaimed (5m): Sentry's
              drain tasks are not running or not reaching this database (critical at 6×);
              a shard claimed seconds ago is probably draining and is not reported
  stuck       shards at the 1 h backoff cap with their head message (critical when the
              head is older than 24 h); a shard's rows counted up to 10,000 ("at least",
              depth_at_least: inspect shard, its last next step, counts them all)
  killswitch  kill-switched shards that hold rows, and whether trimming has stalled
  backfill    backfills gated by an option, 'complete' below the coded version, pending a
              restart, malformed; with --sample 30s, walks that did not move
  tombstones  a deletion (tombstone) cascade waiting on a tombstone older than
              --tombstone-stall (1h; critical at 24h), from the deletion watermark tables
              (Sentry since Sep 2026; Redis keys before, not read)
  mailboxes   webhook payload mailboxes (hybridcloud_webhookpayload, control silo): blocked
              behind a failing head for --mailbox-blocked (30m; critical at 6h or near the
              drop), heads Sentry drops within --mailbox-near-drop (12h; 3-day
              MAX_DELIVERY_AGE, critical), mailboxes of --mailbox-large (10,000) payloads
              or more, failing heads of providers that skip failures
  vacuum      dead tuples against each table's autovacuum trigger (threshold + scale factor
              × reltuples, reloptions honoured; critical past 10×), autovacuum off on the
              table or server-wide, last (auto)vacuum, size against live rows
  xmin        what holds the xmin horizon back: sessions (idle in transaction named as
              such), prepared transactions, replication slots; warning past --xmin-warn (5m)
              or --xmin-warn-xids (10,000,000), critical past --xmin-crit (1h) or
              --xmin-crit-xids (100,000,000); inactive slots that keep WAL warn
  locks       sessions waiting on locks of the outbox tables, their blockers
              (pg_blocking_pids) and the shard of a locked row (critical after 1 min)
  replica     on a standby: replay lag (warning past 1 min, critical past 15 min), and
              that repairs must go to the primary
  replicas    a sample of the 100 oldest and 100 newest organizations: how many lack their
              organization mapping (warning; critical when none has one, as after a broken
              upgrade); outboxctl verify compares every replication pair in full
  schema      the tables look like Sentry's: columns, payload type, the three shard-key
              indexes by column set, region_name on control, options value type

Both outbox tables are checked when both exist (a monolith); --silo, --table or --cell
narrow it to one. A role without pg_read_all_stats still gets every check; the xmin
finding says what it could not see.

Exit status: 0 when every finding is ok, 4 when the worst is a warning, 5 when any is
critical (1: runtime failure, 2: usage).`),
		Example: examples(`
  outboxctl doctor
  outboxctl doctor --check xmin,locks -o json
  outboxctl doctor --check backfill --sample 30s
  outboxctl doctor --print-sql`),
		Args: exactArgs(0, "(no arguments)"),
		RunE: func(c *cobra.Command, _ []string) error {
			names, err := o.Validate()
			if err != nil {
				return err
			}
			return a.runDocument(c, o, func(ctx context.Context, on *app) (render.Doc, error) {
				o := o // each context of a fan-out has its own timeouts, deployment and table
				o.named = c.Flag("silo").Changed || on.g.Table != "" || on.g.Cell != ""
				// The lock query's timeout is short, and never longer than the user's own.
				o.Config.LockTimeout = min(doctor.DefaultLockTimeout, on.g.StatementTimeout)
				o.Config.Deployment = on.deployment() // printed kill-switch SQL reads the table it decides
				return runDoctor(ctx, on.factory(), o, names)
			})
		},
	}
	addDoctorFlags(c, &o)
	return c
}

// addDoctorFlags registers doctor's flags: the checks and their thresholds.
func addDoctorFlags(c *cobra.Command, o *doctorOptions) {
	f := c.Flags()
	f.StringSliceVar(&o.Checks, "check", nil, "run only these checks (comma-separated): "+strings.Join(doctor.Names, ", "))
	addDurationFlag(f, &o.Config.Unclaimed, "unclaimed", doctor.DefaultUnclaimed, "10m", "a due shard whose head was last claimed longer ago is a finding")
	addDurationFlag(f, &o.Config.XminWarn, "xmin-warn", doctor.DefaultXminWarn, "5m", "warn about a transaction, prepared transaction or slot holding the xmin horizon longer")
	addDurationFlag(f, &o.Config.XminCrit, "xmin-crit", doctor.DefaultXminCrit, "1h", "the same, critical")
	f.Int64Var(&o.Config.XminWarnXids, "xmin-warn-xids", doctor.DefaultXminWarnXids, "warn when the xmin horizon is held back by more transaction ids")
	f.Int64Var(&o.Config.XminCritXids, "xmin-crit-xids", doctor.DefaultXminCritXids, "the same, critical")
	f.IntVar(&o.Config.Sample, "oldest-rows", doctor.DefaultSample, "scheduler: examine the shards of this many oldest rows (every scheduler run hands out the range holding them)")
	f.IntVar(&o.Config.Limit, "limit", doctor.DefaultLimit, "at most this many findings per check and table")
	f.BoolVar(&o.Config.SelfHosted, "self-hosted", false, "backfill: ignore the options, as self-hosted Sentry does")
	addDurationFlag(f, &o.Sample, "sample", 0, "30s", "backfill: read the cursors again after this long and report walks that did not move")
	addDurationFlag(f, &o.Config.TombstoneStall, "tombstone-stall", doctor.DefaultTombstoneStall, "2h", "tombstones: a deletion cascade waiting on a tombstone older than this is stalled")
	addDurationFlag(f, &o.Config.MailboxBlocked, "mailbox-blocked", doctor.MailboxBlockedWarn, "1h", "mailboxes: a mailbox blocked behind its failing head longer than this is a finding")
	addDurationFlag(f, &o.Config.MailboxNearDrop, "mailbox-near-drop", doctor.MailboxDropMargin, "24h", "mailboxes: a head Sentry drops undelivered (3 days after it arrived) within this is critical")
	f.Int64Var(&o.Config.MailboxLarge, "mailbox-large", doctor.MailboxLarge, "mailboxes: a mailbox of at least this many payloads is a finding (INC-2324's shape)")
	_ = c.RegisterFlagCompletionFunc("check", fixedCompletion(doctor.Names...))
}

// runDoctor prints the checks' SQL, or runs them in one snapshot (doctor.Run), prints the
// findings and maps the worst severity to the exit status.
func runDoctor(ctx context.Context, d factory, o doctorOptions, names []string) (render.Doc, error) {
	inv := doctor.Invocation{Named: o.named, SchemaName: d.db.schema, LedgerPath: ledgerPath(), Config: o.Config}
	fs, err := doctor.RunChecks(ctx, d.reader(ctx, "doctor"), inv, names, o.Sample, func(ctx context.Context, dur time.Duration) error {
		return d.sampleAgain(ctx, "backfill cursors", dur)
	})
	if err != nil || d.sql.printOnly {
		return nil, err
	}
	return findingsDoc(d, fs)
}

// findingsDoc is the findings' document (doctor.Doc: cards on a terminal, else one table),
// and the worst severity as the verdict.
func findingsDoc(d factory, fs []doctor.Finding) (render.Doc, error) {
	doc := doctor.Doc(fs, d.format.wide, d.format.cards, func() string { return d.suggest.next(nil, "doctor", "-o", "wide") })
	switch doctor.Worst(fs) {
	case doctor.Crit:
		return doc, exitcode.Verdictf(exitcode.Critical, "doctor: %s", doctor.Tally(fs))
	case doctor.Warn:
		return doc, exitcode.Verdictf(exitcode.Warning, "doctor: %s", doctor.Tally(fs))
	case doctor.OK:
	}
	return doc, nil
}
