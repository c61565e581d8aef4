package replica_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/replica"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// got turns a pair's collected drifts into the model's form.
func got(ds []replica.Drift) []testdb.ModelDrift {
	var out []testdb.ModelDrift
	for _, d := range ds {
		m := testdb.ModelDrift{Pair: d.Pair, Class: d.Class, Would: d.Would, Object: d.ObjectID}
		for _, f := range d.Fields {
			m.Fields = append(m.Fields, f.Field)
		}
		out = append(out, m)
	}
	return out
}

// verifyAll runs verify of the organization and member pairs, in one database (split
// false) or across two.
func verifyAll(t *testing.T, cell, control string, s testdb.ReplicaShape, split bool) ([]testdb.ModelDrift, map[string]replica.Counts) {
	t.Helper()
	return verifyPairs(t, cell, control, s, split, "organization", "organizationmember")
}

// verifyPairs runs verify of the pairs named.
func verifyPairs(t *testing.T, cell, control string, s testdb.ReplicaShape, split bool, names ...string) ([]testdb.ModelDrift, map[string]replica.Counts) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p := testdb.Pool(t)
	var all []testdb.ModelDrift
	counts := map[string]replica.Counts{}
	for _, name := range names {
		pair, err := replica.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		c := &replica.Collector{Pair: pair}
		if split {
			err = replica.VerifySplit(ctx, p, p, replica.Sides{SourceSchema: cell, ReplicaSchema: control}, s.Cell, nil, c)
		} else {
			err = replica.VerifyMonolith(ctx, p, cell, s.Cell, nil, c)
		}
		if err != nil {
			t.Fatalf("%s: %v", pair.Name, err)
		}
		all = append(all, got(c.Kept)...)
		counts[pair.Name] = c.Counts
	}
	return all, counts
}

// TestVerifyMatchesTheModel seeds drift of every class into shapes larger than the split
// merge's buffers (256 rows a side) and checks that both modes find exactly what the model
// of the layout (testdb.ReplicaModel, computed without SQL) says, and nothing on tables in
// sync.
func TestVerifyMatchesTheModel(t *testing.T) {
	t.Parallel()
	shape := testdb.ReplicaShape{Orgs: 1500, Members: 4000, Cell: "us"}
	mono := testdb.Schema(t, fixture.Options{Replicas: true})
	testdb.SeedReplicas(t, mono, mono, shape)
	cell, control := testdb.Schema(t, fixture.Options{Replicas: true}), testdb.Schema(t, fixture.Options{Replicas: true})
	testdb.SeedReplicas(t, cell, control, shape)
	for _, split := range []bool{false, true} {
		t.Run(fmt.Sprintf("split=%v", split), func(t *testing.T) {
			var drifts []testdb.ModelDrift
			var counts map[string]replica.Counts
			if split {
				drifts, counts = verifyAll(t, cell, control, shape, true)
			} else {
				drifts, counts = verifyAll(t, mono, mono, shape, false)
			}
			want, inSync := testdb.ReplicaModel(shape, split)
			t.Logf("%d drifted, in sync %v, counts %+v", len(want), inSync, counts)
			if len(drifts) != len(want) {
				t.Errorf("%d drifted objects, the model says %d", len(drifts), len(want))
			}
			for i := 0; i < len(want) && i < len(drifts); i++ {
				if !reflect.DeepEqual(drifts[i], want[i]) {
					t.Fatalf("drift %d: got %+v, the model says %+v", i, drifts[i], want[i])
				}
			}
			for pair, n := range inSync {
				if counts[pair].InSync != n {
					t.Errorf("%s: in sync %d, the model says %d", pair, counts[pair].InSync, n)
				}
			}
		})
	}
}

// TestVerifyInSyncReportsNothing: tables whose mappings are exact copies have no drift.
func TestVerifyInSyncReportsNothing(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{Replicas: true})
	ctx := context.Background()
	p := testdb.Pool(t)
	for _, q := range []string{
		`INSERT INTO %[1]s.sentry_organization (id, name, slug, status, date_added, default_role, flags, is_test) VALUES (1, 'A', 'a', 0, now(), 'member', 1 | 16 | 1024, false)`,
		`INSERT INTO %[1]s.sentry_organizationmapping (organization_id, slug, name, date_created, verified, idempotency_key, region_name, status, allow_joinleave, enhanced_privacy, require_2fa, early_adopter, disable_shared_issues, disable_new_visibility_features, require_email_verification, codecov_access, disable_member_project_creation, prevent_superuser_access, disable_member_invite) VALUES (1, 'a', 'A', now(), false, '', 'us', 0, true, false, true, false, false, false, false, false, false, false, true)`,
		`INSERT INTO %[1]s.sentry_organizationmember (id, organization_id, user_id, email, role, flags, date_added, has_global_access, inviter_id, invite_status, type) VALUES (7, 1, 70, NULL, 'owner', 0, now(), true, NULL, 0, 50)`,
		`INSERT INTO %[1]s.sentry_organizationmembermapping (organization_id, organizationmember_id, date_added, role, user_id, email, inviter_id, invite_status) VALUES (1, 7, now(), 'owner', 70, NULL, NULL, 0)`,
	} {
		if _, err := p.Exec(ctx, fmt.Sprintf(q, `"`+schema+`"`)); err != nil {
			t.Fatal(err)
		}
	}
	for _, split := range []bool{false, true} {
		drifts, counts := verifyAll(t, schema, schema, testdb.ReplicaShape{Cell: "us"}, split)
		if len(drifts) != 0 {
			t.Errorf("split=%v: drift on tables in sync: %+v", split, drifts)
		}
		if counts["organization"] != (replica.Counts{InSync: 1}) || counts["organizationmember"] != (replica.Counts{InSync: 1}) {
			t.Errorf("split=%v: counts %+v", split, counts)
		}
	}
}

// TestVerifyTeamPairsMatchTheModel seeds the team, organization member team and external
// actor layout (testdb.SeedTeams: drift of every class, queued rows in the object's shard
// and in another one) into shapes larger than the merge's buffers and checks both modes
// against the layout's model (testdb.TeamModel, computed without SQL).
func TestVerifyTeamPairsMatchTheModel(t *testing.T) {
	t.Parallel()
	shape := testdb.ReplicaShape{Orgs: 300, Members: 1200, Cell: "us"}
	mono := testdb.Schema(t, fixture.Options{Replicas: true})
	testdb.SeedReplicas(t, mono, mono, shape)
	testdb.SeedTeams(t, mono, mono, shape)
	cell, control := testdb.Schema(t, fixture.Options{Replicas: true}), testdb.Schema(t, fixture.Options{Replicas: true})
	testdb.SeedReplicas(t, cell, control, shape)
	testdb.SeedTeams(t, cell, control, shape)
	for _, split := range []bool{false, true} {
		t.Run(fmt.Sprintf("split=%v", split), func(t *testing.T) {
			c, r := mono, mono
			if split {
				c, r = cell, control
			}
			drifts, counts := verifyPairs(t, c, r, shape, split, "team", "organizationmemberteam", "externalactor")
			want, inSync := testdb.TeamModel(shape, split)
			if len(drifts) != len(want) {
				t.Errorf("%d drifted objects, the model says %d", len(drifts), len(want))
			}
			for i := 0; i < len(want) && i < len(drifts); i++ {
				if !reflect.DeepEqual(drifts[i], want[i]) {
					t.Fatalf("drift %d: got %+v, the model says %+v", i, drifts[i], want[i])
				}
			}
			for _, pair := range []string{"team", "organizationmemberteam", "externalactor"} {
				if counts[pair].InSync != inSync[pair] || counts[pair].InSync == 0 {
					t.Errorf("%s: in sync %d, the model says %d", pair, counts[pair].InSync, inSync[pair])
				}
			}
		})
	}
}

// TestPinValueTextRendersOneWay: under settings that change every kind of value's text
// (TimeZone, DateStyle, IntervalStyle, extra_float_digits, bytea_output), PinValueText
// makes a timestamptz, a date, an interval, a float and a bytea read as the defaults render
// them, so two sessions configured apart compare equal.
func TestPinValueTextRendersOneWay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const values = `SELECT '2026-01-02 03:04:05.5+00'::timestamptz::text, '2026-01-02'::date::text,
       '1 day 02:03:04'::interval::text, (0.1::float8 + 0.2)::text, '\x01ff'::bytea::text`
	want := []string{"2026-01-02 03:04:05.5+00", "2026-01-02", "1 day 02:03:04", "0.30000000000000004", `\x01ff`}
	read := func(pin bool) []string {
		t.Helper()
		tx, err := testdb.Pool(t).Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		for _, s := range []string{"SET LOCAL TimeZone = 'Asia/Tokyo'", "SET LOCAL DateStyle = 'SQL, DMY'", "SET LOCAL IntervalStyle = 'sql_standard'",
			"SET LOCAL extra_float_digits = 0", "SET LOCAL bytea_output = 'escape'"} {
			if _, err := tx.Exec(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		if pin {
			if err := replica.PinValueText(ctx, tx); err != nil {
				t.Fatal(err)
			}
		}
		got := make([]string, len(want))
		ptrs := make([]any, len(got))
		for i := range got {
			ptrs[i] = &got[i]
		}
		// The simple protocol plans the statement under these settings: a statement cached
		// by the first read would keep the constants it folded then.
		if err := tx.QueryRow(ctx, values, pgx.QueryExecModeSimpleProtocol).Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		return got
	}
	// Unpinned, every value reads otherwise: the settings are the ones that matter.
	for i, v := range read(false) {
		if v == want[i] {
			t.Fatalf("value %d reads %q under the odd settings too: the test would not see a setting left unpinned", i, v)
		}
	}
	if got := read(true); !reflect.DeepEqual(got, want) {
		t.Fatalf("pinned: %q, want %q", got, want)
	}
}
