package cmd

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// halfwayThroughBackoff is a clock between seedShard's claim (23:00) and its next attempt
// (midnight): every seeded shard is backing off at the 1 h cap, due in 1800 s.
var halfwayThroughBackoff = time.Date(2039, 12, 31, 23, 30, 0, 0, time.UTC)

// seedKillswitched is seedShard with shard organization/2 disabled in sentry_option, the
// table Sentry reads for both outboxes here (fixture: a monolith).
func seedKillswitched(t *testing.T) (string, []int64) {
	t.Helper()
	schema, ids := seedShard(t)
	_, err := testdb.Pool(t).Exec(context.Background(), "INSERT INTO "+schema+`.sentry_option (key, value, last_updated)
		VALUES ('hybrid_cloud.authentication.disabled_organization_shards', '[2]', now())`)
	if err != nil {
		t.Fatal(err)
	}
	return schema, ids
}

// printed renders what a read's run function returns as runDocument does: the document,
// if any, then the verdict.
func printed(d factory, tg query.Target, run func(factory, query.Target) (render.Doc, error)) error {
	doc, err := run(d, tg)
	if doc != nil {
		if perr := d.printer.Print(doc); perr != nil {
			return perr
		}
	}
	return err
}

// readFactory is directApp's factory (-o json, a real DSN) and the target its flags
// select, as runWithFactory hands them to a read.
func readFactory(t *testing.T, a *app) (factory, query.Target) {
	t.Helper()
	tg, err := a.target()
	if err != nil {
		t.Fatal(err)
	}
	return a.factory(), tg
}

// readFactoryAt is readFactory with the clock at now.
func readFactoryAt(t *testing.T, a *app, now time.Time) (factory, query.Target) {
	t.Helper()
	d, tg := readFactory(t, a)
	d.clock.now = func() time.Time { return now }
	return d, tg
}

// shardJSON is one shard of the listing -o json prints, as seedKillswitched leaves it.
func shardJSON(id, depth, groups int, killswitched bool, due string) string {
	return fmt.Sprintf(`  {
    "shard_scope": 0,
    "scope": "ORGANIZATION_SCOPE",
    "shard_identifier": %d,
    "depth": %d,
    "coalesce_groups": %d,
    "categories": [
      2
    ],
    "category_names": [
      "ORGANIZATION_UPDATE"
    ],
    "next_attempt": "2040-01-01T00:00:00Z",%s
    "last_delay_seconds": 3600,
    "last_attempt": "2039-12-31T23:00:00Z",
    "oldest_message": "2039-12-31T22:00:00Z",
    "total_shards": 2,%s
    "state": "%s",
    "backoff_seconds": 3600,
    "next_attempt_in_seconds": 1800,
    "attempts_estimate": 12,
    "at_cap": true,
    "killswitched": %t
  }`, id, depth, groups, due, totalExact(due), map[bool]string{false: "backing off", true: "kill-switched"}[killswitched], killswitched)
}

// totalExact is the deepest shards' total_exact (two shards of --limit 10: counted); the
// stuck listing (no due column) has none.
func totalExact(due string) string {
	if due == "" {
		return ""
	}
	return "\n    \"total_exact\": true,"
}

// TestRunShardsDirect calls shards' run function against a real schema: the deepest shards
// with their state (shard 2 kill-switched) exactly as -o json prints them; --stuck with
// --fail-if-depth 3 prints the same shards and ends with exit 3 naming the deepest.
func TestRunShardsDirect(t *testing.T) {
	t.Parallel()
	schema, _ := seedKillswitched(t)
	ctx := context.Background()

	a, out := directApp(schema, false, "")
	o := shardsOptions{selectorOptions: selectorOptions{Limit: 10}}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	d, tg := readFactoryAt(t, a, halfwayThroughBackoff)
	if err := printed(d, tg, func(d factory, tg query.Target) (render.Doc, error) {
		return runShards(ctx, d, o, tg, query.ShardFilter{Limit: 10})
	}); err != nil {
		t.Fatal(err)
	}
	const due = "\n    \"due\": false,"
	if want := "[\n" + shardJSON(1, 4, 2, false, due) + ",\n" + shardJSON(2, 1, 1, true, due) + "\n]\n"; out.String() != want {
		t.Errorf("shards:\n%s\nwant\n%s", out, want)
	}

	a, out = directApp(schema, false, "")
	o = shardsOptions{selectorOptions: selectorOptions{Stuck: true, Limit: 10}, FailIfDepth: 3}
	d, tg = readFactoryAt(t, a, halfwayThroughBackoff)
	err := printed(d, tg, func(d factory, tg query.Target) (render.Doc, error) {
		return runShards(ctx, d, o, tg, query.ShardFilter{Limit: 10})
	})
	if want := "shard 0/1 holds 4 rows, more than --fail-if-depth 3"; err == nil || err.Error() != want || exitCode(ctx, err) != ExitThreshold {
		t.Errorf("--fail-if-depth 3: %v (exit %d), want %q (exit 3)", err, exitCode(ctx, err), want)
	}
	if want := "[\n" + shardJSON(1, 4, 2, false, "") + ",\n" + shardJSON(2, 1, 1, true, "") + "\n]\n"; out.String() != want {
		t.Errorf("shards --stuck:\n%s\nwant\n%s", out, want)
	}
}

// observedAt is the server's clock in inspect shard's card: the one value a test cannot fix.
var observedAt = regexp.MustCompile(`\n    "observed_at": "[^"]+",`)

// TestRunInspectShardDirect calls inspect shard's run function: the state card, the
// categories and the head then the newest message (--limit 2), each marked with its
// coalesce group, exactly as -o json prints them.
func TestRunInspectShardDirect(t *testing.T) {
	t.Parallel()
	schema, ids := seedShard(t)
	a, out := directApp(schema, false, "")
	o := inspectShardOptions{shardArgs: shardArgs{Scope: "organization", ID: "1"}, Limit: 2, Order: "newest"}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	d, tg := readFactoryAt(t, a, halfwayThroughBackoff)
	if err := runInspectShard(context.Background(), d, o, tg, orgShard1); err != nil {
		t.Fatal(err)
	}
	if !observedAt.MatchString(out.String()) {
		t.Fatalf("no observed_at in %s", out)
	}
	message := func(id int64, object, rows int, delivers bool, payload string, head bool) string {
		return fmt.Sprintf(`    {
      "id": %d,
      "category": 2,
      "category_name": "ORGANIZATION_UPDATE",
      "object_identifier": %d,
      "group_rows": %d,
      "delivers": %t,
      "payload": %s,
      "scheduled_from": "2039-12-31T23:00:00Z",
      "scheduled_for": "2040-01-01T00:00:00Z",
      "date_added": "2039-12-31T22:00:00Z",
      "head": %t
    }`, id, object, rows, delivers, payload, head)
	}
	want := fmt.Sprintf(`{
  "shard": {
    "shard_scope": 0,
    "scope": "ORGANIZATION_SCOPE",
    "shard_identifier": 1,
    "depth": 4,
    "next_attempt": "2040-01-01T00:00:00Z",
    "due": false,
    "head_id": %d,
    "head_category": 2,
    "head_category_name": "ORGANIZATION_UPDATE",
    "head_object": 1,
    "last_attempt": "2039-12-31T23:00:00Z",
    "last_delay_seconds": 3600,
    "state": "backing off",
    "backoff_seconds": 3600,
    "next_attempt_in_seconds": 1800,
    "attempts_estimate": 12,
    "at_cap": true,
    "killswitched": false,
    "next": [
      "outboxctl inspect message %[1]d",
      "outboxctl reschedule organization 1 --reason 'receiver fixed'"
    ]
  },
  "categories": [
    {
      "category": 2,
      "category_name": "ORGANIZATION_UPDATE",
      "depth": 4,
      "coalesce_groups": 2,
      "oldest_message": "2039-12-31T22:00:00Z",
      "newest_message": "2039-12-31T22:00:00Z"
    }
  ],
  "messages": [
%s,
%s,
%s
  ]
}
`, ids[0], message(ids[0], 1, 3, false, "{\n        \"v\": 1\n      }", true),
		message(ids[3], 2, 1, true, "{\n        \"w\": 1\n      }", false),
		message(ids[2], 1, 3, true, "{\n        \"v\": 3\n      }", false))
	if got := observedAt.ReplaceAllString(out.String(), ""); got != want {
		t.Errorf("inspect shard:\n%s\nwant\n%s", got, want)
	}
}

// TestRunKillswitchListAndCheckDirect calls killswitch list's and check's run functions:
// the list names shard 2 with what waits behind it; check says shard 2 is disabled where
// Sentry reads and shard 1 is not, each with its depth.
func TestRunKillswitchListAndCheckDirect(t *testing.T) {
	t.Parallel()
	schema, _ := seedKillswitched(t)
	ctx := context.Background()
	const monolith = "detected: both sentry_regionoutbox and sentry_controloutbox are here"

	a, out := directApp(schema, false, "")
	var lo killswitchListOptions
	if err := lo.Validate(); err != nil {
		t.Fatal(err)
	}
	d, tg := readFactoryAt(t, a, halfwayThroughBackoff)
	if err := printed(d, tg, func(d factory, tg query.Target) (render.Doc, error) {
		return runKillswitchList(ctx, d, lo, tg)
	}); err != nil {
		t.Fatal(err)
	}
	store := func(outbox string) string {
		return fmt.Sprintf(`    {
      "outbox": "%s",
      "options_table": "sentry_option",
      "deployment": "monolith",
      "decided": "%s"
    }`, outbox, monolith)
	}
	// No option is set here: every table is gated by Sentry's default 0, as backfill status
	// and the doctor say (#26).
	var gateRows []string
	for _, tb := range backfill.Registered(nil) {
		gateRows = append(gateRows, fmt.Sprintf(`    {
      "options_table": "sentry_option",
      "governs": "cell, control",
      "key": %q,
      "value": 0,
      "set": false,
      "coded": %d
    }`, backfill.OptionKey(tb.Name), tb.Coded))
	}
	gates := strings.Join(gateRows, ",\n")
	want := `{
  "stores": [
` + store("sentry_regionoutbox") + ",\n" + store("sentry_controloutbox") + `
  ],
  "disabled": [
    {
      "options_table": "sentry_option",
      "governs": "cell, control",
      "scope": "ORGANIZATION_SCOPE",
      "shard": 2,
      "silo": "cell",
      "region_name": null,
      "depth": 1,
      "coalesce_groups": 1,
      "oldest_message": "2039-12-31T22:00:00Z",
      "next_attempt": "2040-01-01T00:00:00Z"
    }
  ],
  "backfill_gates": [
` + gates + `
  ]
}
`
	if out.String() != want {
		t.Errorf("killswitch list:\n%s\nwant\n%s", out, want)
	}

	check := func(id string, depth, groups int, disabled bool) {
		t.Helper()
		a, out := directApp(schema, false, "")
		o := killswitchCheckOptions{Scope: "organization", IDs: []string{id}}
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		d, tg := readFactoryAt(t, a, halfwayThroughBackoff)
		if err := printed(d, tg, func(d factory, tg query.Target) (render.Doc, error) {
			return runKillswitchCheck(ctx, d, o, tg, orgShard1.Scope, a.g.Silo)
		}); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(`{
  "killswitch": {
    "scope": "ORGANIZATION_SCOPE",
    "shard": %[1]s,
    "disabled_in_sentry_option": %[4]t,
    "disabled_in_sentry_controloption": false,
    "read_from": "sentry_option",
    "disabled": %[4]t,
    "deployment": "%[5]s"
  },
  "waiting": [
    {
      "shard_identifier": %[1]s,
      "depth": %[2]d,
      "coalesce_groups": %[3]d,
      "oldest_message": "2039-12-31T22:00:00Z",
      "next_attempt": "2040-01-01T00:00:00Z"
    }
  ]
}
`, id, depth, groups, disabled, monolith)
		if out.String() != want {
			t.Errorf("killswitch check %s:\n%s\nwant\n%s", id, out, want)
		}
	}
	check("2", 1, 1, true)
	check("1", 4, 2, false)
}
