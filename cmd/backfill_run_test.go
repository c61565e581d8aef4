package cmd

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/backfill"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/render"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

// TestRunBackfillStatusDirect calls backfill status's run function with its dependencies:
// a clock that moves one minute per sample and a timer that fires at once, so --sample 1m
// takes no time. The cursor moves 30 ids between the reads: rate 30/min.
func TestRunBackfillStatusDirect(t *testing.T) {
	t.Parallel()
	schema := testdb.Schema(t, fixture.Options{})
	tb, _ := backfill.Lookup(backfill.Registered(nil), "sentry_organization")
	pool := testdb.Pool(t)
	ctx := context.Background()
	for _, sql := range []string{
		fmt.Sprintf(`CREATE TABLE %[1]s.sentry_organization (id bigint PRIMARY KEY) WITH (autovacuum_enabled = false); INSERT INTO %[1]s.sentry_organization SELECT generate_series(1, 100)`, schema),
		fmt.Sprintf(`INSERT INTO %s.sentry_option (key, value, last_updated) VALUES ('%s', '%d'::jsonb, now())`, schema, backfill.OptionKey(tb.Name), tb.Coded),
		fmt.Sprintf(`INSERT INTO %s.hybridcloud_celloutboxbackfillwatermark (date_updated, date_added, table_name, low_bound, version) VALUES (now(), now(), 'sentry_organization', 11, %d)`, schema, tb.Coded),
	} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	streams, out, errOut := render.Test()
	// The app's factory on a real DSN, with the clock and the sample's wait replaced.
	a := &app{io: streams, getenv: streams.Getenv, g: globalOptions{Output: "csv", DSN: testdb.DSN(), Schema: schema}}
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := a.factory()
	d.clock.now = func() time.Time { return clock }
	d.clock.after = func(dur time.Duration) <-chan time.Time {
		clock = clock.Add(dur)
		if _, err := pool.Exec(ctx, "UPDATE "+schema+".hybridcloud_celloutboxbackfillwatermark SET low_bound = 41"); err != nil {
			t.Error(err)
		}
		c := make(chan time.Time, 1)
		c <- clock
		return c
	}
	o := backfillStatusOptions{Tables: []string{"sentry_organization"}, Store: "postgres", Sample: time.Minute, ExitStatus: true}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	doc, err := runBackfillStatus(ctx, d, o)
	if perr := d.printer.Print(doc); perr != nil {
		t.Fatal(perr)
	}
	if err == nil || err.Error() != "1 of 1 table(s) not complete" || exitCode(ctx, err) != ExitPending {
		t.Fatalf("error %v", err)
	}
	if got := errOut.String(); got != "sampling the cursors again in 1m0s…\n" {
		t.Fatalf("stderr %q", got)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	// rows_estimate 0: the table is never analyzed (autovacuum off); ETA (100+1-41)/30 min = 120 s.
	want := fmt.Sprintf("sentry_organization,cell,%[1]d,%[1]d,%[1]d,false,postgres:cell,11,%[1]d,in progress,100,0.1,0,,30,120,,,%[2]s,", tb.Coded, query.OptionTable)
	if len(lines) != 2 || lines[1] != want {
		t.Fatalf("csv:\n%s\nwant the row %s", out, want)
	}
}
