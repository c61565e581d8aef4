package top

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/outboxctl/outboxctl/internal/doctor"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/textsafe"
)

// causeOf is the group a finding belongs to: its evidence's cause (the stuck check names
// one: poison, receiver_outage, hot_shard, …), else its check.
func causeOf(f doctor.Finding) string {
	for _, kv := range f.Evidence {
		if kv.Key == "cause" {
			return fmt.Sprint(kv.Value)
		}
	}
	return f.Check
}

// findingKey is what keeps the cursor on a finding across refreshes: its cause, check and
// target (not its row, which moves as findings come and go).
func findingKey(f doctor.Finding) string {
	return findingContext(f) + "\x00" + causeOf(f) + "\x00" + f.Check + "\x00" + f.Target
}

// shown are the findings the pane lists: every one that is not ok, grouped by cause (the
// causes in order of their worst severity), the worst first within a cause.
func shown(fs []doctor.Finding) []doctor.Finding {
	var out []doctor.Finding
	worst := map[string]doctor.Severity{}
	for _, f := range fs {
		if f.Severity == doctor.OK {
			continue
		}
		out = append(out, f)
		worst[causeOf(f)] = max(worst[causeOf(f)], f.Severity)
	}
	slices.SortStableFunc(out, func(a, b doctor.Finding) int {
		ca, cb := causeOf(a), causeOf(b)
		return cmp.Or(cmp.Compare(worst[cb], worst[ca]), cmp.Compare(ca, cb), cmp.Compare(b.Severity, a.Severity))
	})
	return out
}

var severityTone = map[doctor.Severity]render.Tone{doctor.Crit: render.ToneBad, doctor.Warn: render.ToneWarn, doctor.OK: render.ToneGood} //nolint:gochecknoglobals // constant table

// findingsTable is the findings pane's table, one row per finding of fs (in order), with
// each finding's context first when withContext.
func findingsTable(fs []doctor.Finding, withContext bool) *render.Table {
	t := &render.Table{Columns: []string{"severity", "cause", "target", "finding"}}
	if withContext {
		t.Columns = append([]string{"context"}, t.Columns...)
	}
	for _, f := range fs {
		short := f.Short
		if short == "" {
			short = f.Summary
		}
		row := []any{render.Styled{Text: f.Severity.String(), Tone: severityTone[f.Severity]}, causeOf(f), f.Target, short}
		if withContext {
			row = append([]any{findingContext(f)}, row...)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// evidence reads a finding's evidence by key.
func evidence(f doctor.Finding, key string) (any, bool) {
	for _, kv := range f.Evidence {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return nil, false
}

// shardsOf are the rows of the shards listing that finding f is about: the shard its
// evidence names (shard_scope, shard_identifier, cell), or every shard of its scope when it
// names a group; for a finding of the stuck check's causes, the shards its evidence lists
// by name (shards: SCOPE/ID or CELL:SCOPE/ID, doctor's first 5); none for a finding about
// no shard.
func shardsOf(f doctor.Finding, t *render.Table) *render.Table {
	out := &render.Table{Columns: t.Columns, Labels: t.Labels, MachineOnly: t.MachineOnly, HumanOnly: t.HumanOnly, Priority: t.Priority}
	scope, hasScope := evidence(f, "shard_scope")
	id, hasID := evidence(f, "shard_identifier")
	cell, hasCell := evidence(f, "cell")
	name := findingContext(f)
	if !hasScope && !hasID {
		named, _ := namedShards(f)
		scopeCol := slices.Index(t.Columns, "scope")
		for _, r := range t.Rows {
			k, ok := shardRefOf(t, r)
			if !ok || k.Context != name || scopeCol < 0 {
				continue
			}
			label := fmt.Sprintf("%s/%d", render.CellText(r[scopeCol], time.Time{}), k.ID)
			if k.Cell != "" {
				label = k.Cell + ":" + label
			}
			if named[label] {
				out.Rows = append(out.Rows, r)
			}
		}
		return out
	}
	for _, r := range t.Rows {
		k, ok := shardRefOf(t, r)
		if !ok {
			continue
		}
		if k.Context != name || hasScope && fmt.Sprint(scope) != fmt.Sprint(k.Scope) || hasID && fmt.Sprint(id) != fmt.Sprint(k.ID) ||
			hasCell && fmt.Sprint(cell) != "" && fmt.Sprint(cell) != k.Cell {
			continue
		}
		out.Rows = append(out.Rows, r)
	}
	return out
}

// namedShards are the shards a finding's evidence lists by name (shards: "A/1, A/2, … 3
// more"), and how many more it left out.
func namedShards(f doctor.Finding) (map[string]bool, int) {
	v, ok := evidence(f, "shards")
	if !ok {
		return nil, 0
	}
	named, more := map[string]bool{}, 0
	for _, s := range strings.Split(fmt.Sprint(v), ", ") {
		if n, ok := strings.CutPrefix(s, "… "); ok {
			more, _ = strconv.Atoi(strings.TrimSuffix(n, " more"))
			continue
		}
		named[strings.TrimSpace(s)] = true
	}
	return named, more
}

// findingLines are a finding's card: what it says, its next commands (pasteable as
// printed), then its evidence, one value a line.
func findingLines(f doctor.Finding, width int) []string {
	lines := render.ScreenText(fmt.Sprintf("%s · %s · %s · %s", f.Severity, causeOf(f), f.Check, f.Target), width)
	lines = append(lines, render.ScreenText(f.Summary, width)...)
	for i, c := range append([]string{f.Next}, f.Then...) {
		if c == "" {
			continue
		}
		label := "then: "
		if i == 0 {
			label = "next: "
		}
		lines = append(lines, render.ScreenText(label+c, width)...)
	}
	return lines
}

// evidenceLines are a finding's evidence, one key a line.
func evidenceLines(f doctor.Finding, width int) []string {
	lines := []string{"", "evidence:"}
	for _, kv := range f.Evidence {
		lines = append(lines, render.ScreenText(fmt.Sprintf("  %s: %s", kv.Key, doctor.Evidence{kv}.String()[len(kv.Key)+1:]), width)...)
	}
	return lines
}

// visibleColumns are the columns a person can sort by: those a screen shows.
func visibleColumns(t *render.Table) []string {
	var out []string
	for _, c := range t.Columns {
		if !t.MachineOnly[c] {
			out = append(out, c)
		}
	}
	return out
}

// sorted is the order of t's rows sorted by column col (descending when desc); the table's
// own order when col is "" or not one of its columns. Ties keep the table's order.
func sorted(t *render.Table, col string, desc bool, now time.Time) []int {
	idx := make([]int, len(t.Rows))
	for i := range idx {
		idx[i] = i
	}
	c := slices.Index(t.Columns, col)
	if c < 0 {
		return idx
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		n := compareCells(col, t.Rows[a][c], t.Rows[b][c], now)
		if desc {
			return -n
		}
		return n
	})
	return idx
}

var severityRank = map[string]int{"ok": 0, "warn": 1, "crit": 2} //nolint:gochecknoglobals // constant table

// compareCells orders two cells of column col: numbers as numbers, times as times,
// severities by rank, anything else by its text; an empty cell last.
func compareCells(col string, a, b any, now time.Time) int {
	na, oka := number(a)
	nb, okb := number(b)
	switch {
	case oka && okb:
		return cmp.Compare(na, nb)
	case oka != okb && (a == nil || b == nil):
		return cmp.Compare(boolInt(a == nil), boolInt(b == nil))
	}
	ta, sa := render.CellText(a, now), render.CellText(b, now)
	if col == "severity" {
		return cmp.Compare(severityRank[ta], severityRank[sa])
	}
	return cmp.Compare(ta, sa)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// number is a cell as a number to sort by: integers, floats, times (their Unix time),
// durations.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case float64:
		return x, true
	case *float64:
		if x != nil {
			return *x, true
		}
	case time.Time:
		return float64(x.UnixNano()), true
	case *time.Time:
		if x != nil {
			return float64(x.UnixNano()), true
		}
	case render.Due:
		return float64(time.Time(x).UnixNano()), true
	case render.Ratio:
		return float64(x), true
	}
	return 0, false
}

// action is a repair key: the verb of the finding's printed command it runs, and the
// command's words for a shard (SCOPE ID appended; nil: a finding's only).
type action struct {
	key, verb string
	shardArgs []string
}

// actions are the repair keys.
var actions = []action{ //nolint:gochecknoglobals // constant table
	{"R", "reschedule", []string{"reschedule"}},
	{"S", "skip", nil},
	{"C", "compact", []string{"compact"}},
	{"K", "killswitch", []string{"killswitch", "add"}},
	{"D", "drain", nil},
}

// commandFor is the command finding f printed (its next, then its then, in order) whose
// verb is verb: "" when it printed none.
func commandFor(f doctor.Finding, verb string) string {
	for _, c := range append([]string{f.Next}, f.Then...) {
		words, err := textsafe.Words(c)
		if err != nil || len(words) < 2 || words[0] != "outboxctl" {
			continue
		}
		if verbOf(words[1:]) == verb {
			return c
		}
	}
	return ""
}

// verbOf is the command word of an outboxctl command line's words: the first word that is
// neither a flag nor a flag's value (the global flags a printed command starts with all
// take one).
func verbOf(words []string) string {
	for i := 0; i < len(words); i++ {
		w := words[i]
		if strings.HasPrefix(w, "-") {
			if !strings.Contains(w, "=") {
				i++
			}
			continue
		}
		return w
	}
	return ""
}

// CommandPath is the command of an outboxctl command line's words (after "outboxctl") as a
// context's allow names it: the verb, with its subcommand for killswitch and demo
// ("killswitch remove").
func CommandPath(words []string) string {
	verb := verbOf(words)
	if verb != "killswitch" && verb != "demo" {
		return verb
	}
	i := slices.Index(words, verb)
	if sub := verbOf(words[i+1:]); sub != "" {
		return verb + " " + sub
	}
	return verb
}
