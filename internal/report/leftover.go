package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/query"
)

// Leftover is what a listing says of rows of a retired category.
const Leftover = "leftover: Sentry no longer writes this category"

// LiveHere is what a listing says of rows of a category Sentry retired later than the
// database's catalog: on it they are live (category 26 on a May-2026 database).
const LiveHere = "live here: this database's Sentry still writes it (its replica is here)"

// LeftoverPast is what a listing says of a retired category whose era the catalog was not
// read for.
const LeftoverPast = "a leftover on a Sentry past that; live before it"

// enumColumns are the integer columns whose values EnumNotes reads, and their kind.
var enumColumns = map[string]enums.Kind{ //nolint:gochecknoglobals // constant table
	"category": enums.KindCategory, "head_category": enums.KindCategory, "categories": enums.KindCategory,
	"shard_scope": enums.KindScope,
}

// EnumNotes are the notes the enum values of res call for, one a line in value order (""
// for none): each retired category met ("category 26 ORGANIZATION_MEMBER_TEAM_UPDATE
// (retired Aug 2026, as UNUSED_EIGHT)", then "leftover: Sentry no longer writes this
// category"), and each category or scope this build does not know, with the hint to pass
// --enums; every line fits 80 columns. inspect and shards put
// them in their footers (stderr). Whether a retired category's rows are leftovers is the
// catalog's word where it has one (era.CategoryLeftover: category 26 is live on a May-2026
// database); an era not read (query.Schema{}) leaves it hedged.
func EnumNotes(reg *enums.Registry, res *query.Result, era query.Schema) string {
	if res == nil {
		return ""
	}
	seen := map[enums.Kind]map[int]bool{enums.KindCategory: {}, enums.KindScope: {}}
	for i, c := range res.Columns {
		kind, ok := enumColumns[c]
		if !ok {
			continue
		}
		for _, row := range res.Rows {
			for _, v := range ints(row[i]) {
				seen[kind][v] = true
			}
		}
	}
	var lines []string
	for _, kind := range []enums.Kind{enums.KindCategory, enums.KindScope} {
		var vals []int
		for v := range seen[kind] {
			vals = append(vals, v)
		}
		slices.Sort(vals)
		for _, v := range vals {
			if kind == enums.KindCategory {
				if c, ok := reg.CategoryByValue(v); ok {
					if c.Retired {
						// Two lines, each within 80 columns.
						lines = append(lines, fmt.Sprintf("category %d %s (retired %s)", v, c.Name, c.RetiredIn), "  "+leftoverNote(era, v))
					}
					continue
				}
			} else if _, ok := reg.ScopeByValue(v); ok {
				continue
			}
			lines = append(lines, fmt.Sprintf("%s UNKNOWN(%d): this build does not know it:", kind, v),
				"  pass --enums PATH/category.py from a newer Sentry checkout")
		}
	}
	return strings.Join(lines, "\n")
}

// leftoverNote is the second line of a retired category's note: the catalog's word, else
// the registry's (a retirement no teardown marks), else hedged.
func leftoverNote(era query.Schema, value int) string {
	leftover, known := era.CategoryLeftover(value)
	switch {
	case known && leftover:
		return Leftover
	case known:
		return LiveHere
	}
	for _, t := range query.Teardowns {
		if t.Retires && int(t.Category.Value) == value {
			return LeftoverPast
		}
	}
	return Leftover
}

// ints are the integers of a cell: one, an array's, none for NULL.
func ints(v any) []int {
	switch x := v.(type) {
	case int64:
		return []int{int(x)}
	case int32:
		return []int{int(x)}
	case int:
		return []int{x}
	case []any:
		var out []int
		for _, e := range x {
			out = append(out, ints(e)...)
		}
		return out
	}
	return nil
}

// JoinNotes joins footers, leaving out the empty ones.
func JoinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, "\n")
}
