package query

import (
	"fmt"
	"strings"
)

// Enum is an integer together with its registry name, for predicates and their notes.
type Enum struct {
	Value int
	Name  string
}

func (e *Enum) note() string { return e.Name }

// DefaultLimit caps the rows of any list that can be large.
const DefaultLimit = 20

// builder collects the values of one statement and the predicates of its WHERE clause, for
// the statements still written in Go (notYetInSQLFiles in sqltext_test.go); it goes with the
// last of them.
type builder struct {
	args  Args
	where []string
}

func newBuilder() *builder { return &builder{args: Args{}} }

// arg registers a value and returns its placeholder.
func (b *builder) arg(name string, v any, note string) string {
	b.args[name] = Arg{Value: v, Note: note}
	return "@" + name
}

func (b *builder) and(pred string) { b.where = append(b.where, pred) }

// whereClause renders the predicates one per line so each value's note sits on its line.
func (b *builder) whereClause(indent string) string {
	if len(b.where) == 0 {
		return ""
	}
	return indent + "WHERE " + strings.Join(b.where, "\n"+indent+"  AND ")
}

// cellFilter adds the control silo's cell predicate on alias when --cell is set.
func (b *builder) cellFilter(t Target, alias string) {
	if t.Control() && t.Cell != "" {
		b.and(fmt.Sprintf("%s.%s = %s", alias, t.cellCol(), b.arg("cell", t.Cell, "")))
	}
}

func limitOrDefault(n int) int {
	if n <= 0 {
		return DefaultLimit
	}
	return n
}

// selectCell is the cell column in a select list ("o.region_name, ") for the control silo.
func selectCell(t Target, alias string) string {
	if t.Control() {
		return alias + "." + t.cellCol() + ", "
	}
	return ""
}

func (b *builder) shardPredicates(t Target, k ShardKey, alias string) {
	b.cellFilter(t, alias)
	b.and(fmt.Sprintf("%s.shard_scope = %s", alias, b.arg("scope", k.Scope.Value, k.Scope.Name)))
	b.and(fmt.Sprintf("%s.shard_identifier = %s", alias, b.arg("shard", k.ID, "")))
}

// tidy drops the lines an empty optional clause leaves blank, so printed SQL has no holes.
func tidy(text string) string {
	lines := strings.Split(text, "\n")
	out := lines[:0]
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
