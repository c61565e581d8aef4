package cmd

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The repair path's rules (#38): cmd holds no transaction, every mutation goes through the
// one runner (runMutation, cmd/mutation.go), and a plan's lines are built by internal/repair.
// The allow-lists below name the files not yet moved; they shrink, never grow.

// holdsTransactions lists the cmd files that still open a transaction or hold one: the
// mutations not yet in internal/repair (the reads open theirs in internal/outbox).
var holdsTransactions = map[string]bool{} //nolint:gochecknoglobals // allow-list: empty, and stays so

// txNames are the identifiers of internal/db a holder of a transaction uses: its
// transaction functions, and every alias it declares of a pgx type (db.Tx is pgx.Tx, so a
// guard on the pgx import alone sees nothing), read from internal/db's source so a new
// alias is guarded too.
func txNames(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{"ReadTx": true, "ReadTxFirst": true, "WriteTx": true}
	fset := token.NewFileSet()
	// parser.ParseDir is deprecated (it ignores build tags); internal/db has none, so its
	// non-test files are parsed one by one.
	entries, err := os.ReadDir("../internal/db")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join("../internal/db", e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	aliases := 0
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || !ts.Assign.IsValid() {
				return true
			}
			if sel, ok := ts.Type.(*ast.SelectorExpr); ok {
				if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "pgx" {
					names[ts.Name.Name] = true
					aliases++
				}
			}
			return true
		})
	}
	if !names["Tx"] || aliases < 2 {
		t.Fatalf("internal/db declares %d pgx aliases (%v): has db.Tx moved?", aliases, names)
	}
	return names
}

// TestCmdHoldsNoTransaction: no file of cmd/ (outside holdsTransactions) names db.Tx, any
// other alias of a pgx type, or a transaction function: a command calls a service, which
// opens its own.
func TestCmdHoldsNoTransaction(t *testing.T) {
	t.Parallel()
	banned := txNames(t)
	_, files := cmdFiles(t)
	for name, f := range files {
		if holdsTransactions[name] {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "db" && banned[sel.Sel.Name] {
					t.Errorf("cmd/%s uses db.%s: transactions belong to the services (internal/repair, internal/outbox)", name, sel.Sel.Name)
				}
			}
			return true
		})
	}
	for name := range holdsTransactions {
		if _, err := os.Stat(name); err != nil {
			t.Errorf("holdsTransactions names %s, which is gone: drop it from the list", name)
		}
	}
}

// TestMutationsGoThroughTheRunner: only runMutation asks for a confirmation, shows a plan
// (repair.ShowPlan: a plan shown without a prompt, a dry run's or a refusal's, is the runner's
// too) and only internal/repair builds a plan (a repair.Plan literal), with no exception
// (demo seed and drop, the last to confirm themselves, are repair.DemoSeed and DemoDrop);
// every mutation's file calls runMutation.
func TestMutationsGoThroughTheRunner(t *testing.T) {
	t.Parallel()
	_, files := cmdFiles(t)
	for name, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "confirm" && name != "mutation.go" {
					t.Errorf("cmd/%s calls confirm: a mutation goes through runMutation (cmd/mutation.go)", name)
				}
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "ShowPlan" && name != "mutation.go" && name != "confirm.go" {
					t.Errorf("cmd/%s shows a plan (repair.ShowPlan): a mutation goes through runMutation (cmd/mutation.go), which shows it", name)
				}
			case *ast.CompositeLit:
				if sel, ok := n.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Plan" {
					if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "repair" {
						t.Errorf("cmd/%s builds a repair.Plan: a plan's lines are the service's (internal/repair)", name)
					}
				}
			}
			return true
		})
	}
	runner := files["mutation.go"]
	if runner == nil || !strings.Contains(fileText(t, "mutation.go"), "func runMutation(") {
		t.Fatal("cmd/mutation.go has no runMutation")
	}
	for _, name := range []string{"repair.go", "killswitch.go", "bulk.go", "mailbox_repair.go", "restore.go", "replicate.go", "drain.go", "drain_bulk.go", "demo.go"} {
		if !strings.Contains(fileText(t, name), "runMutation(") {
			t.Errorf("cmd/%s: its mutations no longer go through runMutation", name)
		}
	}
}

// maxFactoryFields ratchets the factory's fields (cmd/factory.go) down: #38's target is 12
// (gh's Factory); it may only go down.
const maxFactoryFields = 11

// TestFactoryFields keeps the factory at or under maxFactoryFields fields.
func TestFactoryFields(t *testing.T) {
	t.Parallel()
	_, files := cmdFiles(t)
	n := -1
	for _, d := range files["factory.go"].Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, s := range gd.Specs {
			if ts, ok := s.(*ast.TypeSpec); ok && ts.Name.Name == "factory" {
				n = 0
				for _, f := range ts.Type.(*ast.StructType).Fields.List {
					n += max(len(f.Names), 1)
				}
			}
		}
	}
	if n < 0 || n > maxFactoryFields {
		t.Fatalf("factory has %d fields, at most %d (and #38's target is 12): a new dependency belongs in a service", n, maxFactoryFields)
	}
}

func fileText(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// hop is one call on skip --category's path to its SQL: in file, the function fn (a method
// as Recv.Name) calls callee (by name: through an interface or a func value, the hop says
// what binds it).
type hop struct{ file, fn, callee string }

// skipCategoryPath is skip --category's path from its run function (what the runF seam
// replaces, gh's listRun) to the statement it runs, as docs/architecture.md draws it. A call
// is one hop between the project's functions; a function literal counts as the function that
// writes it, and internal/db's transaction helper (RunWriteTx, between runBatch and the
// batch) as plumbing, as gh's count of `label list` stops at its API client.
var skipCategoryPath = []hop{ //nolint:gochecknoglobals // the documented path
	{"repair.go", "runSkipCategory", "runMutation"},
	{"mutation.go", "runMutation", "Apply"}, // m: the *repair.Bulk bulkMutation built
	{"../internal/repair/bulk.go", "Bulk.Apply", "Run"},
	{"../internal/drain/bulk.go", "Bulk.Run", "runBatch"},
	{"../internal/drain/bulk.go", "Bulk.runBatch", "batch"},          // BulkArchive.Batch's, set up by repair.Bulk.setUp
	{"../internal/drain/bulk.go", "BulkArchive.Batch", "rowsOf"},     // query.BulkSkip.Rows, a method value (repair.Bulk.rowsOf)
	{"../internal/query/bulk.go", "BulkSkip.Rows", "bulk-skip-rows"}, // the statement of sql/bulk.sql
}

// TestSkipCategoryPath: skip --category reaches its SQL in at most 6 calls in at most 5
// files (#38; it took ~20 in 13), each hop of the documented path is a call the code makes,
// and the func values on it are bound as documented.
func TestSkipCategoryPath(t *testing.T) {
	t.Parallel()
	files := map[string]bool{}
	for _, h := range skipCategoryPath {
		files[h.file] = true
		body := funcBody(t, h.file, h.fn)
		ok := calls(body, h.callee)
		if strings.Contains(h.callee, "-") { // a statement's name: the string it is loaded by
			ok = mentions(body, h.callee)
		}
		if !ok {
			t.Errorf("%s: %s no longer calls %s: update skipCategoryPath and docs/architecture.md's path (at most 6 calls in 5 files)", h.file, h.fn, h.callee)
		}
	}
	if calls := len(skipCategoryPath) - 1; calls > 6 || len(files) > 5 {
		t.Errorf("skip --category reaches its SQL in %d calls in %d files: at most 6 in 5", calls, len(files))
	}
	// The bindings of the hops through an interface or a func value.
	for _, b := range []hop{
		{"repair.go", "runSkipCategory", "bulkMutation"},
		{"bulk.go", "bulkMutation", "Bulk"},                          // &repair.Bulk{…}
		{"../internal/repair/bulk.go", "Bulk.setUp", "Batch"},        // ba.Batch(b.rowsOf(…))
		{"../internal/repair/bulk.go", "Bulk.rowsOf", "Rows"},        // query.BulkSkip{…}.Rows
		{"../internal/drain/bulk.go", "Bulk.runBatch", "RunWriteTx"}, // the plumbing between runBatch and the batch
	} {
		if !mentions(funcBody(t, b.file, b.fn), b.callee) {
			t.Errorf("%s: %s no longer names %s: skip --category's path changed", b.file, b.fn, b.callee)
		}
	}
	doc := fileText(t, "../docs/architecture.md")
	for _, h := range skipCategoryPath[:len(skipCategoryPath)-1] {
		if !strings.Contains(doc, h.fn) {
			t.Errorf("docs/architecture.md does not draw %s on skip --category's path", h.fn)
		}
	}
}

// funcBody is the declaration of fn (Name, or Recv.Name for a method) in file.
func funcBody(t *testing.T, file, fn string) *ast.FuncDecl {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	recv, name, ok := strings.Cut(fn, ".")
	if !ok {
		recv, name = "", fn
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != name || (fd.Recv == nil) != (recv == "") {
			continue
		}
		if recv == "" || receiverName(fd) == recv {
			return fd
		}
	}
	t.Fatalf("%s declares no %s", file, fn)
	return nil
}

// receiverName is the type of fd's receiver, without its star.
func receiverName(fd *ast.FuncDecl) string {
	typ := fd.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// mentions reports whether fd calls or names callee: an identifier, a selector's name (a
// method, a method value, a type), or a string literal (a statement's name).
func mentions(fd *ast.FuncDecl, callee string) bool {
	found := false
	ast.Inspect(fd, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			found = found || n.Name == callee
		case *ast.BasicLit:
			found = found || n.Value == `"`+callee+`"`
		}
		return !found
	})
	return found
}

// calls reports whether fd (or a function literal in it) calls callee by name: a function,
// a method, or a func value.
func calls(fd *ast.FuncDecl, callee string) bool {
	found := false
	ast.Inspect(fd, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			switch fun := c.Fun.(type) {
			case *ast.Ident:
				found = found || fun.Name == callee
			case *ast.SelectorExpr:
				found = found || fun.Sel.Name == callee
			}
		}
		return !found
	})
	return found
}

// maxCmdLines ratchets cmd's non-test Go lines down: #38's target is 6,000 (commands are
// flags, validation, a service call and a rendered document); it may only go down.
const maxCmdLines = 5988

// TestCmdLines keeps cmd's non-test Go at or under maxCmdLines lines.
func TestCmdLines(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lines += bytes.Count(b, []byte("\n"))
	}
	if lines > maxCmdLines {
		t.Fatalf("cmd has %d lines of non-test Go, at most %d (and #38's target is 6,000): domain logic belongs in a service under internal/", lines, maxCmdLines)
	}
}
