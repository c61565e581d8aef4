package killswitch_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/killswitch"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/query"
)

// The verdict the drain, killswitch check and doctor share: disabled in the table Sentry
// reads, not disabled elsewhere, unknown in a scope whose value cannot be decoded (and the
// check learns why).
func TestShardVerdict(t *testing.T) {
	t.Parallel()
	schema, conn := setup(t, fixture.PayloadJSONB)
	ctx := context.Background()
	exec(t, fmt.Sprintf(`INSERT INTO %s.sentry_option (key, value, last_updated) VALUES ($1, '[42, 5]', now()), ($2, '"bad"', now())`, schema),
		options.DisabledOrgShards, options.DisabledUserShards)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	sch, err := query.LoadSchema(ctx, tx, schema, []string{query.CellTable, query.ControlTable, query.OptionTable, query.ControlOptionTable})
	if err != nil {
		t.Fatal(err)
	}
	target := sch.Adapt(query.Target{Silo: query.SiloCell, Schema: schema})
	for _, c := range []struct {
		scope    query.Enum
		id       int64
		disabled *bool
	}{
		{orgScope(), 42, ptr(true)}, {orgScope(), 7, ptr(false)}, {query.Enum{Name: "USER_SCOPE", Value: 1}, 42, nil},
	} {
		v, err := killswitch.ShardVerdict(ctx, tx, target, sch, c.scope, c.id)
		if err != nil {
			t.Fatal(err)
		}
		if (v.Disabled == nil) != (c.disabled == nil) || (v.Disabled != nil && *v.Disabled != *c.disabled) || v.ReadFrom != query.OptionTable {
			t.Errorf("%s %d: verdict %+v, want disabled %v", c.scope.Name, c.id, v, c.disabled)
		}
		if (c.disabled == nil) != (v.ListErr != nil) || len(v.Tables) != 2 || v.Tables[0].Table != query.OptionTable || v.Tables[0].Disabled != (c.disabled != nil && *c.disabled) {
			t.Errorf("%s %d: tables %+v, list error %v", c.scope.Name, c.id, v.Tables, v.ListErr)
		}
		sw, err := killswitch.ReadSwitches(ctx, tx, target, sch)
		if err == nil { // the user scope's value is malformed: ReadSwitches says so
			t.Errorf("ReadSwitches: no error for a malformed value")
		}
		if got := sw.Verdict(c.scope, c.id).Disabled; (got == nil) != (c.disabled == nil) {
			t.Errorf("%s %d: Switches.Verdict %v, ShardVerdict %v", c.scope.Name, c.id, got, v.Disabled)
		}
	}
}

func ptr[T any](v T) *T { return &v }
