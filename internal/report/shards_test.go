package report

import (
	"testing"

	"github.com/outboxctl/outboxctl/internal/shardstate"
)

// TestKilledDetail pins the sentence for a disabled shard: Sentry revisits it on the usual
// backoff (not hourly) and trimming stalls once the head row is its group's newest
// (reference §3.8).
func TestKilledDetail(t *testing.T) {
	t.Parallel()
	want := "disabled by option: each visit (on the usual backoff, 2 s doubling to 1 h) deletes the head group's older duplicates and delivers nothing; once the lowest row is its group's newest, nothing more is trimmed"
	if got := detail(shardstate.Status{State: shardstate.StateKilled}); got != want {
		t.Fatalf("detail = %q\nwant     %q", got, want)
	}
}
