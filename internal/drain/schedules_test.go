package drain

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestSchedulesMatchAMap: Schedules answers every id as a map of id to schedule does (the
// representation it replaced), for one group or many, ids in any order, and none for an
// id it was not given; its unclaim arrays carry each id's own schedule.
func TestSchedulesMatchAMap(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 9, 0, 0, 123456000, time.UTC)
	for _, groups := range []int{0, 1, 2, 7, 300} {
		rng := rand.New(rand.NewPCG(uint64(groups), 27))
		ids := rng.Perm(20_000)
		model := map[int64]Schedule{}
		var gs []ScheduleGroup
		for g := range groups {
			gs = append(gs, ScheduleGroup{Schedule: Schedule{From: at.Add(time.Duration(g) * time.Microsecond), For: at.Add(time.Duration(g) * time.Second)}})
		}
		if groups > 1 {
			gs = append(gs, ScheduleGroup{Schedule: Schedule{From: at.Add(-time.Hour), For: at}}) // an empty group
		}
		for _, id := range ids[:15_000] { // ids[15_000:] were never given
			if groups == 0 {
				break
			}
			g := rng.IntN(groups)
			gs[g].IDs = append(gs[g].IDs, int64(id))
			model[int64(id)] = gs[g].Schedule
		}
		s := NewSchedules(gs)
		if s.Len() != len(model) {
			t.Fatalf("%d groups: Len %d, want %d", groups, s.Len(), len(model))
		}
		uids, from, sfor := s.unclaimArrays()
		if len(uids) != len(model) || len(from) != len(model) || len(sfor) != len(model) {
			t.Fatalf("%d groups: unclaim arrays of %d, %d, %d, want %d", groups, len(uids), len(from), len(sfor), len(model))
		}
		for i, id := range uids {
			if m := model[id]; from[i] != m.From.UnixMicro() || sfor[i] != m.For.UnixMicro() {
				t.Fatalf("%d groups: unclaim puts %d at %d/%d, want %v", groups, id, from[i], sfor[i], m)
			}
		}
		for _, id := range append(ids, -1, 20_000) {
			got, ok := s.Lookup(int64(id))
			want, inModel := model[int64(id)]
			if ok != inModel || got != want {
				t.Fatalf("%d groups: Lookup(%d) = %v, %v; want %v, %v", groups, id, got, ok, want, inModel)
			}
		}
	}
	var none *Schedules
	if _, ok := none.Lookup(1); ok || none.Len() != 0 {
		t.Fatal("a nil Schedules answered")
	}
}

// TestSchedulesRowByRowFroms: groups whose rows each had their own scheduled_from (rows never
// claimed since they were written: drain-claim groups by scheduled_for only) beside groups
// sharing one; every id answers its own schedule, before and after the lookup's sort, and
// the unclaim arrays carry it.
func TestSchedulesRowByRowFroms(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(32, 27))
	ids := rng.Perm(30_000)
	model := map[int64]Schedule{}
	gs := []ScheduleGroup{
		{Schedule: Schedule{For: at}},                                          // row by row
		{Schedule: Schedule{From: at.Add(-time.Hour), For: at.Add(time.Hour)}}, // shared
		{Schedule: Schedule{For: at.Add(2 * time.Hour)}},                       // row by row
	}
	for i, id := range ids[:25_000] {
		g := &gs[i%3]
		g.IDs = append(g.IDs, int64(id))
		sch := g.Schedule
		if i%3 != 1 {
			from := at.Add(-time.Duration(rng.IntN(1_000_000_000)) * time.Microsecond).UnixMicro()
			g.Froms = append(g.Froms, from)
			sch.From = time.UnixMicro(from).UTC()
		}
		model[int64(id)] = sch
	}
	s := NewSchedules(gs)
	check := func(when string) {
		uids, from, sfor := s.unclaimArrays()
		if len(uids) != len(model) {
			t.Fatalf("%s: %d ids in the unclaim arrays, want %d", when, len(uids), len(model))
		}
		for i, id := range uids {
			if m := model[id]; from[i] != m.From.UnixMicro() || sfor[i] != m.For.UnixMicro() {
				t.Fatalf("%s: unclaim puts %d at %d/%d, want %v", when, id, from[i], sfor[i], m)
			}
		}
	}
	check("before any lookup")
	for _, id := range append(ids, -1) {
		got, ok := s.Lookup(int64(id))
		want, in := model[int64(id)]
		if ok != in || got != want {
			t.Fatalf("Lookup(%d) = %v, %v; want %v, %v", id, got, ok, want, in)
		}
	}
	check("after the lookups' sort")
}
