package killswitch

import (
	"context"
	"strings"
	"time"

	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/report"
)

// The documents of killswitch list and killswitch check, and the cards of its changes: the
// json tags of these types are their JSON keys (render.TableOf, render.FieldsOf build them;
// internal/contract publishes their schemas).

// StoreRow says which options table Sentry reads for one outbox here, and why.
type StoreRow struct {
	Outbox       string  `json:"outbox"`
	OptionsTable *string `json:"options_table" label:"read from"`
	Deployment   string  `json:"deployment"`
	Decided      string  `json:"decided"`
}

// DisabledRow is one disabled shard and what waits behind it.
type DisabledRow struct {
	OptionsTable   string     `json:"options_table" label:"option in"`
	Governs        string     `json:"governs"`
	Scope          string     `json:"scope"`
	Shard          int64      `json:"shard"`
	Silo           *string    `json:"silo"`
	RegionName     *string    `json:"region_name" label:"cell"`
	Depth          int64      `json:"depth"`
	CoalesceGroups int64      `json:"coalesce_groups" label:"groups"`
	OldestMessage  *time.Time `json:"oldest_message"`
	NextAttempt    any        `json:"next_attempt"` // a render.Due, or null
}

// GateRow is one backfill gate held below the table's coded version.
type GateRow struct {
	OptionsTable string `json:"options_table" label:"option in"`
	Governs      string `json:"governs"`
	Key          string `json:"key"`
	Value        int64  `json:"value"`
	Coded        int64  `json:"coded"`
}

// CheckCard is killswitch check's card: each options table's own list (present tables
// only), then the verdict of the one Sentry reads (Disabled null: no options table).
type CheckCard struct {
	Scope                   string `json:"scope"`
	Shard                   int64  `json:"shard"`
	DisabledInOption        *bool  `json:"disabled_in_sentry_option,omitempty"`
	DisabledInControlOption *bool  `json:"disabled_in_sentry_controloption,omitempty"`
	ReadFrom                string `json:"read_from"`
	Disabled                *bool  `json:"disabled"`
	Deployment              string `json:"deployment"`
}

// ChangeSummary is the card of killswitch add and remove.
type ChangeSummary struct {
	OptionsTable string `json:"options_table"`
	Key          string `json:"key"`
	Value        string `json:"value"`
	Changed      bool   `json:"changed"`
	// Next and Undo, after a change: check the first shard changed, and the opposite change.
	Next render.Commands `json:"next,omitempty"`
	Undo string          `json:"undo,omitempty"`
}

// GateSummary is the card of killswitch gate.
type GateSummary struct {
	OptionsTable string `json:"options_table"`
	Key          string `json:"key"`
	Value        string `json:"value"`
	// Next is what to run next (backfill status of the gated table).
	Next render.Commands `json:"next"`
}

// Listing is what killswitch list read.
type Listing struct {
	Schema   query.Schema
	Disabled []DisabledRow
	Gates    []GateRow
	// Ignored are the ids listed in an options table Sentry does not read here.
	Ignored map[string][]int64
	// ListErr is why a list could not be decoded: the command shows the rest, then fails.
	ListErr error
}

// ReadListing reads every options table's lists, what waits behind each disabled shard and
// the backfill gates of tables.
func ReadListing(ctx context.Context, q query.Querier, schema string, sch query.Schema, reg *enums.Registry, tables []backfill.Table) (Listing, error) {
	l := Listing{Schema: sch, Ignored: map[string][]int64{}}
	lists, err := ReadLists(ctx, q, schema, sch)
	if err != nil {
		return l, err
	}
	for _, ks := range lists {
		if ks.Err != nil && l.ListErr == nil {
			l.ListErr = ks.Err
		}
		if len(options.Governs(ks.Table, sch)) == 0 {
			l.Ignored[ks.Table] = append(l.Ignored[ks.Table], ks.IDs...)
		}
	}
	waiting, err := Waiting(ctx, q, schema, sch, lists)
	if err != nil {
		return l, err
	}
	for _, r := range waiting {
		l.Disabled = append(l.Disabled, DisabledRow{OptionsTable: r.OptionsTable, Governs: GovernsText(r.OptionsTable, sch), Scope: reg.ScopeName(int(r.ShardScope)),
			Shard: r.ShardIdentifier, Silo: r.Silo, RegionName: r.RegionName, Depth: r.Depth, CoalesceGroups: r.CoalesceGroups,
			OldestMessage: utc(r.OldestMessage), NextAttempt: report.Typed("next_attempt", query.OrNil(utc(r.NextAttempt)))})
	}
	gates, err := Gates(ctx, q, schema, sch, tables)
	for _, g := range gates {
		l.Gates = append(l.Gates, GateRow{OptionsTable: g.Table, Governs: GovernsText(g.Table, sch), Key: g.Key, Value: g.Value, Coded: g.Coded})
	}
	return l, err
}

// utc is a timestamp in UTC, as query.Run gives it.
func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// Doc is the listing's document: the stores, the disabled shards, the backfill gates.
func (l Listing) Doc() render.Doc {
	disabled, gates := render.TableOf(l.Disabled), render.TableOf(l.Gates)
	disabled.Rows, gates.Rows = nilIfEmpty(disabled.Rows), nilIfEmpty(gates.Rows)
	return render.Doc{
		{Name: "stores", Title: "Options tables Sentry reads here", Table: render.TableOf(StoreRows(l.Schema))},
		{Name: "disabled", Title: "Disabled shards", Table: disabled},
		{Name: "backfill_gates", Title: "Backfill gates (option below the coded version)", Table: gates},
	}
}

func nilIfEmpty(rows [][]any) [][]any {
	if len(rows) == 0 {
		return nil
	}
	return rows
}

// StoreRows say which options table governs which outbox present, and why.
func StoreRows(sch query.Schema) []StoreRow {
	var out []StoreRow
	for _, o := range []struct {
		silo  query.Silo
		table string
	}{{query.SiloCell, query.CellTable}, {query.SiloControl, query.ControlTable}} {
		if sch.Tables != nil && !sch.Table(o.table).Present {
			continue
		}
		r := StoreRow{Outbox: o.table, Deployment: string(sch.Deployment), Decided: sch.DeploymentWhy}
		if name := options.OptionTableFor(o.silo, sch); name != "" {
			r.OptionsTable = &name
		}
		if r.Deployment == "" {
			r.Deployment = "unknown (split assumed)"
		}
		out = append(out, r)
	}
	return out
}

// GovernsText says which outboxes an options table's values apply to in this deployment.
func GovernsText(optionsTable string, sch query.Schema) string {
	silos := options.Governs(optionsTable, sch)
	if len(silos) == 0 {
		return "nothing (Sentry does not read it here)"
	}
	names := make([]string, len(silos))
	for i, s := range silos {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// Card is the check's card of verdict v for shard id of scope: each options table's own
// list, then the verdict of the one Sentry reads.
func (v Verdict) Card(scope string, id int64) []render.Field {
	c := CheckCard{Scope: scope, Shard: id, ReadFrom: v.ReadFrom, Disabled: v.Disabled, Deployment: v.Deployment}
	for _, tv := range v.Tables {
		d := tv.Disabled
		switch tv.Table {
		case query.OptionTable:
			c.DisabledInOption = &d
		case query.ControlOptionTable:
			c.DisabledInControlOption = &d
		}
	}
	return render.FieldsOf(c)
}
