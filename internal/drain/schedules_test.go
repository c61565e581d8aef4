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
