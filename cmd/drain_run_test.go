package cmd

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/query"
)

// TestRunDrainDirect calls drain's run function on shard organization/1 through an exec
// handler: refused off a terminal without --yes and cancelled by "n" (exit 2, nothing
// audited, no row deleted); on a terminal "y" delivers the shard's two coalesce groups,
// deletes its four rows and leaves the other shard's row exactly as it was.
func TestRunDrainDirect(t *testing.T) {
	t.Parallel()
	schema, _ := seedShard(t)
	original := outboxRows(t, schema, wholeRow)
	target := query.Target{Silo: query.SiloCell, Schema: schema}
	o := drainOptions{shardArgs: shardArgs{Scope: "organization", ID: "1"}, Handler: "exec:cat > /dev/null",
		HandlerTimeout: 10 * time.Second, Mode: string(drain.ModeBatch), Reason: "INC-6"}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	// A clock that stands still: the summary's seconds are exactly 0.
	at := time.Date(2040, 1, 1, 0, 30, 0, 0, time.UTC)
	run := func(_ *app, d factory, yes bool) error {
		o.Yes = yes
		d.clock.now = func() time.Time { return at }
		return runDrain(context.Background(), d, o, target, orgShard1)
	}
	checkRefusals(t, schema, run)

	out, audited := runConfirmed(t, schema, run)
	wantOut := `{
  "shard": "ORGANIZATION_SCOPE/1",
  "delivered": 2,
  "deleted": 4,
  "left": 0,
  "next_attempt": null,
  "delay": "none (empty)",
  "seconds": 0,
  "next": [
    "outboxctl doctor --check stuck"
  ]
}
`
	if out != wantOut || !reflect.DeepEqual(audited, []string{"drain reason=INC-6"}) {
		t.Fatalf("stdout %q, audited %v", out, audited)
	}
	if got, want := outboxRows(t, schema, wholeRow), original[4:]; !reflect.DeepEqual(got, want) {
		t.Fatalf("rows after the drain:\n%q\nwant\n%q", got, want)
	}
}
