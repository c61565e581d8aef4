package drain

import (
	"slices"
	"sort"
	"time"
)

// Schedules is every claimed row's schedule from before the claim, kept compactly: each
// distinct schedule once, and the rows' ids with, beside each, which of them it had. A claim
// returns its shard's ids grouped by schedule, and one claim gives a whole shard one
// schedule, so a hot shard has a few (its rows claimed together) plus one per row inserted
// since. A map of 2M ids, built before the first delivery, cost 0.5–1.6 s of the drain of a
// 2M-row shard (#27, load 5–8); this is its ids as they came, sorted only when a row is first
// looked up (the archive of a discard or a kill-switch trim): a delivering drain never looks
// one up, and the unclaim needs no order. It belongs to one drain: not for concurrent use.
type Schedules struct {
	distinct []Schedule
	ids      []int64
	// of[i] indexes distinct for ids[i]; nil when every row had distinct[0].
	of []uint32
	// froms[i] is ids[i]'s scheduled_from (microseconds since the epoch) when some group's
	// rows each had their own (ScheduleGroup.Froms); nil when distinct holds every From.
	froms []int64
	// sorted: ids (and of) are in id order, for Lookup's binary search.
	sorted bool
}

// ScheduleGroup is the ids of the rows that had one schedule; or, with Froms, one
// scheduled_for and each row's own scheduled_from (Froms[i] is IDs[i]'s, microseconds since
// the epoch; Schedule.From unused): rows never claimed since they were written.
type ScheduleGroup struct {
	Schedule
	IDs   []int64
	Froms []int64
}

// NewSchedules keeps groups compactly; it may keep a group's IDs slice (and reorder it), so
// the caller hands it over. Each id is in at most one group: a row had one schedule (the
// claim reads each row of the shard once).
func NewSchedules(groups []ScheduleGroup) *Schedules {
	s := &Schedules{}
	var kept []ScheduleGroup
	n, perRow := 0, false
	for _, g := range groups {
		if len(g.IDs) > 0 {
			kept, n, perRow = append(kept, g), n+len(g.IDs), perRow || g.Froms != nil
			s.distinct = append(s.distinct, g.Schedule)
		}
	}
	if len(kept) == 1 {
		s.ids = kept[0].IDs // one schedule: its ids as they came, without a copy
	} else if len(kept) > 1 {
		s.ids, s.of = make([]int64, 0, n), make([]uint32, 0, n)
	}
	if perRow {
		s.froms = make([]int64, 0, n)
	}
	for d, g := range kept {
		if s.of != nil {
			s.ids = append(s.ids, g.IDs...)
			for range g.IDs {
				s.of = append(s.of, uint32(d))
			}
		}
		switch {
		case !perRow:
		case g.Froms != nil:
			s.froms = append(s.froms, g.Froms...)
		default:
			from := g.From.UnixMicro()
			for range g.IDs {
				s.froms = append(s.froms, from)
			}
		}
	}
	return s
}

// Len is how many rows have a schedule here.
func (s *Schedules) Len() int {
	if s == nil {
		return 0
	}
	return len(s.ids)
}

// Lookup is row id's schedule from before the claim; false when the claim did not record
// one (a row inserted since, or one whose schedule no time holds: an infinite timestamp).
func (s *Schedules) Lookup(id int64) (Schedule, bool) {
	if s == nil || len(s.ids) == 0 {
		return Schedule{}, false
	}
	if !s.sorted {
		s.sort()
		s.sorted = true
	}
	i, found := slices.BinarySearch(s.ids, id)
	if !found {
		return Schedule{}, false
	}
	d := s.distinct[0]
	if s.of != nil {
		d = s.distinct[s.of[i]]
	}
	if s.froms != nil {
		d.From = time.UnixMicro(s.froms[i]).UTC()
	}
	return d, true
}

// sort orders the ids, keeping each one's schedule beside it (pdqsort: linear on the
// ascending runs a claim's groups usually are).
func (s *Schedules) sort() {
	if s.of == nil && s.froms == nil {
		slices.Sort(s.ids)
		return
	}
	if !slices.IsSorted(s.ids) {
		sort.Sort(byID{s})
	}
}

type byID struct{ s *Schedules }

func (b byID) Len() int           { return len(b.s.ids) }
func (b byID) Less(i, j int) bool { return b.s.ids[i] < b.s.ids[j] }
func (b byID) Swap(i, j int) {
	b.s.ids[i], b.s.ids[j] = b.s.ids[j], b.s.ids[i]
	if b.s.of != nil {
		b.s.of[i], b.s.of[j] = b.s.of[j], b.s.of[i]
	}
	if b.s.froms != nil {
		b.s.froms[i], b.s.froms[j] = b.s.froms[j], b.s.froms[i]
	}
}

// unclaimArrays are drain-unclaim's arrays: every row's id with its schedule's times in
// microseconds since the epoch, each distinct schedule converted once.
func (s *Schedules) unclaimArrays() (ids, fromMicros, forMicros []int64) {
	n := s.Len()
	if n == 0 {
		return []int64{}, []int64{}, []int64{}
	}
	from, sfor := make([]int64, len(s.distinct)), make([]int64, len(s.distinct))
	for i, d := range s.distinct {
		from[i], sfor[i] = d.From.UnixMicro(), d.For.UnixMicro()
	}
	fromMicros, forMicros = make([]int64, n), make([]int64, n)
	for i := range n {
		d := 0
		if s.of != nil {
			d = int(s.of[i])
		}
		fromMicros[i], forMicros[i] = from[d], sfor[d]
		if s.froms != nil {
			fromMicros[i] = s.froms[i]
		}
	}
	return slices.Clone(s.ids), fromMicros, forMicros
}
