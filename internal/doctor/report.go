package doctor

import (
	"fmt"
	"strings"

	"github.com/outboxctl/outboxctl/internal/render"
)

// FindingRow is one finding as scripts read it (-o json gives an array of them): its json
// tags are the keys of each finding in JSON, JSONL and CSV. Evidence is an object of the
// finding's numbers, its keys the check's own.
type FindingRow struct {
	Check    string        `json:"check"`
	Severity render.Styled `json:"severity"`
	Summary  string        `json:"summary"`
	Evidence Evidence      `json:"evidence"`
	// Next are the commands to run next, first the one to run ([] when none).
	Next render.Commands `json:"next"`
}

func tone(s Severity) render.Tone {
	switch s {
	case Crit:
		return render.ToneBad
	case Warn:
		return render.ToneWarn
	case OK:
	}
	return render.ToneGood
}

// Commands are the finding's next commands, first the one to run: a list in JSON (empty
// when there is none), a "next:" block on a terminal.
func (f Finding) Commands() render.Commands {
	if f.Next == "" {
		return render.Commands{}
	}
	return append(render.Commands{f.Next}, f.Then...)
}

// Table is the findings as one list: what scripts read (-o json gives an array of
// {check, severity, summary, evidence, next}).
func Table(fs []Finding) render.Doc {
	rows := make([]FindingRow, 0, len(fs))
	for _, f := range fs {
		rows = append(rows, FindingRow{Check: f.Check, Severity: render.Styled{Text: f.Severity.String(), Tone: tone(f.Severity)}, Summary: f.Summary, Evidence: f.Evidence, Next: f.Commands()})
	}
	return render.Doc{{Name: "findings", Title: "Findings", Table: render.TableOf(rows)}}
}

// Cards is the findings for a person: grouped by severity, most severe first, each with its
// evidence one line per number and the next command.
func Cards(fs []Finding) render.Doc {
	var doc render.Doc
	for _, f := range fs {
		card := []render.Field{{Key: "severity", Value: render.Styled{Text: f.Severity.String(), Tone: tone(f.Severity)}}}
		for _, kv := range f.Evidence {
			card = append(card, render.Field{Key: kv.Key, Value: cardValue(kv.Value)})
		}
		if f.Next != "" {
			card = append(card, render.Field{Key: "next", Value: f.Commands()})
		}
		doc = append(doc, render.Section{
			Name:  f.Check,
			Title: fmt.Sprintf("%s  %s: %s", strings.ToUpper(f.Severity.String()), f.Check, f.Summary),
			Card:  card,
		})
	}
	return doc
}

func cardValue(v any) any {
	switch v.(type) {
	case nil:
		return "-"
	case []int64, float64, bool:
		return plainValue(v)
	}
	return v
}

// Tally sums the findings up in one line: "1 critical, 2 warnings, 7 ok".
func Tally(fs []Finding) string {
	return fmt.Sprintf("%d critical, %d warning(s), %d ok", Count(fs, Crit), Count(fs, Warn), Count(fs, OK))
}

// CompactColumns are the compact table's columns, one line a finding, headed severity,
// check, target, summary, next (compactLabels). The names are not those of the wide
// tables' columns so that fitting a terminal drops none of them (render's defaultPriority
// ranks "summary" and "next" by name): the summary is cut instead.
var CompactColumns = []string{"severity", "check", "about", "finding", "steps"} //nolint:gochecknoglobals // constant list

var compactLabels = map[string]string{"about": "target", "finding": "summary", "steps": "next"} //nolint:gochecknoglobals // constant table

// Compact is the findings' first screen for a person: one table, a line per finding that
// is not ok (severity, check, target, a short summary, the number of its next commands),
// then the next commands in full under those numbers, so a cut table never cuts a command
// to paste. The evidence is in Cards (-o wide) and -o json. footer says how many checks
// were ok and how to see the details.
func Compact(fs []Finding, details string) render.Doc {
	t := &render.Table{Columns: CompactColumns, Labels: compactLabels}
	var next []render.Field
	ok := 0
	worst := Worst(fs)
	for _, f := range fs {
		if f.Severity == OK {
			ok++
			if worst != OK { // all ok: the table lists what was checked
				continue
			}
		}
		ref := "-"
		if f.Next != "" {
			next = append(next, render.Field{Key: fmt.Sprintf("[%d]", len(next)+1), Value: f.Commands()})
			ref = fmt.Sprintf("[%d]", len(next))
		}
		t.Rows = append(t.Rows, []any{render.Styled{Text: f.Severity.String(), Tone: tone(f.Severity)}, f.Check, f.target(), f.short(), ref})
	}
	footer := fmt.Sprintf("%d check(s) ok; every finding's evidence: %s", ok, details)
	if worst == OK {
		footer = "no problem found; every finding's evidence: " + details
	}
	doc := render.Doc{{Name: "findings", Table: t}}
	if len(next) > 0 {
		doc = append(doc, render.Section{Name: "next", Title: "next", Card: next})
	}
	doc[len(doc)-1].Footer = footer
	return doc
}

// target is what the finding is about: its Target, or the table of its evidence.
func (f Finding) target() string {
	if f.Target != "" {
		return f.Target
	}
	for _, kv := range f.Evidence {
		if kv.Key == "table" || kv.Key == "slot" || kv.Key == "pid" {
			return fmt.Sprint(kv.Value)
		}
	}
	return "-"
}

// short is the summary for the compact table: Short, or Summary without its table prefix.
func (f Finding) short() string {
	if f.Short != "" {
		return f.Short
	}
	if tbl := f.target(); strings.HasPrefix(f.Summary, tbl+": ") {
		return strings.TrimPrefix(f.Summary, tbl+": ")
	}
	return f.Summary
}
