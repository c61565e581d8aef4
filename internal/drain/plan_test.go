package drain_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// The summary's card and its JSON are one document: the card's keys are Summary's JSON
// fields in their order, with and without the fields a drain may leave out.
func TestSummaryCardIsItsJSON(t *testing.T) {
	t.Parallel()
	failed := drain.Message{ID: 7, CategoryName: "USER_UPDATE"}
	for _, res := range []drain.Result{
		{Delivered: 2, Deleted: 3},
		{Delivered: 1, Uncommitted: 1, Contended: true, Failed: &failed, FailedErr: errors.New("x"), Abandoned: &failed},
	} {
		s := drain.Summarize(org(1), res, drain.AfterState(4, time.Now().Add(time.Minute), time.Now()), res.Failed != nil, 1500*time.Millisecond)
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		dec := json.NewDecoder(bytes.NewReader(b))
		if _, err := dec.Token(); err != nil {
			t.Fatal(err)
		}
		for dec.More() {
			k, _ := dec.Token()
			keys = append(keys, k.(string))
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				t.Fatal(err)
			}
		}
		var card []string
		for _, f := range s.Card() {
			card = append(card, f.Key)
		}
		if !reflect.DeepEqual(keys, card) {
			t.Fatalf("card keys %v, JSON keys %v", card, keys)
		}
	}
}

// TestPlanCountsUpToTheCapAndSaysSo: the plan read before the claim counts each category's
// rows and messages up to query.PlanCap; a count that stopped there reads "at least" in its
// lines and flags, and the counts below it are exact (the rows a plain SELECT counts).
func TestPlanCountsUpToTheCapAndSaysSo(t *testing.T) {
	t.Parallel()
	schema, target := setup(t)
	// Shard 1: category 2 past the cap in rows (40 messages), category 3 a few rows; shard 2
	// only category 3, below the cap.
	if _, err := testdb.Pool(t).Exec(context.Background(), fmt.Sprintf(`INSERT INTO %s.sentry_regionoutbox
		(shard_scope, shard_identifier, category, object_identifier, scheduled_from, scheduled_for, date_added)
		SELECT 0, v.sh, v.cat, i %% v.objs, now(), now(), now()
		  FROM (VALUES (1, 2, %d, 40), (1, 3, 7, 3), (2, 3, 12, 5)) v(sh, cat, n, objs)
		 CROSS JOIN LATERAL generate_series(1, v.n) i`, pgx.Identifier{schema}.Sanitize(), query.PlanCap+500)); err != nil {
		t.Fatal(err)
	}
	name := func(c int) string { return fmt.Sprintf("CATEGORY_%d", c) }
	read := func(k query.ShardKey) drain.Plan {
		tx, err := testdb.Pool(t).Begin(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(context.Background()) //nolint:errcheck // read only
		p, err := drain.ReadPlan(context.Background(), tx, target, k, drain.Request{Mode: drain.ModeBatch, Handler: "discard"}, nil, name)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := read(org(1))
	want := []drain.PlanCategory{
		{Category: 2, Name: "CATEGORY_2", Messages: 40, Rows: query.PlanCap, RowsAtLeast: true},
		{Category: 3, Name: "CATEGORY_3", Messages: 3, Rows: 7},
	}
	if !reflect.DeepEqual(p.Categories, want) || p.Rows != query.PlanCap+7 || !p.RowsAtLeast || p.Messages != 43 || p.MessagesAtLeast {
		t.Fatalf("plan %+v", p)
	}
	lines := p.Lines()
	if want := fmt.Sprintf("deliver about 43 message(s) (coalesce groups) and delete at least %d row(s); groups with a row up to id %d", query.PlanCap+7, p.Watermark); !strings.HasPrefix(lines[1], want) {
		t.Fatalf("line %q, want it to start %q", lines[1], want)
	}
	if want := fmt.Sprintf("  (each category's rows and messages counted up to %d: the plan is read before the claim; inspect shard counts them all)", query.PlanCap); lines[2] != want {
		t.Fatalf("line %q, want %q", lines[2], want)
	}
	if want := fmt.Sprintf("  CATEGORY_2: 40 message(s) from at least %d row(s)", query.PlanCap); lines[3] != want || lines[4] != "  CATEGORY_3: 3 message(s) from 7 row(s)" {
		t.Fatalf("lines %q", lines[3:5])
	}
	p = read(org(2))
	if p.RowsAtLeast || p.MessagesAtLeast || p.Rows != 12 || p.Messages != 5 || !strings.HasPrefix(p.Lines()[1], "deliver about 5 message(s) (coalesce groups) and delete 12 row(s);") ||
		strings.Contains(strings.Join(p.Lines(), "\n"), "counted up to") {
		t.Fatalf("plan below the cap %+v\n%s", p, strings.Join(p.Lines(), "\n"))
	}
}
