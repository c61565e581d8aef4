package cmd

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/replica"
)

// verifyOptions are verify's flags and arguments.
type verifyOptions struct {
	Pairs       []string
	IDs         []int64
	Limit       int
	FailOnDrift bool

	pairs []replica.Pair // resolved by Validate
}

// Validate resolves the pairs and checks the flags.
func (o *verifyOptions) Validate() error {
	pairs, err := replica.Select(o.Pairs)
	if err != nil {
		return usageErrorf("outboxctl verify organization", "%s", err.Error())
	}
	o.pairs = pairs
	if o.Limit < 0 {
		return usageErrorf("outboxctl verify --limit 50", "`--limit` must be 0 (all) or more, got %d", o.Limit)
	}
	for _, id := range o.IDs {
		if id < 0 {
			return usageErrorf("outboxctl verify organization --id 42", "`--id` must be an id, got %d", id)
		}
	}
	if len(o.IDs) > 0 && len(o.Pairs) != 1 {
		return usageErrorf("outboxctl verify organization --id 42", "`--id` names objects of one pair: name the pair")
	}
	return nil
}

// ids is the --id filter: nil for every object.
func (o verifyOptions) ids() []int64 {
	if len(o.IDs) == 0 {
		return nil
	}
	return o.IDs
}

func newVerifyCmd(a *app) *cobra.Command {
	var o verifyOptions
	c := &cobra.Command{
		Use:   "verify [PAIR...]",
		Short: "Compare Sentry's replicas with their sources: missing, stale, orphan, pending",
		Long: strings.TrimSpace(`
Compare each replicated model with its replica (every pair, or the ones named: ` + strings.Join(replica.Names(), ", ") + `)
and classify every object that differs:

  missing   the source row has no replica (an outbox that never ran, or ran as a no-op)
  stale     both exist and replicated fields differ (fields holds both values)
  orphan    the replica's source is gone (a deletion outbox never delivered)
  pending   one of these, with an outbox row for the object still queued (its shard and
            next attempt): not drift yet, the drain will settle it

Objects in sync are counted, not listed. The fields compared are the ones Sentry's
receivers copy (docs/replicas.md), less the ones whose column this database's tables lack
(an older Sentry): the summary's not_compared names them. A queued outbox row makes an
object pending only in the object's own shard (its organization; an external actor's
integration). With no PAIR, a pair whose tables are not here is listed, not compared. A pair
whose replica Sentry tore down in July 2026 (team, organizationmemberteam, externalactor, on a
database past it: decided from its catalog) is listed, named or not, as "torn down in Sentry
(July 2026): nothing to compare". Where a replica and a drained queue disagree, a note names
the receivers that consume a message without applying it.

With one database (a monolith, --dsn) the comparison is one set-based statement per pair,
which reads the values of only the first --limit drifted objects (--print-sql prints it),
and the cell's name is Sentry's monolith region, --monolith-- (--cell to say another). With
two contexts, the cell's then the control silo's (--context us,control), both sides are
streamed in object order, each in its own read-only snapshot, and merged, in memory that
does not grow with the tables; the control silo's rows are the cell's (region_name = --cell,
or the cell context's name: verify refuses a name no organization mapping of the control
silo names, exit 2, and otherwise says which cell it assumed).

The control -> cell pairs (apitoken, apikey, orgauthtoken, organizationslugreservation,
authidentity) compare the cell's replicas with the sources Sentry sends that cell (its
organization's, every api token, the slug reservations naming it); their pending rows are
the control outbox's for the cell. A secret (a token, a key, an identity's data) is never
printed: a stale one shows a digest of each side.

--fail-on-drift exits 9 when an object is missing, stale or orphan, 8 when the only
objects not in sync are pending (the answer is "not yet"), 0 when all are in sync.
Repair with outboxctl replicate PAIR ID... or --from the JSON of this command.`),
		Example: examples(`
  outboxctl verify
  outboxctl verify organization --id 42
  outboxctl --context us,control verify organizationmember --fail-on-drift
  outboxctl verify -o json > drift.json && outboxctl replicate --from drift.json --drift missing,stale`),
		ValidArgsFunction: fixedCompletion(replica.Names()...),
		RunE: func(c *cobra.Command, args []string) error {
			o.Pairs = args
			if err := o.Validate(); err != nil {
				return err
			}
			return a.runDocument(c, o, func(ctx context.Context, on *app) (render.Doc, error) {
				return runVerify(ctx, on.factory(), o, verifyOn{cell: on.g.Cell, split: len(on.split) == 2, open: on.splitSides, nextOn: on.nextOnSide})
			})
		},
	}
	f := c.Flags()
	f.Int64SliceVar(&o.IDs, "id", nil, "only these objects (ids of the one pair named; repeatable or comma-separated)")
	f.IntVar(&o.Limit, "limit", 50, "list at most this many drifted objects (0: all); the summary counts every one")
	f.BoolVar(&o.FailOnDrift, "fail-on-drift", false, "exit 9 when an object is missing, stale or orphan, 8 when some are only pending (for runbooks)")
	return c
}

// verifyOn is what verify takes of the app it runs for: --cell, whether two contexts were
// given (--context CELL,CONTROL: their dsns, not the invocation's, say whether there is a
// database), how they are opened, and how a next line is written on one of them.
type verifyOn struct {
	cell   string
	split  bool
	open   openSplit
	nextOn func(side outbox.SplitSide, t *query.Target, args ...string) string
}

// runVerify verifies the pairs, in one database or across the two contexts, and returns the
// document with the --fail-on-drift verdict (replica.DriftVerdict).
func runVerify(ctx context.Context, d factory, o verifyOptions, on verifyOn) (render.Doc, error) {
	printing := d.sql.printOnly && !on.split || d.sql.printSQL
	sides, err := on.open(ctx, "verify", !printing)
	if err != nil {
		return nil, err
	}
	if sides != nil {
		defer sides.Close(ctx)
	}
	cell, err := outbox.VerifyCell(ctx, sides, on.cell, !printing, d.printer.Notef)
	if err != nil {
		return nil, err
	}
	// on.cell is --cell (or a context's cell setting): the cell a next replicate must write for.
	v := outbox.Verify{Request: outbox.VerifyRequest{Pairs: o.pairs, Named: len(o.Pairs) > 0, Cell: cell, IDs: o.ids(), Limit: o.Limit},
		Schema: d.db.schema, GivenCell: on.cell, Connect: func(ctx context.Context) (*db.Conn, error) { return d.db.connect(ctx, "verify") }, Next: d.suggest.next}
	if sides != nil {
		v.OnSides(sides, on.nextOn)
	}
	if printing {
		return nil, d.sql.printScript(v.Script())
	}
	doc, results, err := v.Run(ctx)
	if err != nil || !o.FailOnDrift {
		return doc, err
	}
	return doc, replica.DriftVerdict(results)
}
