package shardstate

import (
	"testing"
	"time"
)

var thePast = ThePast //nolint:gochecknoglobals // Sentry's THE_PAST

// TestBackoffSequence follows Sentry's test_outbox_rescheduling: a shard that always fails is
// pushed 2 s, 4 s, 8 s … and never more than 1 h.
func TestBackoffSequence(t *testing.T) {
	t.Parallel()
	now := time.Date(2022, 10, 1, 0, 0, 0, 0, time.UTC)
	from, for_ := now.Add(-time.Minute), thePast // a fresh row: THE_PAST is before scheduled_from
	var got []time.Duration
	for range 14 {
		next := NextSchedule(now, from, for_)
		got = append(got, next.Sub(now))
		from, for_ = now, next
		now = next
	}
	want := []time.Duration{2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 3600, 3600, 3600}
	for i, w := range want {
		if got[i] != w*time.Second {
			t.Fatalf("step %d: delay %s, want %ds (all: %v)", i+1, got[i], w, got)
		}
	}
}

func TestAttempts(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		d       time.Duration
		n       int
		atLeast bool
	}{
		{time.Second, 0, false}, {2 * time.Second, 1, false}, {4 * time.Second, 2, false},
		{2048 * time.Second, 11, false}, {time.Hour, 12, true},
	} {
		if n, al := Attempts(tt.d); n != tt.n || al != tt.atLeast {
			t.Errorf("Attempts(%s) = %d %v, want %d %v", tt.d, n, al, tt.n, tt.atLeast)
		}
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	yes, no := true, false
	for _, tt := range []struct {
		name  string
		s     Shard
		state State
		atCap bool
	}{
		{"Empty", Shard{}, StateEmpty, false},
		{"Fresh", Shard{Depth: 3, NextAttempt: thePast, HeadScheduledFrom: now.Add(-time.Minute), HeadScheduledFor: thePast}, StateReady, false},
		{"NewRowMakesDue", Shard{Depth: 3, NextAttempt: thePast, HeadScheduledFrom: now.Add(-time.Hour), HeadScheduledFor: now.Add(time.Minute)}, StateReady, true}, // the head row keeps its history: the next claim backs off 1 h again
		{"JustClaimed", Shard{Depth: 3, NextAttempt: now.Add(time.Second), HeadScheduledFrom: now.Add(-time.Second), HeadScheduledFor: now.Add(time.Second)}, StateInFlight, false},
		{"BackingOff", Shard{Depth: 3, NextAttempt: now.Add(5 * time.Minute), HeadScheduledFrom: now.Add(-3 * time.Minute), HeadScheduledFor: now.Add(5 * time.Minute)}, StateBackingOff, false},
		{"AtCap", Shard{Depth: 3, NextAttempt: now.Add(40 * time.Minute), HeadScheduledFrom: now.Add(-20 * time.Minute), HeadScheduledFor: now.Add(40 * time.Minute)}, StateBackingOff, true},
		{"Killed", Shard{Depth: 3, NextAttempt: thePast, Killswitched: &yes}, StateKilled, false},
		{"NotKilled", Shard{Depth: 3, NextAttempt: thePast, Killswitched: &no}, StateReady, false},
	} {
		got := Classify(now, tt.s)
		if got.State != tt.state || got.AtCap != tt.atCap {
			t.Errorf("%s: %+v, want %s (at cap %v)", tt.name, got, tt.state, tt.atCap)
		}
	}
	st := Classify(now, Shard{Depth: 1, NextAttempt: now.Add(40 * time.Minute), HeadScheduledFrom: now.Add(-20 * time.Minute), HeadScheduledFor: now.Add(40 * time.Minute)})
	if st.NextIn != 40*time.Minute || st.Delay != time.Hour || st.Attempts != 12 || !st.AttemptsAtLeast || st.SinceClaim != 20*time.Minute {
		t.Errorf("at-cap details: %+v", st)
	}
}
