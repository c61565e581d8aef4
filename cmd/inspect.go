package cmd

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/report"
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
				if a.runF != nil {
					return a.runF(o)
				}
				return a.runWithFactory(c, func(ctx context.Context, d factory, t query.Target) (render.Doc, error) {
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
// stream as they are read.
func runInspectShard(ctx context.Context, d factory, o inspectShardOptions, t query.Target, k query.ShardKey) error {
	messages := func(t query.Target) query.Statement {
		if o.All {
			return query.ShardMessagesAll(t, k)
		}
		return query.ShardMessagesOrdered(t, k, o.Limit, o.Exact, o.Order == "oldest")
	}
	if d.printOnly {
		return d.printScript(query.Script{query.ShardState(t, k), query.ShardCategories(t, k), messages(t), d.killswitchStatement(t)})
	}
	reg, err := d.registry()
	if err != nil {
		return err
	}
	p := d.printer
	if o.ShowPayload {
		p.MaxCell = 0
	}
	var ksErr error
	err = d.snapshot(ctx, "inspect", readSpec{check: outbox.CheckOutbox}, func(s *outbox.Snapshot) error {
		doc, depth, err := shardHead(s, p, reg, k, d.now(), &ksErr)
		if err != nil {
			return err
		}
		if doc == nil {
			return nil // empty: the one line shardHead noted
		}
		if len(doc[0].Card) > 0 {
			doc[0].Card = report.WithNext(doc[0].Card, shardNext(d, s.Target, k, doc[0].Card))
		}
		title := "Messages (the head, then the " + o.Order + ")"
		if o.All {
			title, depth = "Messages (newest first)", 0 // every message: nothing left out
		}
		return streamMessages(s, p, doc, messages(s.Target), reg, title, depth)
	})
	if err != nil {
		return err
	}
	return ksErr
}

// shardHead reads a shard's state (with its kill switch) and categories into the sections
// printed above its messages; a kill-switch read that failed late is left in ksErr.
func shardHead(s *outbox.Snapshot, p *render.Printer, reg *enums.Registry, k query.ShardKey, now time.Time, ksErr *error) (render.Doc, int64, error) {
	stateRes, catRes, err := s.ShardStateAndCategories(k)
	if err != nil {
		return nil, 0, err
	}
	ks, listErr, err := s.Killswitches(0)
	if err != nil {
		return nil, 0, err
	}
	*ksErr = listErr
	if len(stateRes.Rows) == 0 && !p.Structured() {
		// One line, not three empty tables (JSON and CSV keep their empty sections).
		p.Notef("shard %s/%d is empty in %s", k.Scope.Name, k.ID, s.Target.Describe())
		return nil, 0, nil
	}
	var depth int64
	if len(stateRes.Rows) == 1 {
		rows, err := query.Rows[drain.ShardStateRow](stateRes)
		if err != nil {
			return nil, 0, err
		}
		depth = rows[0].Depth
	}
	state, _, err := report.TableOf[query.ShardStateRow](reg, stateRes)
	if err != nil {
		return nil, 0, err
	}
	if err := report.ShardStates(state, stateRes, ks, now); err != nil {
		return nil, 0, err
	}
	head := render.Section{Name: "shard", Title: fmt.Sprintf("Shard %s/%d", k.Scope.Name, k.ID), Table: state}
	if len(state.Rows) == 1 {
		head = render.Section{Name: head.Name, Title: head.Title, Card: render.CardOf(state)}
	}
	cats, _, err := report.TableOf[query.ShardCategoryRow](reg, catRes)
	if err != nil {
		return nil, 0, err
	}
	// A retired category's rows are leftovers, an unknown one wants --enums: said once, under
	// the shard's categories (the messages below are of the same categories).
	return render.Doc{head, {Name: "categories", Title: "Categories", Table: cats, Footer: report.EnumNotes(reg, catRes, s.Schema)}}, depth, nil
}

// shardNext is what to run next on a shard whose state card is card: at the 1 h cap, look
// at its head message (whose inspect names the skip) or, if a receiver was down, make it
// due now; kill-switched, the switch. Nothing for a shard draining as Sentry drains it.
func shardNext(d factory, t query.Target, k query.ShardKey, card []render.Field) render.Commands {
	val := func(key string) string {
		for _, f := range card {
			if f.Key == key {
				return fmt.Sprint(f.Value)
			}
		}
		return ""
	}
	scope, id := k.Scope.ScopeWord(), fmt.Sprint(k.ID)
	switch {
	case val("killswitched") == "true":
		return render.Commands{d.next(&t, "killswitch", "check", scope, id)}
	case val("at_cap") == "true" && val("head_id") != "":
		return render.Commands{d.next(&t, "inspect", "message", val("head_id")),
			d.next(&t, "reschedule", scope, id, "--reason", "receiver fixed")}
	}
	return nil
}

// streamMessages prints doc, then the rows of st as they arrive; with the shard's depth, a
// footer says how many the page left out.
func streamMessages(s *outbox.Snapshot, p *render.Printer, doc render.Doc, st query.Statement, reg *enums.Registry, title string, depth int64) error {
	var dec *report.Decorator
	var typed *query.RowReader[query.ShardMessageRow]
	var ds *render.DocStream
	shown := 0
	err := s.Stream(st, func(cols []string) error {
		var err error
		if dec, err = report.DecoratorOf[query.ShardMessageRow](reg, cols); err != nil {
			return err
		}
		if typed, err = query.NewRowReader[query.ShardMessageRow](st.Name, cols); err != nil {
			return err
		}
		ds = p.StartDoc(doc, render.Section{Name: "messages", Title: title, Table: dec.Table()})
		return ds.Columns(dec.Columns)
	}, func(row []any) error {
		shown++
		if _, err := typed.Read(row); err != nil { // a NULL or a wrong type is an error, never a cell
			return err
		}
		return ds.Row(dec.Row(row))
	})
	if err != nil {
		return err
	}
	if depth > int64(shown) {
		ds.Footer(report.MessagesFooter(shown, depth))
	}
	return ds.Close()
}

// killswitchStatement is the read of the kill switches that guard t, as printed SQL shows it.
func (d factory) killswitchStatement(t query.Target) query.Statement {
	return options.KillswitchStatement(t.Schema, options.OptionTableFor(t.Silo, d.printSchema))
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
	id, err := nonNegativeID("object id", o.ID, "outboxctl inspect object "+o.Category+" 42")
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
			if a.runF != nil {
				return a.runF(o)
			}
			return a.runWithFactory(c, func(ctx context.Context, d factory, t query.Target) (render.Doc, error) {
				return runInspectObject(ctx, d, o, t, cat)
			})
		},
	}
	c.Flags().IntVar(&o.Limit, "limit", query.DefaultLimit, "at most this many rows")
	c.Flags().BoolVar(&o.AnyScope, "any-scope", false, "search every scope, not only the category's (a full scan)")
	c.Flags().Int64Var(&o.Shard, "shard", 0, "the object's shard id (its organization or user id): one probe of the shard index instead of a scan")
	return c
}

// runInspectObject prints the lookup of one object's outboxes, or runs it and returns them.
func runInspectObject(ctx context.Context, d factory, o inspectObjectOptions, t query.Target, cat enums.Category) (render.Doc, error) {
	reg, err := d.registry()
	if err != nil {
		return nil, err
	}
	l := query.ObjectLookup{Category: query.Enum{Value: cat.Value, Name: cat.Name}, ObjectID: o.id, Limit: o.Limit}
	if !o.AnyScope && cat.Scope >= 0 {
		l.Scope = &query.Enum{Value: cat.Scope, Name: reg.ScopeName(cat.Scope)}
		l.ShardFromObject = cat.ObjectIsShard
		if o.ShardSet {
			shard := o.Shard
			l.Shard = &shard
		}
	}
	results, err := d.runRead(ctx, "inspect", func(t query.Target) query.Script { return query.Script{query.ObjectOutboxes(t, l)} })
	if err != nil || results == nil {
		return nil, err
	}
	if len(results[0].Rows) == 0 && !d.printer.Structured() {
		d.printer.Notef("no outboxes for %s object %d in %s", cat.Name, o.id, t.Describe())
	}
	tbl, _, err := report.TableOf[query.ObjectOutboxRow](reg, results[0])
	if err != nil {
		return nil, err
	}
	sec := render.Section{Name: "outboxes", Table: tbl, Footer: report.EnumNotes(reg, results[0], query.Schema{})}
	if len(results[0].Rows) >= o.Limit {
		// The page is full: there may be more rows than it shows (no count is read).
		sec.Footer = report.JoinNotes(fmt.Sprintf("showing the newest %d outboxes: there may be more (--limit %d)", len(results[0].Rows), 2*o.Limit), sec.Footer)
	}
	return render.Doc{sec}, nil
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
			if a.runF != nil {
				return a.runF(o)
			}
			return a.runWithFactory(c, func(ctx context.Context, d factory, t query.Target) (render.Doc, error) {
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
// given), labelled so.
func runInspectCategory(ctx context.Context, d factory, o inspectCategoryOptions, t query.Target, cat enums.Category) (render.Doc, error) {
	c := query.Enum{Value: cat.Value, Name: cat.Name}
	build := func(t query.Target) query.Statement {
		if o.Exact {
			return query.CategoryDepthExact(t, c)
		}
		return query.CategoryDepth(t, c)
	}
	if d.printOnly {
		return nil, d.printScript(query.Script{build(t)})
	}
	var res *query.Result
	var note string
	var err error
	var era query.Schema // the catalog's, for the leftover note
	if o.FullPass {
		err = o.Pass.fullPass(ctx, d, "inspect", "inspect category", "reading", func(s *outbox.Snapshot, line *passLine) error {
			era = s.Schema
			stats, err := s.Stats()
			if err != nil {
				return err
			}
			return line.run(ctx, stats.Rows(), func() error {
				return s.JITPass(stats.Rows(), func() (err error) {
					res, err = s.Run(build(s.Target))
					return err
				})
			})
		})
	} else {
		err = d.snapshot(ctx, "inspect", readSpec{check: outbox.CheckOutbox}, func(s *outbox.Snapshot) error {
			era = s.Schema
			stats, err := s.Stats()
			if err != nil {
				return err
			}
			if budget := o.Pass.budget(d); !budget.Allows(stats.Rows()) {
				note = fmt.Sprintf("estimated: %s; pending alone, from the planner's %s (the whole table's, whatever --cell says); --full-pass reads the table (under --pass-timeout)",
					budget.Exceeds(stats.Rows()), stats.Describe(d.now()))
				res, err = s.Run(query.CategoryEstimate(s.Target, c, stats.Rows(), stats.AnalyzedAt))
				return err
			}
			return s.JITPass(stats.Rows(), func() (err error) {
				res, err = s.Run(build(s.Target))
				return err
			})
		})
	}
	if err != nil {
		return nil, err
	}
	reg, err := d.registry()
	if err != nil {
		return nil, err
	}
	if len(res.Rows) == 0 && !d.printer.Structured() {
		d.printer.Notef("no pending %s rows in %s", cat.Name, t.Describe())
	}
	var tbl *render.Table
	if note != "" {
		tbl, _, err = report.TableOf[query.CategoryEstimateRow](reg, res)
	} else {
		tbl, _, err = report.TableOf[query.CategoryDepthRow](reg, res)
		if err == nil {
			tbl = atLeastCounts(tbl)
		}
	}
	if err != nil {
		return nil, err
	}
	return render.Doc{{Name: "category", Table: tbl, Footer: report.JoinNotes(note, report.EnumNotes(reg, res, era))}}, nil
}

// atLeastCounts shows a person the distinct counts (shards, objects) of a category that
// were counted over its first rows only as "at least N": on a terminal and in Markdown the
// numbers are replaced by columns of the same label saying so; scripts keep the numbers
// and distinct_exact.
func atLeastCounts(t *render.Table) *render.Table {
	exact := slices.Index(t.Columns, "distinct_exact")
	if exact < 0 {
		return t
	}
	for _, name := range []string{"shards", "objects"} {
		i := slices.Index(t.Columns, name)
		if i < 0 {
			continue
		}
		human := name + "_shown"
		t.Columns = slices.Insert(t.Columns, i+1, human)
		for r, row := range t.Rows {
			v := row[i]
			if b, ok := row[exact].(bool); ok && !b {
				v = fmt.Sprintf("at least %v", row[i])
			}
			t.Rows[r] = slices.Insert(row, i+1, v)
		}
		if exact > i {
			exact++
		}
		t.MachineOnly = withKey(t.MachineOnly, name)
		t.HumanOnly = withKey(t.HumanOnly, human)
		if t.Labels == nil {
			t.Labels = map[string]string{}
		}
		t.Labels[human] = name
	}
	return t
}

func withKey(m map[string]bool, k string) map[string]bool {
	if m == nil {
		m = map[string]bool{}
	}
	m[k] = true
	return m
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
			if a.runF != nil {
				return a.runF(o)
			}
			return a.runWithFactory(c, func(ctx context.Context, d factory, t query.Target) (render.Doc, error) {
				return runInspectMessage(ctx, d, o, t)
			})
		},
	}
	return c
}

// runInspectMessage prints the lookup of one message, or runs it and returns the message; a
// message that is not there is an error (exit 1) naming the other silo.
func runInspectMessage(ctx context.Context, d factory, o inspectMessageOptions, t query.Target) (render.Doc, error) {
	results, err := d.runRead(ctx, "inspect", func(t query.Target) query.Script { return query.Script{query.Message(t, o.id)} })
	if err != nil || results == nil {
		return nil, err
	}
	if len(results[0].Rows) == 0 {
		return nil, failuref("no outbox row with id %d in %s (already delivered, or another silo: try --silo %s)", o.id, t.Describe(), otherSilo(t))
	}
	reg, err := d.registry()
	if err != nil {
		return nil, err
	}
	card, err := report.CardOf[query.MessageRow](reg, results[0])
	if err != nil {
		return nil, err
	}
	if next, err := messageNext(d, t, reg, results[0]); err == nil {
		card = report.WithNext(card, next)
	}
	return render.Doc{{Name: "message", Title: fmt.Sprintf("Message %d", o.id), Card: card, Footer: report.EnumNotes(reg, results[0], query.Schema{})}}, nil
}

// inspectedMessage is what the next steps of inspect message read of its row.
type inspectedMessage struct {
	ID           int64     `db:"id"`
	Scope        int       `db:"shard_scope"`
	Shard        int64     `db:"shard_identifier"`
	IsHead       bool      `db:"is_head"`
	ScheduledFor time.Time `db:"scheduled_for"`
	// The control silo's cell column, by either of its names.
	RegionName *string `db:"region_name,optional"`
	CellName   *string `db:"cell_name,optional"`
}

// cell is the control silo's cell column of the row, named column ("": none).
func (m inspectedMessage) cell(column string) string {
	v := m.RegionName
	if column == "cell_name" {
		v = m.CellName
	}
	if v == nil {
		return ""
	}
	return *v
}

// messageNext are the next steps after inspect message: for a head whose shard waits in
// backoff, doctor's stuck check, which tells a poison head from an outage or a hot shard
// (a skip printed here would claim a cause no evidence proved); then, or for any other row,
// its shard.
func messageNext(d factory, t query.Target, reg *enums.Registry, res *query.Result) (render.Commands, error) {
	rows, err := query.Rows[inspectedMessage](res)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	m := rows[0]
	if cell := m.cell(t.CellColumn); t.Control() && cell != "" {
		t.Cell = cell
	}
	scope := query.Enum{Value: m.Scope, Name: reg.ScopeName(m.Scope)}
	shard := d.next(&t, "inspect", "shard", scope.ScopeWord(), fmt.Sprint(m.Shard))
	if m.IsHead && m.ScheduledFor.After(d.now()) {
		return render.Commands{d.next(&t, "doctor", "--check", "stuck"), shard}, nil
	}
	return render.Commands{shard}, nil
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
			if a.runF != nil {
				return a.runF(o)
			}
			return a.runWithFactory(c, func(ctx context.Context, d factory, t query.Target) (render.Doc, error) {
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

// runDepth prints the total depth and the depth per category, or runs it and returns them.
func runDepth(ctx context.Context, d factory, o depthOptions, t query.Target) (render.Doc, error) {
	if query.IsMailboxTable(t) {
		return runMailboxDepth(ctx, d, o, t)
	}
	if o.Estimate || d.printOnly {
		// --print-sql shows the exact pass (--exact's): without a database there are no
		// statistics to choose by.
		results, err := d.runRead(ctx, "depth", func(t query.Target) query.Script {
			if o.Estimate {
				return query.Script{query.DepthEstimate(t)}
			}
			return query.Script{query.Depth(t)}
		})
		if err != nil || results == nil {
			return nil, err
		}
		return depthDoc(d, results[0], "")
	}
	var res *query.Result
	var note string
	var err error
	if o.Exact {
		err = o.Pass.fullPass(ctx, d, "depth", "depth", "counting", func(s *outbox.Snapshot, line *passLine) error {
			stats, err := s.Stats()
			if err != nil {
				return err
			}
			return line.run(ctx, stats.Rows(), func() error {
				res, err = s.Run(query.Depth(s.Target))
				return err
			})
		})
	} else {
		err = d.snapshot(ctx, "depth", readSpec{check: outbox.CheckOutbox}, func(s *outbox.Snapshot) error {
			res, note, err = depthByBudget(s, d, o)
			return err
		})
	}
	if err != nil {
		return nil, err
	}
	return depthDoc(d, res, note)
}

// depthByBudget is depth's default answer: the statistics alone when a pass would exceed
// the budget, the exact total and the statistics' split when they are fresh, every category
// counted otherwise. note labels an estimated answer.
func depthByBudget(s *outbox.Snapshot, d factory, o depthOptions) (*query.Result, string, error) {
	stats, err := s.Stats()
	if err != nil {
		return nil, "", err
	}
	rows, budget := stats.Rows(), o.Pass.budget(d)
	switch {
	case !budget.Allows(rows):
		res, err := s.Run(query.DepthSplit(s.Target, rows, true, stats.AnalyzedAt))
		return res, fmt.Sprintf("estimated, the total too: %s; from the planner's %s; --exact counts every row (under --pass-timeout)",
			budget.Exceeds(rows), stats.Describe(d.now())), err
	case rows < o.SmallTable || !stats.Fresh() || s.Target.Cell != "":
		res, err := s.Run(query.Depth(s.Target))
		return res, "", err
	}
	total, err := outbox.RowsOf[struct {
		Depth int64 `db:"depth"`
	}](s, query.DepthTotal(s.Target))
	if err != nil {
		return nil, "", err
	}
	if len(total) != 1 {
		return nil, "", fmt.Errorf("depth-total returned %d rows", len(total))
	}
	res, err := s.Run(query.DepthSplit(s.Target, total[0].Depth, false, stats.AnalyzedAt))
	return res, fmt.Sprintf("the total is counted; the depth per category is estimated from the planner's %s; --exact counts every category",
		stats.Describe(d.now())), err
}

// depthDoc is depth's document, with note (an estimate's label) as its footer.
func depthDoc(d factory, res *query.Result, note string) (render.Doc, error) {
	reg, err := d.registry()
	if err != nil {
		return nil, err
	}
	doc, err := report.Depth(reg, res)
	if err != nil {
		return nil, err
	}
	if note != "" {
		doc[0].Footer = note
	}
	return doc, nil
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

// otherSilo is the silo a hint suggests trying: the one the command did not look at.
func otherSilo(t query.Target) query.Silo {
	if t.Control() {
		return query.SiloCell
	}
	return query.SiloControl
}
