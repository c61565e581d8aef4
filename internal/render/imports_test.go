package render

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOnlyRenderImportsTheTerminalLibraries keeps lipgloss and tablewriter (and their
// terminal helpers) inside internal/render, so a change of either library touches one place;
// internal/top, the full-screen program, may import bubbletea, bubbles and x/ansi (its
// tests measure lines), and lays out its tables and text through render.
func TestOnlyRenderImportsTheTerminalLibraries(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		inRender := strings.HasPrefix(filepath.ToSlash(path), "../../internal/render/")
		inTop := strings.HasPrefix(filepath.ToSlash(path), "../../internal/top/")
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if inTop && (strings.HasPrefix(p, "github.com/charmbracelet/bubbletea") || strings.HasPrefix(p, "github.com/charmbracelet/bubbles") ||
				p == "github.com/charmbracelet/x/ansi" ||
				// top's golden frames (teatest_test.go) drive the program and compare its View: they draw nothing themselves.
				(strings.HasSuffix(path, "_test.go") && strings.HasPrefix(p, "github.com/charmbracelet/x/exp/"))) {
				continue
			}
			if (strings.HasPrefix(p, "github.com/charmbracelet/") || strings.HasPrefix(p, "github.com/olekukonko/tablewriter") ||
				strings.HasPrefix(p, "github.com/muesli/termenv")) && !inRender {
				t.Errorf("%s imports %s: only internal/render may", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
