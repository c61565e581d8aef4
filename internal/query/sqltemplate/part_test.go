package sqltemplate

import (
	"strings"
	"testing"
	"testing/fstest"
)

const partFiles = `-- name: outer
SELECT o.id FROM t o WHERE o.id IN (/* TEMPLATE_BEGIN: ids */SELECT 1/* TEMPLATE_END: ids */)

-- name: inner
SELECT x.id FROM /* TEMPLATE: table */t x WHERE x.id = @id AND '@not' = '@not' -- @nor
`

// TestRegionsHoldOnlyParts holds the rule sqltemplate's doc states: a statement's region
// holds SQL of the files. A value given as a string is refused; a Part only comes from a
// statement filled, renamed or glued with whitespace and commas.
func TestRegionsHoldOnlyParts(t *testing.T) {
	t.Parallel()
	set, err := Parse(fstest.MapFS{"sql/q.sql": {Data: []byte(partFiles)}}, "sql/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	// SQL written in Go, handed to the region as a string: refused.
	if _, err := set.Fill("outer", map[string]string{"ids": "SELECT 2"}); err == nil || !strings.Contains(err.Error(), "region ids is given a string") {
		t.Fatalf("a string in a region: err = %v", err)
	}
	inner, err := set.Part("inner", map[string]string{"table": "s.t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	renamed, err := inner.Rename(func(p string) string { return p + "0" })
	if err != nil {
		t.Fatal(err)
	}
	if want := "SELECT x.id FROM s.t x WHERE x.id = @id0 AND '@not' = '@not' -- @nor"; renamed.String() != want {
		t.Fatalf("Rename = %q, want %q (placeholders only, not quotes or comments)", renamed, want)
	}
	if _, err := inner.Rename(func(string) string { return "1; DROP TABLE t" }); err == nil {
		t.Fatal("Rename to SQL succeeded")
	}
	got, err := set.FillRegions("outer", nil, map[string]Part{"ids": Join(",\n", []Part{renamed})})
	if err != nil || !strings.Contains(got, "IN (SELECT x.id FROM s.t x WHERE x.id = @id0") {
		t.Fatalf("FillRegions = %q, %v", got, err)
	}
	for _, glue := range []string{"UNION ALL", "1", ") OR (true"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Sep(%q) did not panic: only whitespace and commas go between parts", glue)
				}
			}()
			Sep(glue)
		}()
	}
	if _, err := inner.Commented("/* a */ b */ "); err == nil {
		t.Error("Commented took a comment that closes early")
	}
	if c, err := inner.Commented("/* outboxctl skip: why */ "); err != nil || !strings.HasPrefix(c.String(), "/* outboxctl skip: why */ SELECT") {
		t.Errorf("Commented = %q, %v", c, err)
	}
}
