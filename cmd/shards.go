package cmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/cmdline"
	"github.com/outboxctl/outboxctl/internal/inspect"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

type shardsOptions struct {
	selectorOptions
	Shard       string
	FailIfDepth int64
	Exact       bool
	// FullPass lists from the whole pass under --pass-timeout whatever the budget says.
	FullPass bool
	Pass     passOptions
}

// Validate checks the flags that need no registry or database.
func (o shardsOptions) Validate() error {
	if o.Limit < 1 {
		// 0 used to mean the default silently; "all" is not offered: on a table of 100,000
		// shards it is a long scan and a long screen. Ask for a number.
		return usageErrorf("outboxctl shards --limit 100", "`--limit` must be at least 1 (default %d)", query.DefaultLimit)
	}
	if err := o.selectorOptions.validate("outboxctl shards", false); err != nil {
		return err
	}
	if o.FailIfDepth < 0 {
		return usageErrorf("outboxctl shards --fail-if-depth 10000", "`--fail-if-depth` must not be negative")
	}
	return nil
}

// shardFilter resolves the names of the filter flags. The selector criteria the listing's
// own filters do not say (--at-cap, --head-category, --added-*, --shards-from) narrow it
// through the selector's statement (query.ShardFilter.Selected), so shards lists exactly the
// shards a repair given the same flags works on.
func (a *app) shardFilter(o shardsOptions, now time.Time) (query.ShardFilter, error) {
	f := query.ShardFilter{Limit: o.Limit, MinDepth: o.MinDepth, Exact: o.Exact}
	if o.AtCap || o.HeadCategory != "" || o.AddedAfter != "" || o.AddedBefore != "" || o.ShardsFrom != "" || o.NotKillswitched {
		only := o.selectorOptions
		only.Stuck, only.MinDepth, only.Limit = false, 0, 0 // the listing's own
		if only.AddedAfter == "" && only.AddedBefore == "" {
			only.Category = "" // the listing's own; with a window it says "a row of C added then"
		}
		sel, err := a.shardSelector(only, "outboxctl shards", now)
		if err != nil {
			return f, err
		}
		f.Selected = &sel
	}
	if o.Scope != "" {
		s, err := a.scopeArg(o.Scope)
		if err != nil {
			return f, err
		}
		f.Scope = s
	}
	if o.Category != "" {
		cat, err := a.categoryArg(o.Category)
		if err != nil {
			return f, err
		}
		f.Category = &query.Enum{Value: cat.Value, Name: cat.Name}
	}
	if o.Shard != "" {
		id, err := cmdline.ID("shard id", o.Shard, "outboxctl shards --shard 42")
		if err != nil {
			return f, err
		}
		f.Shard = &id
	}
	return f, nil
}

// runShards runs (or prints) the shard listing of f and its kill-switch read and returns
// the listing (inspect.RunShards); --fail-if-depth may end it with exit 3 (DepthVerdict).
func runShards(ctx context.Context, d factory, o shardsOptions, t query.Target, f query.ShardFilter) (render.Doc, error) {
	r := outbox.ShardsRequest{Filter: f, Stuck: o.Stuck, Budget: o.Pass.budget(d), Seed: d.clock.now().UnixNano() % 1_000_000}
	doc, l, err := inspect.RunShards(d.reader(ctx, "shards"), t, r, o.Stuck, o.Pass.pass(ctx, d, o.FullPass, "shards", "shards", "grouping"))
	if err != nil || d.sql.printOnly {
		return doc, err
	}
	return doc, l.DepthVerdict(o.FailIfDepth)
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
each failed attempt) and when Sentry last claimed the shard.

The filter flags (--stuck, --at-cap, --scope, --category, --head-category, --added-after,
--added-before, --min-depth, --shards-from, --limit) are the selector every bulk repair
takes (reschedule, compact, skip --category): list with them here what the repair given the
same flags will touch.

Without --stuck, the footer's total of the deepest shards ("showing 10 of ~156,000
shards") is the planner's estimate from its statistics (total_exact false in JSON): counting
every shard costs the pass more than the rows it prints. It is exact when fewer shards than
--limit matched, and with --exact, --shard, --min-depth or a selector flag.

Without --stuck or --shard the listing groups the whole table. Under a low
--statement-timeout, when the planner's estimate of the table says that pass would take
more than half of it, the deepest shards come from a sample of the table's pages instead
(TABLESAMPLE SYSTEM, a tenth of what the budget allows; also when the pass was expected to
fit and ran out of the timeout): every row says estimated and the
sampled percentage, total_shards is not known, and a note names --full-pass, which groups
every row under --pass-timeout (10m by default) with a progress line on a terminal.

With --stuck the pass reads the rows in backoff by index (a 2M-row shard at the cap is 2M
index entries). When it does not finish within --statement-timeout, the shards in backoff
come from a sample of the table's pages instead (a tenth of what the budget allows, under
at least 250ms of its own): each listed shard is probed and in backoff,
its depth is estimated (estimated, sampled_percent), a shard the sample missed is not
listed, and the note names --full-pass, which reads every row in backoff under
--pass-timeout.`),
		Example: examples(`
  outboxctl shards --stuck --print-sql
  outboxctl shards --scope organization --limit 50
  outboxctl shards --limit 10 --statement-timeout 1s --full-pass
  outboxctl shards --stuck --silo control --cell us -o json
  outboxctl shards --at-cap --added-after 2h --head-category ORGANIZATION_UPDATE`),
		Args: exactArgs(0, "(no arguments)"),
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			f, err := a.shardFilter(o, time.Now())
			if err != nil {
				return err
			}
			return a.runWithFactory(c, o, func(ctx context.Context, d factory, t query.Target) (render.Doc, error) {
				return runShards(ctx, d, o, t, f)
			})
		},
	}
	a.addSelectorFlags(c, &o.selectorOptions, selectorUse{limit: query.DefaultLimit, categoryHelp: "only shards holding this category (name or integer); depth counts its rows"})
	fl := c.Flags()
	fl.StringVar(&o.Shard, "shard", "", "only this shard id")
	fl.BoolVar(&o.Exact, "exact", false, fmt.Sprintf("count every coalesce group, and every shard for total_shards (by default a shard's groups are counted up to %d: %d means at least; and the deepest shards' total is the planner's estimate, ~N, total_exact false)", query.GroupCap, query.GroupCap))
	fl.Int64Var(&o.FailIfDepth, "fail-if-depth", 0, "exit 3 when a listed shard holds more rows than this (for alerts and runbooks)")
	fl.BoolVar(&o.FullPass, "full-pass", false, "read every row to the end under --pass-timeout (the whole table; with --stuck every row in backoff), even when the planner's estimate exceeds --statement-timeout's budget")
	addPassFlags(c, &o.Pass, "--full-pass")
	a.addWatch(c, []string{"shard_scope", "shard_identifier"}, []string{"depth"})
	return c
}
