package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/killswitch"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestRunKillswitchChangeDirect calls the add command's run function with its dependencies,
// without the binary: without a terminal and without --yes it refuses (exit 2) and writes
// nothing; on a terminal a "n" cancels (exit 2) and a "y" writes and audits.
func TestRunKillswitchChangeDirect(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	ch := killswitch.Change{Target: query.Target{Silo: query.SiloCell, Schema: schema},
		Scope: query.Enum{Name: "ORGANIZATION_SCOPE", Value: 0}, Key: options.DisabledOrgShards, IDs: []int64{42}, Add: true, Reason: "direct"}
	run := func(tty bool, answer string) (string, []string, error) {
		streams, out, _ := render.Test()
		streams.InTTY, streams.ErrTTY, streams.In = tty, tty, strings.NewReader(answer)
		a := &app{io: streams, getenv: streams.Getenv, g: globalOptions{Output: "json"}}
		var audited []string
		d := factory{printer: a.printer(), suggest: commandLines{next: a.nextCommand},
			db: database{connect: func(ctx context.Context, _ string) (*db.Conn, error) {
				return db.Connect(ctx, db.Config{DSN: testdb.DSN(), Command: "killswitch"})
			}, requireDB: func(string) error { return nil }},
			change: changeHooks{confirm: a.confirm, audit: func(command string, fields map[string]any) {
				audited = append(audited, fmt.Sprint(command, " ", fields["after"]))
			}},
		}
		err := runKillswitchChange(context.Background(), d, ch, false)
		return out.String(), audited, err
	}
	storedValue := func() string {
		var v string
		err := testdb.Pool(t).QueryRow(context.Background(), "SELECT coalesce((SELECT value::text FROM "+schema+".sentry_option WHERE key = $1), 'none')", ch.Key).Scan(&v)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	_, audited, err := run(false, "")
	var ue *cmdError
	if !errors.As(err, &ue) || err.Error() != "`--yes` required when not running interactively" || exitCode(context.Background(), err) != ExitUsage || len(audited) != 0 || storedValue() != "none" {
		t.Fatalf("non-TTY: %v, audited %v, stored %s", err, audited, storedValue())
	}
	_, audited, err = run(true, "n\n")
	if err == nil || err.Error() != "cancelled: nothing was changed" || exitCode(context.Background(), err) != ExitUsage || len(audited) != 0 || storedValue() != "none" {
		t.Fatalf("TTY no: %v, audited %v, stored %s", err, audited, storedValue())
	}
	out, audited, err := run(true, "y\n")
	if err != nil || len(audited) != 1 || audited[0] != "killswitch add [42]" || storedValue() != "[42]" || !strings.Contains(out, `"value": "[42]"`) {
		t.Fatalf("TTY yes: %v, audited %v, stored %s, out %s", err, audited, storedValue(), out)
	}
}
