package inspect

import (
	"fmt"
	"time"

	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/report"
)

// Object is inspect object's lookup: the outboxes of object id of category cat, at most
// limit, narrowed to the category's registered scope unless anyScope, and to shard when
// given (the object's organization or user id: one probe of the shard index).
func (e Env) Object(cat enums.Category, id int64, limit int, anyScope bool, shard *int64) query.ObjectLookup {
	l := query.ObjectLookup{Category: query.Enum{Value: cat.Value, Name: cat.Name}, ObjectID: id, Limit: limit}
	if !anyScope && cat.Scope >= 0 {
		l.Scope = &query.Enum{Value: cat.Scope, Name: e.Registry.ScopeName(cat.Scope)}
		l.ShardFromObject = cat.ObjectIsShard
		l.Shard = shard
	}
	return l
}

// ObjectDoc is inspect object's document of res, the rows of lookup l in t; no row is a
// note, and a full page says there may be more.
func (e Env) ObjectDoc(t query.Target, l query.ObjectLookup, res *query.Result) (render.Doc, error) {
	if len(res.Rows) == 0 && !e.Printer.Structured() {
		e.Printer.Notef("no outboxes for %s object %d in %s", l.Category.Name, l.ObjectID, t.Describe())
	}
	tbl, _, err := report.TableOf[query.ObjectOutboxRow](e.Registry, res)
	if err != nil {
		return nil, err
	}
	sec := render.Section{Name: "outboxes", Table: tbl, Footer: report.EnumNotes(e.Registry, res, query.Schema{})}
	if len(res.Rows) >= l.Limit {
		// The page is full: there may be more rows than it shows (no count is read).
		sec.Footer = report.JoinNotes(fmt.Sprintf("showing the newest %d outboxes: there may be more (--limit %d)", len(res.Rows), 2*l.Limit), sec.Footer)
	}
	return render.Doc{sec}, nil
}

// MessageDoc is inspect message's card of message id, the one row of res read in t, with
// its next steps and the enums' notes below it.
func (e Env) MessageDoc(t query.Target, id int64, res *query.Result) (render.Doc, error) {
	card, err := e.MessageCard(t, res)
	if err != nil {
		return nil, err
	}
	return render.Doc{{Name: "message", Title: fmt.Sprintf("Message %d", id), Card: card, Footer: report.EnumNotes(e.Registry, res, query.Schema{})}}, nil
}

// MessageCard is the card of the message row res read in t, with its next steps (none
// when they cannot be read: the card stands without them).
func (e Env) MessageCard(t query.Target, res *query.Result) ([]render.Field, error) {
	card, err := report.CardOf[query.MessageRow](e.Registry, res)
	if err != nil {
		return nil, err
	}
	if next, err := e.messageNext(t, res); err == nil {
		card = report.WithNext(card, next)
	}
	return card, nil
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
func (e Env) messageNext(t query.Target, res *query.Result) (render.Commands, error) {
	rows, err := query.Rows[inspectedMessage](res)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	m := rows[0]
	if cell := m.cell(t.CellColumn); t.Control() && cell != "" {
		t.Cell = cell
	}
	scope := query.Enum{Value: m.Scope, Name: e.Registry.ScopeName(m.Scope)}
	shard := e.Next(&t, "inspect", "shard", scope.ScopeWord(), fmt.Sprint(m.Shard))
	if m.IsHead && m.ScheduledFor.After(e.Now()) {
		return render.Commands{e.Next(&t, "doctor", "--check", "stuck"), shard}, nil
	}
	return render.Commands{shard}, nil
}
