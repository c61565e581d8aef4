package query

import (
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// colReadAllowed are the files that may still read a Result cell by position, with why:
// none. A row is read into a struct by Rows[T] (or a RowReader), by column name, so a
// missing column, a NULL or a value of another type is an error, never a silent zero.
// Result.Col itself stays for what is not a row read: finding a column whose name the target
// decides, to rename it (Result.ColumnAs), and RowReader's own planning.
var colReadAllowed = map[string]string{} //nolint:gochecknoglobals // test table

// TestNoColTypeAssertedReads fails on a new row[res.Col("x")].(T): a cell read by a column
// index Col found, type-asserted, where Rows[T] reads rows typed (#38).
func TestNoColTypeAssertedReads(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if _, ok := colReadAllowed[filepath.ToSlash(rel)]; ok {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		found = append(found, colTypeAssertions(t, rel, src)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s: a cell read by Result.Col and a type assertion; read the rows with query.Rows[T] (a struct with db tags)", f)
	}
}

// TestColTypeAssertionsFound holds the detector to the shapes it must see.
func TestColTypeAssertionsFound(t *testing.T) {
	t.Parallel()
	src := `package p
func f(res *Result, row []any) {
	a, _ := row[res.Col("payload")].(string)
	i := res.Col("total")
	b, _ := res.Rows[0][i].(int64)
	col := map[string]int{}
	col["id"] = res.Col("id")
	c, _ := row[col["id"]].(int64)
	d, e := res.Col("depth"), -1
	g, _ := row[d].(int64)
	h := row[e] // no assertion: not a read this test looks for
	_, _, _, _, _ = a, b, c, g, h
}`
	if got := colTypeAssertions(t, "p.go", []byte(src)); len(got) != 4 {
		t.Fatalf("found %v, want the 4 reads", got)
	}
}

// colTypeAssertions are the positions in src of type assertions of a cell indexed by a
// Col call, by a variable a Col call set, or by a map entry a Col call set, within a function.
func colTypeAssertions(t *testing.T, name string, src []byte) []string {
	t.Helper()
	fset := gotoken.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, 0)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	isCol := func(e ast.Expr) bool {
		c, ok := e.(*ast.CallExpr)
		if !ok || len(c.Args) != 1 {
			return false
		}
		s, ok := c.Fun.(*ast.SelectorExpr)
		return ok && s.Sel.Name == "Col"
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		fn, ok := n.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			return true
		}
		vars := map[string]bool{}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok || len(as.Lhs) != len(as.Rhs) {
				return true
			}
			for i, rhs := range as.Rhs {
				if !isCol(rhs) {
					continue
				}
				switch l := as.Lhs[i].(type) {
				case *ast.Ident:
					vars[l.Name] = true
				case *ast.IndexExpr:
					if id, ok := l.X.(*ast.Ident); ok {
						vars[id.Name] = true
					}
				}
			}
			return true
		})
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			ta, ok := n.(*ast.TypeAssertExpr)
			if !ok {
				return true
			}
			ix, ok := ta.X.(*ast.IndexExpr)
			if !ok {
				return true
			}
			hit := isCol(ix.Index)
			switch i := ix.Index.(type) {
			case *ast.Ident:
				hit = hit || vars[i.Name]
			case *ast.IndexExpr:
				if id, ok := i.X.(*ast.Ident); ok {
					hit = hit || vars[id.Name]
				}
			}
			if hit {
				out = append(out, fset.Position(ta.Pos()).String())
			}
			return true
		})
		return false
	})
	return out
}
