package cmd_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/jqrun"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestMain lets the scripts run the real entry point as a subprocess ("exec outboxctl …"),
// so they see real exit codes and real stdout/stderr separation. Every -o json document the
// tests print is validated against its command's schema (cmd.ContractTestingM, export_test.go).
func TestMain(m *testing.M) {
	// A --jq evaluation runs in a copy of the running executable: this test binary.
	jqrun.RunChildIfAsked()
	// The contract's schemas, for the scripts' subprocesses (they run in work directories of
	// their own): found here, in the package's directory, unless a parent found them.
	if os.Getenv(cmd.SchemaDirEnv) == "" {
		if dir, err := filepath.Abs(filepath.Join("..", "docs", "schema")); err == nil {
			os.Setenv(cmd.SchemaDirEnv, dir) //nolint:errcheck,usetesting // before any test runs
		}
	}
	// A bulk run's journal and a default archive go under the state directory: the tests'
	// own, never the user's (a test that looks at it sets its own with t.Setenv).
	var state string // the binary's own state directory, removed once every test ran
	if os.Getenv("XDG_STATE_HOME") == "" {
		dir, err := os.MkdirTemp("", "outboxctl-state-")
		if err == nil {
			state = dir
			os.Setenv("XDG_STATE_HOME", dir) //nolint:errcheck,usetesting // before any test runs
		}
	}
	testscript.Main(removingAfter{cmd.ContractTestingM{M: m}, state}, map[string]func(){
		"outboxctl": func() { os.Exit(cmd.MainForScript(os.Args[1:])) },
	})
}

// removingAfter runs the tests, then removes dir (testscript.Main exits: no defer runs).
type removingAfter struct {
	m   interface{ Run() int }
	dir string
}

func (r removingAfter) Run() int {
	code := r.m.Run()
	cmd.RemoveSharedBinary()
	if r.dir != "" {
		_ = os.RemoveAll(r.dir)
	}
	return code
}

func testRedisAddr() string {
	return testdb.RedisAddr()
}

func testRedisURL() string { return "redis://" + testRedisAddr() + "/0" }

// deleteRedisPrefix removes a script's keys with SCAN and DEL: never FLUSHDB, so scripts can
// run in parallel on one Redis.
func deleteRedisPrefix(prefix string) {
	rc := redis.NewClient(&redis.Options{Addr: testRedisAddr()})
	defer rc.Close()
	ctx := context.Background()
	iter := rc.Scan(ctx, 0, prefix+"*", 100).Iterator()
	for iter.Next(ctx) {
		_ = rc.Del(ctx, iter.Val()).Err()
	}
}

// TestScripts runs testdata/script/*.txtar. Each script gets its own schema with Sentry's
// tables ($SCHEMA, dropped afterwards), the test server's DSN ($DSN), and no libpq
// environment, so "no database given" is the default inside a script.
func TestScripts(t *testing.T) {
	t.Parallel()
	pool := testdb.Pool(t)
	rc := redis.NewClient(&redis.Options{Addr: testRedisAddr()})
	if err := rc.Ping(context.Background()).Err(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Redis at %s is unreachable: %v", testRedisAddr(), err)
		}
		t.Skipf("Redis at %s is unreachable: %v", testRedisAddr(), err)
	}
	_ = rc.Close()
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
			if err := fixture.Create(ctx, pool, schema, fixture.Options{Payload: payload, OptionValue: optionValue, Replicas: true}); err != nil {
				return err
			}
			// A monolith (what a schema with both outbox tables is) has the control silo's
			// webhook mailboxes too: doctor's printed SQL reads them.
			if err := fixture.CreateMailboxes(ctx, pool, schema, fixture.MailboxIndexesCurrent); err != nil {
				return err
			}
			env.Defer(func() {
				_, _ = pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			})
			env.Setenv("SCHEMA", schema)
			// Redis isolation: a key prefix of the script's own, deleted afterwards.
			prefix := schema + ":"
			env.Setenv("REDIS_PREFIX", prefix)
			env.Setenv("REDIS_URL", testRedisURL())
			env.Defer(func() { deleteRedisPrefix(prefix) })
			env.Setenv("DSN", testdb.DSN())
			env.Setenv("NO_COLOR", "1")
			env.Setenv(cmd.SchemaDirEnv, os.Getenv(cmd.SchemaDirEnv))
			// The suggestions the script's commands print join the suite's (export_test.go).
			env.Setenv(cmd.SuggestionLogEnv, os.Getenv(cmd.SuggestionLogEnv))
			env.Setenv("XDG_STATE_HOME", filepath.Join(env.WorkDir, "state")) // bulk runs' journals, default archives
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// exits CODE PROGRAM ARGS... runs PROGRAM as exec does (stdout and stderr are then
			// checked as usual) and requires exactly that exit code: "! exec" accepts any
			// failure, so a usage error (2) turned runtime failure (1) would pass unseen.
			"exits": exits,
			// redis ARGS... runs one Redis command (to seed cursors).
			"redis": func(ts *testscript.TestScript, neg bool, args []string) {
				rc := redis.NewClient(&redis.Options{Addr: testRedisAddr()})
				defer rc.Close()
				xs := make([]any, len(args))
				for i, a := range args {
					xs[i] = a
				}
				err := rc.Do(context.Background(), xs...).Err()
				if neg != (err != nil) {
					ts.Fatalf("redis: %v", err)
				}
			},
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

func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROGRAM [ARGS...] (no \"!\": the code says it)")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: bad code %q", args[0])
	}
	got := 0
	var ee *exec.ExitError
	switch err := ts.Exec(args[1], args[2:]...); {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("exits: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}
