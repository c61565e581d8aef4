package sqltemplate

import (
	"strings"
	"testing"
	"testing/fstest"
)

const fillFixture = `SELECT /* IF: control */o./* TEMPLATE: cell_column */region_name, /* END: control */o.id
  FROM /* TEMPLATE: table */sentry_controloutbox o
     /* IF: scope */WHERE o.shard_scope = @scope/* END: scope */
       /* IF: shard */AND o.shard_identifier = @shard/* END: shard */
 ORDER BY o.id /* TEMPLATE: direction */DESC`

func TestFillKeepsAndRemovesFragments(t *testing.T) {
	t.Parallel()
	idents := map[string]string{"table": `"Demo".t`, "cell_column": "cell_name", "direction": "ASC"}
	for _, tt := range []struct {
		on   []string
		want string
	}{
		{nil, "SELECT o.id\n  FROM \"Demo\".t o\n ORDER BY o.id ASC"},
		{[]string{"control", "scope", "shard"}, "SELECT o.cell_name, o.id\n  FROM \"Demo\".t o\n     WHERE o.shard_scope = @scope\n       AND o.shard_identifier = @shard\n ORDER BY o.id ASC"},
		// A removed WHERE is handed to the AND below it, at the same column.
		{[]string{"shard"}, "SELECT o.id\n  FROM \"Demo\".t o\n     WHERE o.shard_identifier = @shard\n ORDER BY o.id ASC"},
		{[]string{"scope"}, "SELECT o.id\n  FROM \"Demo\".t o\n     WHERE o.shard_scope = @scope\n ORDER BY o.id ASC"},
	} {
		got, err := fill("x", fillFixture, idents, tt.on)
		if err != nil || got != tt.want {
			t.Errorf("fill(%v) = %q, %v\nwant %q", tt.on, got, err, tt.want)
		}
	}
}

func TestFillErrors(t *testing.T) {
	t.Parallel()
	idents := map[string]string{"table": "t", "cell_column": "c", "direction": "ASC"}
	for _, tt := range []struct {
		name, text string
		idents     map[string]string
		on         []string
		want       string
	}{
		{"missing value", fillFixture, map[string]string{"table": "t"}, []string{"control"}, "no value for template cell_column, direction"},
		{"unused value", fillFixture, map[string]string{"table": "t", "cell_column": "c", "direction": "ASC", "schema": "s"}, nil, "value for schema is not used"},
		{"unknown fragment", fillFixture, idents, []string{"cell"}, "fragment cell is not in the statement"},
		{"unclosed fragment", "SELECT /* IF: a */1", nil, []string{"a"}, "fragment a has no /* END: a */"},
		{"leftover marker", "SELECT 1 /* TEMPLATE: table */", nil, nil, "left after filling"},
		{"stray end", "SELECT 1 /* END: a */", nil, nil, "left after filling"},
	} {
		if _, err := fill("x", tt.text, tt.idents, tt.on); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
	if _, err := (&Set{}).Fill("no-such-statement", nil); err == nil || !strings.Contains(err.Error(), `no statement "no-such-statement"`) {
		t.Errorf("unknown statement: %v", err)
	}
}

func TestParseSQLFiles(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{"sql/a.sql": {Data: []byte("-- file comment\n\n-- name: a\n-- what a reads\nSELECT 1;\n\n-- name: b\nSELECT 2;\n")}}
	got, err := parseSQLFiles(fsys, "sql/*.sql")
	if err != nil || got["a"] != "SELECT 1" || got["b"] != "SELECT 2" || len(got) != 2 {
		t.Fatalf("parse = %q, %v", got, err)
	}
	for name, data := range map[string]string{
		"duplicate": "-- name: a\nSELECT 1;\n-- name: a\nSELECT 2;\n",
		"empty":     "-- name: a\n-- only a comment\n",
		"malformed": "-- name: Not A Name\nSELECT 1;\n",
	} {
		if _, err := parseSQLFiles(fstest.MapFS{"sql/a.sql": {Data: []byte(data)}}, "sql/*.sql"); err == nil {
			t.Errorf("%s: parsed without error", name)
		}
	}
}

func TestFillChoosesOneForm(t *testing.T) {
	t.Parallel()
	// As written the first form runs; the second is a comment, which PostgreSQL nests.
	const text = `SELECT /* EITHER: control */o./* TEMPLATE: cell_column */region_name::text/* OR: NULL::text */ AS cell,
       /* EITHER: capped */least(count(*), @cap)/* OR: /* EITHER: fast */count(*)/* OR: count(DISTINCT o.id) */ */ AS n
  FROM t o ORDER BY o.id /* EITHER: newest */DESC/* OR: ASC */`
	idents := map[string]string{"cell_column": "cell_name"}
	for _, tt := range []struct {
		on   []string
		want string
	}{
		{[]string{"control", "capped", "newest"}, "SELECT o.cell_name::text AS cell,\n       least(count(*), @cap) AS n\n  FROM t o ORDER BY o.id DESC"},
		{[]string{"fast"}, "SELECT NULL::text AS cell,\n       count(*) AS n\n  FROM t o ORDER BY o.id ASC"},
		{nil, "SELECT NULL::text AS cell,\n       count(DISTINCT o.id) AS n\n  FROM t o ORDER BY o.id ASC"},
	} {
		got, err := fill("x", text, idents, tt.on)
		if err != nil || got != tt.want {
			t.Errorf("fill(%v) = %q, %v\nwant %q", tt.on, got, err, tt.want)
		}
	}
	for _, tt := range []struct{ text, want string }{
		{"SELECT /* EITHER: a */1", "choice a has no /* OR: … */"},
		{"SELECT /* EITHER: a */1/* OR: 2", "never closed"},
		{"SELECT /* EITHER: a *//* EITHER: b */1/* OR: 2 *//* OR: 3 */", "nests a choice in its first form"},
		{"SELECT 1/* OR: 2 */", "left after filling"},
	} {
		if _, err := fill("x", tt.text, nil, nil); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want %q", tt.text, err, tt.want)
		}
	}
	if _, err := fill("x", "SELECT /* EITHER: a */1/* OR: 2 */", nil, []string{"b"}); err == nil {
		t.Error("an unknown choice name was accepted")
	}
}

func TestFillRegion(t *testing.T) {
	t.Parallel()
	const text = "DELETE FROM /* TEMPLATE: table */t d\n WHERE d.id IN (\n/* TEMPLATE_BEGIN: selected */SELECT 1/* TEMPLATE_END: selected */\n )"
	// The region's value is finished SQL: its markers-like text and blank lines stay as given.
	sel := "SELECT o.id\n\n  FROM t o /* IF: x */"
	got, err := fill("x", text, map[string]string{"table": "u", "selected": sel}, nil)
	if want := "DELETE FROM u d\n WHERE d.id IN (\n" + sel + "\n )"; err != nil || got != want {
		t.Errorf("fill = %q, %v\nwant %q", got, err, want)
	}
	if _, err := fill("x", text, map[string]string{"table": "u"}, nil); err == nil || !strings.Contains(err.Error(), "no value for template selected") {
		t.Errorf("missing region value: %v", err)
	}
	if _, err := fill("x", "SELECT /* TEMPLATE_BEGIN: a */1/* TEMPLATE_END: b */", map[string]string{"a": "2"}, nil); err == nil {
		t.Error("a region closed by another name was accepted")
	}
}

// TestFillRemembered: Fill remembers each (statement, identifiers, fragments) on its own: the
// same statement filled with other identifiers or fragments is filled afresh, and fragments
// given in another order are the same fill.
func TestFillRemembered(t *testing.T) {
	t.Parallel()
	set, err := Parse(fstest.MapFS{"q.sql": {Data: []byte("-- name: q\nSELECT 1/* IF: a */, a/* END: a *//* IF: b */, b/* END: b */ FROM /* TEMPLATE: table */t\n")}}, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		table string
		on    []string
		want  string
	}{
		{"x", nil, "SELECT 1 FROM x"},
		{"y", nil, "SELECT 1 FROM y"},
		{"x", []string{"a"}, "SELECT 1, a FROM x"},
		{"x", []string{"a", "b"}, "SELECT 1, a, b FROM x"},
		{"x", []string{"b", "a"}, "SELECT 1, a, b FROM x"},
		{"x", nil, "SELECT 1 FROM x"},
	} {
		got, err := set.Fill("q", map[string]string{"table": c.table}, c.on...)
		if err != nil || got != c.want {
			t.Fatalf("case %d: %q %v, want %q", i, got, err, c.want)
		}
	}
}
