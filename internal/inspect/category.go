package inspect

import (
	"fmt"
	"slices"
	"time"

	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/report"
)

// FullPass runs pass, a whole-table pass over ~rows rows, under the command's progress
// line (cmd's --pass-timeout snapshot draws it).
type FullPass func(rows int64, pass func() error) error

// Answer is what a read under a pass budget answered: its rows, the label of an estimate
// ("" for a count) and the catalog it was read on (for the leftover categories' note).
type Answer struct {
	Res  *query.Result
	Note string
	Era  query.Schema
}

// Category is inspect category's read of cat: its distinct shards and objects counted over
// its first rows, or over every row (Exact).
type Category struct {
	Cat   query.Enum
	Exact bool
}

// Statement is the category's count in t.
func (c Category) Statement(t query.Target) query.Statement {
	if c.Exact {
		return query.CategoryDepthExact(t, c.Cat)
	}
	return query.CategoryDepth(t, c.Cat)
}

// Read answers in s: with full (--full-pass), the whole table under its line; else the
// count when the planner's estimate of the table fits budget, the category's share of the
// statistics, labelled so, when it does not.
func (c Category) Read(s *outbox.Snapshot, budget query.Budget, now func() time.Time, full FullPass) (Answer, error) {
	a := Answer{Era: s.Schema}
	stats, err := s.Stats()
	if err != nil {
		return a, err
	}
	count := func() error {
		return s.JITPass(stats.Rows(), func() (err error) {
			a.Res, err = s.Run(c.Statement(s.Target))
			return err
		})
	}
	if full != nil {
		return a, full(stats.Rows(), count)
	}
	if !budget.Allows(stats.Rows()) {
		a.Note = fmt.Sprintf("estimated: %s; pending alone, from the planner's %s (the whole table's, whatever --cell says); --full-pass reads the table (under --pass-timeout)",
			budget.Exceeds(stats.Rows()), stats.Describe(now()))
		a.Res, err = s.Run(query.CategoryEstimate(s.Target, c.Cat, stats.Rows(), stats.AnalyzedAt))
		return a, err
	}
	return a, count()
}

// CategoryDoc is inspect category's document of a, read in t; no row is a note.
func (e Env) CategoryDoc(t query.Target, c Category, a Answer) (render.Doc, error) {
	if len(a.Res.Rows) == 0 && !e.Printer.Structured() {
		e.Printer.Notef("no pending %s rows in %s", c.Cat.Name, t.Describe())
	}
	var tbl *render.Table
	var err error
	if a.Note != "" {
		tbl, _, err = report.TableOf[query.CategoryEstimateRow](e.Registry, a.Res)
	} else {
		tbl, _, err = report.TableOf[query.CategoryDepthRow](e.Registry, a.Res)
		if err == nil {
			tbl = atLeastCounts(tbl)
		}
	}
	if err != nil {
		return nil, err
	}
	return render.Doc{{Name: "category", Table: tbl, Footer: report.JoinNotes(a.Note, report.EnumNotes(e.Registry, a.Res, a.Era))}}, nil
}

// atLeastCounts shows a person the distinct counts (shards, objects) of a category that
// were counted over its first rows only as "at least N": on a terminal and in Markdown the
// numbers are replaced by columns of the same label saying so; scripts keep the numbers
// and distinct_exact.
func atLeastCounts(t *render.Table) *render.Table {
	exact := slices.Index(t.Columns, "distinct_exact")
	if exact < 0 {
		return t
	}
	for _, name := range []string{"shards", "objects"} {
		i := slices.Index(t.Columns, name)
		if i < 0 {
			continue
		}
		human := name + "_shown"
		t.Columns = slices.Insert(t.Columns, i+1, human)
		for r, row := range t.Rows {
			v := row[i]
			if b, ok := row[exact].(bool); ok && !b {
				v = fmt.Sprintf("at least %v", row[i])
			}
			t.Rows[r] = slices.Insert(row, i+1, v)
		}
		if exact > i {
			exact++
		}
		t.MachineOnly = withKey(t.MachineOnly, name)
		t.HumanOnly = withKey(t.HumanOnly, human)
		if t.Labels == nil {
			t.Labels = map[string]string{}
		}
		t.Labels[human] = name
	}
	return t
}

func withKey(m map[string]bool, k string) map[string]bool {
	if m == nil {
		m = map[string]bool{}
	}
	m[k] = true
	return m
}
