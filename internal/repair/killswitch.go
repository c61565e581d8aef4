package repair

import (
	"context"
	"fmt"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/killswitch"
	"github.com/outboxctl/outboxctl/internal/ledger"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// KillswitchChange adds shard ids to (or removes them from) a kill-switch list
// (killswitch.Change, whose shape every repair here follows), with its plan's lines, its
// audit line, the ledger's record of the shards released and its summary.
type KillswitchChange struct {
	Env
	Change killswitch.Change
	// PrintTable is the options table printed SQL writes (no database to read it from).
	PrintTable string
}

// WithoutDatabase: with no database given, the change prints its SQL (with the hint to
// connect) rather than refusing.
func (k *KillswitchChange) WithoutDatabase() bool { return true }

// Script is the change's two statements.
func (k *KillswitchChange) Script([]string) ([]string, error) {
	text, err := k.Change.Script(k.PrintTable).Render()
	return []string{text}, err
}

// Plan reads the list and what waits in the shards; the ids it leaves as they are are said
// in notes.
func (k *KillswitchChange) Plan(ctx context.Context, conn *db.Conn) (Plan, error) {
	ch := k.Change
	p, err := ch.Plan(ctx, conn)
	if err != nil {
		return Plan{}, err
	}
	k.unchangedNotes(p)
	if len(p.Changed) == 0 {
		return Plan{Nothing: "nothing to change", NothingDoc: changeCard(killswitch.ChangeSummary{OptionsTable: p.Table, Key: ch.Key, Value: options.EncodeIDs(p.Before)})}, nil
	}
	return Plan{Lines: changePlanLines(ch, p), Shards: len(p.Changed), detail: p}, nil
}

// Apply writes the change under the row lock; a removal's shards are recorded in the ledger
// as made due.
func (k *KillswitchChange) Apply(ctx context.Context, conn *db.Conn, pl Plan) (Summary, error) {
	ch, p := k.Change, pl.detail.(killswitch.ChangePlan)
	stored, err := ch.Apply(ctx, conn, p)
	if err != nil {
		return Summary{}, err
	}
	audit := Audit{"killswitch " + ch.Verb(), map[string]any{
		"options_table": p.Table, "key": ch.Key, "scope": ch.Scope.Name, "shards": p.Changed,
		"before": options.EncodeIDs(p.Before), "after": stored, "reason": ch.Reason,
	}}
	if !ch.Add && (ch.Target.Silo != query.SiloControl || ch.Target.Cell != "") {
		// The released shards get a fresh attempt from Sentry's workers: the ledger's
		// evidence (a control silo's release is recorded for the --cell given, whose
		// shards' heads can be read).
		refs := make([]query.ShardRef, len(p.Changed))
		for i, id := range p.Changed {
			refs[i] = query.ShardRef{Scope: ch.Scope.Value, ID: id}
		}
		k.RecordMadeDue(ctx, conn, ch.Target, ledger.ViaKillswitch, "", refs)
	}
	sum := killswitch.ChangeSummary{OptionsTable: p.Table, Key: ch.Key, Value: stored, Changed: true}
	sum.Next, sum.Undo = k.next(p.Changed)
	return Summary{Doc: changeCard(sum), Audit: []Audit{audit}}, nil
}

// next are a kill-switch change's next step and undo: check the first shard changed (where
// Sentry reads it) and, after a remove, look at the backlog it now drains; the undo is the
// opposite change of the same shards.
func (k *KillswitchChange) next(changed []int64) (render.Commands, string) {
	ch := k.Change
	if len(changed) == 0 {
		return nil, ""
	}
	scope := ch.Scope.ScopeWord()
	ids := make([]string, len(changed))
	for i, id := range changed {
		ids[i] = fmt.Sprint(id)
	}
	next := render.Commands{k.Next(&ch.Target, "killswitch", "check", scope, ids[0])}
	undo := "add"
	if ch.Add {
		undo = "remove"
	} else {
		// doctor closes the path: once Sentry's workers have had their fresh attempt it
		// tells whether the released shards delivered.
		next = append(next, k.Next(&ch.Target, "inspect", "shard", scope, ids[0]), k.Next(nil, "doctor"))
	}
	return next, k.Next(&ch.Target, append([]string{"killswitch", undo, scope}, append(ids, "--reason", "undo")...)...)
}

func changeCard(sum killswitch.ChangeSummary) render.Doc {
	return render.Doc{{Name: "killswitch", Card: render.FieldsOf(sum)}}
}

// unchangedNotes says which ids the change leaves as they are: one note each, or one for
// them all when there are more than shownIDs.
func (k *KillswitchChange) unchangedNotes(plan killswitch.ChangePlan) {
	ch := k.Change
	state := "not disabled"
	if ch.Add {
		state = "already disabled"
	}
	if n := len(plan.Unchanged); n > shownIDs {
		k.Notef("note: %d %s shards are %s in %s: %s", n, ch.Scope.Name, state, plan.Table, idsText(plan.Unchanged))
		return
	}
	for _, id := range plan.Unchanged {
		k.Notef("note: %s shard %d is %s in %s", ch.Scope.Name, id, state, plan.Table)
	}
}

// shownIDs is the most ids a plan line or note lists; a longer list shows its first ones and
// its count (the audit line and the option keep every id).
const shownIDs = 20

// idsText is a list of ids as a plan line shows it: whole up to shownIDs, else its first ones
// and how many there are.
func idsText(ids []int64) string {
	if len(ids) <= shownIDs {
		return fmt.Sprint(ids)
	}
	return fmt.Sprintf("%d ids, the first %d %v…", len(ids), shownIDs, ids[:shownIDs])
}

// valueText is an option value as a plan line shows it: its JSON up to 50 ids, else its
// count and first ids.
func valueText(ids []int64) string {
	if len(ids) <= 50 {
		return options.EncodeIDs(ids)
	}
	return idsText(ids)
}

func changePlanLines(ch killswitch.Change, p killswitch.ChangePlan) []string {
	prep := "from"
	if ch.Add {
		prep = "to"
	}
	lines := []string{
		fmt.Sprintf("%s %s shard(s) %s %s %s in %s (%s)", ch.Verb(), ch.Scope.Name, idsText(p.Changed), prep, ch.Key, p.Table, drain.ReasonText(ch.Reason)),
		fmt.Sprintf("before: %s", valueText(p.Before)),
		fmt.Sprintf("after:  %s", valueText(p.After)),
		fmt.Sprintf("%s is what Sentry reads for the %s outbox here (deployment %s)", p.Table, ch.Target.Silo, p.Why),
	}
	if p.Waiting != nil {
		lines = append(lines, fmt.Sprintf("waiting in those shards of the %s outbox: %d rows, %d coalesce groups", ch.Target.Silo, p.Waiting.Rows, p.Waiting.Groups))
	}
	if len(p.After) > 50 {
		return append(lines, fmt.Sprintf("one write of the whole list (%d ids), as 'sentry config set %s' would make it", len(p.After), ch.Key))
	}
	return append(lines, fmt.Sprintf("equivalent: sentry config set %s '%s'", ch.Key, options.EncodeIDs(p.After)))
}

// KillswitchGate sets a replicated table's backfill gate (killswitch.Gate).
type KillswitchGate struct {
	Env
	Gate       killswitch.Gate
	PrintTable string // the options table printed SQL writes
}

// WithoutDatabase: with no database given, the gate prints its SQL.
func (k *KillswitchGate) WithoutDatabase() bool { return true }

// Script is the gate's statement.
func (k *KillswitchGate) Script([]string) ([]string, error) {
	text, err := query.Script{k.Gate.PrintStatement(k.PrintTable)}.Render()
	return []string{text}, err
}

// Plan reads the gate's stored value.
func (k *KillswitchGate) Plan(ctx context.Context, conn *db.Conn) (Plan, error) {
	g := k.Gate
	p, err := g.Plan(ctx, conn)
	if err != nil {
		return Plan{}, err
	}
	if p.Before == g.Value() {
		return Plan{Nothing: fmt.Sprintf("note: %s is already %s; nothing to change", g.Key(), g.Value())}, nil
	}
	return Plan{Lines: gatePlanLines(g, p), detail: p}, nil
}

// Apply writes the gate.
func (k *KillswitchGate) Apply(ctx context.Context, conn *db.Conn, pl Plan) (Summary, error) {
	g, p := k.Gate, pl.detail.(killswitch.GatePlan)
	stored, err := g.Apply(ctx, conn, p)
	if err != nil {
		return Summary{}, err
	}
	return Summary{
		Audit: []Audit{{"killswitch gate", map[string]any{"options_table": p.OptionsTable, "key": g.Key(), "before": p.Before, "after": stored, "reason": g.Reason}}},
		Doc: render.Doc{{Name: "gate", Card: render.FieldsOf(killswitch.GateSummary{OptionsTable: p.OptionsTable, Key: g.Key(), Value: stored,
			Next: render.Commands{k.Next(nil, "backfill", "status", g.Table.Name)}})}},
	}, nil
}

func gatePlanLines(g killswitch.Gate, p killswitch.GatePlan) []string {
	tb, value := g.Table, g.Value()
	effect := fmt.Sprintf("walks at version %d unless the stored cursor version is already above it (a walk that finished stored coded + 1: then nothing runs; check outboxctl backfill status %s)", min(g.Version, tb.Coded), tb.Name)
	if g.Version < tb.Coded {
		effect = fmt.Sprintf("holds the backfill below the coded version %d", tb.Coded)
	}
	return []string{
		fmt.Sprintf("set %s in %s: %s -> %s (%s)", g.Key(), p.OptionsTable, p.Before, value, drain.ReasonText(g.Reason)),
		fmt.Sprintf("target becomes min(%s, coded %d): Sentry %s", value, tb.Coded, effect),
		fmt.Sprintf("equivalent: sentry config set %s %s", g.Key(), value),
	}
}
