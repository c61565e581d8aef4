package cmd

import (
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/outboxctl/outboxctl/internal/render"
)

// TestEveryDurationFlagRefusesNegatives walks the whole command tree: every duration flag is
// a durationValue, and each, given "-5s" on the command line, is refused before anything runs
// (exit 2, the flag named with an example). backfill status --sample -5s ran on main.
func TestEveryDurationFlagRefusesNegatives(t *testing.T) {
	t.Parallel()
	root := newRootCmd(&app{io: &render.Streams{}, getenv: func(string) string { return "" }})
	var checked int
	walk(root, func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Value.Type() != "duration" {
				return
			}
			dv, ok := f.Value.(*durationValue)
			if !ok {
				t.Errorf("%s --%s is a %T: register it with addDurationFlag", c.CommandPath(), f.Name, f.Value)
				return
			}
			checked++
			path := strings.Fields(c.CommandPath())[1:]
			if c == root {
				path = []string{"version"} // a global flag, on a command that needs nothing else
			}
			args := append(path, "--"+f.Name, "-5s")
			io, out, errOut := render.Test()
			if code := Main(context.Background(), args, io); code != ExitUsage {
				t.Errorf("%v: exit %d, want %d (stderr %q)", args, code, ExitUsage, errOut)
				return
			}
			want := `Error: invalid argument "-5s" for "--` + f.Name + `" flag: a duration must not be negative: write one such as --` +
				f.Name + " " + dv.example + "\n"
			if first, _, _ := strings.Cut(errOut.String(), "Try:"); first != want || out.Len() != 0 {
				t.Errorf("%v: stderr %q, stdout %q; want %q", args, errOut, out, want)
			}
		})
	})
	// The global timeouts, doctor's four, backfill's --sample, drain's --handler-timeout and
	// the --watch of every watched read.
	if checked < 10 {
		t.Fatalf("checked %d duration flags: the walk missed some", checked)
	}
}
