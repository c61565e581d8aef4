package cmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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

// storedOption is the option's value as stored, "none" when the row is missing.
func storedOption(t *testing.T, schema, key string) string {
	t.Helper()
	var v string
	err := testdb.Pool(t).QueryRow(context.Background(), "SELECT coalesce((SELECT value::text FROM "+schema+".sentry_option WHERE key = $1), 'none')", key).Scan(&v)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// storedIDs decodes the option's value as its list of ids.
func storedIDs(t *testing.T, schema, key string) []int64 {
	t.Helper()
	raw := storedOption(t, schema, key)
	if raw == "none" {
		return nil
	}
	v, err := options.Decode(key, raw)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := v.StrictIDs()
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestKillswitchIDsFrom adds and removes many shards in one option write from a file and
// from stdin, in both options stores (jsonb and text values): the ids of the file and the
// arguments, repeats dropped, one audit line per command; a bad line is refused with its
// number and nothing is written.
func TestKillswitchIDsFrom(t *testing.T) {
	t.Parallel()
	for _, valueType := range []fixture.PayloadType{fixture.PayloadJSONB, fixture.PayloadText} {
		t.Run(string(valueType), func(t *testing.T) {
			t.Parallel()
			schema := testdb.Schema(t, fixture.Options{OptionValue: valueType})
			dir := t.TempDir()
			file := func(name, body string) string {
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
				return p
			}
			run := func(stdin string, args ...string) (int, string, string) {
				streams, out, errOut := render.Test()
				streams.In = strings.NewReader(stdin)
				base := []string{"--dsn", testdb.DSN(), "--schema", schema, "-o", "json", "killswitch"}
				code := Main(context.Background(), append(base, args...), streams)
				return code, out.String(), errOut.String()
			}
			audits := func(stderr string) int { return strings.Count(stderr, `"audit":"outboxctl"`) }

			// 250 ids, each twice, with blanks, comments and CRLF endings, plus two arguments.
			var b strings.Builder
			b.WriteString("# incident INC-1\n\n")
			for i := range 250 {
				fmt.Fprintf(&b, "  %d\r\n%d\n", 1000+i, 1000+i)
			}
			many := file("many.txt", b.String())
			code, out, stderr := run("", "add", "organization", "7", "1000", "--ids-from", many, "--reason", "INC-1", "--yes")
			want := []int64{7}
			for i := range 250 {
				want = append(want, int64(1000+i))
			}
			if got := storedIDs(t, schema, options.DisabledOrgShards); code != 0 || fmt.Sprint(got) != fmt.Sprint(want) || audits(stderr) != 1 ||
				!strings.Contains(stderr, "251 repeated shard id(s) dropped: 251 distinct") || !strings.Contains(out, `"changed": true`) {
				t.Fatalf("add: exit %d, stored %v, stderr %s, out %s", code, got, stderr, out)
			}
			if !strings.Contains(stderr, "add ORGANIZATION_SCOPE shard(s) 251 ids, the first 20 [7 1000 1001") {
				t.Fatalf("the plan does not name the count and the first ids: %s", stderr)
			}

			// Remove 100 of them from stdin, with one not in the list: one note for it.
			b.Reset()
			for i := range 100 {
				fmt.Fprintf(&b, "%d\n", 1000+2*i)
			}
			b.WriteString("99999")
			code, _, stderr = run(b.String(), "remove", "organization", "--ids-from", "-", "--reason", "INC-1", "--yes")
			var left []int64
			removed := map[int64]bool{}
			for i := range 100 {
				removed[int64(1000+2*i)] = true
			}
			for _, id := range want {
				if !removed[id] {
					left = append(left, id)
				}
			}
			if got := storedIDs(t, schema, options.DisabledOrgShards); code != 0 || fmt.Sprint(got) != fmt.Sprint(left) || audits(stderr) != 1 ||
				!strings.Contains(stderr, "note: ORGANIZATION_SCOPE shard 99999 is not disabled") {
				t.Fatalf("remove: exit %d, stored %v, stderr %s", code, got, stderr)
			}

			// Bad lines: refused with their number, nothing written.
			before := storedOption(t, schema, options.DisabledOrgShards)
			for _, c := range []struct{ body, want string }{
				{"1\n2\nx3\n4\n", "line 3: invalid shard id \"x3\""},
				{"1\n-5\n", "line 2: invalid shard id \"-5\""},
				{"1 2\n", "line 1: invalid shard id \"1 2\""},
				{"1\n" + strings.Repeat("9", killswitch.MaxIDLineBytes+1) + "\n", "line 2: longer than 1024 bytes"},
				{"# nothing\n\n", "holds no shard id"},
			} {
				code, out, stderr := run("", "add", "organization", "--ids-from", file("bad.txt", c.body), "--reason", "INC-1", "--yes")
				if code != ExitUsage || out != "" || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "Try: outboxctl --schema "+schema+" killswitch add --help") ||
					audits(stderr) != 0 || storedOption(t, schema, options.DisabledOrgShards) != before {
					t.Fatalf("%q: exit %d, stderr %s, out %s", c.body, code, stderr, out)
				}
			}
			code, _, stderr = run("", "add", "organization", "--ids-from", filepath.Join(dir, "missing.txt"), "--yes")
			if code != ExitUsage || !strings.Contains(stderr, "missing.txt") {
				t.Fatalf("missing file: exit %d, %s", code, stderr)
			}
			code, _, stderr = run("", "add", "organization", "--yes")
			if code != ExitUsage || !strings.Contains(stderr, "or a scope and --ids-from FILE") {
				t.Fatalf("no ids: exit %d, %s", code, stderr)
			}
		})
	}
}

// TestKillswitchManyShardsNeedTheCountTypedBack: on a terminal, a change of more than 100
// shards is not consented to with "y", only with its count; 100 still takes "y".
func TestKillswitchManyShardsNeedTheCountTypedBack(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	ids := func(n, from int) []int64 {
		var l []int64
		for i := range n {
			l = append(l, int64(from+i))
		}
		return l
	}
	run := func(answer string, ids []int64) (string, error) {
		streams, _, errOut := render.Test()
		streams.InTTY, streams.ErrTTY, streams.In = true, true, strings.NewReader(answer)
		a := &app{io: streams, getenv: streams.Getenv, g: globalOptions{Output: "json"}}
		d := factory{printer: a.printer(), change: changeHooks{confirm: a.confirm, audit: func(string, map[string]any) {}}, suggest: commandLines{next: a.nextCommand},
			db: database{connect: func(ctx context.Context, _ string) (*db.Conn, error) {
				return db.Connect(ctx, db.Config{DSN: testdb.DSN(), Command: "killswitch"})
			}, requireDB: func(string) error { return nil }},
		}
		ch := killswitch.Change{Target: query.Target{Silo: query.SiloCell, Schema: schema},
			Scope: query.Enum{Name: "ORGANIZATION_SCOPE", Value: 0}, Key: options.DisabledOrgShards, IDs: ids, Add: true, Reason: "many"}
		err := runKillswitchChange(context.Background(), d, ch, false)
		return errOut.String(), err
	}
	for _, answer := range []string{"y\n", "yes\n", "100\n", "1011\n"} {
		stderr, err := run(answer, ids(101, 1))
		if err == nil || exitCode(context.Background(), err) != ExitUsage || !strings.Contains(stderr, "This changes 101 shards. Type the number of shards to proceed: ") ||
			storedOption(t, schema, options.DisabledOrgShards) != "none" {
			t.Fatalf("%q: %v, %s, stored %s", answer, err, stderr, storedOption(t, schema, options.DisabledOrgShards))
		}
	}
	if stderr, err := run("101\n", ids(101, 1)); err != nil || len(storedIDs(t, schema, options.DisabledOrgShards)) != 101 {
		t.Fatalf("typed count: %v, %s", err, stderr)
	}
	if stderr, err := run("y\n", ids(100, 500)); err != nil || len(storedIDs(t, schema, options.DisabledOrgShards)) != 201 || strings.Contains(stderr, "Type the number") {
		t.Fatalf("100 shards take y: %v, %s", err, stderr)
	}
}
