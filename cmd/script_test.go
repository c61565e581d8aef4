package cmd_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestMain lets the scripts run the real entry point as a subprocess ("exec outboxctl …"),
// so they see real exit codes and real stdout/stderr separation.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"outboxctl": func() { os.Exit(cmd.Main(context.Background(), os.Args[1:], render.System())) },
	})
}

// TestScripts runs testdata/script/*.txtar. Each script gets its own schema with Sentry's
// tables ($SCHEMA, dropped afterwards), the test server's DSN ($DSN), and no libpq
// environment, so "no database given" is the default inside a script.
func TestScripts(t *testing.T) {
	t.Parallel()
	pool := testdb.Pool(t)
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			schema := testdb.NewSchemaName()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			payload := fixture.PayloadJSONB
			if strings.Contains(env.WorkDir, "text_payload") {
				payload = fixture.PayloadText
			}
			optionValue := fixture.PayloadJSONB
			if strings.Contains(env.WorkDir, "text_options") {
				optionValue = fixture.PayloadText
			}
			if err := fixture.Create(ctx, pool, schema, fixture.Options{Payload: payload, OptionValue: optionValue}); err != nil {
				return err
			}
			env.Defer(func() {
				_, _ = pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			})
			env.Setenv("SCHEMA", schema)
			env.Setenv("DSN", testdb.DSN())
			env.Setenv("NO_COLOR", "1")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// execsql SQL runs one statement against the test server (to seed rows).
			"execsql": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 {
					ts.Fatalf("usage: execsql 'SQL'")
				}
				_, err := pool.Exec(context.Background(), args[0])
				if neg != (err != nil) {
					ts.Fatalf("execsql: %v", err)
				}
			},
		},
	})
}
