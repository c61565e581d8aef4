// Package shardstate models what a shard is doing between drains: Sentry's claim with its
// exponential backoff, and the state a shard is seen in. It is pure (no I/O, no printing) so
// internal/report, internal/doctor and internal/drain share one classification.
package shardstate

import (
	"math"
	"time"
)

// ThePast is Sentry's THE_PAST, the scheduled_for of every new (never attempted) outbox row.
var ThePast = time.Date(2016, 8, 1, 0, 0, 0, 0, time.UTC) //nolint:gochecknoglobals // constant

// Sentry's backoff constants (prepare_next_from_shard, reference §3.4).
const (
	// MinDelay is the floor of last_delay: a fresh row (scheduled_for = THE_PAST) counts as 1 s.
	MinDelay = time.Second
	// MaxDelay is the cap added in PR #51199.
	MaxDelay = time.Hour
	// InFlightWindow is how recent a claim must be for the shard to be possibly draining right
	// now: Sentry pushes the whole shard's schedule forward *before* delivering, so a shard
	// being drained looks exactly like one in backoff for the length of the drain.
	InFlightWindow = 10 * time.Second
)

// LastDelay is Sentry's last_delay(): scheduled_for − scheduled_from of the shard's lowest-id
// row, at least one second.
func LastDelay(scheduledFrom, scheduledFor time.Time) time.Duration {
	return max(scheduledFor.Sub(scheduledFrom), MinDelay)
}

// NextDelay is the delay Sentry applies at the next claim: min(2 × last delay, 1 h).
func NextDelay(last time.Duration) time.Duration {
	return min(2*max(last, MinDelay), MaxDelay)
}

// NextSchedule is next_schedule(now): now + NextDelay(last delay of the lowest-id row).
func NextSchedule(now, scheduledFrom, scheduledFor time.Time) time.Time {
	return now.Add(NextDelay(LastDelay(scheduledFrom, scheduledFor)))
}

// Attempts estimates how many claims in a row produced a delay: 2 s after one, 4 s after two,
// 2^n s after n. At the cap the count is only a lower bound (12: 2048 s doubled is past 1 h).
func Attempts(delay time.Duration) (n int, atLeast bool) {
	if delay >= MaxDelay {
		return 12, true
	}
	secs := delay.Seconds()
	if secs < 2 {
		return 0, false
	}
	return int(math.Round(math.Log2(secs))), false
}

// State is what a shard is doing between drains.
type State string

// The states outboxctl reports.
const (
	StateReady      State = "ready"         // due now: the next scheduler run picks it
	StateBackingOff State = "backing off"   // every row is scheduled in the future
	StateInFlight   State = "in flight?"    // claimed seconds ago: probably draining right now
	StateKilled     State = "kill-switched" // listed in disabled_*_shards: trimmed, never delivered
	StateEmpty      State = "empty"         // no rows
	StateUnknown    State = "unknown"       // not enough information
)

// Shard is what classification needs to know about a shard.
type Shard struct {
	Depth int64
	// NextAttempt is the shard's earliest scheduled_for.
	NextAttempt time.Time
	// HeadScheduledFrom and HeadScheduledFor are the lowest-id row's schedule, from which
	// Sentry derives the delay.
	HeadScheduledFrom time.Time
	HeadScheduledFor  time.Time
	// Killswitched is nil when the options table could not be read.
	Killswitched *bool
}

// Status is a shard's classified state.
type Status struct {
	State State
	// Delay is the current backoff step (last_delay of the lowest-id row).
	Delay time.Duration
	// NextIn is how long until the shard is due again (0 when due).
	NextIn time.Duration
	// SinceClaim is how long ago Sentry last claimed the shard.
	SinceClaim time.Duration
	// Attempts estimates the failed attempts in a row that produced Delay.
	Attempts        int
	AttemptsAtLeast bool
	// AtCap is true when the delay reached the 1 h cap: a poison-message suspect.
	AtCap bool
}

// Classify tells what a shard is doing at now.
func Classify(now time.Time, s Shard) Status {
	if s.Depth == 0 {
		return Status{State: StateEmpty}
	}
	st := Status{Delay: LastDelay(s.HeadScheduledFrom, s.HeadScheduledFor)}
	if !s.HeadScheduledFrom.IsZero() {
		st.SinceClaim = max(now.Sub(s.HeadScheduledFrom), 0)
	}
	st.Attempts, st.AttemptsAtLeast = Attempts(st.Delay)
	st.AtCap = st.Delay >= MaxDelay
	if s.NextAttempt.After(now) {
		st.NextIn = s.NextAttempt.Sub(now)
	}
	switch {
	case s.Killswitched != nil && *s.Killswitched:
		st.State = StateKilled
	case st.NextIn == 0:
		st.State = StateReady
		// A due shard has no current backoff to speak of: its next claim starts from the
		// lowest row's delay, which the estimate above already reflects.
	case st.SinceClaim < InFlightWindow:
		st.State = StateInFlight
	default:
		st.State = StateBackingOff
	}
	return st
}
