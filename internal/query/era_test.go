package query

import (
	"context"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

func loadEra(t *testing.T, schema string) Schema {
	t.Helper()
	tx, err := testdb.Pool(t).Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	s, err := LoadSchema(context.Background(), tx, schema, EraTables())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestEraModel reads both era fixtures' catalogs and checks every answer of the era model:
// the replicas (present on a May-2026 catalog, torn down on a current one), the outbox
// tables, where the watermarks live, and the indexes (the webhook payload's two dropped in
// Aug 2026, the outboxes' hash-named three).
func TestEraModel(t *testing.T) {
	t.Parallel()
	type want struct {
		replica      ReplicaState
		outboxes     []string
		watermarks   bool
		scheduleFor  bool
		priority     bool
		galIndexes   []string
		webhookCount int
	}
	for era, w := range map[fixture.Era]want{
		fixture.EraMay2026: {replica: ReplicaPresent, outboxes: []string{CellTable, ControlTable}, watermarks: false,
			scheduleFor: true, priority: true, webhookCount: 6},
		fixture.EraCurrent: {replica: ReplicaTornDown, outboxes: []string{CellTable, ControlTable, GroupActionLogTable}, watermarks: true,
			galIndexes:   []string{"sentry_grou_shard_s_298428_idx", "sentry_grou_shard_s_30f0b8_idx", "sentry_grou_shard_s_359989_idx", "sentry_groupactionlogoutbox_pkey"},
			webhookCount: 4},
	} {
		t.Run(string(era), func(t *testing.T) {
			t.Parallel()
			s := loadEra(t, testdb.Schema(t, fixture.Options{Replicas: true, Era: era}))
			for _, td := range Teardowns {
				if got := s.ReplicaState(td.Table); got != w.replica {
					t.Errorf("ReplicaState(%s) = %d, want %d", td.Table, got, w.replica)
				}
			}
			// Category 26 is live where its replica is here, a leftover where it was torn down.
			if leftover, known := s.CategoryLeftover(26); !known || leftover != (w.replica == ReplicaTornDown) {
				t.Errorf("CategoryLeftover(26) = %v, %v on %s", leftover, known, era)
			}
			if _, known := s.CategoryLeftover(11); known {
				t.Error("TEAM_UPDATE (11) is not retired: the catalog has no word on it")
			}
			if got := s.ReplicaState("sentry_organizationmapping"); got != ReplicaUnknown {
				t.Errorf("a table not looked up: %d, want unknown", got)
			}
			if got := s.OutboxTables(); !reflect.DeepEqual(got, w.outboxes) {
				t.Errorf("OutboxTables = %v, want %v", got, w.outboxes)
			}
			for _, silo := range []Silo{SiloCell, SiloControl} {
				if got := s.WatermarksInPostgres(silo); got != w.watermarks {
					t.Errorf("WatermarksInPostgres(%s) = %v, want %v", silo, got, w.watermarks)
				}
				// The deletion (tombstone) watermarks moved with them (PR #123171, Sep 2026).
				if got := s.DeletionWatermarksInPostgres(silo); got != w.watermarks {
					t.Errorf("DeletionWatermarksInPostgres(%s) = %v, want %v", silo, got, w.watermarks)
				}
			}
			sf, pr := s.WebhookIndexes()
			if sf != w.scheduleFor || pr != w.priority || len(s.IndexesOf(WebhookPayloadTable)) != w.webhookCount {
				t.Errorf("webhook indexes: schedule_for %v, priority %v, %v; want %v, %v, %d", sf, pr, s.IndexesOf(WebhookPayloadTable), w.scheduleFor, w.priority, w.webhookCount)
			}
			if !s.HasIndex(WebhookPayloadTable, "webhookpayload_mailbox_id_idx") {
				t.Error("the (mailbox_name, id) index is in both eras")
			}
			if got := s.IndexesOf(GroupActionLogTable); !reflect.DeepEqual(got, w.galIndexes) {
				t.Errorf("IndexesOf(%s) = %v, want %v", GroupActionLogTable, got, w.galIndexes)
			}
			wantCell := []string{"sentry_regi_shard_s_bfff84_idx", "sentry_regi_shard_s_cd9995_idx", "sentry_regi_shard_s_e7412f_idx", "sentry_regionoutbox_pkey"}
			if got := s.IndexesOf(CellTable); !reflect.DeepEqual(got, wantCell) {
				t.Errorf("IndexesOf(%s) = %v, want %v", CellTable, got, wantCell)
			}
		})
	}
}

// TestEraReplicaNotYet: a replica absent from a database whose payload is still text (before
// Aug 2025, when every replica existed) is not there yet, not torn down; a dropped replica
// that was never among Sentry's teardowns is not there yet on any era.
func TestEraReplicaNotYet(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{Payload: fixture.PayloadText, Replicas: true})
	if _, err := testdb.Pool(t).Exec(context.Background(), "DROP TABLE "+pgx.Identifier{schema}.Sanitize()+".sentry_teamreplica"); err != nil {
		t.Fatal(err)
	}
	if got := loadEra(t, schema).ReplicaState("sentry_teamreplica"); got != ReplicaNotYet {
		t.Fatalf("text payload: ReplicaState = %d, want not yet (%d)", got, ReplicaNotYet)
	}
	current := testdb.Schema(t, fixture.Options{Replicas: true, Era: fixture.EraCurrent})
	if _, err := testdb.Pool(t).Exec(context.Background(), "DROP TABLE "+pgx.Identifier{current}.Sanitize()+".sentry_organizationmapping"); err != nil {
		t.Fatal(err)
	}
	tx, err := testdb.Pool(t).Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	s, err := LoadSchema(context.Background(), tx, current, []string{"sentry_organizationmapping"})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.ReplicaState("sentry_organizationmapping"); got != ReplicaNotYet {
		t.Fatalf("a replica Sentry never dropped: %d, want not yet", got)
	}
}
