package cmd

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

func newRestoreCmd(a *app) *cobra.Command {
	var yes bool
	var reason string
	c := &cobra.Command{
		Use:   "restore ARCHIVE.jsonl",
		Short: "Put archived outbox rows back, with their original ids and timestamps",
		Long: strings.TrimSpace(`
Reinsert the rows an outboxctl archive holds (rows drain --handler discard, or a
kill-switched drain, deleted without delivering) into the table they came from, with their
original ids, payloads and timestamps. Ids that exist again are skipped. The rows go back
into their shards with their old schedule; Sentry picks them up when the shard is due.
--schema puts them into another schema's table than the one recorded.`),
		Example: examples(`
  outboxctl restore ~/.local/state/outboxctl/archive-2026-11-30.jsonl --yes`),
		Args: exactArgs(1, "ARCHIVE.jsonl"),
		RunE: func(c *cobra.Command, args []string) error {
			if err := a.requireDatabase("outboxctl restore"); err != nil {
				return err
			}
			rows, err := drain.ReadArchive(args[0])
			if err != nil {
				return err
			}
			if len(rows) == 0 {
				a.printer().Notef("%s holds no rows: nothing to restore", args[0])
				return nil
			}
			byTable := map[string][]drain.ArchivedRow{}
			for _, r := range rows {
				schema := r.Schema
				if a.g.Schema != "" {
					schema = a.g.Schema
				}
				key := schema + "\x00" + r.Table
				byTable[key] = append(byTable[key], r)
			}
			keys := make([]string, 0, len(byTable))
			for k := range byTable {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var plan []string
			for _, k := range keys {
				schema, table, _ := strings.Cut(k, "\x00")
				rs := byTable[k]
				plan = append(plan, fmt.Sprintf("reinsert %d row(s) into %s (ids %d to %d), skipping ids that exist", len(rs), qualifiedName(schema, table), rs[0].ID, rs[len(rs)-1].ID))
			}
			if err := a.confirm("outboxctl restore "+args[0], plan, yes); err != nil {
				return err
			}
			conn, err := a.connect(c.Context(), "restore")
			if err != nil {
				return err
			}
			defer conn.Close(context.WithoutCancel(c.Context()))
			var inserted, skipped int64
			err = db.WriteTx(c.Context(), conn, func(tx pgx.Tx) error {
				for _, k := range keys {
					schema, table, _ := strings.Cut(k, "\x00")
					sch, err := query.LoadSchema(c.Context(), tx, schema, []string{table})
					if err != nil {
						return db.Classify(err, "introspect")
					}
					ti := sch.Table(table)
					if !ti.Present {
						return fmt.Errorf("table %s does not exist: create it, or restore into another schema with --schema", qualifiedName(schema, table))
					}
					for _, r := range byTable[k] {
						var payload *string
						if string(r.Payload) != "null" && len(r.Payload) > 0 {
							p := string(r.Payload)
							payload = &p
						}
						st := query.RestoreRow(schema, table, ti.CellColumn, ti.PayloadType, r.ID, r.ShardScope, r.ShardID, r.Category, r.ObjectID,
							r.Cell, payload, r.ScheduledFrom, r.ScheduledFor, r.DateAdded)
						st.Text = query.ReasonComment("restore", reason) + st.Text
						n, err := query.Exec(c.Context(), tx, st)
						if err != nil {
							return db.Classify(err, "restore-row")
						}
						inserted += n
						skipped += 1 - n
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			a.audit("restore", map[string]any{"archive": args[0], "inserted": inserted, "skipped": skipped, "reason": reason})
			return a.printer().Print(render.Doc{{Name: "restore", Card: []render.Field{
				{Key: "archive", Value: args[0]}, {Key: "inserted", Value: inserted}, {Key: "skipped", Value: skipped}}}})
		},
	}
	c.Flags().BoolVar(&yes, "yes", false, "do not ask for confirmation")
	c.Flags().StringVar(&reason, "reason", "", "why: written into the SQL as a comment and into the audit line")
	return c
}

func qualifiedName(schema, table string) string {
	if schema == "" {
		return table
	}
	return schema + "." + table
}
