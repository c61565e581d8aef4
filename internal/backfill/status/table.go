package status

import (
	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/report"
)

// TableRow is one row of backfill status's table: its json tags are the JSON keys
// (internal/contract publishes the schema). progress is a fraction (a percentage on a
// terminal), rate_ids_per_minute and eta_seconds need --sample; a NULL is what could not be
// read or does not apply.
type TableRow struct {
	Table         string        `json:"table"`
	Silo          string        `json:"silo" render:"machine"`
	Coded         int64         `json:"coded"`
	Option        *int64        `json:"option"`
	Target        int64         `json:"target"`
	Gated         bool          `json:"gated"`
	Store         string        `json:"store"`
	LowBound      *int64        `json:"low_bound"`
	Version       *int64        `json:"version"`
	State         render.Styled `json:"state"`
	MaxID         *int64        `json:"max_id"`
	Progress      any           `json:"progress"` // a render.Ratio, or null
	RowsEstimate  *int64        `json:"rows_estimate" label:"rows"`
	RowsDone      *int64        `json:"rows_done"`
	Rate          *float64      `json:"rate_ids_per_minute" label:"rate/min"`
	ETA           *float64      `json:"eta_seconds" label:"eta"`
	Note          string        `json:"note"`
	WalkedVersion *int64        `json:"walked_version" label:"walked"`
	OptionIn      *string       `json:"option_in" render:"machine"`
	// Cells is a backfill limited to target cells (outbox_replication.<table>.backfill.
	// target_cells): its state in each cell known, "us: complete; de: not attempted".
	Cells *string `json:"cells"`
}

// Table is the report as backfill status's table.
func (rep Report) Table() *render.Table {
	rows := make([]TableRow, 0, len(rep.Rows))
	for _, r := range rep.Rows {
		t := TableRow{Table: r.Table.Name, Silo: string(r.Table.Silo), Coded: r.Table.Coded, Option: r.Option, Target: r.Status.Target, Gated: r.Gate.Held,
			Store: r.Store, State: styledState(r), MaxID: r.MaxID, Progress: report.Typed("progress", query.OrNil(r.Progress)),
			RowsEstimate: r.Estimate, RowsDone: r.RowsDone, Rate: r.Rate, ETA: r.ETA, Note: r.Note, WalkedVersion: r.Status.Walked}
		if r.Cursor != nil {
			low, version := r.Cursor.Low, r.Cursor.Version
			t.LowBound, t.Version = &low, &version
		}
		if r.OptionIn != "" {
			in := r.OptionIn
			t.OptionIn = &in
		}
		if r.Cells != "" {
			cells := r.Cells
			t.Cells = &cells
		}
		rows = append(rows, t)
	}
	tbl := render.TableOf(rows)
	if len(tbl.Rows) == 0 {
		tbl.Rows = nil
	}
	return tbl
}

// styledState is a row's state in the tone a person reads it in.
func styledState(r Row) render.Styled {
	st := r.Status
	switch {
	case r.Unreachable:
		return render.Styled{Text: r.State, Tone: render.ToneBad}
	case st.Complete:
		return render.Styled{Text: r.State, Tone: render.ToneGood}
	case st.State == backfill.StateInProgress || st.State == backfill.StateNotStarted:
		return render.Styled{Text: r.State, Tone: render.ToneNone}
	case st.State == backfill.StateGated:
		return render.Styled{Text: r.State, Tone: render.ToneMuted}
	}
	return render.Styled{Text: r.State, Tone: render.ToneWarn}
}
