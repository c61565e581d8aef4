package inspect

import (
	"fmt"
	"time"

	"github.com/outboxctl/outboxctl/internal/outbox"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/report"
)

// Depth is depth's read: the total and the depth per category.
type Depth struct {
	// Estimate answers from the planner's statistics alone.
	Estimate bool
	// SmallTable is the size under which every category is counted (query.SmallTableRows).
	SmallTable int64
}

// Script is depth's one statement as run in t on --estimate, and as --print-sql prints it
// otherwise (the exact pass: without a database there are no statistics to choose by).
func (d Depth) Script(t query.Target) query.Script {
	if d.Estimate {
		return query.Script{query.DepthEstimate(t)}
	}
	return query.Script{query.Depth(t)}
}

// Read answers in s: with full (--exact), every category counted under its line; else
// by the budget (byBudget).
func (d Depth) Read(s *outbox.Snapshot, budget query.Budget, now func() time.Time, full FullPass) (Answer, error) {
	if full == nil {
		return d.byBudget(s, budget, now)
	}
	var a Answer
	stats, err := s.Stats()
	if err != nil {
		return a, err
	}
	return a, full(stats.Rows(), func() (err error) {
		a.Res, err = s.Run(query.Depth(s.Target))
		return err
	})
}

// byBudget is depth's default answer: the statistics alone when a pass would exceed the
// budget, the exact total and the statistics' split when they are fresh, every category
// counted otherwise. Its note labels an estimated answer.
func (d Depth) byBudget(s *outbox.Snapshot, budget query.Budget, now func() time.Time) (Answer, error) {
	stats, err := s.Stats()
	if err != nil {
		return Answer{}, err
	}
	rows := stats.Rows()
	switch {
	case !budget.Allows(rows):
		res, err := s.Run(query.DepthSplit(s.Target, rows, true, stats.AnalyzedAt))
		return Answer{Res: res, Note: fmt.Sprintf("estimated, the total too: %s; from the planner's %s; --exact counts every row (under --pass-timeout)",
			budget.Exceeds(rows), stats.Describe(now()))}, err
	case rows < d.SmallTable || !stats.Fresh() || s.Target.Cell != "":
		res, err := s.Run(query.Depth(s.Target))
		return Answer{Res: res}, err
	}
	total, err := outbox.RowsOf[struct {
		Depth int64 `db:"depth"`
	}](s, query.DepthTotal(s.Target))
	if err != nil {
		return Answer{}, err
	}
	if len(total) != 1 {
		return Answer{}, fmt.Errorf("depth-total returned %d rows", len(total))
	}
	res, err := s.Run(query.DepthSplit(s.Target, total[0].Depth, false, stats.AnalyzedAt))
	return Answer{Res: res, Note: fmt.Sprintf("the total is counted; the depth per category is estimated from the planner's %s; --exact counts every category",
		stats.Describe(now()))}, err
}

// DepthDoc is depth's document of a, with its note (an estimate's label) as its footer.
func (e Env) DepthDoc(a Answer) (render.Doc, error) {
	doc, err := report.Depth(e.Registry, a.Res)
	if err != nil {
		return nil, err
	}
	if a.Note != "" {
		doc[0].Footer = a.Note
	}
	return doc, nil
}
