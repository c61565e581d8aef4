package cmd

import (
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
var holdsTransactions = map[string]bool{ //nolint:gochecknoglobals // allow-list
	// held.go: the repairs' read session on their connection (outbox.On), until they move.
	"held.go": true, "replicate.go": true, "restore.go": true,
}

// offTheRunner lists the cmd files whose mutations still confirm and build their plans
// themselves instead of going through runMutation.
var offTheRunner = map[string]bool{ //nolint:gochecknoglobals // allow-list
	"bulk.go": true, "demo.go": true, "drain.go": true, "drain_bulk.go": true,
	"mailbox_repair.go": true, "replicate.go": true, "restore.go": true,
}

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

// TestMutationsGoThroughTheRunner: only runMutation asks for a confirmation and only
// internal/repair builds a plan (a repair.Plan literal), outside offTheRunner's files.
func TestMutationsGoThroughTheRunner(t *testing.T) {
	t.Parallel()
	_, files := cmdFiles(t)
	for name, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "confirm" && name != "mutation.go" {
					if !offTheRunner[name] {
						t.Errorf("cmd/%s calls confirm: a mutation goes through runMutation (cmd/mutation.go)", name)
					}
				}
			case *ast.CompositeLit:
				if sel, ok := n.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Plan" && !offTheRunner[name] {
					if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "repair" {
						t.Errorf("cmd/%s builds a repair.Plan: a plan's lines are the service's (internal/repair)", name)
					}
				}
			}
			return true
		})
	}
	for name := range offTheRunner {
		if _, err := os.Stat(name); err != nil {
			t.Errorf("offTheRunner names %s, which is gone: drop it from the list", name)
		}
	}
	runner := files["mutation.go"]
	if runner == nil || !strings.Contains(fileText(t, "mutation.go"), "func runMutation(") {
		t.Fatal("cmd/mutation.go has no runMutation")
	}
	for _, name := range []string{"repair.go", "killswitch.go"} {
		if !strings.Contains(fileText(t, name), "runMutation(") {
			t.Errorf("cmd/%s: its mutations no longer go through runMutation", name)
		}
	}
}

// maxFactoryFields ratchets the factory's fields (cmd/factory.go) down: #38's target is 12
// (gh's Factory); it may only go down.
const maxFactoryFields = 41

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
