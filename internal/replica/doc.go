package replica

import (
	"github.com/outboxctl/outboxctl/internal/render"
)

// Result is one pair's verify: its counts and the drifts kept.
type Result struct {
	Pair   Pair
	Counts Counts
	Drifts []Drift
}

// Doc is verify's document: a summary per pair, then the drifted objects (the first limit
// of each pair's, 0: all), with a footer for the ones left out.
func Doc(results []Result, limit int) render.Doc {
	summary := &render.Table{Columns: []string{"pair", "source", "replica", "in_sync", "missing", "stale", "orphan", "pending"},
		Labels: map[string]string{"in_sync": "in sync"}}
	drift := &render.Table{Columns: []string{"pair", "drift", "object_id", "fields", "next", "would_be", "pending_shard", "pending_rows", "next_attempt"},
		Labels:      map[string]string{"object_id": "object", "would_be": "would be", "pending_shard": "shard", "pending_rows": "queued", "next_attempt": "next attempt"},
		MachineOnly: map[string]bool{"pending_rows": true}}
	var shown, total int
	for _, r := range results {
		c := r.Counts
		summary.Rows = append(summary.Rows, []any{r.Pair.Name, r.Pair.Source, r.Pair.Replica, c.InSync, c.Missing, c.Stale, c.Orphan, c.Pending})
		total += int(c.Drifted())
		for _, d := range r.Drifts {
			if limit > 0 && shown >= limit {
				break
			}
			shown++
			drift.Rows = append(drift.Rows, d.row())
		}
	}
	return render.Doc{
		{Name: "summary", Title: "replicas", Table: summary},
		{Name: "drift", Title: "drifted objects", Table: drift, Footer: render.Shown(shown, total, "drifted objects", "--limit")},
	}
}

func (d Drift) row() []any {
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
	return []any{d.Pair, d.Class, d.ObjectID, fields, d.Next(), would, shard, rows, next}
}
