package cmd

import (
	"context"
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/cmdline"
	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/repair"
	"github.com/outboxctl/outboxctl/internal/replica"
)

// replicateOptions are replicate's flags and arguments.
type replicateOptions struct {
	repairOptions
	DryRun          bool
	replica.Request        // PAIR ID..., --from, --drift
	Cell            string // --cell: the cell a control model's rows are for

	targets map[string][]int64 // pair -> ids, set by Validate (--from: by resolve)
}

// Validate checks PAIR ID... or --from, and --drift (replica.Request.Check).
func (o *replicateOptions) Validate() error {
	var err error
	o.targets, err = o.Check(cmdline.IDParser("object id"))
	return tried(err)
}

// resolve reads --from into targets.
func (o *replicateOptions) resolve() error {
	if o.From == "" {
		return nil
	}
	var err error
	o.targets, err = o.Read()
	return tried(err)
}

func newReplicateCmd(a *app) *cobra.Command {
	var o replicateOptions
	c := &cobra.Command{
		Use:   "replicate PAIR ID... | --from FILE",
		Short: "Write the outbox rows Sentry writes for objects, so its workers replicate them again",
		Long: strings.TrimSpace(`
For each object, write into the source silo's outbox (sentry_regionoutbox for the cell ->
control pairs; sentry_controloutbox for the control -> cell pairs, one row per cell
outbox_cell_names() names: --cell, the cell context's or the monolith's for a gone object)
the row Sentry's own outbox_for_update() writes for it: the pair's category
and scope, the shard and object identifiers infer_identifiers gives it, the payload of
payload_for_update() and a fresh row's schedule (scheduled_for 2016-08-01, Sentry's
THE_PAST), so the shard is due at once. Sentry's workers (or outboxctl drain) then deliver
it through the real receiver, which upserts the replica. An object whose source row is gone
gets the deletion outbox Sentry writes as it deletes (the same identifiers, read from its
replica): delivered, it deletes the replica.

--from reads the objects of verify's JSON (-o json or jsonl); --drift picks the classes
(default missing,stale,orphan: pending objects are already queued). With two contexts
(--context us,control) the sources and the outbox are the cell's, the replicas the control
silo's. The plan is confirmed (--yes off a terminal); --dry-run prints it and stops;
--print-sql prints the INSERT after reading the objects. Afterwards verify PAIR --id ID
shows the object pending, then in sync once the shard drained. A pair whose replica Sentry
tore down in July 2026 (team, organizationmemberteam, externalactor, on a database past it)
is refused (exit 2): its outbox row would drain and replicate nothing.`),
		Example: examples(`
  outboxctl replicate organization 1 --reason 'INC-7: mapping missing after upgrade' --yes
  outboxctl verify -o json > drift.json
  outboxctl replicate --from drift.json --drift missing,stale --reason 'INC-7' --yes`),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return replica.Names(), cobra.ShellCompDirectiveNoFileComp
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			o.Args = args
			if err := o.Validate(); err != nil {
				return err
			}
			if err := o.resolve(); err != nil {
				return err
			}
			o.DryRun, o.Cell = a.dryRun, a.g.Cell
			return runReplicate(c.Context(), a.factory(), o, a.splitSides)
		},
	}
	addRepairFlags(a, c, &o.repairOptions, false) // --yes, --reason and the shared --dry-run
	c.Flags().StringVar(&o.From, "from", "", "replicate the drifted objects of this file (verify -o json or -o jsonl)")
	c.Flags().StringSliceVar(&o.Drift, "drift", nil, "with --from: the drift classes to replicate (missing, stale, orphan, pending; default missing,stale,orphan)")
	return c
}

// openSplit opens the cell's and the control silo's contexts of a verify or replicate given
// two (nil, nil otherwise): app.splitSides (cmd/split.go).
type openSplit func(ctx context.Context, command string, connect bool) (*outbox.SplitSides, error)

// replicateConns opens the silos' connections for replicate (repair.ReplicateConnsOf): with
// two contexts each one's (split), else the invocation's database, asked for here.
func (d factory) replicateConns(ctx context.Context, split openSplit, cell string) (repair.ReplicateConns, error) {
	return repair.ReplicateConnsOf(ctx, func(ctx context.Context) (*outbox.SplitSides, error) { return split(ctx, "replicate", true) },
		func(ctx context.Context) (*db.Conn, error) {
			if err := d.db.requireDB("outboxctl replicate"); err != nil {
				return nil, err
			}
			return d.db.connect(ctx, "replicate")
		}, d.db.schema, cell)
}

// runReplicate is replicate through the one runner (repair.Replicate: the objects read in a
// snapshot of each side, the plan, the rows written in one transaction per silo written, the
// audit lines and the table of what was written; --print-sql prints the INSERT after reading
// the objects).
func runReplicate(ctx context.Context, d factory, o replicateOptions, split openSplit) error {
	err := runMutation(ctx, d, "outboxctl replicate", &repair.Replicate{Env: d.repairEnv(), Targets: o.targets, Reason: o.Reason, Cell: o.Cell,
		DryRun: o.DryRun, PrintSQL: d.sql.printSQL, Connect: func(ctx context.Context) (repair.ReplicateConns, error) { return d.replicateConns(ctx, split, o.Cell) }}, o.Yes)
	// A pair whose replica Sentry tore down is the command line's to fix: exit 2.
	var td *repair.TornDownError
	if errors.As(err, &td) {
		return usageErrorf("outboxctl verify", "%s", td.Error())
	}
	return err
}
