package replica_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/replica"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// sentryOutboxFor is a model of what Sentry saves for a model instance, written from
// Sentry's source, not from replicate: ReplicatedCellModel.outbox_for_update()
// (src/sentry/hybridcloud/outbox/base.py) calls category.as_cell_outbox(model=self,
// payload=self.payload_for_update(), shard_identifier=None); infer_identifiers gives
// ORGANIZATION_SCOPE the organization (an Organization's own id, else organization_id) and
// the object the model's id; OrganizationMember's payload is {"user_id": user_id}, an
// Organization's None; the row's defaults are OutboxBase's: scheduled_for THE_PAST,
// scheduled_from and date_added timezone.now(). sentry.utils.json writes compact JSON into
// a text column; Django's JSONField a jsonb one.
func sentryOutboxFor(model string, id, organizationID int64, userID *int64) []any {
	switch model {
	case "Organization":
		return []any{0, id, 2, id, nil}
	case "OrganizationMember":
		payload := "null"
		if userID != nil {
			payload = fmt.Sprint(*userID)
		}
		return []any{0, organizationID, 3, id, `{"user_id":` + payload + `}`}
	case "Team":
		// ReplicatedCellModel's default payload (None); ORGANIZATION_SCOPE: organization_id.
		return []any{0, organizationID, 11, id, nil}
	case "OrganizationMemberTeam":
		// outbox_for_update(shard_identifier=self.organizationmember.organization_id).
		return []any{0, organizationID, 26, id, nil}
	}
	panic(model)
}

// sentryExternalActorOutbox is ExternalActor's row: EXTERNAL_ACTOR_UPDATE (35) in
// INTEGRATION_SCOPE (5), whose shard infer_identifiers takes from integration_id.
func sentryExternalActorOutbox(id, integrationID int64) []any {
	return []any{5, integrationID, 35, id, nil}
}

// TestReplicateWritesSentrysOutboxRow compares, column by column as text, the rows
// replicate writes with the rows the model of Sentry's outbox_for_update() writes, in a
// jsonb and a text payload column, for objects that exist and for gone ones (the deletion
// outbox, identifiers from the replica).
func TestReplicateWritesSentrysOutboxRow(t *testing.T) {
	t.Parallel()
	for _, pt := range []fixture.PayloadType{fixture.PayloadJSONB, fixture.PayloadText} {
		t.Run(string(pt), func(t *testing.T) {
			schema := testdb.Schema(t, fixture.Options{Replicas: true, Payload: pt})
			ctx := context.Background()
			p := testdb.Pool(t)
			s := pgx.Identifier{schema}.Sanitize()
			for _, q := range []string{
				`INSERT INTO %[1]s.sentry_organization (id, name, slug, status, date_added, default_role, flags, is_test) VALUES (4, 'A', 'a', 0, now(), 'member', 0, false)`,
				`INSERT INTO %[1]s.sentry_organizationmember (id, organization_id, user_id, email, role, flags, date_added, has_global_access, invite_status, type) VALUES (40, 4, 400, NULL, 'member', 0, now(), true, 0, 50), (41, 4, NULL, 'x@example.com', 'member', 0, now(), true, 1, 50)`,
				`INSERT INTO %[1]s.sentry_organizationmembermapping (organization_id, organizationmember_id, date_added, role, user_id) VALUES (9, 90, now(), 'member', 900)`,
				`INSERT INTO %[1]s.sentry_team (id, organization_id, slug, name, status, idp_provisioned) VALUES (6, 4, 't', 'T', 0, false)`,
				`INSERT INTO %[1]s.sentry_teamreplica (team_id, organization_id, slug, name, status, date_added) VALUES (8, 9, 'gone', 'Gone', 0, now())`,
				`INSERT INTO %[1]s.sentry_organizationmember_teams (id, team_id, organizationmember_id, is_active) VALUES (60, 6, 40, true)`,
				`INSERT INTO %[1]s.sentry_organizationmember_teamsreplica (team_id, organization_id, organizationmember_id, organizationmemberteam_id, is_active, date_added) VALUES (8, 9, 90, 61, true, now())`,
				`INSERT INTO %[1]s.sentry_externalactor (id, date_updated, user_id, organization_id, integration_id, provider, external_name) VALUES (70, now(), 400, 4, 123, 110, '@a')`,
				`INSERT INTO %[1]s.hybridcloud_externalactorreplica (externalactor_id, user_id, organization_id, integration_id, provider, external_name) VALUES (71, 900, 9, 77, 110, '@b')`,
			} {
				if _, err := p.Exec(ctx, fmt.Sprintf(q, s)); err != nil {
					t.Fatal(err)
				}
			}
			u400, u900 := int64(400), int64(900)
			cases := []struct {
				pair string
				ids  []int64
				want [][]any
			}{
				{"organization", []int64{4, 8}, [][]any{sentryOutboxFor("Organization", 4, 4, nil), sentryOutboxFor("Organization", 8, 8, nil)}},
				{"organizationmember", []int64{40, 41, 90}, [][]any{sentryOutboxFor("OrganizationMember", 40, 4, &u400),
					sentryOutboxFor("OrganizationMember", 41, 4, nil), sentryOutboxFor("OrganizationMember", 90, 9, &u900)}},
				{"team", []int64{6, 8}, [][]any{sentryOutboxFor("Team", 6, 4, nil), sentryOutboxFor("Team", 8, 9, nil)}},
				{"organizationmemberteam", []int64{60, 61}, [][]any{sentryOutboxFor("OrganizationMemberTeam", 60, 4, nil), sentryOutboxFor("OrganizationMemberTeam", 61, 9, nil)}},
				{"externalactor", []int64{70, 71}, [][]any{sentryExternalActorOutbox(70, 123), sentryExternalActorOutbox(71, 77)}},
			}
			for _, c := range cases {
				pair, _ := replica.Lookup(c.pair)
				objs, unknown, err := replica.ReplicateObjects(ctx, p, p, pair, replica.Sides{SourceSchema: schema, ReplicaSchema: schema}, append(c.ids, 12345))
				if err != nil {
					t.Fatal(err)
				}
				if pair.Name != "organization" && !reflect.DeepEqual(unknown, []int64{12345}) {
					t.Errorf("%s: unknown %v, want [12345]", c.pair, unknown)
				}
				if pair.Name == "organization" {
					objs = objs[:2] // 12345 gets a deletion outbox too: an organization's shard is its id
				}
				tx, err := p.Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := query.Exec(ctx, tx, query.ReplicateOutbox(pair.OutboxTable(schema), pair.OutboxRows(objs, nil, string(pt), fixture.ThePast), query.Why{})); err != nil {
					t.Fatal(err)
				}
				// The model's rows, in the same transaction (now() is the transaction's).
				for _, w := range c.want {
					if _, err := tx.Exec(ctx, fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for, date_added)
VALUES ($1, $2, $3, $4, $5::%s, now(), '%s', now())`, s, pt, fixture.ThePast), w...); err != nil {
						t.Fatal(err)
					}
				}
				rows, err := tx.Query(ctx, fmt.Sprintf(`SELECT concat_ws('|', shard_scope, shard_identifier, category, object_identifier, coalesce(payload::text, 'NULL'),
       scheduled_from::text, scheduled_for::text, date_added::text, pg_typeof(payload)::text) FROM %s.sentry_regionoutbox ORDER BY id`, s))
				if err != nil {
					t.Fatal(err)
				}
				all, err := pgx.CollectRows(rows, pgx.RowTo[string])
				if err != nil {
					t.Fatal(err)
				}
				if err := tx.Rollback(ctx); err != nil {
					t.Fatal(err)
				}
				n := len(c.want)
				if len(all) != 2*n {
					t.Fatalf("%s: %d rows, want %d of replicate's and %d of the model's", c.pair, len(all), n, n)
				}
				for i := 0; i < n; i++ {
					if all[i] != all[n+i] {
						t.Errorf("%s: replicate wrote\n  %s\nSentry writes\n  %s", c.pair, all[i], all[n+i])
					}
				}
			}
		})
	}
}
