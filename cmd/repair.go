package cmd

import (
	"context"
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/cmdline"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/repair"
)

// repairOptions are the flags every repair (reschedule, compact, skip) shares.
type repairOptions struct {
	Yes     bool
	Reason  string
	Archive string
	// KeepBackoff keeps the shard's backoff when compact or skip removes its head row
	// (without it the shard is made due now: its backoff was earned by the row that is gone).
	KeepBackoff bool
}

func addRepairFlags(a *app, c *cobra.Command, o *repairOptions, archives bool) {
	addMutationFlags(a, c.Flags(), &o.Yes)
	addReasonFlag(c.Flags(), &o.Reason)
	if archives {
		addArchiveFlag(c.Flags(), &o.Archive)
		c.Flags().BoolVar(&o.KeepBackoff, "keep-backoff", false, "when the shard's head row is removed, keep its backoff (default: the shard is made due now, as its backoff was earned by the row that is gone)")
	}
}

// shardArgs are a repair's SCOPE ID arguments: Validate checks the id; the scope is a name
// the registry resolves when the command runs (shardKey).
type shardArgs struct {
	Scope, ID string
	id        int64 // parsed ID, set by validate
}

func (s *shardArgs) validate(command string) error {
	id, err := cmdline.NonNegativeID("shard id", s.ID, command+" organization 42")
	s.id = id
	return err
}

// runOnShard is the run of a command that takes SCOPE ID (inspect shard, drain, reschedule,
// compact): it fills s from the arguments, validates the options, resolves the scope and the
// outbox table, and calls run.
func (a *app) runOnShard(s *shardArgs, validate func() error, run func(context.Context, query.Target, query.ShardKey) error) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		s.Scope, s.ID = args[0], args[1]
		if err := validate(); err != nil {
			return err
		}
		k, err := a.shardKey(*s)
		if err != nil {
			return err
		}
		t, err := a.target()
		if err != nil {
			return err
		}
		return run(c.Context(), t, k)
	}
}

// severalShards runs SCOPE ID ID... as the bulk form over exactly those shards (the
// selector of a --shards-from list), and SCOPE ID as single.
func (a *app) severalShards(single func(*cobra.Command, []string) error, bulk func(context.Context, query.Target, query.ShardSelector) error) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		if len(args) <= 2 {
			return single(c, args)
		}
		scope, err := a.scopeArg(args[0])
		if err != nil {
			return err
		}
		refs, err := repair.ShardRefs(scope.Value, args[1:], c.CommandPath()+" organization 42 43", cmdline.IDParser("shard id"))
		if err != nil {
			return err
		}
		t, err := a.target()
		if err != nil {
			return err
		}
		return bulk(c.Context(), t, query.ShardSelector{Listed: refs})
	}
}

// shardKey resolves the scope of a validated SCOPE ID.
func (a *app) shardKey(s shardArgs) (query.ShardKey, error) {
	scope, err := a.scopeArg(s.Scope)
	if err != nil {
		return query.ShardKey{}, err
	}
	return query.ShardKey{Scope: *scope, ID: s.id}, nil
}

// rescheduleOptions are reschedule's flags and arguments: SCOPE ID, or the bulk form's
// selector flags.
type rescheduleOptions struct {
	repairOptions
	shardArgs
	bulk bulkOptions
	// GroupHeads is --group-heads: rewrite only each coalesce group's lowest row.
	GroupHeads bool
}

// mode is the reschedule's mode (--group-heads, or every row).
func (o rescheduleOptions) mode() query.RescheduleMode {
	if o.GroupHeads {
		return query.RescheduleGroupHeads
	}
	return query.RescheduleAllRows
}

// groupHeadsHelp is --group-heads' help: what it changes, why Sentry's workers read the
// shard the same, and where they do not.
const groupHeadsHelp = "rewrite only the lowest row of each coalesce group (shard, category, object), not every row: " +
	"far fewer writes, and Sentry's claim reads the shard the same (due, its backoff from the shard's lowest row, always a group's lowest: 2 s); " +
	"but Sentry's scheduler then lists the shard only in the id windows holding a group head (mostly the lowest), so fewer of its five " +
	"tasks share the rescheduled shards (a slower recovery), and a group's lowest row deleted while newer rows of it stay before a claim " +
	"(the 50-row duplicate deletion, a disabled shard's drain, compact or skip --keep-backoff) brings the old backoff back"

// Validate checks the shard id.
func (o *rescheduleOptions) Validate() error { return o.validate("outboxctl reschedule") }

// bulkRun is a repair's RunE: with no argument its bulk form (the selector flags, validated
// and resolved, then run), else single (SCOPE ID or MESSAGE_ID), refusing selector flags beside it.
func (a *app) bulkRun(command string, o *bulkOptions, single func(*cobra.Command, []string) error,
	run func(ctx context.Context, t query.Target, sel query.ShardSelector) error) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			if o.hasCriterion() || o.Limit > 0 {
				what := map[bool]string{true: "MESSAGE_ID", false: "SCOPE ID"}[len(args) == 1]
				// The Try is this command line without the selector flags: the single form
				// the arguments asked for.
				return usageErrorf(a.withoutSelectors(command), "%s takes %s or selector flags, not both", command, what)
			}
			return single(c, args)
		}
		if err := o.validate(command); err != nil {
			return err
		}
		sel, err := a.shardSelector(o.selectorOptions, command, a.factory().clock.now())
		if o.Resume != "" {
			sel, o.resume, err = a.resumeSelector(*o, command)
			defer o.resume.Unlock() // the journal's lock, held for the run
		}
		if err != nil {
			return err
		}
		t, err := a.target()
		if err != nil {
			return err
		}
		return run(c.Context(), t, sel)
	}
}

// rescheduleBulk is reschedule's bulk form in mode (with --group-heads its plan counts the
// coalesce groups, the rows it rewrites).
func rescheduleBulk(mode query.RescheduleMode) bulkRepair {
	return bulkRepair{command: "reschedule", mode: mode}
}

// newRescheduleCmd is reschedule; runF, when not nil, replaces runReschedule (a flag test's
// seam: the command line parsed and validated, no database).
func newRescheduleCmd(a *app, runF func(context.Context, factory, rescheduleOptions, query.Target, query.ShardKey) error) *cobra.Command {
	if runF == nil {
		runF = runReschedule
	}
	var o rescheduleOptions
	var c *cobra.Command
	// The bulk form, for selector flags and for SCOPE ID ID... alike.
	bulk := func(ctx context.Context, t query.Target, sel query.ShardSelector) error {
		mode, err := a.resumeMode(o, c.Flags().Changed("group-heads"))
		if err != nil {
			return err
		}
		return runBulk(ctx, a.factory(), o.bulk, o.repairOptions, t, sel, rescheduleBulk(mode))
	}
	c = &cobra.Command{
		Use:   "reschedule (SCOPE ID | SELECTORS)",
		Short: "Make a shard (or every selected shard) due now and clear its backoff, so Sentry's workers pick it up",
		Long: strings.TrimSpace(`
Give every row of the shard the schedule of a fresh row (scheduled_for = 2016-08-01, as
Sentry's THE_PAST): the shard is due at the scheduler's next run, and its next claim starts
again from a 2 s delay instead of up to an hour. Nothing is delivered or deleted.

--group-heads gives it only to the lowest row of each coalesce group (shard, category,
object), leaving every other row as it is: a tenth of the writes for groups of ten rows.
Sentry's claim reads the shard the same: it is due when any row is; the claim derives the
backoff from the shard's lowest row, always the lowest of its group (so 2 s), then rewrites
every row; a drain deletes whole groups, after which the lowest row is again a group's
lowest. Where it differs: Sentry's scheduler lists a shard in each of its five tasks' id
windows only for due rows inside the window, and group heads are each group's oldest rows,
so the rescheduled shards land mostly in the lowest window's task instead of being shared
by five (the recovery can be slower; the order among due shards changes too); and a group's
lowest row deleted while newer rows of the group stay, before a claim (the 50-row duplicate
deletion left rows behind, a disabled shard's synchronous drain, compact or skip
--keep-backoff) brings the shard's old backoff back (reschedule it without the flag). Use
it when the primary cannot take the rewrite of every row; the default otherwise.

SCOPE ID ID... (what doctor prints for the shards of a finding) reschedules exactly those
shards of the scope, as the bulk form with their list would.

Without SCOPE ID, the selector flags choose the shards (the same flags as outboxctl shards,
which previews them): every selected shard is rescheduled, a batch of --batch-shards per
short transaction; a shard whose head row a drainer holds is skipped (being drained) and
never waited for. Ctrl-C stops after the batch in flight (exit 130); running the same
command again continues. See docs/runbooks.md, "a receiver was down for an hour".`),
		Example: examples(`
  outboxctl reschedule organization 42 --reason 'INC-3: handler fixed' --yes
  outboxctl reschedule organization 42 43 97 --reason 'INC-3: receiver back' --yes
  outboxctl reschedule --stuck --at-cap --scope organization --dry-run
  outboxctl reschedule --at-cap --added-after 2h --reason 'INC-3: receiver back' --yes
  outboxctl reschedule --stuck --group-heads --reason 'INC-3: receiver back' --yes`),
		Args:              shardOrSelectors(2, "SCOPE ID..."),
		ValidArgsFunction: a.completeFirstArg(enums.KindScope),
		RunE: a.bulkRun("outboxctl reschedule", &o.bulk, a.severalShards(a.runOnShard(&o.shardArgs, o.Validate, func(ctx context.Context, t query.Target, k query.ShardKey) error {
			return runF(ctx, a.factory(), o, t, k)
		}), bulk), bulk),
	}
	addRepairFlags(a, c, &o.repairOptions, false)
	c.Flags().BoolVar(&o.GroupHeads, "group-heads", false, groupHeadsHelp)
	a.addBulkFlags(c, &o.bulk, "bulk form: only shards holding this category (name or integer)")
	addMailboxReschedule(a, c, &o.repairOptions)
	return c
}

// runReschedule makes shard k of t due now with a fresh backoff, after the plan is confirmed
// (--print-sql: prints the UPDATE).
func runReschedule(ctx context.Context, d factory, o rescheduleOptions, t query.Target, k query.ShardKey) error {
	// A group's lowest row is its cell's: printed for every cell, the heads would be the
	// lowest across them; a run writes one cell's rows.
	if err := requireCell(t, d.suggest.again("outboxctl reschedule", "--cell", "us")); err != nil && (o.GroupHeads || !d.sql.printSQL) {
		return err
	}
	return runMutation(ctx, d, "outboxctl reschedule", &repair.Reschedule{Env: d.repairEnv(), Target: t, Shard: k, Mode: o.mode(), Reason: o.Reason}, o.Yes)
}

// compactOptions are compact's flags and arguments: SCOPE ID, or the bulk form's selector flags.
type compactOptions struct {
	repairOptions
	shardArgs
	bulk bulkOptions
}

// compactBulk is compact's bulk form.
var compactBulk = bulkRepair{command: "compact"} //nolint:gochecknoglobals // constant description

// Validate checks the shard id.
func (o *compactOptions) Validate() error { return o.validate("outboxctl compact") }

// newCompactCmd is compact; runF, when not nil, replaces runCompact (a flag test's seam).
func newCompactCmd(a *app, runF func(context.Context, factory, compactOptions, query.Target, query.ShardKey) error) *cobra.Command {
	if runF == nil {
		runF = runCompact
	}
	var o compactOptions
	c := &cobra.Command{
		Use:   "compact (SCOPE ID | SELECTORS)",
		Short: "Delete the superseded rows of every coalesce group of a shard, keeping the newest",
		Long: strings.TrimSpace(`
Delete, after archiving them, exactly the rows a successful drain would delete without
delivering: in every coalesce group of the shard, the rows below the group's newest id. The
newest row of each group stays, so Sentry still delivers every object once. For a hot shard
whose duplicates make Sentry's 50-row deletion time out. When the shard's head row is among
them, the shard is made due now, unless --keep-backoff.

The run is one archive operation: its rows are staged in the archive (synced) before the
DELETE and marked committed after it; outboxctl restore puts them back. --print-sql prints
the SELECT of what would be archived and the DELETE commented out, and changes nothing.

Without SCOPE ID, the selector flags choose the shards (as for outboxctl shards): a batch of
--batch-shards per transaction, each shard its own archive operation in one file (restore
FILE --all puts the run back); a shard a drainer holds is skipped (being drained).`),
		Example: examples(`
  outboxctl compact organization 1 --reason 'INC-4: hot shard' --yes
  outboxctl compact --min-depth 10000 --reason 'INC-4: hot shards' --yes`),
		Args:              shardOrSelectors(2, "SCOPE ID"),
		ValidArgsFunction: a.completeFirstArg(enums.KindScope),
		RunE: a.bulkRun("outboxctl compact", &o.bulk, a.runOnShard(&o.shardArgs, o.Validate, func(ctx context.Context, t query.Target, k query.ShardKey) error {
			return runF(ctx, a.factory(), o, t, k)
		}), func(ctx context.Context, t query.Target, sel query.ShardSelector) error {
			return runBulk(ctx, a.factory(), o.bulk, o.repairOptions, t, sel, compactBulk)
		}),
	}
	addRepairFlags(a, c, &o.repairOptions, true)
	a.addBulkFlags(c, &o.bulk, "bulk form: only shards holding this category (name or integer)")
	return c
}

// runCompact archives and deletes the superseded rows of shard k of t, after the plan is
// confirmed (--print-sql: prints what it would archive, and the DELETE commented out).
func runCompact(ctx context.Context, d factory, o compactOptions, t query.Target, k query.ShardKey) error {
	if err := requireCell(t, d.suggest.again("outboxctl compact", "--cell", "us")); err != nil {
		return err
	}
	err := runMutation(ctx, d, "outboxctl compact", &repair.Compact{Env: d.repairEnv(), Target: t, Shard: k, Reason: o.Reason,
		Archive: o.Archive, KeepBackoff: o.KeepBackoff, User: osUser()}, o.Yes)
	var noRoom *drain.NoRoomError
	if errors.As(err, &noRoom) {
		return noRoomf("%s: nothing was changed; archive on a disk with room: %s", noRoom.Error(),
			d.suggest.again("outboxctl compact", "--archive", "DIR/"+noRoom.Name+".jsonl"+drain.CompressedExt))
	}
	return err
}

// messageArg is a command's MESSAGE_ID argument: an outbox row id.
type messageArg struct {
	ID string
	id int64 // parsed ID, set by validate
}

func (m *messageArg) validate(command string) error {
	id, err := cmdline.NonNegativeID("message id", m.ID, command+" 123456")
	m.id = id
	return err
}

// skipOptions are skip's flags and argument: MESSAGE_ID, or --category and the selector flags.
type skipOptions struct {
	repairOptions
	messageArg
	bulk bulkOptions
}

// skipBulk is skip --category's bulk form (the category is the selector's).
func skipBulk(query.ShardSelector) bulkRepair { return bulkRepair{command: "skip"} }

// Validate checks the message id.
func (o *skipOptions) Validate() error { return o.validate("outboxctl skip") }

// newSkipCmd is skip; runF, when not nil, replaces runSkip (a flag test's seam).
func newSkipCmd(a *app, runF func(context.Context, factory, skipOptions, query.Target, []int64) error) *cobra.Command {
	if runF == nil {
		runF = runSkip
	}
	var o skipOptions
	c := &cobra.Command{
		Use:   "skip (MESSAGE_ID... | --category C [SELECTORS])",
		Short: "Archive and delete a poison message's coalesce group, unblocking its shard",
		Long: strings.TrimSpace(`
Archive, then delete, every row of the message's coalesce group (same shard, category and
object) up to the group's newest row: the group is not delivered. For a shard's head in
backoff, up to the newest row its last attempt could have sent (written by then): that is
what failed; a row written since has not been tried and stays, for Sentry to deliver (a
head written after the last attempt, never tried, goes whole, and the plan says so). When the group held the
shard's head row, the shard is made due now (its backoff was earned by the row that is
gone), unless --keep-backoff; the rest of the shard is untouched. The summary shows the
shard's state after, the next step and the undo.

The run is one archive operation (staged before the DELETE, marked committed after it).
outboxctl restore FILE --operation ID puts the rows back: a skip is restored only when
named, never by restore --all alone.

Several MESSAGE_IDs (what doctor prints for proven poison heads): one plan naming every
group, one confirmation (their count typed back above 100 on a terminal), then each group
as its own archive operation, all in one archive file (--archive, else one of the run's
own); a message that is gone by then is reported and the others go on. --print-sql prints
the SELECT of what would be archived and the DELETE commented out, and changes nothing.

With --category C and no MESSAGE_ID (the poison-category case): in every selected shard
holding a row of C (narrowed by the other selector flags; --added-after/--added-before
bound the matching rows too), every coalesce group of C with a matching row is archived
and deleted up to its highest matching row (docs/runbooks.md, "What a skip removes", says
where the two forms differ and why neither leaves an older row to be delivered in place of
a newer one). A batch of --batch-shards per transaction; each shard is its own operation in one
archive file (restore FILE --all --include-skipped puts the run back). See
docs/runbooks.md, "a poison category in every shard".`),
		Example: examples(`
  outboxctl skip 123456 --reason 'INC-5: poison payload' --yes
  outboxctl skip 123456 123789 124001 --reason 'INC-5: failed again after a fresh attempt' --yes
  outboxctl skip --category ORGANIZATION_UPDATE --head-category ORGANIZATION_UPDATE --dry-run
  outboxctl skip --category ORGANIZATION_UPDATE --added-after 2h --reason 'INC-5: bad deploy' --yes`),
		Args: shardOrSelectors(1, "MESSAGE_ID..."),
		RunE: a.bulkRun("outboxctl skip", &o.bulk, func(c *cobra.Command, args []string) error {
			o.ID = args[0]
			if err := o.Validate(); err != nil {
				return err
			}
			t, err := a.target()
			if err != nil {
				return err
			}
			if len(args) > 1 {
				ids, err := repair.MessageIDs(args, cmdline.IDParser("message id"))
				if err != nil {
					return tried(err)
				}
				return runF(c.Context(), a.factory(), o, t, ids)
			}
			return runF(c.Context(), a.factory(), o, t, []int64{o.id})
		}, func(ctx context.Context, t query.Target, sel query.ShardSelector) error {
			return runSkipCategory(ctx, a.factory(), o, t, sel)
		}),
	}
	addRepairFlags(a, c, &o.repairOptions, true)
	a.addBulkFlags(c, &o.bulk, "bulk form: skip the rows of this category (name or integer), in every selected shard holding one")
	addMailboxSkip(a, c, &o.repairOptions)
	return c
}

// runSkip archives and deletes the coalesce group of each message of ids in t, after one plan
// naming them all is confirmed (--print-sql: prints what it would archive, and the DELETE
// commented out).
func runSkip(ctx context.Context, d factory, o skipOptions, t query.Target, ids []int64) error {
	return runMutation(ctx, d, "outboxctl skip", &repair.Skip{Env: d.repairEnv(), Target: t, IDs: ids, Reason: o.Reason, Archive: o.Archive,
		KeepBackoff: o.KeepBackoff, Registry: d.registry, User: osUser()}, o.Yes)
}

// runSkipCategory is skip --category: in every shard sel selects, the category's coalesce
// groups with a matching row archived and deleted (repair.Bulk), through the one runner.
// docs/architecture.md draws its path to the SQL, and TestSkipCategoryPath holds it.
func runSkipCategory(ctx context.Context, d factory, o skipOptions, t query.Target, sel query.ShardSelector) error {
	if sel.Category == nil {
		return usageErrorf("outboxctl skip --category ORGANIZATION_UPDATE --head-category ORGANIZATION_UPDATE", "skip without MESSAGE_ID needs --category: the category whose rows to skip")
	}
	m, err := bulkMutation(d, o.bulk, &o.repairOptions, t, sel, skipBulk(sel))
	if err != nil {
		return err
	}
	return runMutation(ctx, d, "outboxctl skip", m, o.Yes)
}
