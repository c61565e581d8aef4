package sentrysim

import (
	"context"
	"testing"

	"github.com/outboxctl/outboxctl/internal/drain"
)

// Archived is a row outboxctl archived before deleting it.
type Archived struct {
	ID      int64
	Key     GroupKey
	Table   string
	Command string // skip, compact, drain-discard, …
}

// ArchivedRows reads outboxctl archive files (internal/drain's reader: the file format only,
// none of outboxctl's drain logic) and returns every row they hold, whatever its batch's
// state: a healthy row selected for deletion is a fault even if the deletion rolled back.
func ArchivedRows(t testing.TB, paths ...string) []Archived {
	t.Helper()
	var out []Archived
	for _, p := range paths {
		f, err := drain.ReadArchiveFile(p, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range f.Operations {
			for _, b := range op.Batches {
				for _, r := range b.Rows {
					k := GroupKey{Shard: Shard{Scope: r.ShardScope, ID: r.ShardID}, Category: r.Category, Object: r.ObjectID}
					if r.Cell != nil {
						k.Cell = *r.Cell
					}
					out = append(out, Archived{ID: r.ID, Key: k, Table: op.Table, Command: op.Command})
				}
			}
		}
	}
	return out
}

// live maps each group to the newest id that is still queued or was delivered (committed).
func (s *Sim) live(t testing.TB) map[GroupKey]int64 {
	t.Helper()
	now, err := s.Groups(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range s.Delivered() {
		now[m.Key] = max(now[m.Key], m.ID)
	}
	return now
}

func keySet(keys []GroupKey) map[GroupKey]bool {
	out := make(map[GroupKey]bool, len(keys))
	for _, k := range keys {
		out[k] = true
	}
	return out
}

// maxReports caps the violations a checker lists.
const maxReports = 10

// CheckNoHealthyLost checks that no healthy message was lost: for every group of seeded
// (Groups before the incident) that is not poison, its newest row, or a newer row of the
// group, was delivered (committed) or is still queued. It returns the number of lost groups.
func (s *Sim) CheckNoHealthyLost(t testing.TB, seeded Snapshot, poison ...GroupKey) int {
	t.Helper()
	bad, live := keySet(poison), s.live(t)
	lost := 0
	for _, k := range seeded.Keys() {
		if bad[k] || live[k] >= seeded[k] {
			continue
		}
		if lost++; lost <= maxReports {
			t.Errorf("lost a healthy message: group %+v's newest row %d was neither delivered nor is it queued", k, seeded[k])
		}
	}
	if lost > maxReports {
		t.Errorf("… %d healthy groups lost in all", lost)
	}
	return lost
}

// CheckArchivedOnly checks that outboxctl archived (deleted undelivered) only rows of the
// poison groups, or older duplicates of a group whose newer row was delivered or is still
// queued (this table's rows of archived; other tables' are ignored). It returns the number
// of rows archived wrongly.
func (s *Sim) CheckArchivedOnly(t testing.TB, archived []Archived, poison ...GroupKey) int {
	t.Helper()
	bad, live := keySet(poison), s.live(t)
	wrong := 0
	for _, a := range archived {
		if a.Table != "" && a.Table != s.table || bad[a.Key] || a.ID < live[a.Key] {
			continue
		}
		if wrong++; wrong <= maxReports {
			t.Errorf("archived a healthy message: row %d (%s) of group %+v, and no newer row of it was delivered or is queued", a.ID, a.Command, a.Key)
		}
	}
	if wrong > maxReports {
		t.Errorf("… %d healthy rows archived in all", wrong)
	}
	return wrong
}
