package cmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/outboxctl/outboxctl/internal/config"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestWriteCommandsAreTheOnesWithYes: the commands a context's allow may name
// (config.WriteCommands) are exactly the commands that take --yes, every one that writes to
// a database: a new write command cannot slip past checkWritable.
func TestWriteCommandsAreTheOnesWithYes(t *testing.T) {
	t.Parallel()
	io, _, _ := render.Test()
	root := newRootCmd(&app{io: io, getenv: func(string) string { return "" }})
	var got []string
	walk(root, func(c *cobra.Command) {
		if c.Flags().Lookup("yes") != nil {
			got = append(got, strings.TrimPrefix(c.CommandPath(), "outboxctl "))
		}
	})
	want := slices.Clone(config.WriteCommands)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("commands with --yes: %v\nconfig.WriteCommands: %v", got, want)
	}
}

// TestReadOnlyContextRefusesEveryWrite: on a context with readonly: true, every command that
// writes (each of config.WriteCommands, and the bulk forms) is refused with one line and exit
// 10 before anything is read or written; the reads, --dry-run and --print-sql still work. A
// context's allow lets its commands write and refuses the others.
func TestReadOnlyContextRefusesEveryWrite(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	now := time.Now()
	testdb.Insert(t, schema, query.CellTable,
		testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: 1, ScheduledFrom: now, ScheduledFor: now.Add(time.Hour)},
		testdb.Row{Scope: 0, Shard: 1, Category: 2, Object: 1, ScheduledFrom: now, ScheduledFor: now.Add(time.Hour)},
		testdb.Row{Scope: 0, Shard: 2, Category: 3, Object: 2, ScheduledFrom: now, ScheduledFor: now.Add(time.Hour)})
	state := func() string {
		var s string
		q := fmt.Sprintf(`SELECT (SELECT string_agg(id || ':' || scheduled_for::text, ',' ORDER BY id) FROM %[1]s.sentry_regionoutbox)
			|| ' / ' || (SELECT count(*) FROM %[1]s.sentry_option)`, pgx.Identifier{schema}.Sanitize())
		if err := testdb.Pool(t).QueryRow(context.Background(), q).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := state()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	text := fmt.Sprintf("current-context: ro\ncontexts:\n  ro:\n    dsn: %[1]s\n    schema: %[2]s\n    readonly: true\n"+
		"  some:\n    dsn: %[1]s\n    schema: %[2]s\n    allow: [reschedule, killswitch]\n", testdb.DSN(), schema)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string, string) {
		io, out, errOut := render.Test()
		io.Getenv = func(k string) string {
			return map[string]string{"OUTBOXCTL_CONFIG": path, "XDG_STATE_HOME": dir}[k]
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return Main(ctx, args, io), out.String(), errOut.String()
	}
	writes := [][]string{
		{"reschedule", "organization", "1"}, {"reschedule", "--stuck"},
		{"compact", "organization", "1"}, {"compact", "--stuck"},
		{"skip", "1"}, {"skip", "--category", "ORGANIZATION_UPDATE"},
		{"drain", "organization", "1", "--handler", "discard"}, {"drain", "--stuck", "--parallel", "2", "--handler", "discard"},
		{"restore", filepath.Join(dir, "archive.jsonl"), "--all"},
		{"replicate", "organization", "1"},
		{"killswitch", "add", "organization", "7"}, {"killswitch", "remove", "organization", "7"},
		{"killswitch", "gate", "sentry_organization", "--version", "9"},
		{"demo", "seed"}, {"demo", "drop"},
	}
	covered := map[string]bool{}
	for _, w := range writes {
		command := w[0]
		if command == "killswitch" || command == "demo" {
			command += " " + w[1]
		}
		covered[command] = true
		args := append(slices.Clone(w), "--reason", "t", "--yes")
		if command == "demo seed" || command == "demo drop" || command == "killswitch gate" || command == "restore" {
			args = append(slices.Clone(w), "--yes")
		}
		code, out, errOut := run(args...)
		want := fmt.Sprintf("Error: context ro is read-only (readonly: true, line 6): %s would write to its database\n", command)
		if code != ExitReadOnly || out != "" || errOut != want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", args, code, out, errOut, ExitReadOnly, want)
		}
	}
	for _, c := range config.WriteCommands {
		if !covered[c] {
			t.Errorf("no case for the write command %s", c)
		}
	}
	if after := state(); after != before {
		t.Fatalf("a refused write changed the database:\n%s\n%s", before, after)
	}
	// Reads, a dry run and --print-sql change nothing: they run.
	for _, args := range [][]string{
		{"shards"}, {"depth"}, {"inspect", "shard", "organization", "1"}, {"killswitch", "list"},
		{"reschedule", "organization", "1", "--dry-run"}, {"compact", "organization", "1", "--print-sql"},
	} {
		if code, _, errOut := run(args...); code != ExitOK {
			t.Errorf("%v on a read-only context: exit %d\n%s", args, code, errOut)
		}
	}
	// A split command checks both contexts.
	if code, _, errOut := run("--context", "some,ro", "replicate", "organization", "1", "--yes"); code != ExitReadOnly ||
		!strings.HasPrefix(errOut, "Error: context some allows only reschedule, killswitch (allow, line 10): replicate would write to its database\n") {
		t.Errorf("split replicate: exit %d\n%s", code, errOut)
	}
	if after := state(); after != before {
		t.Fatalf("a read changed the database:\n%s\n%s", before, after)
	}
	// allow: its commands write, the others are refused.
	if code, _, errOut := run("--context", "some", "compact", "organization", "1", "--yes"); code != ExitReadOnly ||
		errOut != "Error: context some allows only reschedule, killswitch (allow, line 10): compact would write to its database\n" {
		t.Errorf("compact on an allow context: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := run("--context", "some", "reschedule", "organization", "1", "--reason", "t", "--yes"); code != ExitOK {
		t.Errorf("reschedule on a context that allows it: exit %d\n%s", code, errOut)
	}
	if after := state(); after == before || !strings.Contains(after, "2016-08-01") {
		t.Errorf("the allowed reschedule wrote nothing: %s", after)
	}
}
