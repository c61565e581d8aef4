package cmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

type repairOptions struct {
	Yes     bool
	Reason  string
	Archive string
}

func addRepairFlags(c *cobra.Command, o *repairOptions, archives bool) {
	c.Flags().BoolVar(&o.Yes, "yes", false, "do not ask for confirmation")
	c.Flags().StringVar(&o.Reason, "reason", "", "why: written into the SQL as a comment and into the audit line")
	if archives {
		c.Flags().StringVar(&o.Archive, "archive", "", "JSONL file for the deleted rows (default: $XDG_STATE_HOME/outboxctl/archive-DATE.jsonl)")
	}
}

// shardDepth is a shard's depth, groups and state before or after a repair.
func (a *app) shardSummary(ctx context.Context, conn *db.Conn, t query.Target, k query.ShardKey) (depth int64, nextAttempt any) {
	_ = db.ReadTx(ctx, conn, func(tx pgx.Tx) error {
		res, err := query.Run(ctx, tx, query.ShardState(t, k))
		if err != nil || len(res.Rows) == 0 {
			return err
		}
		depth, _ = res.Rows[0][res.Col("depth")].(int64)
		nextAttempt = res.Rows[0][res.Col("next_attempt")]
		return nil
	})
	return depth, nextAttempt
}

func (a *app) repairTarget(ctx context.Context, command string, scopeArg, idArgText string) (query.Target, query.ShardKey, *db.Conn, error) {
	k, err := a.shardArg(scopeArg, idArgText)
	if err != nil {
		return query.Target{}, query.ShardKey{}, nil, err
	}
	t, err := a.target()
	if err != nil {
		return query.Target{}, query.ShardKey{}, nil, err
	}
	if err := requireCell(t, command); err != nil {
		return t, k, nil, err
	}
	if err := a.requireDatabase(command); err != nil {
		return t, k, nil, err
	}
	conn, err := a.connect(ctx, strings.TrimPrefix(command, "outboxctl "))
	if err != nil {
		return t, k, nil, err
	}
	err = a.readSession(ctx, "repair", func(s *session) error { t = s.target; return nil })
	if err != nil {
		conn.Close(ctx)
		return t, k, nil, err
	}
	return t, k, conn, nil
}

func newRescheduleCmd(a *app) *cobra.Command {
	var o repairOptions
	c := &cobra.Command{
		Use:   "reschedule SCOPE ID",
		Short: "Make a shard due now and clear its backoff, so Sentry's workers pick it up",
		Long: strings.TrimSpace(`
Give every row of the shard the schedule of a fresh row (scheduled_for = 2016-08-01, as
Sentry's THE_PAST): the shard is due at the scheduler's next run, and its next claim starts
again from a 2 s delay instead of up to an hour. Nothing is delivered or deleted.`),
		Example:           examples(`outboxctl reschedule organization 42 --reason 'INC-3: handler fixed' --yes`),
		Args:              exactArgs(2, "SCOPE ID"),
		ValidArgsFunction: a.completeFirstArg(enums.KindScope),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			if a.g.PrintSQL {
				k, err := a.shardArg(args[0], args[1])
				if err != nil {
					return err
				}
				t, _ := a.target()
				return a.printScript(query.Script{query.Reschedule(t, k, 0)}, false)
			}
			t, k, conn, err := a.repairTarget(ctx, "outboxctl reschedule", args[0], args[1])
			if err != nil {
				return err
			}
			defer conn.Close(context.WithoutCancel(ctx))
			depth, next := a.shardSummary(ctx, conn, t, k)
			if depth == 0 {
				a.printer().Notef("shard %s/%d is empty: nothing to reschedule", k.Scope.Name, k.ID)
				return nil
			}
			plan := []string{fmt.Sprintf("make shard %s/%d due now with a fresh backoff: %d row(s), next attempt now %v (%s)",
				k.Scope.Name, k.ID, depth, next, reasonText(o.Reason))}
			if err := a.confirm("outboxctl reschedule", plan, o.Yes); err != nil {
				return err
			}
			var n int64
			err = db.WriteTx(ctx, conn, func(tx pgx.Tx) error {
				st := query.Reschedule(t, k, 0)
				st.Text = query.ReasonComment("reschedule", o.Reason) + st.Text
				n, err = query.Exec(ctx, tx, st)
				return db.Classify(err, "reschedule")
			})
			if err != nil {
				return err
			}
			_, after := a.shardSummary(ctx, conn, t, k)
			a.audit("reschedule", map[string]any{"shard_scope": k.Scope.Name, "shard": k.ID, "rows": n, "reason": o.Reason})
			return a.printer().Print(render.Doc{{Name: "reschedule", Card: []render.Field{
				{Key: "shard", Value: fmt.Sprintf("%s/%d", k.Scope.Name, k.ID)}, {Key: "rows", Value: n},
				{Key: "next_attempt_before", Value: next}, {Key: "next_attempt_after", Value: after}}}})
		},
	}
	addRepairFlags(c, &o, false)
	return c
}

// deleteArchived archives rows (as read by st) and deletes them by id, in one transaction.
func (a *app) deleteArchived(ctx context.Context, conn *db.Conn, t query.Target, k query.ShardKey, st query.Statement, o repairOptions, command string) (int64, string, error) {
	path := o.Archive
	var err error
	if path == "" {
		if path, err = drain.DefaultArchivePath(time.Now()); err != nil {
			return 0, "", err
		}
	}
	arch, err := drain.OpenArchive(path)
	if err != nil {
		return 0, "", err
	}
	defer arch.Close()
	var deleted int64
	err = db.WriteTx(ctx, conn, func(tx pgx.Tx) error {
		res, err := query.Run(ctx, tx, st)
		if err != nil {
			return db.Classify(err, st.Name)
		}
		rows, ids := drain.ArchivedRows(res, t, command, o.Reason)
		if len(ids) == 0 {
			return nil
		}
		if err := arch.Append(rows); err != nil {
			return err
		}
		del := query.DrainDeleteIDs(t, ids)
		del.Text = query.ReasonComment(command, o.Reason) + del.Text
		deleted, err = query.Exec(ctx, tx, del)
		return db.Classify(err, "delete")
	})
	return deleted, path, err
}

func newCompactCmd(a *app) *cobra.Command {
	var o repairOptions
	c := &cobra.Command{
		Use:   "compact SCOPE ID",
		Short: "Delete the superseded rows of every coalesce group of a shard, keeping the newest",
		Long: strings.TrimSpace(`
Delete, after archiving them, exactly the rows a successful drain would delete without
delivering: in every coalesce group of the shard, the rows below the group's newest id. The
newest row of each group stays, so Sentry still delivers every object once. For a hot shard
whose duplicates make Sentry's 50-row deletion time out.`),
		Example:           examples(`outboxctl compact organization 1 --reason 'INC-4: hot shard' --yes`),
		Args:              exactArgs(2, "SCOPE ID"),
		ValidArgsFunction: a.completeFirstArg(enums.KindScope),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			t, k, conn, err := a.repairTarget(ctx, "outboxctl compact", args[0], args[1])
			if err != nil {
				return err
			}
			defer conn.Close(context.WithoutCancel(ctx))
			var count int64
			var wm int64
			err = db.ReadTx(ctx, conn, func(tx pgx.Tx) error {
				res, err := query.Run(ctx, tx, query.Superseded(t, k, 0))
				if err != nil {
					return db.Classify(err, "superseded")
				}
				count = int64(len(res.Rows))
				max, err := query.Run(ctx, tx, query.ShardMaxID(t, k))
				if err == nil && len(max.Rows) > 0 {
					wm, _ = max.Rows[0][0].(int64)
				}
				return err
			})
			if err != nil {
				return err
			}
			depth, _ := a.shardSummary(ctx, conn, t, k)
			if count == 0 {
				a.printer().Notef("shard %s/%d has no superseded rows: nothing to compact", k.Scope.Name, k.ID)
				return nil
			}
			plan := []string{fmt.Sprintf("delete %d superseded row(s) of shard %s/%d (of %d), archived first; the newest row of every group stays (%s)",
				count, k.Scope.Name, k.ID, depth, reasonText(o.Reason))}
			if err := a.confirm("outboxctl compact", plan, o.Yes); err != nil {
				return err
			}
			deleted, path, err := a.deleteArchived(ctx, conn, t, k, query.Superseded(t, k, wm), o, "compact")
			if err != nil {
				return err
			}
			after, _ := a.shardSummary(ctx, conn, t, k)
			a.audit("compact", map[string]any{"shard_scope": k.Scope.Name, "shard": k.ID, "deleted": deleted, "archive": path, "reason": o.Reason})
			return a.printer().Print(render.Doc{{Name: "compact", Card: []render.Field{
				{Key: "shard", Value: fmt.Sprintf("%s/%d", k.Scope.Name, k.ID)}, {Key: "depth_before", Value: depth},
				{Key: "deleted", Value: deleted}, {Key: "depth_after", Value: after}, {Key: "archive", Value: path}}}})
		},
	}
	addRepairFlags(c, &o, true)
	return c
}

func newSkipCmd(a *app) *cobra.Command {
	var o repairOptions
	c := &cobra.Command{
		Use:   "skip MESSAGE_ID",
		Short: "Archive and delete a poison message's coalesce group, unblocking its shard",
		Long: strings.TrimSpace(`
Archive, then delete, every row of the message's coalesce group (same shard, category and
object) up to the group's newest row: the group is not delivered. The rest of the shard
is untouched and drains at its next attempt. outboxctl restore puts the rows back.`),
		Example: examples(`outboxctl skip 123456 --reason 'INC-5: poison payload' --yes`),
		Args:    exactArgs(1, "MESSAGE_ID"),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			id, err := idArg("message id", args[0])
			if err != nil {
				return err
			}
			if err := a.requireDatabase("outboxctl skip"); err != nil {
				return err
			}
			reg, err := a.registry()
			if err != nil {
				return err
			}
			var msg *query.Result
			var t query.Target
			err = a.readSession(ctx, "skip", func(s *session) error {
				t = s.target
				msg, err = s.run(query.Message(t, id))
				return err
			})
			if err != nil {
				return err
			}
			if len(msg.Rows) == 0 {
				return &exitError{code: ExitError, msg: fmt.Sprintf("no outbox row with id %d in %s", id, t.Describe())}
			}
			r := msg.Rows[0]
			scope := int(query.AsInt64(r[msg.Col("shard_scope")]))
			shard, _ := r[msg.Col("shard_identifier")].(int64)
			cat := query.AsInt64(r[msg.Col("category")])
			obj, _ := r[msg.Col("object_identifier")].(int64)
			rows, _ := r[msg.Col("group_rows")].(int64)
			newest, _ := r[msg.Col("newest_id")].(int64)
			if t.Control() {
				if cell, ok := r[msg.Col(t.CellColumn)].(string); ok {
					t.Cell = cell
				}
			}
			k := query.ShardKey{Scope: query.Enum{Value: scope, Name: reg.ScopeName(scope)}, ID: shard}
			plan := []string{fmt.Sprintf("skip message %d: archive and delete its coalesce group (%s, object %d): %d row(s) up to id %d, undelivered, in shard %s/%d (%s)",
				id, reg.CategoryName(int(cat)), obj, rows, newest, k.Scope.Name, shard, reasonText(o.Reason))}
			if err := a.confirm("outboxctl skip", plan, o.Yes); err != nil {
				return err
			}
			conn, err := a.connect(ctx, "skip")
			if err != nil {
				return err
			}
			defer conn.Close(context.WithoutCancel(ctx))
			st := query.DrainArchiveRows(t, k, []int64{cat}, []int64{obj}, []int64{newest}, false)
			deleted, path, err := a.deleteArchived(ctx, conn, t, k, st, o, "skip")
			if err != nil {
				return err
			}
			a.audit("skip", map[string]any{"message": id, "shard_scope": k.Scope.Name, "shard": shard, "deleted": deleted, "archive": path, "reason": o.Reason})
			return a.printer().Print(render.Doc{{Name: "skip", Card: []render.Field{
				{Key: "message", Value: id}, {Key: "deleted", Value: deleted}, {Key: "archive", Value: path}}}})
		},
	}
	addRepairFlags(c, &o, true)
	return c
}
