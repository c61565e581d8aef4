package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/cmdline"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/inspect"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

func newInspectCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "inspect",
		Short: "Look inside one shard, object, category or message",
		Long: strings.TrimSpace(`
Look inside the outbox: one shard (its backoff state, categories and messages), the
outboxes of one object, the pending rows of one category, or one message.`),
		Args: exactArgs(0, "(a subcommand: shard, object, category or message)"),
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newInspectShardCmd(a), newInspectObjectCmd(a), newInspectCategoryCmd(a), newInspectMessageCmd(a), newInspectMailboxCmd(a))
	return c
}

// inspectShardOptions are inspect shard's flags and arguments.
type inspectShardOptions struct {
	shardArgs
	Limit                   int
	All, ShowPayload, Exact bool
	Order                   string
}

// Validate checks the shard id and --limit (--order is refused as it is parsed).
func (o *inspectShardOptions) Validate() error {
	const command = "outboxctl inspect shard"
	if err := o.validate(command); err != nil {
		return err
	}
	if o.Limit <= 0 {
		return usageErrorf(command+" "+o.Scope+" "+o.ID+" --limit 50", "`--limit` must be positive")
	}
	return nil
}

func newInspectShardCmd(a *app) *cobra.Command {
	var o inspectShardOptions
	c := &cobra.Command{
		Use:   "shard SCOPE ID",
		Short: "Show a shard's backoff state, categories and messages",
		Long: strings.TrimSpace(`
Show one shard: its state (ready, backing off with the current delay and the estimated
failed attempts, in flight, or kill-switched), the lowest-id row Sentry locks and derives
the delay from, its depth per category, and its messages: the head first (HEAD: the lowest
row, the one Sentry is blocked on), then the newest (--order oldest: the oldest). Each message is
marked with its coalesce group: DELIVERS is true for the row Sentry will deliver (the newest
of its (category, object) group); the others are superseded and will be deleted unsent.

--all lists every message; with -o jsonl, csv or json (or piped) the rows stream as they are
read, so memory stays flat however deep the shard. Payloads are cut to 80 characters in
terminal tables unless --show-payload; JSON and CSV always carry them whole.

In the control silo a shard is also keyed by cell: add --cell to look at one.`),
		Example: examples(`
  outboxctl inspect shard organization 42
  outboxctl inspect shard USER_SCOPE 1001 --limit 200 --show-payload
  outboxctl inspect shard organization 1 --all -o jsonl > shard-1.jsonl
  outboxctl inspect shard 0 42 --silo control --cell us --print-sql`),
		Args:              exactArgs(2, "SCOPE ID"),
		ValidArgsFunction: a.completeFirstArg(enums.KindScope),
		RunE: func(c *cobra.Command, args []string) error {
			return a.runOnShard(&o.shardArgs, o.Validate, func(_ context.Context, _ query.Target, k query.ShardKey) error {
				// The messages stream as they are read: the run prints them itself and
				// returns no document (readRun).
				return a.runWithFactory(c, o, func(ctx context.Context, d factory, t query.Target) (render.Doc, error) {
					return nil, runInspectShard(ctx, d, o, t, k)
				})
			})(c, args)
		},
	}
	c.Flags().IntVar(&o.Limit, "limit", 50, "at most this many messages besides the head")
	addEnumFlag(c, c.Flags(), &o.Order, "newest", enumFlag{name: "order", help: "which messages fill the page after the head: newest or oldest",
		example: "--order oldest", words: []string{"newest", "oldest"}})
	c.Flags().BoolVar(&o.All, "all", false, "every message of the shard (streams with -o jsonl, csv, json or when piped)")
	c.Flags().BoolVar(&o.ShowPayload, "show-payload", false, "show whole payloads in terminal tables")
	c.Flags().BoolVar(&o.Exact, "exact", false, fmt.Sprintf("count every coalesce group exactly (by default a group is counted up to %d: %d means at least)", query.GroupCap, query.GroupCap))
	a.addWatch(c, nil, nil)
	return c
}

// runInspectShard prints (or runs) shard k's state, categories and messages; the messages
// stream as they are read (inspect.RunShard).
func runInspectShard(ctx context.Context, d factory, o inspectShardOptions, t query.Target, k query.ShardKey) error {
	pg := inspect.Page{All: o.All, Limit: o.Limit, Exact: o.Exact, Order: o.Order}
	return inspect.RunShard(d.reader(ctx, "inspect"), t, k, pg, o.ShowPayload)
}

// inspectObjectOptions are inspect object's flags and arguments.
type inspectObjectOptions struct {
	Category, ID string
	Limit        int
	AnyScope     bool
	Shard        int64
	ShardSet     bool  // --shard was given (0 is a shard id too)
	id           int64 // parsed ID, set by Validate
}

// Validate checks the object id, --limit and --shard.
func (o *inspectObjectOptions) Validate() error {
	id, err := cmdline.NonNegativeID("object id", o.ID, "outboxctl inspect object "+o.Category+" 42")
	if err != nil {
		return err
	}
	o.id = id
	if o.Limit <= 0 {
		return usageErrorf("outboxctl inspect object "+o.Category+" "+o.ID+" --limit 100", "`--limit` must be positive")
	}
	if o.ShardSet && o.Shard < 0 {
		return usageErrorf("outboxctl inspect object "+o.Category+" "+o.ID+" --shard 42", "invalid `--shard` %d: want a non-negative integer id", o.Shard)
	}
	// Checked here rather than declared with MarkFlagsMutuallyExclusive: cobra's message
	// cannot say why the two exclude each other.
	if o.AnyScope && o.ShardSet {
		return usageErrorf("", "`--shard` and `--any-scope` exclude each other: a shard belongs to one scope")
	}
	return nil
}

func newInspectObjectCmd(a *app) *cobra.Command {
	var o inspectObjectOptions
	c := &cobra.Command{
		Use:   "object CATEGORY ID",
		Short: "Show the outboxes of one object",
		Long: strings.TrimSpace(`
Show the outbox rows of one object (category + object identifier), newest first. The
newest row is the one Sentry delivers.

The lookup is narrowed to the category's registered scope. For categories whose object is
its own shard (ORGANIZATION_UPDATE, USER_UPDATE, INTEGRATION_UPDATE, API_APPLICATION_UPDATE,
API_TOKEN_UPDATE, PROVISION_ORGANIZATION) the object id is also the shard id, so the query
is one probe of the shard index. For other categories it reads the scope's rows, bounded by
--statement-timeout, unless you know the shard: pass --shard with the organization id for a
category of ORGANIZATION_SCOPE (ORGANIZATION_MEMBER_UPDATE, TEAM_UPDATE, …) or the user id
for one of USER_SCOPE, and the lookup is one probe of the shard index (milliseconds instead
of a scan; a wrong shard finds nothing). Rows written under an older scope mapping
(API_TOKEN_UPDATE lived in USER_SCOPE before 2025) are found with --any-scope, which scans
the table.`),
		Example: examples(`
  outboxctl inspect object ORGANIZATION_UPDATE 42
  outboxctl inspect object ORGANIZATION_MEMBER_UPDATE 1234 --shard 42
  outboxctl inspect object organization_member_update 1234 --print-sql
  outboxctl inspect object API_TOKEN_UPDATE 77 --any-scope`),
		Args:              exactArgs(2, "CATEGORY ID"),
		ValidArgsFunction: a.completeFirstArg(enums.KindCategory),
		RunE: func(c *cobra.Command, args []string) error {
			o.Category, o.ID, o.ShardSet = args[0], args[1], c.Flags().Changed("shard")
			if err := o.Validate(); err != nil {
				return err
			}
			cat, err := a.categoryArg(o.Category)
			if err != nil {
				return err
			}
			return a.runWithFactory(c, o, func(ctx context.Context, d factory, t query.Target) (render.Doc, error) {
				return runInspectObject(ctx, d, o, t, cat)
			})
		},
	}
	c.Flags().IntVar(&o.Limit, "limit", query.DefaultLimit, "at most this many rows")
	c.Flags().BoolVar(&o.AnyScope, "any-scope", false, "search every scope, not only the category's (a full scan)")
	c.Flags().Int64Var(&o.Shard, "shard", 0, "the object's shard id (its organization or user id): one probe of the shard index instead of a scan")
	return c
}

// runInspectObject prints the lookup of one object's outboxes, or runs it and returns them
// (inspect.RunObject).
func runInspectObject(ctx context.Context, d factory, o inspectObjectOptions, t query.Target, cat enums.Category) (render.Doc, error) {
	var shard *int64
	if o.ShardSet {
		shard = &o.Shard
	}
	return inspect.RunObject(d.reader(ctx, "inspect"), t, cat, o.id, o.Limit, o.AnyScope, shard)
}

// inspectCategoryOptions are inspect category's flags and argument.
type inspectCategoryOptions struct {
	Category string
	Exact    bool
	// FullPass reads the table to the end under --pass-timeout whatever the budget says.
	FullPass bool
	Pass     passOptions
}

// Validate checks the flags that need no registry: there are none yet (the category is a
// name the registry resolves).
func (o inspectCategoryOptions) Validate() error { return nil }

func newInspectCategoryCmd(a *app) *cobra.Command {
	var o inspectCategoryOptions
	c := &cobra.Command{
		Use:   "category CATEGORY",
		Short: "Show how many rows of one category are pending",
		Long: strings.TrimSpace(`
Show the pending rows of one category, per scope (rows written under an older scope mapping
show as their own line): rows, shards holding them, distinct objects, next attempt and the
oldest message. No index leads with category, so this reads the table. The distinct shard
and object counts are taken over the category's first 1,000 rows (distinct_rows says how
many; distinct_exact is true when that was all of them, else the counts are lower bounds):
--exact counts over every row, which cannot run in parallel and is several times slower.

Under a low --statement-timeout, when the planner's estimate of the table says the pass
would take more than half of it, the answer is the category's share of the planner's
statistics instead (pending only, estimated, with when the statistics were taken), and a
note names --full-pass, which reads the table to the end under --pass-timeout (10m by
default) with a progress line on a terminal.`),
		Example: examples(`
  outboxctl inspect category ORGANIZATION_MEMBER_UPDATE
  outboxctl inspect category ORGANIZATION_MEMBER_UPDATE --statement-timeout 1s --full-pass
  outboxctl inspect category 5 --print-sql`),
		Args:              exactArgs(1, "CATEGORY"),
		ValidArgsFunction: a.completeFirstArg(enums.KindCategory),
		RunE: func(c *cobra.Command, args []string) error {
			o.Category = args[0]
			if err := o.Validate(); err != nil {
				return err
			}
			cat, err := a.categoryArg(o.Category)
			if err != nil {
				return err
			}
			return a.runWithFactory(c, o, func(ctx context.Context, d factory, t query.Target) (render.Doc, error) {
				return runInspectCategory(ctx, d, o, t, cat)
			})
		},
	}
	c.Flags().BoolVar(&o.Exact, "exact", false, "count distinct shards and objects over every row (slower; by default over the first 1,000 rows, labelled)")
	c.Flags().BoolVar(&o.FullPass, "full-pass", false, "read the whole table to the end under --pass-timeout, even when the planner's estimate exceeds --statement-timeout's budget")
	addPassFlags(c, &o.Pass, "--full-pass")
	return c
}

// runInspectCategory prints the depth of one category's statement, or runs it and returns it:
// from the planner's statistics when the pass would exceed the budget (and --full-pass is not
// given), labelled so (inspect.RunCategory).
func runInspectCategory(ctx context.Context, d factory, o inspectCategoryOptions, t query.Target, cat enums.Category) (render.Doc, error) {
	c := inspect.Category{Cat: query.Enum{Value: cat.Value, Name: cat.Name}, Exact: o.Exact}
	return inspect.RunCategory(d.reader(ctx, "inspect"), t, c, o.Pass.budget(d), o.Pass.pass(ctx, d, o.FullPass, "inspect", "inspect category", "reading"))
}

// inspectMessageOptions are inspect message's argument.
type inspectMessageOptions struct {
	messageArg
}

// Validate checks the message id.
func (o *inspectMessageOptions) Validate() error { return o.validate("outboxctl inspect message") }

func newInspectMessageCmd(a *app) *cobra.Command {
	var o inspectMessageOptions
	c := &cobra.Command{
		Use:   "message ID",
		Short: "Show one outbox row with its coalesce group and shard",
		Example: examples(`
  outboxctl inspect message 123456
  outboxctl inspect message 123456 --silo control -o json`),
		Args: exactArgs(1, "ID"),
		RunE: func(c *cobra.Command, args []string) error {
			o.ID = args[0]
			if err := o.Validate(); err != nil {
				return err
			}
			return a.runWithFactory(c, o, func(ctx context.Context, d factory, t query.Target) (render.Doc, error) {
				return runInspectMessage(ctx, d, o, t)
			})
		},
	}
	return c
}

// runInspectMessage prints the lookup of one message, or runs it and returns the message; a
// message that is not there is an error (exit 1) naming the other silo (inspect.RunMessage).
func runInspectMessage(ctx context.Context, d factory, o inspectMessageOptions, t query.Target) (render.Doc, error) {
	return inspect.RunMessage(d.reader(ctx, "inspect"), t, o.id)
}

// depthOptions are depth's flags. Exact asks for the exact pass, every category counted,
// run to the end under --pass-timeout; Estimate for the planner's statistics alone.
type depthOptions struct {
	Estimate, Exact bool
	Pass            passOptions
	// SmallTable is the size under which every category is counted (hidden
	// --estimate-above-rows; query.SmallTableRows).
	SmallTable int64
}

// Validate checks the flags: --estimate and --exact ask for two answers.
func (o depthOptions) Validate() error {
	if o.Estimate && o.Exact {
		return usageErrorf("outboxctl depth --estimate", "`--estimate` and `--exact` ask for two different counts; pass one")
	}
	return nil
}

func newDepthCmd(a *app) *cobra.Command {
	var o depthOptions
	c := &cobra.Command{
		Use:   "depth",
		Short: "Show the total depth and the depth per category",
		Long: strings.TrimSpace(`
Show how many rows wait in the outbox table, in total (the first row) and per category.

By default the total is counted exactly, as Sentry's get_total_outbox_count counts it (one
count(*), no grouping), and the split per category comes from the planner's statistics
when they are fresh (fewer rows modified since the last ANALYZE than a tenth of the
table): those rows say estimated, with when the statistics were taken, and a note on
stderr says how old they are. A table under 100,000 rows, stale statistics, or --cell
(the statistics are the whole table's) get every category counted exactly.

Under a low --statement-timeout, when the planner's estimate of the table says a pass
would take more than half of it, depth counts nothing: the total and the split both come
from the statistics, labelled so, and the note names --exact.

--exact counts every category exactly, to the end, under --pass-timeout (10m by default),
with a progress line on a terminal. --estimate answers from the statistics alone, in
milliseconds without reading the table: as fresh as the last ANALYZE, only categories
common enough to be in the statistics, the whole table whatever --cell says.`),
		Example: examples(`
  outboxctl depth
  outboxctl depth --exact
  outboxctl depth --estimate
  outboxctl depth --silo control --cell us -o json`),
		Args: exactArgs(0, "(no arguments)"),
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return a.runWithFactory(c, o, func(ctx context.Context, d factory, t query.Target) (render.Doc, error) {
				return runDepth(ctx, d, o, t)
			})
		},
	}
	c.Flags().BoolVar(&o.Estimate, "estimate", false, "estimate from the planner's statistics without reading the table")
	c.Flags().BoolVar(&o.Exact, "exact", false, "count every category exactly, to the end, under --pass-timeout (excludes --estimate)")
	addPassFlags(c, &o.Pass, "--exact")
	c.Flags().Int64Var(&o.SmallTable, "estimate-above-rows", query.SmallTableRows, "estimate the split per category only on a table of more rows")
	_ = c.Flags().MarkHidden("estimate-above-rows")
	a.addWatch(c, []string{"category"}, []string{"depth"})
	return c
}

// runDepth prints the total depth and the depth per category, or runs it and returns them
// (inspect.RunDepth); the webhook mailboxes' table has its own (runMailboxDepth).
func runDepth(ctx context.Context, d factory, o depthOptions, t query.Target) (render.Doc, error) {
	if query.IsMailboxTable(t) {
		return runMailboxDepth(ctx, d, o, t)
	}
	r := inspect.Depth{Estimate: o.Estimate, SmallTable: o.SmallTable}
	return inspect.RunDepth(d.reader(ctx, "depth"), t, r, o.Pass.budget(d), o.Pass.pass(ctx, d, o.Exact, "depth", "depth", "counting"))
}

// completeFirstArg completes enum names for a command's first argument only.
func (a *app) completeFirstArg(kind enums.Kind) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	names := a.completeNames(kind)
	return func(c *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return names(c, args, prefix)
	}
}
