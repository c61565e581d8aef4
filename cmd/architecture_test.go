package cmd

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// notYetThin lists the files of cmd/ that may still import the drivers and hold long
// functions while they move onto services: none now (docs/architecture.md).
var notYetThin = map[string]bool{} //nolint:gochecknoglobals // allow-list

// maxFuncLines is the longest a function of cmd/ may be: a command parses, validates and
// calls a service; anything longer holds logic that belongs in internal/.
const maxFuncLines = 80

// cmdFiles parses every non-test Go file of cmd/ outside the allow-list.
func cmdFiles(t *testing.T) (*token.FileSet, map[string]*ast.File) {
	t.Helper()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") || notYetThin[p] {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[p] = f
	}
	if len(files) < 10 {
		t.Fatalf("found only %d files in cmd/: is the test running in cmd/?", len(files))
	}
	return fset, files
}

// TestCmdImportsNoDriver keeps the database and Redis drivers out of the commands: they go
// through internal/db (connections, transactions) and the services.
func TestCmdImportsNoDriver(t *testing.T) {
	t.Parallel()
	_, files := cmdFiles(t)
	for name, f := range files {
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, "github.com/jackc/") || strings.HasPrefix(p, "github.com/redis/") {
				t.Errorf("cmd/%s imports %s: commands reach PostgreSQL and Redis through internal/db", name, p)
			}
		}
	}
}

// TestCmdFunctionsAreShort keeps every function of cmd/, a command's constructor included,
// at most maxFuncLines long.
func TestCmdFunctionsAreShort(t *testing.T) {
	t.Parallel()
	fset, files := cmdFiles(t)
	for name, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > maxFuncLines {
				t.Errorf("cmd/%s: %s is %d lines, longer than %d: move its logic into internal/", name, fd.Name.Name, n, maxFuncLines)
			}
		}
	}
}

// TestCommandTreeBuiltOnlyByMain keeps the fan-out and --watch on documents: only Main
// builds the command tree (newRootCmd) and executes it, so a fan-out over contexts or a
// watch frame calls the read's run function (readRun) and merges or redraws what it
// returns, instead of parsing and running the command line again per context or frame.
func TestCommandTreeBuiltOnlyByMain(t *testing.T) {
	t.Parallel()
	fset, files := cmdFiles(t)
	calls := 0
	for name, f := range files {
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				var callee string
				switch x := call.Fun.(type) {
				case *ast.Ident:
					callee = x.Name
				case *ast.SelectorExpr:
					callee = x.Sel.Name
				}
				if callee != "newRootCmd" && !strings.HasPrefix(callee, "Execute") {
					return true
				}
				calls++
				if fn.Name.Name != "Main" || fn.Recv != nil {
					t.Errorf("cmd/%s:%d: %s calls %s: only Main builds and runs the command tree; a fan-out or a watch runs the read's run function (runDocument)",
						name, fset.Position(call.Pos()).Line, fn.Name.Name, callee)
				}
				return true
			})
		}
	}
	if calls != 2 {
		t.Errorf("found %d calls of newRootCmd and Execute*, want Main's 2: has Main changed?", calls)
	}
}

// TestStdoutGoesThroughThePrinter: every byte a command writes on stdout goes through
// render.Printer (documents, SQL, Linef's text lines), so escaping and formats are the
// printer's alone; enums lint and backfill's Redis comments wrote straight to stdout beside
// it, escaping or not as each call remembered. A fmt.Print*, or a fmt.Fprint*, io.WriteString
// or Write to stdout (os.Stdout, OutOrStdout(), a streams' Out, a deps' out) fails here.
func TestStdoutGoesThroughThePrinter(t *testing.T) {
	t.Parallel()
	fset, files := cmdFiles(t)
	for name, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, _ := sel.X.(*ast.Ident)
			switch {
			case pkg != nil && pkg.Name == "fmt" && strings.HasPrefix(sel.Sel.Name, "Print"):
				t.Errorf("cmd/%s:%d: fmt.%s writes to stdout: print through render.Printer", name, fset.Position(call.Pos()).Line, sel.Sel.Name)
			case pkg != nil && (pkg.Name == "fmt" && strings.HasPrefix(sel.Sel.Name, "Fprint") || pkg.Name == "io" && sel.Sel.Name == "WriteString"):
				if len(call.Args) > 0 && isStdout(call.Args[0]) {
					t.Errorf("cmd/%s:%d: %s.%s to stdout: print through render.Printer", name, fset.Position(call.Pos()).Line, pkg.Name, sel.Sel.Name)
				}
			case sel.Sel.Name == "Write" && isStdout(sel.X):
				t.Errorf("cmd/%s:%d: a Write to stdout: print through render.Printer", name, fset.Position(call.Pos()).Line)
			}
			return true
		})
	}
}

// isStdout reports whether e names stdout as cmd/ reaches it: os.Stdout, c.OutOrStdout(),
// a Printer's Out(), a streams' Out or a deps' out.
func isStdout(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok && x.Name == "os" {
			return e.Sel.Name == "Stdout"
		}
		return e.Sel.Name == "Out" || e.Sel.Name == "out"
	case *ast.CallExpr:
		if sel, ok := e.Fun.(*ast.SelectorExpr); ok {
			return sel.Sel.Name == "OutOrStdout" || sel.Sel.Name == "Out"
		}
	}
	return false
}

// TestOneDependencyType keeps cmd/ on one dependency type, the factory (cmd/factory.go):
// no struct type named *Deps comes back beside it, and every run function (a top-level
// func runX) takes the factory as a parameter, so a new command finds its connector,
// printer, prompter and clock in one place and a test builds them one way.
func TestOneDependencyType(t *testing.T) {
	t.Parallel()
	_, files := cmdFiles(t)
	runs := 0
	for name, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok && strings.HasSuffix(ts.Name.Name, "Deps") {
						t.Errorf("cmd/%s declares %s: a command's dependencies are fields of factory (cmd/factory.go)", name, ts.Name.Name)
					}
				}
			case *ast.FuncDecl:
				if !isRunFunc(d) {
					continue
				}
				runs++
				if !takesFactory(d) {
					t.Errorf("cmd/%s: %s takes no factory: a run function's dependencies are the factory (cmd/factory.go)", name, d.Name.Name)
				}
			}
		}
	}
	if runs < 20 {
		t.Fatalf("found only %d run functions in cmd/: has the naming (runX) changed?", runs)
	}
}

// isRunFunc reports whether fd is a command's run function: a top-level func runX.
func isRunFunc(fd *ast.FuncDecl) bool {
	n := fd.Name.Name
	return fd.Recv == nil && len(n) > 3 && strings.HasPrefix(n, "run") && n[3] >= 'A' && n[3] <= 'Z'
}

// takesFactory reports whether one of fd's parameters is a factory.
func takesFactory(fd *ast.FuncDecl) bool {
	for _, p := range fd.Type.Params.List {
		if id, ok := p.Type.(*ast.Ident); ok && id.Name == "factory" {
			return true
		}
	}
	return false
}

// TestServicesImportNoCommand keeps internal/ below cmd/: no non-test file of internal/
// imports cobra or cmd, so a service (internal/inspect's reads, internal/repair's
// mutations, top's source) takes what it needs of the invocation as plain values and funcs
// (an Env), never the command tree or the factory, and top or a test can call it alone.
func TestServicesImportNoCommand(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	seen := 0
	err := filepath.WalkDir("../internal", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		seen++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, "github.com/spf13/cobra") || p == "github.com/outboxctl/outboxctl/cmd" {
				t.Errorf("%s imports %s: a service takes plain values and funcs from cmd (an Env), never the command tree", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 50 {
		t.Fatalf("found only %d files under ../internal: is the test running in cmd/?", seen)
	}
}
