package cmd

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/cmdline"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/repair"
)

// restoreOptions are restore's flags and argument; Validate and restoreShard turn the
// selection flags into the embedded drain.RestoreSelection.
type restoreOptions struct {
	Path   string
	Yes    bool
	Reason string
	Ops    []string
	IDs    []string
	Shard  string
	// MaxLine caps one archive line (--max-line-bytes).
	MaxLine byteSize
	drain.RestoreSelection
	shardScope string // the SCOPE of --shard, resolved by restoreShard
	shardID    int64  // the ID of --shard, parsed by Validate
}

// Validate checks the selection flags that need no registry: the row ids and the form of
// --shard.
func (o *restoreOptions) Validate() error {
	o.Operations = o.Ops
	o.RestoreSelection.IDs = nil
	for _, s := range o.IDs {
		id, err := cmdline.NonNegativeID("row id", s, "outboxctl restore FILE --id 123456")
		if err != nil {
			return err
		}
		o.RestoreSelection.IDs = append(o.RestoreSelection.IDs, id)
	}
	if o.Shard != "" {
		var err error
		o.shardScope, o.shardID, err = repair.RestoreShard(o.Shard, cmdline.IDParser("shard id"))
		return tried(err)
	}
	return nil
}

// restoreShard resolves the scope of --shard into the selection.
func (a *app) restoreShard(o *restoreOptions) error {
	if o.Shard == "" {
		return nil
	}
	scope, err := a.scopeArg(o.shardScope)
	if err != nil {
		return err
	}
	o.RestoreSelection.Shard = &drain.ShardFilter{Scope: scope.Value, ID: o.shardID}
	return nil
}

func newRestoreCmd(a *app) *cobra.Command {
	o := restoreOptions{MaxLine: byteSize(drain.DefaultMaxArchiveLine)}
	c := &cobra.Command{
		Use:   "restore ARCHIVE.jsonl",
		Short: "Put archived outbox rows back, by operation, exactly as they were",
		Long: strings.TrimSpace(`
Reinsert rows an outboxctl archive holds into the table they came from, byte for byte as they
were before the operation (drain --handler discard, a kill-switched drain, compact or skip)
deleted them: same ids, payloads, cells and schedules. Every archive line names its operation
(one run of a command, with its reason, user and time); restore plans by operation and shows
each one's rows and ids. A file holding several operations needs --operation ID or --all.
A skip's rows (poison messages) come back only when the skip is named with --operation or
--include-skipped is given: --all leaves skips out, and says so.

Only batches whose deletion committed are restored. Rows staged before a DELETE that failed
or rolled back are reported (with a check that they are still in the table) and left alone.
A staged batch with no marker at all (a kill or a full disk before its commit marker) is
settled against the table: every id it staged gone means its DELETE committed, and its rows
are restored (the plan says so); some gone and some there cannot be told, so the missing ones
are left out, named in -o json's left_out, and restore exits 6: --include-uncommitted
restores every staged row with no marker.
Ids that exist are skipped, so running restore twice inserts nothing the second time.
An operation whose rows are not all in its shard, or whose checksum does not match (a line
edited, removed or moved), is refused. One with no checksum (written before archives carried
one, or with its checksum fields removed: restore cannot tell the two apart) is restored only
with --unverified, after comparing the plan's shard and ids with what was deleted. The plan
names the shard every operation's rows go into.
--id and --shard restore part of an operation. --schema puts rows into another schema's table
than the one recorded. --print-sql prints the INSERTs (as they would run) and changes nothing.
Archives written before per-operation archives are read with their limits stated in the plan.
A compressed archive (zstd frames: archive-OPERATION.jsonl.zst, the default since archives
were compressed) is read as it is, as is a plain one; its last frame cut short by a kill is
ignored, as a cut last line is.`),
		Example: examples(`
  outboxctl restore ~/.local/state/outboxctl/archive-20261130T200648Z-compact-3fa2c1.jsonl.zst --yes
  outboxctl restore shared.jsonl --operation 20261130T200648Z-compact-3fa2c1 --yes
  outboxctl restore shared.jsonl --all --shard organization/42 --yes`),
		Args: exactArgs(1, "ARCHIVE.jsonl"),
		RunE: func(c *cobra.Command, args []string) error {
			o.Path = args[0]
			if err := o.Validate(); err != nil {
				return err
			}
			if err := a.restoreShard(&o); err != nil {
				return err
			}
			// The rows go into the tables their operations name: the target line names none.
			return runRestore(c.Context(), a.factory(), a.targetLine(""), o)
		},
	}
	addMutationFlags(a, c.Flags(), &o.Yes)
	addReasonFlag(c.Flags(), &o.Reason)
	c.Flags().StringSliceVar(&o.Ops, "operation", nil, "restore these operations (ids as the plan and the error list them; repeatable); a named skip is restored")
	c.Flags().BoolVar(&o.All, "all", false, "restore every operation of the file except skips")
	c.Flags().BoolVar(&o.IncludeSkipped, "include-skipped", false, "with --all (or a file of one skip): restore skip operations too (poison messages)")
	c.Flags().BoolVar(&o.Unverified, "unverified", false, "also restore operations with no checksum (old archives, or checksum fields removed), whose rows cannot be checked for edits")
	c.Flags().BoolVar(&o.IncludeUncommitted, "include-uncommitted", false, "also restore staged rows with no commit or rollback marker (ids that exist are skipped)")
	c.Flags().StringSliceVar(&o.IDs, "id", nil, "restore only these row ids (repeatable, or comma-separated)")
	c.Flags().StringVar(&o.Shard, "shard", "", "restore only the rows of this shard, as SCOPE/ID (organization/42)")
	c.Flags().Var(&o.MaxLine, "max-line-bytes", "refuse an archive line longer than this (KiB, MiB, GiB): raise it for a row with a payload over ~128MiB")
	c.MarkFlagsMutuallyExclusive("operation", "all")
	return c
}

// runRestore is restore through the one runner (repair.Restore: the archive read and
// planned before connecting, even for --print-sql; the table checked, the rows reinserted in
// one transaction, the audit line and the summary). targetLine is the plan's target: the
// database and schema, as the rows go into the tables their operations name.
func runRestore(ctx context.Context, d factory, targetLine string, o restoreOptions) error {
	err := runMutation(ctx, d, "outboxctl restore", &repair.Restore{Env: d.repairEnv(), Path: o.Path, MaxLine: int64(o.MaxLine),
		Selection: o.RestoreSelection, Reason: o.Reason, PlanTarget: targetLine, Registry: d.registry}, o.Yes)
	// The refusals that are the command line's to fix are usage errors (exit 2), with the
	// line to try (repair.RestoreRefused).
	return tried(repair.RestoreRefused(err, o.Path))
}
