package render_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/outboxctl/outboxctl/internal/render"
)

// On a terminal, a line written while a progress frame is shown clears that frame first;
// a frame after a frame, a line after a line, and anything on a pipe pass as written.
func TestSharedErrClearsALiveProgressLine(t *testing.T) {
	for _, tc := range []struct {
		tty    bool
		writes []string
		want   string
	}{
		{true, []string{"\rdrain 3/10", "warning: slow\n", "\rdrain 4/10"}, "\rdrain 3/10\r\x1b[Kwarning: slow\n\rdrain 4/10"},
		{true, []string{"\rdrain 3/10", "\rdrain 4/10\x1b[K", "\rdelivered 10 in 1s\n", "next\n"}, "\rdrain 3/10\rdrain 4/10\x1b[K\rdelivered 10 in 1s\nnext\n"},
		{true, []string{"Proceed? [y/N] ", "dry run\n"}, "Proceed? [y/N] dry run\n"},
		{true, []string{"\rclaiming 31.2s\x1b[K", "\n", "Error: timeout\n"}, "\rclaiming 31.2s\x1b[K\nError: timeout\n"},
		{false, []string{"\rdrain 3/10", "warning: slow\n"}, "\rdrain 3/10warning: slow\n"},
	} {
		s, _, errOut := render.Test()
		s.ErrTTY = tc.tty
		shared := s.WithSharedErr()
		if shared.WithSharedErr() != shared {
			t.Fatal("sharing shared streams again made new ones")
		}
		for _, w := range tc.writes {
			fmt.Fprint(shared.Err, w)
		}
		if got := errOut.String(); got != tc.want {
			t.Errorf("tty %v, writes %q:\ngot  %q\nwant %q", tc.tty, tc.writes, got, tc.want)
		}
	}
}

// Writers on several goroutines (a ticker, workers, printers) write whole lines one at a
// time: no line is torn and, under -race, no write races another.
func TestSharedErrWritesWhole(t *testing.T) {
	s, _, errOut := render.Test()
	shared := s.WithSharedErr()
	p := render.NewPrinter(shared, render.FormatTable, true)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				if g%2 == 0 {
					p.Warnf("worker %d line %d", g, i)
				} else {
					fmt.Fprintf(shared.Err, "note %d line %d\n", g, i)
				}
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
	if len(lines) != 800 {
		t.Fatalf("%d lines, want 800", len(lines))
	}
	for _, l := range lines {
		var g, i int
		if _, err := fmt.Sscanf(strings.TrimPrefix(l, "warning: "), "worker %d line %d", &g, &i); err != nil {
			if _, err := fmt.Sscanf(l, "note %d line %d", &g, &i); err != nil {
				t.Fatalf("torn line %q", l)
			}
		}
	}
}
