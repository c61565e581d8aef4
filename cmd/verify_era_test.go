package cmd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/cmd"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// eraSummary is verify's summary rows with their not_compared.
type eraSummary struct {
	Summary []struct {
		Pair        string
		Missing     int64
		NotCompared *string `json:"not_compared"`
	} `json:"summary"`
}

// tornDownPairs are the pairs whose replica Sentry dropped in July 2026.
var tornDownPairs = map[string]bool{"team": true, "organizationmemberteam": true, "externalactor": true}

// checkEraSummary checks verify's summary on era: on a current catalog the three torn-down
// pairs are skipped with the teardown's reason (and no counts), on a May-2026 one they are
// compared (the team layout's missing teams); the other pairs are compared on both.
func checkEraSummary(t *testing.T, era fixture.Era, out string) {
	t.Helper()
	var d eraSummary
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	seen := 0
	for _, s := range d.Summary {
		why := ""
		if s.NotCompared != nil {
			why = *s.NotCompared
		}
		gone := strings.Contains(why, query.TornDownReason)
		switch {
		case tornDownPairs[s.Pair] && era == fixture.EraCurrent:
			seen++
			if !gone || s.Missing != 0 || strings.Contains(why, "is not there") {
				t.Errorf("%s on %s: want skipped as torn down, got missing %d, not_compared %q", s.Pair, era, s.Missing, why)
			}
		case tornDownPairs[s.Pair]:
			seen++
			if gone || s.Missing == 0 {
				t.Errorf("%s on %s: want compared (missing > 0), got missing %d, not_compared %q", s.Pair, era, s.Missing, why)
			}
		case gone:
			t.Errorf("%s on %s: a live pair said torn down: %q", s.Pair, era, why)
		}
	}
	if seen != len(tornDownPairs) {
		t.Errorf("%d of the torn-down pairs in the summary, want %d:\n%s", seen, len(tornDownPairs), out)
	}
}

// seedEra seeds the replication layout, and on a May-2026 catalog the teams' layout (its
// replicas exist); on a current one the teams, memberships and external actors without
// replicas, with a TEAM_UPDATE row queued as Sentry still writes them.
func seedEra(t *testing.T, era fixture.Era, cellSchema, controlSchema string, shape testdb.ReplicaShape) {
	t.Helper()
	testdb.SeedReplicas(t, cellSchema, controlSchema, shape)
	if era == fixture.EraMay2026 {
		testdb.SeedTeams(t, cellSchema, controlSchema, shape)
		return
	}
	c := pgx.Identifier{cellSchema}.Sanitize()
	for _, q := range []string{
		`INSERT INTO %s.sentry_team (id, organization_id, slug, name, status, idp_provisioned, date_added) VALUES (1, 1, 'team-1', 'Team 1', 0, false, now())`,
		`INSERT INTO %s.sentry_regionoutbox (shard_scope, shard_identifier, category, object_identifier, payload, scheduled_from, scheduled_for) VALUES (0, 1, 11, 1, NULL, now(), now())`,
	} {
		if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf(q, c)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestVerifyReplicateOnBothEras runs verify and replicate on a May-2026 and a current
// catalog, in one database and across two contexts: the torn-down pairs are compared on the
// first and skipped with the teardown's reason on the second (named or not, exit 0 under
// --fail-on-drift when nothing else drifted); replicate of a torn-down pair exits 2 with the
// reason and writes nothing, and on May 2026 writes its row.
func TestVerifyReplicateOnBothEras(t *testing.T) {
	t.Parallel()
	for _, era := range fixture.Eras {
		t.Run(string(era)+"/monolith", func(t *testing.T) {
			t.Parallel()
			shape := testdb.ReplicaShape{Orgs: 30, Members: 60, Cell: "--monolith--"}
			schema := testdb.Schema(t, fixture.Options{Replicas: true, Era: era})
			seedEra(t, era, schema, schema, shape)
			out, errOut := mustRun(t, cmd.ExitOK, schema, "verify", "-o", "json", "--limit", "0")
			checkEraSummary(t, era, out)
			// The drained-but-not-applied receivers are named; the torn-down categories only
			// where their replicas are gone.
			gone := "TEAM_UPDATE (11), ORGANIZATION_MEMBER_TEAM_UPDATE (26), EXTERNAL_ACTOR_UPDATE (35) rows drain and apply nothing"
			if !strings.Contains(errOut, "drained is not applied: Sentry's receivers of SEER_RUN_CREATE (48)") || strings.Contains(errOut, gone) != (era == fixture.EraCurrent) {
				t.Errorf("verify's note on %s:\n%s", era, errOut)
			}
			before := len(cellOutbox(t, schema, "id"))
			if era == fixture.EraCurrent {
				out, _ = mustRun(t, cmd.ExitOK, schema, "verify", "team", "-o", "json", "--fail-on-drift")
				if !strings.Contains(out, query.TornDownReason) {
					t.Errorf("verify team on a current catalog:\n%s", out)
				}
				_, errOut := mustRun(t, cmd.ExitUsage, schema, "replicate", "team", "1", "--yes")
				if !strings.Contains(errOut, "replicate team: "+query.TornDownReason) {
					t.Errorf("replicate team's refusal: %s", errOut)
				}
				if after := len(cellOutbox(t, schema, "id")); after != before {
					t.Errorf("replicate of a torn-down pair wrote %d row(s)", after-before)
				}
				return
			}
			mustRun(t, cmd.ExitOK, schema, "replicate", "team", "3", "--yes")
			if after := len(cellOutbox(t, schema, "id")); after != before+1 {
				t.Errorf("replicate team 3 on May 2026 wrote %d row(s), want 1", after-before)
			}
		})
		t.Run(string(era)+"/split", func(t *testing.T) {
			t.Parallel()
			shape := testdb.ReplicaShape{Orgs: 30, Members: 60, Cell: "us"}
			o := fixture.Options{Replicas: true, Era: era}
			cellSchema, controlSchema := testdb.Schema(t, o), testdb.Schema(t, o)
			seedEra(t, era, cellSchema, controlSchema, shape)
			main := splitRun(t, cellSchema, controlSchema)
			out, _ := main(cmd.ExitOK, "verify", "-o", "json", "--limit", "0")
			checkEraSummary(t, era, out)
			if era == fixture.EraCurrent {
				before := len(cellOutbox(t, cellSchema, "id"))
				_, errOut := main(cmd.ExitUsage, "replicate", "externalactor", "1", "--yes")
				if !strings.Contains(errOut, query.TornDownReason) || len(cellOutbox(t, cellSchema, "id")) != before {
					t.Errorf("replicate externalactor across contexts: %s", errOut)
				}
			}
		})
	}
}

// TestVerifyReplicaNotThereYet: a replica table absent from a database from before Aug 2025
// (text payloads) is "not there", never "torn down": that database predates the model.
func TestVerifyReplicaNotThereYet(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{Payload: fixture.PayloadText, Replicas: true})
	if _, err := testdb.Pool(t).Exec(context.Background(), "DROP TABLE "+pgx.Identifier{schema}.Sanitize()+".sentry_teamreplica"); err != nil {
		t.Fatal(err)
	}
	out, _ := mustRun(t, cmd.ExitOK, schema, "verify", "-o", "json")
	if !strings.Contains(out, "table "+schema+".sentry_teamreplica is not there") || strings.Contains(out, query.TornDownReason) {
		t.Fatalf("verify on a text-payload database without the team replica:\n%s", out)
	}
}
