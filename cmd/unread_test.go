package cmd_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// runAt runs outboxctl in-process against dsn and schema.
func runAt(dsn, schema string, args ...string) (int, string, string) {
	io, out, errOut := render.Test()
	code := cmd.Main(context.Background(), append([]string{"--dsn", dsn, "--schema", schema}, args...), io)
	return code, out.String(), errOut.String()
}

// dropAfterCommitOf makes p drop the connection right after the COMMIT that follows a
// statement whose command tag starts with tag ("UPDATE", "DELETE"): the change committed,
// and the read of the state after it fails as on a lost connection.
func dropAfterCommitOf(p *testdb.Proxy, tag string) {
	seen, committed := false, false
	p.DropAfter(func(typ byte, body []byte) bool {
		switch {
		case typ == 'C' && bytes.HasPrefix(body, []byte(tag+" ")):
			seen = true
		case typ == 'C' && seen && bytes.HasPrefix(body, []byte("COMMIT")):
			committed = true
		case typ == 'Z' && committed:
			return true // the COMMIT's ReadyForQuery: the client saw it commit
		}
		return false
	})
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestRescheduleUnreadShardIsNotEmpty: a shard whose depth could not be read (a lock held
// by another session, past --lock-timeout) is an error, never "empty: nothing to
// reschedule" with exit 0.
func TestRescheduleUnreadShardIsNotEmpty(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	seedGroups(t, schema, 3)
	ctx := context.Background()
	lock, err := testdb.Pool(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lock.Rollback(ctx) })
	if _, err := lock.Exec(ctx, "LOCK TABLE "+schema+".sentry_regionoutbox IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runAt(testdb.DSN(), schema, "--lock-timeout", "100ms", "reschedule", "organization", "1", "--yes")
	if code != cmd.ExitError || out != "" ||
		errOut != "Error: gave up waiting for a lock in shard-state (lock_timeout) (SQLSTATE 55P03); another session holds a conflicting lock; retry, or find it in pg_locks\n" {
		t.Errorf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestRepairsUnreadAfter: a reschedule or compact that committed, whose state after could
// not be read (the connection lost right after the COMMIT), prints "unknown" where it would
// print that state and exits 1 saying what committed: never a null or 0 with exit 0.
func TestRepairsUnreadAfter(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, tag, field string
		args             []string
	}{{"reschedule", "UPDATE", `"next_attempt_after": "unknown"`, nil}, {"compact", "DELETE", `"depth_after": "unknown"`, []string{"--archive", "ARCHIVE"}}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			schema := testdb.Schema(t, fixture.Options{})
			testdb.Insert(t, schema, "sentry_regionoutbox", testdb.Row{Scope: 0, Shard: 1, Category: 3, Object: 1},
				testdb.Row{Scope: 0, Shard: 1, Category: 3, Object: 1}, testdb.Row{Scope: 0, Shard: 1, Category: 3, Object: 1})
			p := testdb.NewProxy(t)
			dropAfterCommitOf(p, tt.tag)
			args := append([]string{tt.name, "organization", "1", "--yes", "-o", "json"}, tt.args...)
			if tt.args != nil {
				args[len(args)-1] = t.TempDir() + "/archive.jsonl"
			}
			code, out, errOut := runAt(p.DSN(), schema, args...)
			last := lastLine(errOut)
			if code != cmd.ExitError || !strings.Contains(out, tt.field) || !strings.HasPrefix(last, "Error: "+tt.name+" committed (") ||
				!strings.HasSuffix(last, "), but the shard's state after it could not be read: query in shard-state: query in session settings: conn closed") {
				t.Errorf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
		})
	}
}

// TestDrainUnreadAfter: a drain that delivered everything but could not read the shard after
// it (the server gone for the summary's fresh connection) says "unknown" and exits 1. The
// proxy takes one connection: the drain reads its plan and drains on one (it took two
// before the plan was read on the drain's own connection).
func TestDrainUnreadAfter(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	seedGroups(t, schema, 3)
	p := testdb.NewProxy(t)
	p.RefuseAfter(1)
	code, out, errOut := runAt(p.DSN(), schema, "drain", "organization", "1", "--handler", "exec:cat >/dev/null", "--yes", "-o", "json")
	if code != cmd.ExitError || !strings.Contains(out, `"left": "unknown"`) ||
		!strings.HasPrefix(lastLine(errOut), "Error: drain committed (3 message(s) delivered, 3 row(s) deleted), but the shard's state after it could not be read: cannot reach PostgreSQL at "+p.Addr) {
		t.Errorf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if n := countRows(t, schema); n != 0 {
		t.Errorf("%d rows left, want 0: the drain committed", n)
	}
}

// TestRepairsUseOneConnection: reschedule, compact and skip read the catalog, plan, change
// and read the state after on one connection (a repair used to connect twice: once for the
// catalog, once to write). The proxy refuses every connection after the first.
func TestRepairsUseOneConnection(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"reschedule", "organization", "1"}, {"compact", "organization", "1", "--archive", "ARCHIVE"}, {"skip", "1", "--archive", "ARCHIVE"}} {
		t.Run(args[0], func(t *testing.T) {
			t.Parallel()
			schema := testdb.Schema(t, fixture.Options{})
			testdb.Insert(t, schema, "sentry_regionoutbox", testdb.Row{Scope: 0, Shard: 1, Category: 3, Object: 1},
				testdb.Row{Scope: 0, Shard: 1, Category: 3, Object: 1})
			if args[len(args)-1] == "ARCHIVE" {
				args[len(args)-1] = t.TempDir() + "/archive.jsonl"
			}
			p := testdb.NewProxy(t)
			p.RefuseAfter(1)
			if code, out, errOut := runAt(p.DSN(), schema, append(args, "--yes", "-o", "json")...); code != 0 {
				t.Errorf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
		})
	}
}
