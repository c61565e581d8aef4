// Package inspect is the reads of `outboxctl inspect` (shard, object, category, message),
// `outboxctl depth` and `outboxctl shards`: what each reads in a read snapshot (internal/outbox), the
// answer it picks under a pass budget, and the document it returns. cmd keeps the flags,
// their checks and the session's opening; `outboxctl top` reads a shard and a message
// through the same functions. Nothing here knows cobra or cmd's factory: what a read needs
// of the invocation is an Env of plain values and funcs.
package inspect

import (
	"fmt"
	"time"

	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/report"
)

// Env is what a read takes from the invocation.
type Env struct {
	Registry *enums.Registry
	// Printer says the notes on stderr (an empty shard, no rows) and streams a shard's
	// messages; a structured format (JSON, CSV) keeps its empty sections instead of a note.
	Printer *render.Printer
	Now     func() time.Time
	// Next is a suggested command line (outboxctl and the invocation's context flags, the
	// flags naming t's table when t is not nil, then args).
	Next func(t *query.Target, args ...string) string
}

// Page is which of a shard's messages inspect shard lists: every one (All), or the head
// and Limit more, the newest or the oldest (Order), their groups counted up to
// query.GroupCap unless Exact.
type Page struct {
	All   bool
	Limit int
	Exact bool
	Order string // newest or oldest
}

// Statement is the read of the page's messages of shard k in t.
func (pg Page) Statement(t query.Target, k query.ShardKey) query.Statement {
	if pg.All {
		return query.ShardMessagesAll(t, k)
	}
	return query.ShardMessagesOrdered(t, k, pg.Limit, pg.Exact, pg.Order == "oldest")
}

// Script is inspect shard's statements as --print-sql prints them: the state, the
// categories, the page and the kill switches' read (killswitches).
func (pg Page) Script(t query.Target, k query.ShardKey, killswitches query.Statement) query.Script {
	return query.Script{query.ShardState(t, k), query.ShardCategories(t, k), pg.Statement(t, k), killswitches}
}

// StreamShard prints shard k's state card (with its next steps) and categories, then its
// page of messages as they are read from s, so memory stays flat however deep the shard;
// an empty shard is one note. A kill-switch read that failed late is returned as ksErr,
// for the command to end with once the rest is printed.
func (e Env) StreamShard(s *outbox.Snapshot, k query.ShardKey, pg Page) (ksErr, err error) {
	doc, depth, err := e.shardHead(s, k, &ksErr)
	if err != nil || doc == nil {
		return ksErr, err // nil doc: empty, the one line shardHead noted
	}
	e.withShardNext(doc, s.Target, k)
	title := "Messages (the head, then the " + pg.Order + ")"
	if pg.All {
		title, depth = "Messages (newest first)", 0 // every message: nothing left out
	}
	return ksErr, e.streamMessages(s, doc, pg.Statement(s.Target, k), title, depth)
}

// ShardDoc is inspect shard's document of k as top shows it: its state card with its next
// steps, its categories and its first messages (the head, then the newest), read whole;
// nil when the shard is empty. Its printer should be a quiet one: notes are not top's.
func (e Env) ShardDoc(s *outbox.Snapshot, k query.ShardKey) (render.Doc, error) {
	var ksErr error // top shows the state it could read; the switches' failure is not a pane
	head, _, err := e.shardHead(s, k, &ksErr)
	if err != nil || head == nil {
		return nil, err
	}
	e.withShardNext(head, s.Target, k)
	res, err := s.Run(query.ShardMessagesOrdered(s.Target, k, query.DefaultLimit, false, false))
	if err != nil {
		return nil, err
	}
	msgs, _, err := report.TableOf[query.ShardMessageRow](e.Registry, res)
	return append(head, render.Section{Name: "messages", Title: "Messages (the head, then the newest)", Table: msgs}), err
}

// shardHead reads a shard's state (with its kill switch) and categories into the sections
// printed above its messages; a kill-switch read that failed late is left in ksErr.
func (e Env) shardHead(s *outbox.Snapshot, k query.ShardKey, ksErr *error) (render.Doc, int64, error) {
	reg := e.Registry
	stateRes, catRes, err := s.ShardStateAndCategories(k)
	if err != nil {
		return nil, 0, err
	}
	ks, listErr, err := s.Killswitches(0)
	if err != nil {
		return nil, 0, err
	}
	*ksErr = listErr
	if len(stateRes.Rows) == 0 && !e.Printer.Structured() {
		// One line, not three empty tables (JSON and CSV keep their empty sections).
		e.Printer.Notef("shard %s/%d is empty in %s", k.Scope.Name, k.ID, s.Target.Describe())
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
	if err := report.ShardStates(state, stateRes, ks, e.Now()); err != nil {
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

// withShardNext adds to the state card of doc (a shard's head) its next steps.
func (e Env) withShardNext(doc render.Doc, t query.Target, k query.ShardKey) {
	if len(doc[0].Card) > 0 {
		doc[0].Card = report.WithNext(doc[0].Card, e.shardNext(t, k, doc[0].Card))
	}
}

// shardNext is what to run next on a shard whose state card is card: at the 1 h cap, look
// at its head message (whose inspect names the skip) or, if a receiver was down, make it
// due now; kill-switched, the switch. Nothing for a shard draining as Sentry drains it.
func (e Env) shardNext(t query.Target, k query.ShardKey, card []render.Field) render.Commands {
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
		return render.Commands{e.Next(&t, "killswitch", "check", scope, id)}
	case val("at_cap") == "true" && val("head_id") != "":
		return render.Commands{e.Next(&t, "inspect", "message", val("head_id")),
			e.Next(&t, "reschedule", scope, id, "--reason", "receiver fixed")}
	}
	return nil
}

// streamMessages prints doc, then the rows of st as they arrive; with the shard's depth, a
// footer says how many the page left out.
func (e Env) streamMessages(s *outbox.Snapshot, doc render.Doc, st query.Statement, title string, depth int64) error {
	var dec *report.Decorator
	var typed *query.RowReader[query.ShardMessageRow]
	var ds *render.DocStream
	shown := 0
	err := s.Stream(st, func(cols []string) error {
		var err error
		if dec, err = report.DecoratorOf[query.ShardMessageRow](e.Registry, cols); err != nil {
			return err
		}
		if typed, err = query.NewRowReader[query.ShardMessageRow](st.Name, cols); err != nil {
			return err
		}
		ds = e.Printer.StartDoc(doc, render.Section{Name: "messages", Title: title, Table: dec.Table()})
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
