package query

import (
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// sqlStart finds SQL text in a string literal: a line that starts like a statement.
var sqlStart = regexp.MustCompile(`(?m)^\s*((SELECT|UPDATE|DELETE\s+FROM|INSERT\s+INTO|WITH\s+(RECURSIVE\s+)?\w+\s+AS|SET\s+LOCAL|CREATE|ALTER|DROP|TRUNCATE|LOCK\s+TABLE)\b|(BEGIN|COMMIT|ROLLBACK);)`)

// notYetInSQLFiles are the Go files that still write SQL text (#22 part 1 moves them into
// sql/*.sql noun by noun). The list only shrinks: a file listed here that no longer holds
// SQL fails the test, so whoever moves its last statement removes it.
var notYetInSQLFiles = map[string]bool{ //nolint:gochecknoglobals // the debt, by file
}

// TestNoSQLTextInGo keeps SQL in the SQL files: no string literal of a non-test Go file
// starts like a statement, except in the files not yet moved.
func TestNoSQLTextInGo(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	found := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "vendor" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		// Test helpers that build schemas for tests only, and the replay of Sentry's workers
		// (whose SQL is Sentry's, written from the reference on purpose).
		if strings.HasPrefix(rel, "internal/testdb/") || strings.HasPrefix(rel, "internal/sentrysim/") {
			return nil
		}
		f, err := parser.ParseFile(gotoken.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != gotoken.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && sqlStart.MatchString(s) {
				found[rel] = append(found[rel], strings.TrimSpace(sqlStart.FindString(s)))
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	files := make([]string, 0, len(found))
	for f := range found {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		if !notYetInSQLFiles[f] {
			t.Errorf("%s writes SQL in Go (%q…): put it in internal/query/sql/<noun>.sql", f, found[f][0])
		}
	}
	for f := range notYetInSQLFiles {
		if found[f] == nil {
			t.Errorf("%s holds no SQL text any more: remove it from notYetInSQLFiles", f)
		}
	}
}
