package cmd

import (
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/outboxctl/outboxctl/internal/cmdline"
	"github.com/outboxctl/outboxctl/internal/render"
)

// TestEveryDurationFlagRefusesNegatives walks the whole command tree: every duration flag is
// a cmdline.Duration, and each, given "-5s" on the command line, is refused before anything runs
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
			dv, ok := f.Value.(*cmdline.Duration)
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
				f.Name + " " + dv.Example + "\n"
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

// TestEveryEnumFlagRefusesAsParsed walks the command tree: every flag taking one word of a
// list is a cmdline.Enum (one mechanism, where four checked at different moments), completes
// its words, and refuses another word as it is parsed: exit 2, the flag's one-line message,
// a Try: line with the command typed so far and a valid use, nothing on stdout.
func TestEveryEnumFlagRefusesAsParsed(t *testing.T) {
	t.Parallel()
	root := newRootCmd(&app{io: &render.Streams{}, getenv: func(string) string { return "" }})
	enumNames := map[string]bool{"output": true, "silo": true, "deployment": true, "time": true, "store": true,
		"order": true, "value-type": true, "mode": true, "payload": true}
	found := map[string]bool{}
	walk(root, func(c *cobra.Command) {
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) { checkEnumFlag(t, root, c, f, enumNames, found) })
		if c == root {
			c.PersistentFlags().VisitAll(func(f *pflag.Flag) { checkEnumFlag(t, root, c, f, enumNames, found) })
		}
	})
	for name := range enumNames {
		if !found[name] {
			t.Errorf("no --%s flag found: the walk missed it", name)
		}
	}
	// The hint keeps the operator's arguments when they came before the flag (as the
	// Validate check of --order did), and a flag's own parser keeps its message.
	for _, tc := range []struct{ args, want string }{
		{"inspect shard organization 1 --order sideways", "Error: invalid `--order` \"sideways\": valid values are newest and oldest\nTry: outboxctl inspect shard organization 1 --order oldest\n"},
		{"inspect shard --order sideways organization 1", "Error: invalid `--order` \"sideways\": valid values are newest and oldest\nTry: outboxctl inspect shard organization 42 --order oldest\n"},
		{"shards --silo bogus", "Error: invalid silo \"bogus\": valid values are cell (alias region) and control\nTry: outboxctl shards --silo control\n"},
		{"shards -o yaml", "Error: invalid output format \"yaml\": valid values are table, wide, json, jsonl, csv, markdown\nTry: outboxctl shards -o json\n"},
		{"shards --time local", "Error: invalid time format \"local\": valid values are relative, absolute\nTry: outboxctl shards --time absolute\n"},
		{"backfill status --store s3", "Error: invalid `--store` \"s3\": valid values are auto, postgres and redis\nTry: outboxctl backfill status --store auto\n"},
	} {
		io, out, errOut := render.Test()
		if code := Main(context.Background(), strings.Fields(tc.args), io); code != ExitUsage || errOut.String() != tc.want || out.Len() != 0 {
			t.Errorf("%s: exit %d, stderr %q; want 2, %q", tc.args, code, errOut, tc.want)
		}
	}
}

func checkEnumFlag(t *testing.T, root, c *cobra.Command, f *pflag.Flag, enumNames, found map[string]bool) {
	t.Helper()
	ev, ok := f.Value.(*cmdline.Enum)
	if !enumNames[f.Name] {
		if ok {
			t.Errorf("%s --%s is an enum flag this test does not know: add it", c.CommandPath(), f.Name)
		}
		return
	}
	if !ok {
		t.Errorf("%s --%s is a %T: register it with addEnumFlag", c.CommandPath(), f.Name, f.Value)
		return
	}
	found[f.Name] = true
	if fn, ok := c.GetFlagCompletionFunc(f.Name); !ok {
		t.Errorf("%s --%s completes nothing", c.CommandPath(), f.Name)
	} else if words, _ := fn(c, nil, ""); strings.Join(words, ",") != strings.Join(ev.Words, ",") {
		t.Errorf("%s --%s completes %v, want %v", c.CommandPath(), f.Name, words, ev.Words)
	}
	path := strings.Fields(c.CommandPath())[1:]
	if c == root {
		path = []string{"version"}
	}
	args := append(path, "--"+f.Name, "bogus\x1b[2J")
	io, out, errOut := render.Test()
	if code := Main(context.Background(), args, io); code != ExitUsage || out.Len() != 0 {
		t.Errorf("%v: exit %d, stdout %q; want exit 2, nothing", args, code, out)
		return
	}
	lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "Error: invalid ") || !strings.Contains(lines[0], `"bogus\x1b[2J"`) ||
		!strings.HasPrefix(lines[1], "Try: outboxctl ") || !strings.HasSuffix(lines[1], " "+ev.Example) {
		t.Errorf("%v: stderr %q", args, errOut)
	}
}
