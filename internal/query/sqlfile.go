package query

import (
	"embed"
	"fmt"
	"strconv"
	"sync"

	"github.com/outboxctl/outboxctl/internal/query/sqltemplate"
)

// The statements live in sql/<noun>.sql, one file per noun, so a DBA reads (and runs) the
// SQL as it is, not Go that assembles it; the psql scripts in sql/<noun>.psql. The syntax
// and the filling are internal/query/sqltemplate's.

//go:embed sql/*.sql sql/*.psql
var sqlFiles embed.FS

// sqlSet parses the embedded files once.
var sqlSet = sync.OnceValues(func() (*sqltemplate.Set, error) { //nolint:gochecknoglobals // parsed once
	return sqltemplate.Parse(sqlFiles, "sql/*.sql", "sql/*.psql")
})

// Fill is the SQL of statement name with idents' values in its TEMPLATE slots and only the
// fragments named in on kept (see sqltemplate).
func Fill(name string, idents map[string]string, on ...string) (string, error) {
	set, err := sqlSet()
	if err != nil {
		return "", err
	}
	return set.Fill(name, idents, on...)
}

// part is statement name filled, as a part for another statement's region (see
// sqltemplate.Part).
func part(name string, idents map[string]string, regions map[string]sqltemplate.Part, on ...string) (sqltemplate.Part, error) {
	set, err := sqlSet()
	if err != nil {
		return sqltemplate.Part{}, err
	}
	return set.Part(name, idents, regions, on...)
}

// FillScript is the psql script name with its regions filled (see sqltemplate).
func FillScript(name string, idents map[string]string) (string, error) {
	set, err := sqlSet()
	if err != nil {
		return "", err
	}
	return set.FillScript(name, idents)
}

// sqlStatement is a Statement whose text comes from the SQL files: an error filling it is
// kept and returned by Render and Bind, where every caller already handles errors.
func sqlStatement(name string, doc []string, idents map[string]string, args Args, on ...string) Statement {
	return regionStatement(name, doc, idents, nil, args, on...)
}

// regionStatement is sqlStatement with its regions' values, parts of the files' statements.
func regionStatement(name string, doc []string, idents map[string]string, regions map[string]sqltemplate.Part, args Args, on ...string) Statement {
	p, err := part(name, idents, regions, on...)
	if args == nil {
		args = Args{}
	}
	return Statement{Name: name, Doc: doc, Text: p.String(), Args: args, err: err, part: p}
}

// siloStatement is a statement written twice, once per silo (sql/shards.sql and
// sql/shards_control.sql): the control silo's form is the file statement name-control,
// printed and reported as name all the same, so the output does not change with the file.
// Its identifiers are the target's table, and its cell column in the control silo, and the
// regions given; its fragments on, and the cell fragment (--cell) in the control silo.
func siloStatement(name string, t Target, doc []string, regions map[string]sqltemplate.Part, args Args, on ...string) Statement {
	file, idents := name, t.tableIdent()
	if t.Control() {
		file, idents = name+"-control", t.idents()
		on = append(on, t.cellFragment()...)
	}
	st := regionStatement(file, doc, idents, regions, args, on...)
	st.Name = name
	return st
}

// targetIdents are the identifiers a Target decides: its table and its cell column.
func (t Target) idents() map[string]string {
	return map[string]string{"table": t.From(), "cell_column": t.cellCol()}
}

// tableIdent is the target's table alone, for a statement that never names the cell column.
func (t Target) tableIdent() map[string]string { return map[string]string{"table": t.From()} }

// controlFragments turns on the control fragment, the control silo's cell column, for a
// control target.
func (t Target) controlFragments() []string {
	if t.Control() {
		return []string{"control"}
	}
	return nil
}

// controlAndCell is controlFragments and cellFragment, for a statement that has both.
func (t Target) controlAndCell() []string { return append(t.controlFragments(), t.cellFragment()...) }

// cellArgs binds @cell when the cell fragment is on.
func (t Target) cellArgs() Args {
	if t.Control() && t.Cell != "" {
		return Args{"cell": {Value: t.Cell}}
	}
	return Args{}
}

// cellFragment turns on the cell fragment, the control silo's --cell filter, when it is set.
func (t Target) cellFragment() []string {
	if t.Control() && t.Cell != "" {
		return []string{"cell"}
	}
	return nil
}

// numberedPart fills part name for the i-th branch of a list (one per outbox, say) and
// numbers its placeholders (@t becomes @t0, @t1, …), so each branch keeps its own values;
// every branch but the first turns on the part's "first" choice off, which is where its
// UNION ALL is written. The result goes into the parent's TEMPLATE_BEGIN region.
func numberedPart(name string, i int, idents map[string]string, args Args, on ...string) (sqltemplate.Part, Args, error) {
	if i == 0 {
		on = append(on, "first")
	}
	p, err := part(name, idents, nil, on...)
	if err != nil {
		return p, nil, err
	}
	out := Args{}
	p, err = p.Rename(func(param string) string {
		n := param + strconv.Itoa(i)
		if a, ok := args[param]; ok {
			out[n] = a
		}
		return n
	})
	return p, out, err
}

// region is s's text for another statement's region: the part the files' statement gave
// it, the one thing a region takes (an error when s could not be filled).
func (s Statement) region() (sqltemplate.Part, error) {
	if s.err != nil {
		return sqltemplate.Part{}, s.err
	}
	if s.part.String() != s.Text {
		return sqltemplate.Part{}, fmt.Errorf("query %s: its text is not the files' statement's, it cannot fill a region", s.Name)
	}
	return s.part, nil
}
