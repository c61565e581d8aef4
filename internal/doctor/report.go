package doctor

import (
	"fmt"
	"strings"

	"github.com/outboxctl/outboxctl/internal/render"
)

// Columns are the keys of each finding in JSON, JSONL and CSV.
var Columns = []string{"check", "severity", "summary", "evidence", "next"} //nolint:gochecknoglobals // constant list

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
	t := &render.Table{Columns: Columns}
	for _, f := range fs {
		t.Rows = append(t.Rows, []any{f.Check, render.Styled{Text: f.Severity.String(), Tone: tone(f.Severity)}, f.Summary, f.Evidence, f.Commands()})
	}
	return render.Doc{{Name: "findings", Title: "Findings", Table: t}}
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
