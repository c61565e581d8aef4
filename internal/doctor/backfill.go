package doctor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/query"
)

func backfillNames() []string {
	var names []string
	for _, t := range backfill.Registered(nil) {
		names = append(names, t.Name)
	}
	return names
}

func backfillStatements(schema string) query.Script {
	names := backfillNames()
	keys := make([]string, len(names))
	for i, n := range names {
		keys[i] = backfill.OptionKey(n)
	}
	return query.Script{
		query.Watermarks(schema, query.CellWatermark, names),
		query.Watermarks(schema, query.ControlWatermark, names),
		query.OptionValues(schema, query.OptionTable, keys),
		query.OptionValues(schema, query.ControlOptionTable, keys),
	}
}

// ReadCursors reads the backfill cursors from the watermark tables present, each table's
// silo first. ok is false when neither watermark table exists (the Redis era).
func ReadCursors(ctx context.Context, q query.Querier, schema string, sch query.Schema) (cursors map[string]backfill.Cursor, ok bool, err error) {
	byTable := map[string]map[string]backfill.Cursor{}
	for _, wt := range []string{query.CellWatermark, query.ControlWatermark} {
		if !sch.Table(wt).Present {
			continue
		}
		ok = true
		res, err := query.Run(ctx, q, query.Watermarks(schema, wt, backfillNames()))
		if err != nil {
			return nil, true, fmt.Errorf("backfill-watermarks: %w", err)
		}
		rows, err := query.Rows[query.WatermarkRow](res)
		if err != nil {
			return nil, true, err
		}
		byTable[wt] = map[string]backfill.Cursor{}
		for _, w := range rows {
			// A NULL bound or version reads as 0: nothing walked yet.
			byTable[wt][w.TableName] = backfill.Cursor{Low: query.Deref(w.LowBound), Version: query.Deref(w.Version)}
		}
	}
	cursors = map[string]backfill.Cursor{}
	for _, t := range backfill.Registered(nil) {
		order := []string{query.CellWatermark, query.ControlWatermark}
		if t.Silo == backfill.Control {
			order[0], order[1] = order[1], order[0]
		}
		for _, wt := range order {
			if c, found := byTable[wt][t.Name]; found {
				cursors[t.Name] = c
				break
			}
		}
	}
	return cursors, ok, nil
}

// checkBackfill: backfills gated by their option, finished at a version below the coded one
// (a later option bump will not re-run them), waiting to restart, or malformed. Stalled
// cursors need two reads: see Stalled.
func checkBackfill(ctx context.Context, env *Env) ([]Finding, error) {
	cursors, ok, err := ReadCursors(ctx, env.Tx, env.SchemaName, env.Schema)
	if err != nil {
		return nil, err
	}
	if !ok {
		return []Finding{{Check: CheckBackfill, Severity: OK,
			Summary:  "no watermark tables here: the backfill cursors live in Redis (Sentry before September 2026)",
			Evidence: Evidence{{"store", "redis"}},
			Next:     env.Prefix + " backfill status --redis-url redis://HOST:6379/0"}}, nil
	}
	env.Cursors = map[string]backfill.Cursor{}
	tables := backfill.Registered(nil)
	opts, err := env.ReplicationOptions(ctx, env.Tx, tables)
	if err != nil {
		return nil, err
	}
	var out []Finding
	var byDefault []string // gated by an unset option (Sentry's default 0)
	for _, t := range tables {
		in := backfill.Input{Table: t, Option: opts[t.Name], SelfHosted: env.Config.SelfHosted}
		if c, found := cursors[t.Name]; found {
			in.Cursor = &c
		}
		if backfill.Classify(in).State == backfill.StateInProgress {
			env.Cursors[t.Name] = *in.Cursor
		}
		if f, bad := env.backfillFinding(in); bad {
			out = append(out, f)
		} else if g := backfill.GateOf(in); g.Held && g.Default {
			byDefault = append(byDefault, t.Name)
		}
	}
	if len(out) == 0 {
		out = append(out, Finding{Check: CheckBackfill, Severity: OK,
			Summary:  fmt.Sprintf("no backfill is held by an option set below its coded version, pending a restart or finished below its coded version (%d tables)", len(tables)),
			Evidence: Evidence{{"tables", len(tables)}, {"cursors", len(cursors)}}})
	}
	if len(byDefault) > 0 {
		// The same gates backfill status and killswitch list show (backfill.GateOf): on
		// SaaS every backfill waits for its option, so this is not a warning.
		out = append(out, Finding{Check: CheckBackfill, Severity: OK,
			Summary: fmt.Sprintf("%d backfill(s) gated by an unset option (Sentry's default 0 holds them below the coded version): %s",
				len(byDefault), strings.Join(byDefault, ", ")),
			Evidence: Evidence{{"gated_by_default", len(byDefault)}, {"tables", strings.Join(byDefault, ",")}},
			Next:     env.Prefix + " backfill status"})
	}
	return out, nil
}

// backfillFinding judges one table. An option never set is Sentry's default (0): every SaaS
// backfill waits for it, so it is not a finding; an option set below the coded version is.
func (env *Env) backfillFinding(in backfill.Input) (Finding, bool) {
	st := backfill.Classify(in)
	ev := Evidence{{"table", in.Table.Name}, {"coded", in.Table.Coded}, {"option", optValue(in.Option)}, {"target", st.Target}}
	if in.Cursor != nil {
		ev = append(ev, KV{"low_bound", in.Cursor.Low}, KV{"version", in.Cursor.Version})
	}
	ev = append(ev, KV{"state", string(st.State)})
	f := Finding{Check: CheckBackfill, Severity: Warn, Evidence: ev, Next: env.Prefix + " backfill status " + in.Table.Name}
	g := backfill.GateOf(in)
	set := g.Held && !g.Default // held by an option someone set, not by Sentry's default
	switch {
	case st.State == backfill.StateGated && set:
		f.Summary = fmt.Sprintf("backfill of %s is gated: option %s is %d, below the coded version %d", in.Table.Name, backfill.OptionKey(in.Table.Name), *in.Option, in.Table.Coded)
	case (st.State == backfill.StateNotStarted || st.State == backfill.StateInProgress) && set:
		f.Summary = fmt.Sprintf("backfill of %s is held at version %d by option %s, below the coded version %d", in.Table.Name, st.Target, backfill.OptionKey(in.Table.Name), in.Table.Coded)
	case st.State == backfill.StateComplete && set:
		f.Summary = fmt.Sprintf("backfill of %s is 'complete' at target %d, below the coded version %d: raising the option later will not re-run it", in.Table.Name, st.Target, in.Table.Coded)
	case st.State == backfill.StatePending, st.State == backfill.StateMalformed, st.State == backfill.StateBeyondMax:
		f.Summary = fmt.Sprintf("backfill of %s: %s (%s)", in.Table.Name, st.State, st.Note)
	default:
		return Finding{}, false
	}
	return f, true
}

func optValue(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// Stalled compares the cursors of the walks in progress (first, Env.Cursors) with a second
// read taken sample later: a walk at the same version whose low bound did not move is stalled.
func Stalled(first, second map[string]backfill.Cursor, sample time.Duration, prefix string) []Finding {
	var out []Finding
	for _, t := range backfill.Registered(nil) {
		a, okA := first[t.Name]
		b, okB := second[t.Name]
		if okA && okB && a == b {
			out = append(out, Finding{Check: CheckBackfill, Severity: Warn,
				Summary: fmt.Sprintf("backfill of %s did not move in %s (low bound %d, version %d): the backfill task is not running, or the budget is spent on scheduled outboxes",
					t.Name, dur(sample.Seconds()), b.Low, b.Version),
				Evidence: Evidence{{"table", t.Name}, {"low_bound", b.Low}, {"version", b.Version}, {"sample_seconds", seconds(sample)}},
				Next:     prefix + " backfill status " + t.Name + " --sample 60s"})
		}
	}
	return out
}
