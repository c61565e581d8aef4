package cmd

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// The read half of #38: a read's session is internal/outbox's (outbox.Snapshot: the budget,
// the catalog read once, the savepoints), so no file of cmd/ opens a transaction, names
// one, or reads the catalog; the catalog is read by internal/outbox alone.

// notYetOnSnapshot are the files of cmd/ that still hold a transaction: the mutations not
// yet in internal/repair (their write transactions and catalog reads). The list only
// shrinks; a read command is never listed here.
var notYetOnSnapshot = map[string]bool{ //nolint:gochecknoglobals // allow-list
	"replicate.go": true, "restore.go": true,
}

// sessionCalls are the selectors a read in cmd/ never uses: a transaction opened, named or
// taken from a snapshot, a statement run on one, the catalog read.
var sessionCalls = map[string]string{ //nolint:gochecknoglobals // constant table
	"db.Tx": "names a transaction", "db.ReadTx": "opens a transaction", "db.ReadTxFirst": "opens a transaction",
	"db.WriteTx": "opens a transaction", "db.RunWriteTx": "opens a transaction",
	"query.Run": "runs a statement on a transaction", "query.Stream": "runs a statement on a transaction",
	"query.All": "runs a statement on a transaction", "query.Exec": "runs a statement on a transaction",
	"query.LoadSchema": "reads the catalog", "query.SchemaFrom": "reads the catalog", "query.Introspect": "reads the catalog",
	".Begin": "opens a transaction", ".BeginTx": "opens a transaction", ".Tx": "takes a snapshot's transaction",
}

// TestReadsOpenNoTransaction: a read command in cmd/ opens its session through the
// factory's snapshot (outbox.Open) and hands the snapshot (a query.Querier) to services; it
// never opens, names or holds a transaction (db.Tx is pgx.Tx, so the driver's import
// guard alone does not see one).
func TestReadsOpenNoTransaction(t *testing.T) {
	t.Parallel()
	fset, files := cmdFiles(t)
	for name, f := range files {
		if notYetOnSnapshot[name] {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			key := "." + sel.Sel.Name
			if x, ok := sel.X.(*ast.Ident); ok && (x.Name == "db" || x.Name == "query") {
				key = x.Name + key
			}
			if why, bad := sessionCalls[key]; bad {
				t.Errorf("cmd/%s:%d: %s %s: a read opens its session with the factory's snapshot (internal/outbox) and passes the snapshot to services",
					name, fset.Position(sel.Pos()).Line, strings.TrimPrefix(key, "."), why)
			}
			return true
		})
	}
	for name := range notYetOnSnapshot {
		if _, ok := files[name]; !ok {
			t.Errorf("notYetOnSnapshot names %s, which is gone: drop it from the list", name)
		}
	}
}

// catalogReaders are the files outside internal/outbox that still call query.LoadSchema:
// the repairs' (moving to internal/repair, onto outbox.On and outbox.LoadCatalog).
var catalogReaders = map[string]bool{ //nolint:gochecknoglobals // allow-list
	"internal/repair/session.go": true,
}

// TestCatalogReadOnlyByOutbox: the catalog is read in one place, internal/outbox (a
// snapshot's first statement, Catalog and LoadCatalog), so every reader applies the same
// look-ups, deployment and error; query.LoadSchema is called from nowhere else.
func TestCatalogReadOnlyByOutbox(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	calls := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, "../"))
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var name string
			switch fn := call.Fun.(type) {
			case *ast.SelectorExpr:
				name = fn.Sel.Name
			case *ast.Ident:
				name = fn.Name
			}
			if name != "LoadSchema" {
				return true
			}
			calls++
			if !strings.HasPrefix(rel, "internal/outbox/") && !catalogReaders[rel] {
				t.Errorf("%s:%d calls LoadSchema: the catalog is read by internal/outbox (a Snapshot's Catalog, or outbox.LoadCatalog in a transaction of its own)",
					rel, fset.Position(call.Pos()).Line)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls == 0 {
		t.Fatal("found no call of LoadSchema: is the test running in cmd/?")
	}
}
