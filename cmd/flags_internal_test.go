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

// TestNegativeIDArgument: an id typed negative where an argument is expected is refused as a
// negative id, one line and the command's first example (exit 2). pflag reads "-5" as the
// shorthand flags -5; on main the error was "unknown shorthand flag: '5' in -5".
func TestNegativeIDArgument(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"inspect", "shard", "organization", "-5"}, "Error: invalid id \"-5\": want a non-negative integer id\nTry: outboxctl inspect shard organization 42\n"},
		{[]string{"inspect", "message", "-7"}, "Error: invalid id \"-7\": want a non-negative integer id\nTry: outboxctl inspect message 123456\n"},
		// Not a number: pflag's own message stands.
		{[]string{"inspect", "shard", "organization", "-x"}, "Error: unknown shorthand flag: 'x' in -x\nTry: outboxctl inspect shard --help\n"},
	} {
		io, out, errOut := render.Test()
		if code := Main(context.Background(), tt.args, io); code != ExitUsage || errOut.String() != tt.want || out.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit %d, stderr %q", tt.args, code, errOut, out, ExitUsage, tt.want)
		}
	}
}

// TestDepthExact: depth takes --exact, as the docs say every counting read does; it selects
// the exact pass (today's default: the same SQL) and excludes --estimate. On main it was an
// unknown flag (exit 2).
func TestDepthExact(t *testing.T) {
	t.Parallel()
	run := func(args ...string) (int, string, string) {
		io, out, errOut := render.Test()
		code := Main(context.Background(), append([]string{"depth", "--print-sql"}, args...), io)
		return code, out.String(), errOut.String()
	}
	_, plain, _ := run()
	if code, exact, errOut := run("--exact"); code != ExitOK || exact != plain || plain == "" {
		t.Fatalf("depth --exact: exit %d, stderr %q, SQL %q, want the SQL of depth %q", code, errOut, exact, plain)
	}
	want := "Error: `--estimate` and `--exact` ask for two different counts; pass one\nTry: outboxctl depth --estimate\n"
	if code, out, errOut := run("--exact", "--estimate"); code != ExitUsage || errOut != want || out != "" {
		t.Fatalf("depth --exact --estimate: exit %d, stderr %q, stdout %q", code, errOut, out)
	}
}
