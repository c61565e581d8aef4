package replica

import (
	"fmt"
	"strings"

	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// Result is one pair's verify: its counts and the drifts kept.
type Result struct {
	Pair    Pair
	Counts  Counts
	Drifts  []Drift
	Skipped []Skipped // the fields not compared on this database, and why
	// TornDown says Sentry dropped the pair's replica (July 2026): nothing was compared.
	TornDown bool
}

// PairRow is one pair's line of verify's summary.
type PairRow struct {
	Pair    string `json:"pair"`
	Source  string `json:"source"`
	Replica string `json:"replica"`
	InSync  int64  `json:"in_sync" label:"in sync"`
	Missing int64  `json:"missing"`
	Stale   int64  `json:"stale"`
	Orphan  int64  `json:"orphan"`
	Pending int64  `json:"pending"`
	// NotCompared names the fields this database's tables lack (a Sentry from before them),
	// each with why: "field: no column table.column; …"; null when every field is compared.
	NotCompared any `json:"not_compared" label:"not compared"`
}

// DriftRow is one drifted object of verify (-o json: one per object): its pair, class, the
// fields that differ (stale; source and replica values), the command that repairs it, the
// replica's fields a replicate would write (missing) and, for a pending one, its queued
// outbox rows' shard, count and next attempt.
type DriftRow struct {
	Pair         string `json:"pair"`
	Drift        string `json:"drift"`
	ObjectID     int64  `json:"object_id" label:"object"`
	Fields       any    `json:"fields"`
	Next         string `json:"next"`
	WouldBe      any    `json:"would_be" label:"would be"`
	PendingShard any    `json:"pending_shard" label:"shard"`
	PendingRows  any    `json:"pending_rows" label:"queued" render:"machine"`
	NextAttempt  any    `json:"next_attempt" label:"next attempt"`
}

// WrittenRow is one pair's line of what replicate wrote: the objects, the outbox rows'
// ids (comma separated) and the verify that shows them pending, then in sync.
type WrittenRow struct {
	Pair      string `json:"pair"`
	Category  string `json:"category"`
	Objects   string `json:"objects"`
	OutboxIDs string `json:"outbox_ids" label:"outbox ids"`
	Next      string `json:"next"`
}

// Doc is verify's document: a summary per pair, then the drifted objects (the first limit
// of each pair's, 0: all), with a footer for the ones left out.
func Doc(results []Result, limit int, command Commands) render.Doc {
	pairs, drifts := []PairRow{}, []DriftRow{}
	var shown, total int
	var drained bool // an object missing or stale with nothing queued for it
	var gone []string
	for _, r := range results {
		c := r.Counts
		drained = drained || c.Missing+c.Stale > 0
		if r.TornDown {
			if td, ok := query.TeardownOf(r.Pair.Replica); ok {
				gone = append(gone, fmt.Sprintf("%s (%d)", td.Category.Name, td.Category.Value))
			}
		}
		var notCompared any
		if len(r.Skipped) > 0 {
			parts := make([]string, len(r.Skipped))
			for i, s := range r.Skipped {
				parts[i] = s.Field + ": " + s.Why
			}
			notCompared = strings.Join(parts, "; ")
		}
		pairs = append(pairs, PairRow{Pair: r.Pair.Name, Source: r.Pair.Source, Replica: r.Pair.Replica, InSync: c.InSync, Missing: c.Missing,
			Stale: c.Stale, Orphan: c.Orphan, Pending: c.Pending, NotCompared: notCompared})
		total += int(c.Drifted())
		for _, d := range r.Drifts {
			if limit > 0 && shown >= limit {
				break
			}
			shown++
			drifts = append(drifts, d.row(command))
		}
	}
	var note string
	if drained || len(gone) > 0 {
		note = DrainedNotApplied(gone)
	}
	return render.Doc{
		{Name: "summary", Title: "replicas", Table: render.TableOf(pairs), Footer: note},
		{Name: "drift", Title: "drifted objects", Table: render.TableOf(drifts), Footer: render.Shown(shown, total, "drifted objects", "--limit")},
	}
}

// DrainedNotApplied is what verify says where a drained queue and a replica disagree: the
// receivers that consume a message without applying it (reference §10.2), and gone, the
// categories whose replica this database's Sentry tore down (§10.1), whose rows drain and
// apply nothing.
func DrainedNotApplied(gone []string) string {
	s := "drained is not applied: Sentry's receivers of SEER_RUN_CREATE (48), GROUP_ACTION_LOG_EVENT and SCM_INTEGRATION_CONFIG_BACKFILL (46) consume some messages without applying them"
	if len(gone) > 0 {
		s += "; on this Sentry " + strings.Join(gone, ", ") + " rows drain and apply nothing (their replicas were torn down in July 2026)"
	}
	return s
}

func (d Drift) row(command Commands) DriftRow {
	var would, shard, rows, next, fields any
	if d.Would != "" {
		would = d.Would
	}
	if d.Pending != nil {
		shard, rows, next = d.Pending.Shard, d.Pending.Rows, render.Due(d.Pending.Next)
	}
	if len(d.Fields) > 0 {
		fields = render.JSONText(d.FieldsJSON())
	}
	return DriftRow{Pair: d.Pair, Drift: string(d.Class), ObjectID: d.ObjectID, Fields: fields, Next: d.Next(command), WouldBe: would, PendingShard: shard, PendingRows: rows, NextAttempt: next}
}
