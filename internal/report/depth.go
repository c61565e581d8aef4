package report

import (
	"slices"

	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// Depth is outboxctl depth's document from a Depth or DepthEstimate result: the total
// first, then each category with its name. Its rows are read by name (query.DepthRow), so
// a statement that lost its category column is an error rather than a mislabelled row.
func Depth(reg *enums.Registry, res *query.Result) (render.Doc, error) {
	tbl, rows, err := TableOf[query.DepthRow](reg, res)
	if err != nil {
		return nil, err
	}
	// The total's category is NULL, so the decorator named it nothing: name it here, in the
	// column the decorator added, found by name.
	if name := slices.Index(tbl.Columns, nameColumns["category"]); name >= 0 {
		for i, r := range rows {
			if r.Category == nil {
				tbl.Rows[i][name] = "(total)"
			}
		}
	}
	return render.Doc{{Name: "depth", Table: tbl}}, nil
}
