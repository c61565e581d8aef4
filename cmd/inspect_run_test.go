package cmd

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/enums"
	"github.com/outboxctl/outboxctl/internal/exitcode"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
)

// TestValidateOptions checks the flag checks that need no database, exactly: the message,
// the hint ("Try: …") and exit 2.
func TestValidateOptions(t *testing.T) {
	t.Parallel()
	const nonNeg = "want a non-negative integer id"
	for _, c := range []struct {
		name      string
		validate  func() error
		msg, hint string
	}{
		{"object id not a number", (&inspectObjectOptions{Category: "ORGANIZATION_UPDATE", ID: "x", Limit: 100}).Validate,
			`invalid object id "x": want an integer id`, "outboxctl inspect object ORGANIZATION_UPDATE 42"},
		{"object id negative", (&inspectObjectOptions{Category: "ORGANIZATION_UPDATE", ID: "-7", Limit: 100}).Validate,
			`invalid object id "-7": ` + nonNeg, "outboxctl inspect object ORGANIZATION_UPDATE 42"},
		{"object --limit 0", (&inspectObjectOptions{Category: "ORGANIZATION_UPDATE", ID: "7"}).Validate,
			"`--limit` must be positive", "outboxctl inspect object ORGANIZATION_UPDATE 7 --limit 100"},
		{"object --shard negative", (&inspectObjectOptions{Category: "TEAM_UPDATE", ID: "7", Limit: 1, Shard: -1, ShardSet: true}).Validate,
			"invalid `--shard` -1: " + nonNeg, "outboxctl inspect object TEAM_UPDATE 7 --shard 42"},
		{"object --shard with --any-scope", (&inspectObjectOptions{Category: "TEAM_UPDATE", ID: "7", Limit: 1, ShardSet: true, AnyScope: true}).Validate,
			"`--shard` and `--any-scope` exclude each other: a shard belongs to one scope", ""},
		{"message id not a number", (&inspectMessageOptions{messageArg{ID: "abc"}}).Validate, `invalid message id "abc": want an integer id`, "outboxctl inspect message 123456"},
		{"message id negative", (&inspectMessageOptions{messageArg{ID: "-5"}}).Validate, `invalid message id "-5": ` + nonNeg, "outboxctl inspect message 123456"},
		{"reschedule shard id negative", (&rescheduleOptions{shardArgs: shardArgs{Scope: "organization", ID: "-1"}}).Validate,
			`invalid shard id "-1": ` + nonNeg, "outboxctl reschedule organization 42"},
		{"compact shard id not a number", (&compactOptions{shardArgs: shardArgs{Scope: "organization", ID: "one"}}).Validate,
			`invalid shard id "one": want an integer id`, "outboxctl compact organization 42"},
		{"skip message id negative", (&skipOptions{messageArg: messageArg{ID: "-9"}}).Validate, `invalid message id "-9": ` + nonNeg, "outboxctl skip 123456"},
		{"restore --id negative", (&restoreOptions{IDs: []string{"4", "-3"}}).Validate, `invalid row id "-3": ` + nonNeg, "outboxctl restore FILE --id 123456"},
		{"restore --shard without id", (&restoreOptions{Shard: "organization"}).Validate,
			"invalid `--shard` \"organization\": want SCOPE/ID", "outboxctl restore FILE --shard organization/42"},
		{"restore --shard id negative", (&restoreOptions{Shard: "organization/-2"}).Validate,
			`invalid shard id "-2": ` + nonNeg, "outboxctl restore FILE --shard organization/42"},
		{"inspect shard id not a number", (&inspectShardOptions{shardArgs: shardArgs{Scope: "organization", ID: "x"}, Limit: 50, Order: "newest"}).Validate,
			`invalid shard id "x": want an integer id`, "outboxctl inspect shard organization 42"},
		{"inspect shard --limit 0", (&inspectShardOptions{shardArgs: shardArgs{Scope: "organization", ID: "1"}, Order: "newest"}).Validate,
			"`--limit` must be positive", "outboxctl inspect shard organization 1 --limit 50"},
		{"drain shard id not a number", (&drainOptions{shardArgs: shardArgs{Scope: "organization", ID: "4x"}, HandlerTimeout: time.Second}).Validate,
			`invalid shard id "4x": want an integer id`, "outboxctl drain organization 42"},
		{"drain --rate negative", (&drainOptions{shardArgs: shardArgs{Scope: "organization", ID: "4"}, HandlerTimeout: time.Second, Rate: -1}).Validate,
			"`--rate` must be a finite number of messages per second, 0 for no limit (got -1)", "outboxctl drain … --rate 50"},
		{"killswitch check id negative", (&killswitchCheckOptions{Scope: "organization", IDs: []string{"-1"}}).Validate,
			`invalid shard id "-1": want a non-negative integer`, ""},
		{"demo seed --rows too few", demoSeedOptions{Rows: 999, Shards: 100}.Validate, "`--rows` must be at least 1000", "outboxctl demo seed --rows 200000"},
		{"demo seed --shards too few", demoSeedOptions{Rows: 1000, Shards: 99}.Validate, "`--shards` must be at least 100", "outboxctl demo seed --shards 50000"},
	} {
		err := c.validate()
		var ue exitcode.Said // cmd's own, or a service's (internal/cmdline's ids)
		if !errors.As(err, &ue) || ue.Error() != c.msg || ue.TryLine() != c.hint || exitCode(context.Background(), err) != ExitUsage {
			t.Errorf("%s: %#v, want %q with hint %q (exit 2)", c.name, err, c.msg, c.hint)
		}
	}
	for name, validate := range map[string]func() error{
		"depth":            depthOptions{Estimate: true}.Validate,
		"inspect category": inspectCategoryOptions{Category: "TEAM_UPDATE", Exact: true}.Validate,
		"demo drop":        demoDropOptions{}.Validate,
		"demo seed":        demoSeedOptions{Rows: 1000, Shards: 100}.Validate,
	} {
		if err := validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	is := inspectShardOptions{shardArgs: shardArgs{Scope: "organization", ID: "3"}, Limit: 1, Order: "oldest"}
	dr := drainOptions{shardArgs: shardArgs{Scope: "organization", ID: " 7 "}, HandlerTimeout: time.Second}
	if is.Validate() != nil || is.id != 3 || dr.Validate() != nil || dr.id != 7 {
		t.Errorf("valid shard options: inspect shard %+v, drain %+v", is, dr)
	}
	// Every SCOPE ID command refuses a negative shard id the same way (Sentry's shard ids are
	// organization and user ids: "-3" is a typo).
	for name, o := range map[string]interface{ Validate() error }{
		"inspect shard": &inspectShardOptions{shardArgs: shardArgs{Scope: "organization", ID: "-3"}, Limit: 1, Order: "oldest"},
		"drain":         &drainOptions{shardArgs: shardArgs{Scope: "organization", ID: "-3"}, HandlerTimeout: time.Second},
	} {
		err := o.Validate()
		var ue exitcode.Said
		if !errors.As(err, &ue) || ue.Meaning() != meansUsage || err.Error() != `invalid shard id "-3": `+nonNeg || ue.TryLine() != "outboxctl "+name+" organization 42" {
			t.Errorf("%s -3: %v", name, err)
		}
	}
	o := inspectObjectOptions{Category: "TEAM_UPDATE", ID: "0", Limit: 1, ShardSet: true}
	r := restoreOptions{Ops: []string{"op"}, IDs: []string{"5", "3"}, Shard: "user/0"}
	if o.Validate() != nil || o.id != 0 || r.Validate() != nil || fmt.Sprintf("%v %v %s %d", r.Operations, r.RestoreSelection.IDs, r.shardScope, r.shardID) != "[op] [5 3] user 0" {
		t.Errorf("valid options: object %+v, restore %+v", o, r)
	}
}

// TestRunReadsDirect calls depth's and inspect object, category and message's run functions
// against a real schema: the rows of seedShard, printed exactly as -o json prints them.
func TestRunReadsDirect(t *testing.T) {
	t.Parallel()
	schema, ids := seedShard(t)
	ctx := context.Background()
	run := func(f func(factory, query.Target) (render.Doc, error)) string {
		t.Helper()
		a, out := directApp(schema, false, "")
		d, tg := readFactory(t, a)
		if err := printed(d, tg, f); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	reg := enums.Builtin()
	orgUpdate, err := reg.ResolveCategory("ORGANIZATION_UPDATE")
	if err != nil {
		t.Fatal(err)
	}

	// Five rows of ORGANIZATION_UPDATE: the total, then the category.
	got := run(func(d factory, tg query.Target) (render.Doc, error) { return runDepth(ctx, d, depthOptions{}, tg) })
	if want := `[
  {
    "category": null,
    "category_name": "(total)",
    "depth": 5
  },
  {
    "category": 2,
    "category_name": "ORGANIZATION_UPDATE",
    "depth": 5
  }
]
`; got != want {
		t.Errorf("depth:\n%s\nwant\n%s", got, want)
	}
	obj := inspectObjectOptions{Category: "ORGANIZATION_UPDATE", ID: "1", Limit: 2}
	if err := obj.Validate(); err != nil {
		t.Fatal(err)
	}
	// ORGANIZATION_UPDATE's object is its shard: object 1 of shard 2 is another object; the
	// newest two of shard 1's three rows, newest first.
	got = run(func(d factory, tg query.Target) (render.Doc, error) {
		return runInspectObject(ctx, d, obj, tg, orgUpdate)
	})
	objectRow := func(id int64, v int) string {
		return fmt.Sprintf(`  {
    "id": %d,
    "shard_scope": 0,
    "scope": "ORGANIZATION_SCOPE",
    "shard_identifier": 1,
    "category": 2,
    "category_name": "ORGANIZATION_UPDATE",
    "object_identifier": 1,
    "payload": {
      "v": %d
    },
    "scheduled_from": "2039-12-31T23:00:00Z",
    "scheduled_for": "2040-01-01T00:00:00Z",
    "date_added": "2039-12-31T22:00:00Z",
    "shard_scope_name": "ORGANIZATION_SCOPE"
  }`, id, v)
	}
	if want := "[\n" + objectRow(ids[2], 3) + ",\n" + objectRow(ids[1], 2) + "\n]\n"; got != want {
		t.Errorf("inspect object:\n%s\nwant\n%s", got, want)
	}
	got = run(func(d factory, tg query.Target) (render.Doc, error) {
		return runInspectCategory(ctx, d, inspectCategoryOptions{Exact: true}, tg, orgUpdate)
	})
	if want := `[
  {
    "shard_scope": 0,
    "scope": "ORGANIZATION_SCOPE",
    "pending": 5,
    "shards": 2,
    "objects": 2,
    "next_attempt": "2040-01-01T00:00:00Z",
    "oldest_message": "2039-12-31T22:00:00Z",
    "distinct_rows": 5,
    "distinct_exact": true
  }
]
`; got != want {
		t.Errorf("inspect category:\n%s\nwant\n%s", got, want)
	}
	msg := inspectMessageOptions{messageArg{ID: fmt.Sprint(ids[1])}}
	if err := msg.Validate(); err != nil {
		t.Fatal(err)
	}
	// The middle row of object 1's group: superseded by the newest, behind the head.
	got = run(func(d factory, tg query.Target) (render.Doc, error) { return runInspectMessage(ctx, d, msg, tg) })
	if want := fmt.Sprintf(`{
  "id": %d,
  "shard_scope": 0,
  "scope": "ORGANIZATION_SCOPE",
  "shard_identifier": 1,
  "category": 2,
  "category_name": "ORGANIZATION_UPDATE",
  "object_identifier": 1,
  "group_rows": 3,
  "newest_id": %d,
  "delivers": false,
  "shard_depth": 4,
  "head_id": %d,
  "is_head": false,
  "payload": {
    "v": 2
  },
  "scheduled_from": "2039-12-31T23:00:00Z",
  "scheduled_for": "2040-01-01T00:00:00Z",
  "date_added": "2039-12-31T22:00:00Z",
  "shard_scope_name": "ORGANIZATION_SCOPE",
  "next": [
    "outboxctl inspect shard organization 1"
  ]
}
`, ids[1], ids[2], ids[0]); got != want {
		t.Errorf("inspect message:\n%s\nwant\n%s", got, want)
	}

	// A message that is not there: exit 1, naming the other silo.
	a, _ := directApp(schema, false, "")
	d, tg := readFactory(t, a)
	_, err = runInspectMessage(ctx, d, inspectMessageOptions{messageArg{id: ids[4] + 1000}}, tg)
	if want := fmt.Sprintf("no outbox row with id %d in %s.sentry_regionoutbox (cell silo) (already delivered, or another silo: try --silo control)", ids[4]+1000, schema); err == nil || err.Error() != want || exitCode(ctx, err) != ExitError {
		t.Errorf("missing message: %v, want %q (exit 1)", err, want)
	}
}
