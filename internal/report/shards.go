package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/shardstate"
)

// shardRow is what classification reads of a shard listing's row, by column name.
type shardRow struct {
	Scope       int        `db:"shard_scope"`
	Shard       int64      `db:"shard_identifier"`
	Depth       int64      `db:"depth"`
	NextAttempt *time.Time `db:"next_attempt"`
	Delay       *float64   `db:"last_delay_seconds"`
	LastAttempt *time.Time `db:"last_attempt"`
}

// Shards is the document of outboxctl shards from a StuckShards (stuck) or TopShards
// result: the listing with each shard's state at now, and the footer of a listing cut by
// --limit (total_shards, which the footer says on a terminal, stays for machines).
func Shards(reg *enums.Registry, res *query.Result, ks *options.Killswitches, now time.Time, stuck bool) (render.Doc, error) {
	var tbl *render.Table
	var err error
	if stuck {
		tbl, _, err = TableOf[query.StuckShardsRow](reg, res)
	} else {
		tbl, _, err = TableOf[query.TopShardsRow](reg, res)
	}
	if err != nil {
		return nil, err
	}
	if err := ShardStates(tbl, res, ks, now); err != nil {
		return nil, err
	}
	title, noun := "Deepest shards", "shards"
	if stuck {
		title, noun = "Shards in backoff", "stuck shards"
	}
	if tbl.MachineOnly == nil {
		tbl.MachineOnly = map[string]bool{}
	}
	tbl.MachineOnly["total_shards"] = true
	footer := ListFooter(res, "total_shards", noun)
	if exact, has := totalExact(res); has {
		tbl.MachineOnly["total_exact"] = true
		if exact != nil && !*exact {
			footer = estimatedFooter(res, noun)
		}
	}
	return render.Doc{{Name: "shards", Title: title, Table: tbl, Footer: footer}}, nil
}

// totalExact is the total_exact column of res's first row (top-shards': whether
// total_shards was counted); has says res returns the column and a row, and exact is nil
// when the row's is NULL or not a bool.
func totalExact(res *query.Result) (exact *bool, has bool) {
	type exactRow struct {
		TotalExact *bool `db:"total_exact"`
	}
	if len(res.Rows) == 0 || !slices.Contains(res.Columns, "total_exact") {
		return nil, false
	}
	first := *res
	first.Rows = res.Rows[:1]
	rows, err := query.Rows[exactRow](&first)
	if err != nil {
		return nil, true
	}
	return rows[0].TotalExact, true
}

// estimatedFooter is the footer of a listing whose total_shards is the planner's estimate:
// "showing 10 of ~156,000 shards (--limit; --exact counts them)", the estimate rounded to
// three figures (it is not better than that).
func estimatedFooter(res *query.Result, noun string) string {
	total, _ := firstTotal(res, "total_shards")
	if total <= int64(len(res.Rows)) {
		// No statistics (a table never analyzed): the planner has no estimate.
		return fmt.Sprintf("showing %d of an uncounted number of %s (--limit; --exact counts them)", len(res.Rows), noun)
	}
	return fmt.Sprintf("showing %d of ~%s %s (--limit; --exact counts them)", len(res.Rows), roughCount(total), noun)
}

// roughCount is n rounded to three significant figures, with thousands separators.
func roughCount(n int64) string {
	f := float64(n)
	if f >= 1000 {
		e := math.Pow(10, math.Floor(math.Log10(f))-2)
		f = math.Round(f/e) * e
	}
	s := strconv.FormatInt(int64(f), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// ShardStates classifies every shard row of res (which must carry shard_scope,
// shard_identifier, depth, next_attempt, last_delay_seconds and last_attempt) and appends the
// state columns to t, whose rows are res's rows in the same order. A missing column or a
// value of the wrong type is an error, never a shard classified from zeros.
func ShardStates(t *render.Table, res *query.Result, ks *options.Killswitches, now time.Time) error {
	rows, err := query.Rows[shardRow](res)
	if err != nil {
		return err
	}
	if t.HumanOnly == nil {
		t.HumanOnly = map[string]bool{}
	}
	for _, c := range []string{"backoff_seconds", "next_attempt_in_seconds", "attempts_estimate", "at_cap", "killswitched"} {
		t.MachineOnly[c] = true
	}
	t.HumanOnly["detail"] = true
	// On a terminal the detail sentence replaces the raw schedule columns.
	for _, c := range []string{"next_attempt", "last_delay_seconds", "last_attempt", "due"} {
		t.MachineOnly[c] = true
	}
	// A person reads the state from state_shown (headed STATE, never dropped to fit a
	// terminal): at the cap it says so, so narrowing the table, which drops DETAIL first,
	// keeps "at 1 h cap: poison message?". Scripts read state and at_cap.
	t.MachineOnly["state"] = true
	t.HumanOnly["state_shown"] = true
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	t.Labels["state_shown"] = "state"
	t.Columns = append(t.Columns, "state_shown")
	t.Columns = append(t.Columns, StateColumns...)
	for i, r := range rows {
		sh := shardstate.Shard{Depth: r.Depth}
		if r.NextAttempt != nil {
			sh.NextAttempt = *r.NextAttempt
		}
		if r.LastAttempt != nil {
			sh.HeadScheduledFrom = *r.LastAttempt
		}
		if r.Delay != nil && !sh.HeadScheduledFrom.IsZero() {
			sh.HeadScheduledFor = sh.HeadScheduledFrom.Add(time.Duration(*r.Delay * float64(time.Second)))
		}
		scope := r.Scope
		sh.Killswitched = ks.IsDisabled(scope, r.Shard)
		if scope != 0 && scope != 1 && ks.Known() {
			f := false
			sh.Killswitched = &f // only organization and user shards can be disabled
		}
		st := shardstate.Classify(now, sh)
		var killed any
		if sh.Killswitched != nil {
			killed = *sh.Killswitched
		}
		shown := stateText(st)
		if st.AtCap && st.State == shardstate.StateBackingOff {
			shown.Text = "at 1 h cap: poison message?"
		}
		t.Rows[i] = append(t.Rows[i], shown,
			stateText(st), detail(st),
			round(st.Delay.Seconds()), round(st.NextIn.Seconds()), st.Attempts, st.AtCap, killed)
	}
	return nil
}

func stateText(st shardstate.Status) render.Styled {
	tone := render.ToneNone
	switch st.State {
	case shardstate.StateReady:
		tone = render.ToneGood
	case shardstate.StateBackingOff:
		tone = render.ToneWarn
		if st.AtCap {
			tone = render.ToneBad
		}
	case shardstate.StateKilled:
		tone = render.ToneBad
	case shardstate.StateInFlight, shardstate.StateEmpty, shardstate.StateUnknown:
		tone = render.ToneMuted
	}
	return render.Styled{Text: string(st.State), Tone: tone}
}

// detail sums a state up for a person: "delay 8m32s, next in 3m1s, ~9 attempts".
func detail(st shardstate.Status) string {
	attempts := fmt.Sprintf("~%d attempts", st.Attempts)
	if st.AttemptsAtLeast {
		attempts = fmt.Sprintf("≥%d attempts", st.Attempts)
	}
	switch st.State {
	case shardstate.StateBackingOff:
		s := fmt.Sprintf("delay %s, next in %s, %s", render.Duration(st.Delay), render.Duration(st.NextIn), attempts)
		if st.AtCap {
			s += ", at 1 h cap: poison message?"
		}
		return s
	case shardstate.StateInFlight:
		return fmt.Sprintf("claimed %s ago (delay %s): probably draining now", render.Duration(st.SinceClaim), render.Duration(st.Delay))
	case shardstate.StateKilled:
		return "disabled by option: each visit (on the usual backoff, 2 s doubling to 1 h) deletes the head group's older duplicates and delivers nothing; once the lowest row is its group's newest, nothing more is trimmed"
	case shardstate.StateReady:
		if st.Attempts > 0 {
			return fmt.Sprintf("due; head row's last delay %s (%s)", render.Duration(st.Delay), attempts)
		}
		return "due"
	case shardstate.StateEmpty, shardstate.StateUnknown:
	}
	return ""
}

func round(f float64) float64 { return math.Round(f*1000) / 1000 }
