package doctor

import (
	"testing"
	"time"

	"github.com/outboxctl/outboxctl/internal/ledger"
	"github.com/outboxctl/outboxctl/internal/query"
	"github.com/outboxctl/outboxctl/internal/shardstate"
)

// TestClassifyReadsTheEvidence: each cause from the evidence alone, including the
// clock-free sign of an attempt after a reschedule (a head no longer at THE_PAST) when
// Sentry's clock lags the database's.
func TestClassifyReadsTheEvidence(t *testing.T) {
	at := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	resched := &ledger.Record{At: at, Via: ledger.ViaReschedule, HeadCategory: 3}
	released := &ledger.Record{At: at, Via: ledger.ViaKillswitch, HeadCategory: 3}
	delivered := madeDue{delivered: []ledger.Record{{At: at, Via: ledger.ViaReschedule, HeadCategory: 3, Shard: 99}}}
	stale := madeDue{delivered: []ledger.Record{{At: at.Add(-time.Hour), Via: ledger.ViaReschedule, HeadCategory: 3, Shard: 99}}}
	otherCell := madeDue{delivered: []ledger.Record{{At: at, Via: ledger.ViaReschedule, HeadCategory: 3, Shard: 99, Where: ledger.Where{Cell: "us"}}}}
	none := madeDue{}
	failed := func(rec *ledger.Record, last time.Time, next time.Time) *obs {
		return &obs{headCat: 3, headAdded: at.Add(-time.Hour), lastAttempt: last, nextAttempt: next, rec: rec,
			HeadGroup: query.HeadGroup{GroupRows: 1, GroupNewestAdded: at.Add(-time.Hour)}}
	}
	for _, tt := range []struct {
		name string
		o    *obs
		ev   madeDue
		want string
	}{
		{"claimed after the record, category delivered elsewhere", failed(resched, at.Add(time.Minute), at.Add(time.Minute+2*time.Second)), delivered, CausePoison},
		{"claimed after the record, nothing delivered", failed(resched, at.Add(time.Minute), at.Add(time.Minute+2*time.Second)), none, CauseStillFailing},
		{"a delivery made due before this fresh attempt", failed(resched, at.Add(time.Minute), at.Add(time.Minute+2*time.Second)), stale, CauseStillFailing},
		{"a delivery in another cell", func() *obs { o := failed(resched, at.Add(time.Minute), at); o.cell = "de"; return o }(), otherCell, CauseStillFailing},
		{"the kill switch could not be read", func() *obs { o := failed(resched, at.Add(time.Minute), at); o.switchUnknown = true; return o }(), delivered, CauseStillFailing},
		{"a lagging clock: claimed (no longer THE_PAST) at an earlier time", failed(resched, at.Add(-time.Second), at.Add(time.Second)), delivered, CausePoison},
		{"rescheduled, never claimed since", failed(resched, at.Add(-time.Second), shardstate.ThePast), delivered, CauseWaiting},
		{"released from a kill switch, not visited since", failed(released, at.Add(-time.Minute), at.Add(time.Hour)), delivered, CauseWaiting},
		{"held by a transaction", func() *obs { o := failed(resched, at.Add(time.Minute), at); o.locked = true; return o }(), delivered, CauseHeld},
		{"a hot group", func() *obs { o := failed(nil, at, at); o.GroupRows = query.HotGroupRows; return o }(), delivered, CauseHot},
		{"a newer row since the attempt", func() *obs {
			o := failed(resched, at.Add(time.Minute), at.Add(2*time.Minute))
			o.GroupNewestAdded = at.Add(90 * time.Second)
			return o
		}(), delivered, CauseUntried},
		{"at the cap, no record", failed(nil, at, at.Add(time.Hour)), delivered, CauseUndecided},
	} {
		if got := classify(tt.o, tt.ev); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}
