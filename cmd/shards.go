package cmd

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/report"
)

type shardsOptions struct {
	Stuck    bool
	Scope    string
	Category string
	Shard    string
	Limit    int
	MinDepth int
}

func newShardsCmd(a *app) *cobra.Command {
	var o shardsOptions
	c := &cobra.Command{
		Use:   "shards",
		Short: "List the deepest shards, or the shards stuck in backoff",
		Long: strings.TrimSpace(`
List outbox shards (scope + shard id; in the control silo also the cell).

Without --stuck: the deepest shards, with the coalesce groups left (the deliveries Sentry
still has to make: it delivers only the newest row of each (category, object)), the
categories present, the next attempt and the oldest message.

With --stuck: the shards in backoff, whose every row is scheduled in the future so Sentry's
scheduler skips them, with the current backoff step (it doubles from 2 s to a 1 h cap on
each failed attempt) and when Sentry last claimed the shard.`),
		Example: examples(`
  outboxctl shards --stuck --print-sql
  outboxctl shards --scope organization --limit 50
  outboxctl shards --stuck --silo control --cell us -o json`),
		Args: exactArgs(0, "(no arguments)"),
		RunE: func(c *cobra.Command, _ []string) error {
			f := query.ShardFilter{Limit: o.Limit, MinDepth: o.MinDepth}
			if o.Limit < 0 || o.MinDepth < 0 {
				return usageErrorf("outboxctl shards --limit 20", "`--limit` and `--min-depth` must not be negative")
			}
			if o.Scope != "" {
				s, err := a.scopeArg(o.Scope)
				if err != nil {
					return err
				}
				f.Scope = s
			}
			if o.Category != "" {
				cat, err := a.categoryArg(o.Category)
				if err != nil {
					return err
				}
				f.Category = &query.Enum{Value: cat.Value, Name: cat.Name}
			}
			if o.Shard != "" {
				id, err := idArg("shard id", o.Shard)
				if err != nil {
					return err
				}
				f.Shard = &id
			}
			t, err := a.target()
			if err != nil {
				return err
			}
			st := query.TopShards(t, f)
			title := "Deepest shards"
			if o.Stuck {
				st = query.StuckShards(t, f)
				title = "Shards in backoff"
			}
			results, err := a.runRead(c.Context(), "shards", query.Script{st})
			if err != nil || results == nil {
				return err
			}
			reg, err := a.registry()
			if err != nil {
				return err
			}
			p := a.printer()
			if len(results[0].Rows) == 0 && !p.Structured() {
				p.Notef("no shards matched")
			}
			return p.Print(render.Doc{{Name: "shards", Title: title, Table: report.Table(reg, results[0])}})
		},
	}
	fl := c.Flags()
	fl.BoolVar(&o.Stuck, "stuck", false, "only shards in backoff (every row scheduled in the future)")
	fl.StringVar(&o.Scope, "scope", "", "only this scope (name or integer)")
	fl.StringVar(&o.Category, "category", "", "only shards holding this category (name or integer); depth counts its rows")
	fl.StringVar(&o.Shard, "shard", "", "only this shard id")
	fl.IntVar(&o.Limit, "limit", query.DefaultLimit, "at most this many shards")
	fl.IntVar(&o.MinDepth, "min-depth", 0, "only shards with at least this many rows (without --stuck)")
	_ = c.RegisterFlagCompletionFunc("scope", a.completeNames(enums.KindScope))
	_ = c.RegisterFlagCompletionFunc("category", a.completeNames(enums.KindCategory))
	return c
}
