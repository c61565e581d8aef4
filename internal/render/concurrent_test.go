package render

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestPrinterConcurrentUse: a parallel drain's workers warn and note through one Printer
// (and write their own lines through its Err) while the main goroutine prints documents.
// Under -race an unlocked write to the streams' buffers is a reported data race; without
// -race the check below still fails when two writes interleave: every stderr line must be
// one whole line some goroutine wrote, every document whole on stdout.
func TestPrinterConcurrentUse(t *testing.T) {
	t.Parallel()
	s, out, errOut := Test()
	p := NewPrinter(s, FormatJSON, true)
	const workers, each = 8, 200
	doc := Doc{{Name: "summary", Card: []Field{{Key: "done", Value: 1}, {Key: "left", Value: 0}}}}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				switch i % 3 {
				case 0:
					p.Warnf("worker %d warning %d", w, i)
				case 1:
					p.Notef("worker %d note %d", w, i)
				default:
					fmt.Fprintf(p.Err(), "worker %d line %d\n", w, i)
				}
			}
		}()
	}
	const docs = 50
	for range docs {
		if err := p.Print(doc); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()

	want := map[string]bool{}
	for w := range workers {
		for i := range each {
			switch i % 3 {
			case 0:
				want[fmt.Sprintf("warning: worker %d warning %d", w, i)] = true
			case 1:
				want[fmt.Sprintf("worker %d note %d", w, i)] = true
			default:
				want[fmt.Sprintf("worker %d line %d", w, i)] = true
			}
		}
	}
	lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
	if len(lines) != workers*each {
		t.Fatalf("%d stderr lines, want %d", len(lines), workers*each)
	}
	for _, l := range lines {
		if !want[l] {
			t.Fatalf("stderr line %q is no line any worker wrote (two writes interleaved)", l)
		}
		delete(want, l)
	}
	one := "{\n  \"done\": 1,\n  \"left\": 0\n}\n"
	if got := out.String(); got != strings.Repeat(one, docs) {
		t.Fatalf("stdout is not %d whole documents:\n%s", docs, got)
	}
}
