package contract

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/schema from the Go types")

// schemaDir is docs/schema in the repository.
func schemaDir() string { return filepath.Join("..", "..", "docs", "schema") }

// TestSchemasUpToDate: docs/schema holds exactly the schema of every document, as generated
// from the Go types (go test ./internal/contract -run TestSchemasUpToDate -update rewrites it).
func TestSchemasUpToDate(t *testing.T) {
	t.Parallel()
	want := map[string][]byte{}
	for _, d := range Documents() {
		b, err := d.Schema()
		if err != nil {
			t.Fatal(err)
		}
		if _, dup := want[d.File()]; dup {
			t.Fatalf("two documents write %s", d.File())
		}
		want[d.File()] = b
		if d.FanOut {
			if want[d.FanOutFile()], err = d.FanOutSchema(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if *update {
		if err := os.MkdirAll(schemaDir(), 0o755); err != nil {
			t.Fatal(err)
		}
		old, _ := filepath.Glob(filepath.Join(schemaDir(), "*.json"))
		for _, f := range old {
			if _, ok := want[filepath.Base(f)]; !ok {
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
			}
		}
		for f, b := range want {
			if err := os.WriteFile(filepath.Join(schemaDir(), f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	have, _ := filepath.Glob(filepath.Join(schemaDir(), "*.json"))
	for _, f := range have {
		if _, ok := want[filepath.Base(f)]; !ok {
			t.Errorf("docs/schema/%s describes no document; run go test ./internal/contract -run TestSchemasUpToDate -update", filepath.Base(f))
		}
	}
	for f, b := range want {
		got, err := os.ReadFile(filepath.Join(schemaDir(), f))
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("docs/schema/%s is not the schema of its Go types; run go test ./internal/contract -run TestSchemasUpToDate -update and review the diff", f)
		}
	}
}
