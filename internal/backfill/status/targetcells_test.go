package status_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/backfill/status"
	"github.com/outboxctl/outboxctl/internal/db"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestStatusTargetCells: a control table's backfill complete with
// outbox_replication.<table>.backfill.target_cells = ["us"] is complete for us and not
// attempted for de (a cell the organization mappings name), on both era fixtures: the cursor
// in Redis (May 2026, no watermark tables) or in the control watermark table (current).
// Without the option the row names no cells.
func TestStatusTargetCells(t *testing.T) {
	t.Parallel()
	for _, era := range fixture.Eras {
		t.Run(string(era), func(t *testing.T) {
			t.Parallel()
			schema := testdb.Schema(t, fixture.Options{Replicas: true, Era: era})
			conn, err := db.Connect(context.Background(), db.Config{DSN: testdb.DSN(), Command: "status-test"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = conn.Close(context.Background()) })
			tb, ok := backfill.Lookup(backfill.Registered(nil), "sentry_apikey")
			if !ok || tb.Silo != backfill.Control {
				t.Fatal("sentry_apikey is not a registered control table")
			}
			for i, cell := range []string{"us", "de", "us"} {
				exec(t, fmt.Sprintf(`INSERT INTO %s.sentry_organizationmapping (organization_id, slug, name, date_created, verified, idempotency_key,
       region_name, status, allow_joinleave, enhanced_privacy, require_2fa, early_adopter, disable_shared_issues,
       disable_new_visibility_features, require_email_verification, codecov_access, disable_member_project_creation,
       prevent_superuser_access, disable_member_invite)
VALUES ($1, $2, 'o', now(), false, '', $3, 0, false, false, false, false, false, false, false, false, false, false, false)`, schema), i+1, fmt.Sprint("org-", i), cell)
			}
			exec(t, fmt.Sprintf(`INSERT INTO %s.sentry_option (key, value, last_updated) VALUES ($1, $2::jsonb, now())`, schema),
				backfill.OptionKey(tb.Name), fmt.Sprint(tb.Coded))
			src := status.Source{Conn: conn, Schema: schema, Store: status.StoreAuto}
			if era == fixture.EraMay2026 {
				prefix := "statustest:" + schema + ":"
				rc := testRedis(t, prefix)
				if err := rc.Set(context.Background(), query.BackfillRedisKey(prefix, tb.Name), fmt.Sprintf("[0, %d]", tb.Coded+1), 0).Err(); err != nil {
					t.Fatal(err)
				}
				src.KeyPrefix, src.Redis = prefix, db.RedisConfig{URL: "redis://" + redisAddr() + "/0"}
			} else {
				exec(t, fmt.Sprintf(`INSERT INTO %s.hybridcloud_controloutboxbackfillwatermark (date_updated, date_added, table_name, low_bound, version)
VALUES (now(), now(), $1, 0, $2)`, schema), tb.Name, tb.Coded+1)
			}
			read := func() status.Row {
				t.Helper()
				rep, err := src.Status(context.Background(), status.Request{Tables: []backfill.Table{tb}})
				if err != nil {
					t.Fatal(err)
				}
				return rep.Rows[0]
			}
			if r := read(); r.State != "complete" || r.Cells != "" {
				t.Fatalf("without target cells: state %q, cells %q", r.State, r.Cells)
			}
			exec(t, fmt.Sprintf(`INSERT INTO %s.sentry_option (key, value, last_updated) VALUES ($1, '["us"]'::jsonb, now())`, schema), backfill.TargetCellsKey(tb.Name))
			r := read()
			if r.State != "complete" || r.Cells != "de: not attempted; us: complete" ||
				!strings.HasSuffix(r.Note, "outbox_replication.sentry_apikey.backfill.target_cells limits it to us: not attempted for de") {
				t.Fatalf("target cells [us]: state %q, cells %q, note %q", r.State, r.Cells, r.Note)
			}
		})
	}
}
