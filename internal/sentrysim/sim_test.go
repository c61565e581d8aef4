package sentrysim_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboxctl/outboxctl/internal/drain"
	"github.com/outboxctl/outboxctl/internal/fixture"
	"github.com/outboxctl/outboxctl/internal/options"
	"github.com/outboxctl/outboxctl/internal/sentrysim"
	"github.com/outboxctl/outboxctl/internal/testdb"
)

var t0 = time.Date(2022, 10, 1, 0, 0, 0, 0, time.UTC) //nolint:gochecknoglobals // §4.1 D7's clock

const cellTable, controlTable = "sentry_regionoutbox", "sentry_controloutbox"

func newSim(t *testing.T, table string, o sentrysim.Options, fo fixture.Options) (*sentrysim.Sim, string) {
	t.Helper()
	schema := testdb.Schema(t, fo)
	return sentrysim.New(testdb.Pool(t), schema, table, o), schema
}

// org is §4.1's ORG(org, cat, obj).
func org(shard int64, cat int, obj int64) sentrysim.GroupKey {
	return sentrysim.GroupKey{Shard: sentrysim.Shard{Scope: 0, ID: shard}, Category: cat, Object: obj}
}

func seed(t *testing.T, s *sentrysim.Sim, at time.Time, keys ...sentrysim.GroupKey) []int64 {
	t.Helper()
	rows := make([]sentrysim.Row, len(keys))
	for i, k := range keys {
		rows[i] = sentrysim.Row{Key: k, Payload: testdb.Str(fmt.Sprintf(`{"row": %d}`, i+1)), DateAdded: at}
	}
	ids, err := s.Insert(context.Background(), rows...)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func tick(t *testing.T, s *sentrysim.Sim, now time.Time) {
	t.Helper()
	if err := s.Tick(context.Background(), now); err != nil {
		t.Fatal(err)
	}
}

func failing(sentrysim.Message) error { return errors.New("receiver down") }

type sched struct {
	id       int64
	from, to time.Time
}

func schedules(t *testing.T, schema, table string) []sched {
	t.Helper()
	rows, _ := testdb.Pool(t).Query(context.Background(), "SELECT id, scheduled_from, scheduled_for FROM "+schema+"."+table+" ORDER BY id")
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (s sched, err error) { return s, r.Scan(&s.id, &s.from, &s.to) })
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// D8 and §3.7: one delivery per coalesce group, with the newest row's payload; all rows gone.
func TestCoalescingDeliversTheNewestPayload(t *testing.T) {
	t.Parallel()
	s, schema := newSim(t, cellTable, sentrysim.Options{}, fixture.Options{Payload: fixture.PayloadText})
	ids := seed(t, s, t0, org(10001, 2, 10001), org(10002, 2, 10002), org(10001, 2, 10001), org(10002, 2, 10002), org(10001, 3, 7))
	tick(t, s, t0)
	got := map[int64]string{}
	for _, m := range s.Delivered() {
		got[m.ID] = *m.Payload
	}
	want := map[int64]string{ids[2]: `{"row": 3}`, ids[3]: `{"row": 4}`, ids[4]: `{"row": 5}`}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(s.Attempts()) != 3 {
		t.Fatalf("delivered %v in %d attempts, want %v in 3", got, len(s.Attempts()), want)
	}
	if left := schedules(t, schema, cellTable); len(left) != 0 {
		t.Fatalf("%d rows left, want 0", len(left))
	}
}

// §3.4, §8.4: a failing receiver leaves every row of the shard pushed to now + 2, 4, 8 …
// 2048 s, then 3600 s, computed from the lowest row; a new row makes the shard due at once
// and the doubling goes on from the lowest row.
func TestBackoffDoublesToTheCap(t *testing.T) {
	t.Parallel()
	s, schema := newSim(t, cellTable, sentrysim.Options{Receiver: failing}, fixture.Options{})
	seed(t, s, t0.Add(-time.Minute), org(10001, 2, 10001), org(10001, 3, 5))
	now := t0
	var delays []time.Duration
	for i := 0; i < 14; i++ {
		tick(t, s, now)
		tick(t, s, now.Add(time.Second)) // not due yet: no attempt, no push
		rows := schedules(t, schema, cellTable)
		if len(rows) != 2 || !rows[0].from.Equal(now) || !rows[1].from.Equal(now) || !rows[1].to.Equal(rows[0].to) {
			t.Fatalf("attempt %d: rows %+v, want both pushed from %s alike", i, rows, now)
		}
		delays = append(delays, rows[0].to.Sub(now))
		now = rows[0].to
	}
	want := "[2s 4s 8s 16s 32s 1m4s 2m8s 4m16s 8m32s 17m4s 34m8s 1h0m0s 1h0m0s 1h0m0s]"
	if fmt.Sprint(delays) != want {
		t.Fatalf("delays %v, want %s", delays, want)
	}
	if n := len(s.Attempts()); n != 14 {
		t.Fatalf("%d attempts, want 14 (one per due tick)", n)
	}
	// D7's tail: rows at 2 s and 4 s of backoff, then a new row (THE_PAST).
	s2, schema2 := newSim(t, cellTable, sentrysim.Options{Receiver: failing}, fixture.Options{})
	seed(t, s2, t0, org(10002, 2, 10002))
	tick(t, s2, t0)
	tick(t, s2, t0.Add(2*time.Second))
	tick(t, s2, t0.Add(3*time.Second))
	seed(t, s2, t0.Add(3*time.Second), org(10002, 2, 10002))
	tick(t, s2, t0.Add(3*time.Second))
	rows := schedules(t, schema2, cellTable)
	if n := len(s2.Attempts()); n != 3 || !rows[1].to.Equal(t0.Add(11*time.Second)) || !rows[1].from.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("%d attempts, rows %+v: want 3, the new row's shard pushed 8 s (doubling the lowest row's 4 s)", n, rows)
	}
	if got := s2.Attempts()[2]; got.ID != rows[1].id || got.Committed {
		t.Fatalf("third attempt %+v, want the new (newest) row %d, uncommitted", got, rows[1].id)
	}
}

// D15 and §3.4/§3.6: a shard whose head another session holds locked is skipped (55P03,
// no wait, no push), and a drain whose next head is locked ends quietly; the others go on.
func TestLockedShardIsSkipped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var lock func(id int64)
	recv := func(m sentrysim.Message) error {
		if m.Key.ID == 3 && m.Key.Object == 1 {
			lock(m.ID + 1) // shard 3's next head, while the sim holds this one
		}
		return nil
	}
	s, schema := newSim(t, cellTable, sentrysim.Options{Receiver: recv}, fixture.Options{})
	ids := seed(t, s, t0, org(1, 2, 1), org(1, 2, 1), org(2, 2, 2), org(3, 2, 1), org(3, 2, 2))
	tx, err := testdb.Pool(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	lock = func(id int64) {
		if _, err := tx.Exec(ctx, "SELECT 1 FROM "+schema+".sentry_regionoutbox WHERE id = $1 FOR UPDATE", id); err != nil {
			t.Error(err)
		}
	}
	lock(ids[0])
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.Tick(tctx, t0); err != nil {
		t.Fatal(err)
	}
	left := schedules(t, schema, cellTable)
	if d := s.Delivered(); len(d) != 2 || d[0].ID != ids[2] || d[1].ID != ids[3] || len(left) != 3 ||
		!left[0].to.Equal(sentrysim.ThePast) || left[2].id != ids[4] || !left[2].to.Equal(t0.Add(2*time.Second)) || len(s.Failures()) != 0 {
		t.Fatalf("delivered %+v, left %+v, failures %v: want shards 2 and 3's first group delivered, shard 1 untouched", d, left, s.Failures())
	}
}

// D7 and §3.3: the shards of a window are tried by MIN(scheduled_for), then MAX(id); a
// window is [low, hi) of the id span split in Concurrency parts.
func TestOrderOfShards(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, conc := range []int{1, 0} {
		s, schema := newSim(t, cellTable, sentrysim.Options{Receiver: failing, Concurrency: conc}, fixture.Options{})
		seed(t, s, t0, org(10001, 2, 10001), org(10002, 2, 10002), org(10003, 2, 10003), org(10001, 3, 1))
		tick(t, s, t0)
		// An operator moved 10003 before the others, 10002 after.
		if _, err := testdb.Pool(t).Exec(ctx, "UPDATE "+schema+".sentry_regionoutbox SET scheduled_for = scheduled_for + "+
			"CASE shard_identifier WHEN 10002 THEN interval '1 second' WHEN 10003 THEN interval '-1 second' ELSE interval '0' END"); err != nil {
			t.Fatal(err)
		}
		tick(t, s, t0.Add(10*time.Minute))
		var order []int64
		for _, a := range s.Attempts() {
			order = append(order, a.Key.ID)
		}
		// One window: equal due times by MAX(id) (10001's is the 4th row), then by due time.
		// Five windows of one id each, in id order: 10001's second row (window 3) is no longer
		// due once window 0 claimed the shard.
		want := "[10002 10003 10001 10003 10001 10002]"
		if conc == 0 {
			want = "[10001 10002 10003 10001 10002 10003]"
		}
		if fmt.Sprint(order) != want {
			t.Errorf("concurrency %d: attempts %v, want %s", conc, order, want)
		}
	}
}

// §3.8's worked example: A(1,5), B(2,3), C(4,6) in a disabled shard: visits delete 1, 1, 0,
// 0, 0 rows, 2, 4, 8, 16 s apart, deliver nothing; a shard not listed delivers (D1).
func TestKillSwitchTrims(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, schema := newSim(t, cellTable, sentrysim.Options{}, fixture.Options{OptionValue: fixture.PayloadText})
	a, b, c := org(1, 2, 1), org(1, 3, 2), org(1, 3, 4)
	ids := seed(t, s, t0, a, b, b, c, a, c, org(2, 2, 2))
	if err := s.SetKillSwitch(ctx, options.DisabledOrgShards, []int64{1, 99}, t0, "cli"); err != nil {
		t.Fatal(err)
	}
	for sec := 0; sec <= 62; sec++ {
		tick(t, s, t0.Add(time.Duration(sec)*time.Second))
	}
	var visits []string
	for _, tr := range s.Trims() {
		visits = append(visits, fmt.Sprintf("+%s:%d", tr.At.Sub(t0), len(tr.IDs)))
	}
	if want := "[+0s:1 +2s:1 +6s:0 +14s:0 +30s:0 +1m2s:0]"; fmt.Sprint(visits) != want {
		t.Fatalf("visits %v, want %s", visits, want)
	}
	if d := s.Delivered(); len(d) != 1 || d[0].ID != ids[6] {
		t.Fatalf("delivered %+v, want only row %d of shard 2", d, ids[6])
	}
	left := schedules(t, schema, cellTable)
	if len(left) != 4 || left[0].id != ids[2] || left[1].id != ids[3] {
		t.Fatalf("left %+v, want rows 3, 4, 5, 6 (1 and 2 trimmed)", left)
	}
}

// §3.1 deadline: a group too large for the task's budget fails its iteration every time
// (rolled back, its newest payload delivered but never committed), while the small groups
// around it, in the same windows, deliver.
func TestDeadlineFailsAHotGroupOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, budget := range []int{2_000, 0} {
		s, schema := newSim(t, cellTable, sentrysim.Options{DeadlineRows: budget}, fixture.Options{})
		var small []sentrysim.GroupKey
		for i := int64(0); i < 100; i++ {
			small = append(small, org(1000+i, 3, i), org(1000+i, 3, i)) // 2 rows a group
		}
		seed(t, s, t0, small[:100]...)
		hot := org(42, 2, 42)
		first, last, err := s.InsertGroup(ctx, sentrysim.Row{Key: hot, Payload: testdb.Str(`{"v": {n}}`), DateAdded: t0}, 5_000)
		if err != nil || last-first != 4_999 {
			t.Fatal(first, last, err)
		}
		seed(t, s, t0, small[100:]...)
		seeded, err := s.Groups(ctx)
		if err != nil || len(seeded) != 101 {
			t.Fatal(len(seeded), err)
		}
		start := time.Now()
		if err := s.Run(ctx, t0, t0.Add(10*time.Minute), time.Minute); err != nil {
			t.Fatal(err)
		}
		t.Logf("budget %d: 10 minutes in %s, %d attempts", budget, time.Since(start).Round(time.Millisecond), len(s.Attempts()))
		left, err := s.Groups(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var hotTries int
		for _, a := range s.Attempts() {
			if a.Key == hot {
				hotTries++
				if a.ID != last || *a.Payload != `{"v": 5000}` {
					t.Fatalf("hot group delivered row %d %s, want the newest %d", a.ID, *a.Payload, last)
				}
			}
		}
		if budget == 0 {
			if len(left) != 0 || hotTries != 1 || len(s.Failures()) != 0 {
				t.Fatalf("no deadline: %d groups left, %d hot tries, failures %v: want all drained", len(left), hotTries, s.Failures())
			}
			continue
		}
		n := len(schedules(t, schema, cellTable))
		if len(left) != 1 || left[hot] != last || n != 5_000 || hotTries < 5 {
			t.Fatalf("groups left %v, %d rows, %d hot tries: want only the hot group, whole, tried each time it was due", left, n, hotTries)
		}
		for _, f := range s.Failures() {
			if f.Shard != hot.Shard || !errors.Is(f.Err, sentrysim.ErrDeadline) {
				t.Fatalf("failure %+v, want only the hot shard's deadlines", f)
			}
		}
		if lost := s.CheckNoHealthyLost(t, seeded); lost != 0 {
			t.Fatal(lost)
		}
	}
}

// §3.1: a deadline kills the whole task, so the shards after the hot one in its window wait
// for the next tick, where they come first (due since THE_PAST, the hot shard pushed).
func TestDeadlineEndsTheTask(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newSim(t, cellTable, sentrysim.Options{DeadlineRows: 100, Concurrency: 1}, fixture.Options{})
	if _, _, err := s.InsertGroup(ctx, sentrysim.Row{Key: org(42, 2, 42), DateAdded: t0}, 500); err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 10; i++ {
		seed(t, s, t0, org(100+i, 3, i))
	}
	var counts []int
	for i := 0; i < 2; i++ {
		tick(t, s, t0.Add(time.Duration(i)*time.Minute))
		counts = append(counts, len(s.Attempts()), len(s.Delivered()), len(s.Failures()))
	}
	if fmt.Sprint(counts) != "[1 0 1 12 10 2]" {
		t.Fatalf("attempts, deliveries, failures after each tick: %v, want [1 0 1 12 10 2]", counts)
	}
}

// D14, D16 in the control silo: shards are per cell; a receiver failing one cell's messages
// leaves that cell's shard pushed; the kill switch is read from sentry_controloption.
func TestControlTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	recv := func(m sentrysim.Message) error {
		if m.Key.Cell == "eu" {
			return errors.New("eu down")
		}
		return nil
	}
	s, schema := newSim(t, controlTable, sentrysim.Options{Receiver: recv, OptionsTable: "sentry_controloption"}, fixture.Options{})
	user := func(cell string, id int64) sentrysim.GroupKey {
		return sentrysim.GroupKey{Shard: sentrysim.Shard{Cell: cell, Scope: 1, ID: id}, Category: 4, Object: id}
	}
	ids := seed(t, s, t0, user("us", 7), user("eu", 7), user("us", 7), user("us", 8))
	if err := s.SetKillSwitch(ctx, options.DisabledUserShards, []int64{8}, t0, "cli"); err != nil {
		t.Fatal(err)
	}
	tick(t, s, t0)
	if d := s.Delivered(); len(d) != 1 || d[0].ID != ids[2] || d[0].Key != user("us", 7) {
		t.Fatalf("delivered %+v, want row %d of us/7 only", d, ids[2])
	}
	if f := s.Failures(); len(f) != 1 || f[0].Shard != user("eu", 7).Shard {
		t.Fatalf("failures %+v, want eu/7", f)
	}
	left := schedules(t, schema, controlTable)
	if len(left) != 2 || left[0].id != ids[1] || !left[0].to.Equal(t0.Add(2*time.Second)) || left[1].id != ids[3] {
		t.Fatalf("left %+v: want eu/7 pushed 2 s and the kill-switched us/8", left)
	}
}

// A 12-hour outage at the schedulers' steps: 300 cell shards every 60 s, 400 control user
// shards in two cells every 10 s. Every shard is attempted exactly when its backoff says
// (the schedule is computed here), and every row stays queued.
func TestRunTwelveHours(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		table  string
		shards int64
		step   time.Duration
	}{{cellTable, 300, time.Minute}, {controlTable, 400, 10 * time.Second}} {
		s, _ := newSim(t, c.table, sentrysim.Options{Receiver: failing}, fixture.Options{})
		var keys []sentrysim.GroupKey
		for i := int64(0); i < c.shards; i++ {
			k := org(i, 2, i)
			if c.table == controlTable {
				k.Cell, k.Scope = []string{"us", "de"}[i%2], 1
			}
			keys = append(keys, k, k)
			k.Category = 3
			keys = append(keys, k)
		}
		seed(t, s, t0, keys...)
		seeded, _ := s.Groups(ctx)
		start := time.Now()
		if err := s.Run(ctx, t0, t0.Add(12*time.Hour), c.step); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: 12 h of %d failing shards at a %s step: %d attempts in %s", c.table, c.shards, c.step, len(s.Attempts()), time.Since(start).Round(time.Millisecond))
		want := 0
		for now, due, last := t0, t0, time.Second; !now.After(t0.Add(12 * time.Hour)); now = now.Add(c.step) {
			if !due.After(now) {
				want++
				last = min(2*last, time.Hour)
				due = now.Add(last)
			}
		}
		if got := len(s.Attempts()); got != int(c.shards)*want {
			t.Fatalf("%d attempts, want %d (%d per shard)", got, int(c.shards)*want, want)
		}
		if lost := s.CheckNoHealthyLost(t, seeded); lost != 0 || len(seeded) != 2*int(c.shards) {
			t.Fatal(lost, len(seeded))
		}
		if err := s.Vacuum(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// recorder is a testing.TB that keeps the checkers' errors, to see them fail.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Errorf(f string, a ...any) { r.errs = append(r.errs, fmt.Sprintf(f, a...)) }

// The checkers fail on a lost newest row and on an archived newest row, and pass poison.
func TestCheckers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, schema := newSim(t, cellTable, sentrysim.Options{}, fixture.Options{})
	a, b := org(5, 2, 5), org(6, 2, 6)
	ids := seed(t, s, t0, a, a, b, b)
	seeded, _ := s.Groups(ctx)
	// An operator's compact of a (older row) and skip of b (both rows), archived by outboxctl's writer.
	path := filepath.Join(t.TempDir(), "archive.jsonl")
	for i, sel := range [][]int64{{ids[0]}, {ids[2], ids[3]}} {
		op, err := drain.OpenOperation(path, drain.OperationMeta{Command: []string{"compact", "skip"}[i], User: "oncall", Table: cellTable, PayloadType: "jsonb",
			Shard: &drain.ArchiveShard{Scope: 0, ID: []int64{5, 6}[i]}})
		if err != nil {
			t.Fatal(err)
		}
		var rows []drain.Row
		for _, id := range sel {
			k := map[int64]sentrysim.GroupKey{ids[0]: a, ids[2]: b, ids[3]: b}[id]
			rows = append(rows, drain.Row{ID: id, ShardScope: k.Scope, ShardID: k.ID, Category: k.Category, ObjectID: k.Object, Payload: testdb.Str("{}")})
		}
		batch, err := op.Stage(rows)
		if err == nil {
			err = op.Commit(batch)
		}
		if err != nil {
			t.Fatal(err)
		}
		_ = op.Close()
		if _, err := testdb.Pool(t).Exec(ctx, "DELETE FROM "+schema+".sentry_regionoutbox WHERE id = ANY($1)", sel); err != nil {
			t.Fatal(err)
		}
	}
	archived := sentrysim.ArchivedRows(t, path)
	if len(archived) != 3 {
		t.Fatalf("read %+v, want 3 rows", archived)
	}
	r := &recorder{TB: t}
	if s.CheckNoHealthyLost(r, seeded) != 1 || s.CheckArchivedOnly(r, archived) != 2 || len(r.errs) != 3 {
		t.Fatalf("checkers said %q: want b lost and both of its rows archived (a compact of a is fine)", r.errs)
	}
	if s.CheckNoHealthyLost(t, seeded, b) != 0 || s.CheckArchivedOnly(t, archived, b) != 0 {
		t.Fatal("with b poison, nothing is wrong")
	}
	tick(t, s, t0) // a's newest delivered: still fine
	if s.CheckNoHealthyLost(t, seeded, b) != 0 || s.CheckArchivedOnly(t, archived, b) != 0 || len(s.Delivered()) != 1 {
		t.Fatal("after a's delivery, nothing is wrong")
	}
}
